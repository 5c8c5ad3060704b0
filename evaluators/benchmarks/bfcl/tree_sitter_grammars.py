"""The tree-sitter parsers the official Java and JavaScript decoders use, loaded as they load them (tree_sitter
0.21: a grammar package's `language()` wrapped in `Language(…, name)`), on first use only, one per thread (a
parser is not safe to share between threads)."""

from __future__ import annotations

import importlib
import threading
from functools import lru_cache
from typing import Any

_PARSERS = threading.local()


@lru_cache(maxsize=2)
def _language(name: str) -> Any:
    from tree_sitter import Language

    return Language(importlib.import_module(f"tree_sitter_{name}").language(), name)


def parser_for(name: str) -> Any:
    """This thread's parser for the grammar `name` (java or javascript)."""
    parser = getattr(_PARSERS, name, None)
    if parser is None:
        from tree_sitter import Parser

        parser = Parser()
        parser.set_language(_language(name))
        setattr(_PARSERS, name, parser)
    return parser

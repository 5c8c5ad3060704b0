"""Runs llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`, same arguments) with one
correction; `local_model` starts the local demo model's server process with this file.

The correction: llama-cpp-python's `chatml-function-calling` chat format renders messages with Jinja's
HTML autoescape on (`select_autoescape`, which also escapes templates made from strings), so every `"`
in a prompt reaches the model as `&#34;`, `'` as `&#39;`, `<` as `&lt;`. Benchmark prompts are full of
quotes: an official prompt of 1,398 tokens became 3,496, so it took 2.5 times as long to read, and the
model read a prompt that was not the benchmark's. A chat prompt is not HTML: here its templates render
text as given.

Run by its path (not as a module of this package), so it needs nothing of ours on the child's sys.path.
"""

from __future__ import annotations

import os
import sys


def plain_text_templates() -> None:
    """Make the Jinja environments of llama-cpp-python's chat formats render text as given."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    from llama_cpp import llama_chat_format

    class PlainTextEnvironment(ImmutableSandboxedEnvironment):
        def __init__(self, *args: object, **kwargs: object) -> None:
            kwargs["autoescape"] = False
            super().__init__(*args, **kwargs)

    # Replacing the library's class is the point (its chat formats look the name up when they render).
    llama_chat_format.ImmutableSandboxedEnvironment = PlainTextEnvironment  # type: ignore[misc]


def main() -> None:
    # Run by path, Python put this file's folder first on sys.path: its modules (settings.py, client.py…)
    # must not stand in for the libraries' own.
    if sys.path and os.path.abspath(sys.path[0] or os.curdir) == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    plain_text_templates()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()

"""How big a decoded value is once written out: decoders that compute values from a model's text (an
operator on literals, a repeated list) refuse any result past a bound before anything large is built."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from typing import Any

CONTAINERS = (list, tuple, set, frozenset, dict)


def leaf_size(value: Any) -> int:
    """Characters of a string, digits of an int (rounded up), else one element."""
    if isinstance(value, (str, bytes)):
        return max(1, len(value))
    if isinstance(value, int):
        return value.bit_length() * 31 // 100 + 1
    return 1


def expanded_size(value: Any, limit: int) -> int | None:
    """Elements plus characters of value as json.dumps writes it out, a shared value counted every
    time it appears; None as soon as that passes limit. Each container is walked once, so measuring
    `[[1] * 1000] * 1000` costs two thousand steps, not a million."""
    known: dict[int, int] = {}

    def walk(item: Any) -> int | None:
        if not isinstance(item, CONTAINERS):
            return leaf_size(item)
        if id(item) in known:
            return known[id(item)]
        children: Iterable[Any] = chain.from_iterable(item.items()) if isinstance(item, dict) else item
        total = 1
        for child in children:
            size = walk(child)
            if size is None or total + size > limit:
                return None
            total += size
        known[id(item)] = total
        return total

    size = walk(value)
    return size if size is not None and size <= limit else None

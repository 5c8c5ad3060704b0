"""The official value converters' regular expressions, matched in linear time with the same results.

The official Java and JavaScript value conversions use regular expressions whose backtracking is exponential,
cubic or quadratic in the length of the value (a value is any text an answer gives, string literals included):
- javascript_types.ARRAY_2D on `[[1],[1],…,1]`: exponential, 24 rows take 3.5 s, 30 rows minutes (a 130-character
  answer);
- java_types.ARRAYLIST_ADDS on `new ArrayList<>(){{` and 2,000 spaces: cubic, 8 s;
- OBJECT_PAIR (below), ARRAY, ARRAYLIST_AS_LIST, ARRAYLIST_ADD, HASHMAP_BODY, HASHMAP_PUT, HASHMAP_EMPTY on 64 KiB of
  repeated prefixes without their closing part: quadratic, 1 to 30 s.
Each function below gives exactly what its regular expression gives (the groups the converter reads), worked
out from the expression's backtracking order and tested against it on generated texts
(tests/test_bfcl_linear_patterns.py); `\\s` is str.isspace and `\\w` is str.isalnum or `_`, as in `re`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator

# official_js_dict_regex's pair expression (javascript_types.parse_object): matched in linear time by
# js_object_pairs, and as it is across lines (kept here, not there, so this module needs nothing of the converter).
OBJECT_PAIR = re.compile(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)")
_SPACES = re.compile(r"\s*")
_WORD = re.compile(r"\w*")


def _match_end(pattern: re.Pattern[str], text: str, position: int) -> int:
    """Where `pattern` (one that matches the empty string) stops matching from `position`."""
    found = pattern.match(text, position)
    # a pattern matching the empty string always matches; the fallback only satisfies the type
    return found.end() if found is not None else min(position, len(text))


def _skip_spaces(text: str, position: int) -> int:
    return _match_end(_SPACES, text, position)


def _skip_word(text: str, position: int) -> int:
    return _match_end(_WORD, text, position)


def _run_start(text: str, position: int, floor: int) -> int:
    """The start of the whitespace run that ends just before `position`, but not below `floor`."""
    while position > floor and text[position - 1].isspace():
        position -= 1
    return position


class _Next:
    """Where `needle` next occurs at or after a position (-1: nowhere); amortised linear when the positions asked
    for do not decrease, since every search starts past the answer before."""

    def __init__(self, text: str, needle: str):
        self.text, self.needle = text, needle
        self.asked, self.found = 0, text.find(needle)

    def at(self, position: int) -> int:
        if not (self.asked <= position and (self.found == -1 or position <= self.found)):
            self.asked, self.found = position, self.text.find(self.needle, position)
        return self.found


def _next_char_table(text: str, chars: str) -> list[int]:
    """For every position (and len(text)), the index of the next character in `chars` at or after it (len(text)
    when there is none)."""
    table = [len(text)] * (len(text) + 1)
    following = len(text)
    for index in range(len(text) - 1, -1, -1):
        if text[index] in chars:
            following = index
        table[index] = following
    return table


def _new_then_spaces(text: str, start: int) -> int | None:
    """`new\\s+` at `start`: where the spaces end, or None."""
    after = _skip_spaces(text, start + 3)
    return after if after > start + 3 else None


# ---- JavaScript --------------------------------------------------------------------------------------------


def js_array_2d(code: str) -> str | None:
    """javascript_types.ARRAY_2D.match(code), its group(0): `[[…], […]…]` or `new Array([…], […]…)`.

    Only the lazy `.*?` of each row has choices (every other part is decided by the next character), so the first
    match is found by trying each row's closing `]` from the left: F(q), the end of the match when a row closes at
    q, depends only on q, and a right-to-left pass computes it for every `]` at once."""
    if code.startswith("["):
        first, close = _skip_spaces(code, 1), "]"
    elif code.startswith("new"):
        after = _new_then_spaces(code, 0)
        if after is None or not code.startswith("Array(", after):
            return None
        first, close = _skip_spaces(code, after + 6), ")"
    else:
        return None
    if not code.startswith("[", first):
        return None
    end = _rows_end(code, first + 1, close)
    return None if end is None else code[:end]


def _rows_end(code: str, content: int, close: str) -> int | None:
    """The match's end for rows `.*?\\]\\s*(,\\s*\\[.*?\\]\\s*)*` then `close`, the first row's text starting at
    `content`; None when no choice of row ends completes it."""
    length = len(code)
    after_row: list[int | None] = [None] * (length + 2)  # by the index where a row's text starts: the match's end
    non_space = [length] * (length + 2)
    nearest: int | None = None  # for the current line: the end given by the nearest row close to the right
    for index in range(length - 1, content - 1, -1):
        char = code[index]
        non_space[index] = non_space[index + 1] if char.isspace() else index
        if char == "\n":
            nearest = None  # `.` does not match a newline: a row's text stops here
        elif char == "]":
            ended = _after_row_close(code, index, close, non_space, after_row)
            if ended is not None:
                nearest = ended
        after_row[index] = nearest
    return after_row[content]


def _after_row_close(code: str, index: int, close: str, non_space: list[int], after_row: list[int | None]) -> int | None:
    following = non_space[index + 1]
    if following < len(code) and code[following] == close:
        return following + 1
    if following < len(code) and code[following] == ",":
        opening = non_space[following + 1]
        if opening < len(code) and code[opening] == "[":
            return after_row[opening + 1]
    return None


def js_object_pairs(body: str) -> list[tuple[str, str]]:
    """OBJECT_PAIR.findall(body) for a body without a newline (parse_object's: the text between `{` and the
    first `}` on its line); `([^:]+):\\s*(.*?)(?:,\\s*(?=[^,]+:)|$)`."""
    if "\n" in body:
        return OBJECT_PAIR.findall(body)
    length = len(body)
    next_colon = _next_char_table(body, ":")
    next_comma = _next_char_table(body, ",")

    def lookahead(position: int) -> bool:  # (?=[^,]+:) at position
        return position < length and body[position] != "," and next_colon[position + 1] < next_comma[position]

    pairs = []
    start = 0
    while start < length:
        colon = next_colon[start]
        if colon == length:
            break  # no `:` left: no match can start here or later
        if colon == start:
            start += 1  # `[^:]+` needs a character
            continue
        value_start = _skip_spaces(body, colon + 1)
        position, end = value_start, length
        while position < length:
            if body[position] == ",":
                spaces_end = _skip_spaces(body, position + 1)
                # `\s*` is greedy: the lookahead is tried after all the spaces, then after one fewer; fewer
                # still gives the same answer as one fewer.
                if lookahead(spaces_end):
                    end = spaces_end
                    break
                if spaces_end - 1 >= position + 1 and next_colon[spaces_end] < next_comma[spaces_end]:
                    end = spaces_end - 1
                    break
            position += 1
        pairs.append((body[start:colon], body[value_start:position]))
        start = end
    return pairs


# ---- Java --------------------------------------------------------------------------------------------------


def _starts(text: str, needle: str) -> Iterator[int]:
    """Every index where `needle` starts, from the left."""
    index = text.find(needle)
    while index != -1:
        yield index
        index = text.find(needle, index + 1)


def java_array_elements(value: str) -> str | None:
    """java_types.ARRAY.search(value), its group(1): `new\\s+\\w+\\[\\]\\s*\\{(.*?)\\}`."""
    brace, newline = _Next(value, "}"), _Next(value, "\n")
    for start in _starts(value, "new"):
        after = _new_then_spaces(value, start)
        if after is None:
            continue
        word_end = _skip_word(value, after)
        if word_end == after or not value.startswith("[]", word_end):
            continue
        opening = _skip_spaces(value, word_end + 2)
        if not value.startswith("{", opening):
            continue
        closing, line_end = brace.at(opening + 1), newline.at(opening + 1)
        if closing != -1 and (line_end == -1 or line_end > closing):
            return value[opening + 1:closing]
    return None


def _arraylist_prefix(value: str, start: int) -> int | None:
    """`new\\s+ArrayList<\\w*>` at `start`: the index after `>`, or None."""
    after = _new_then_spaces(value, start)
    if after is None or not value.startswith("ArrayList<", after):
        return None
    word_end = _skip_word(value, after + 10)
    return word_end + 1 if value.startswith(">", word_end) else None


def java_arraylist_as_list(value: str) -> str | None:
    """java_types.ARRAYLIST_AS_LIST.search(value), its group(1): `new\\s+ArrayList<\\w*>\\(Arrays\\.asList\\((.+?)\\)\\)`."""
    closing, newline = _Next(value, "))"), _Next(value, "\n")
    for start in _starts(value, "new"):
        after = _arraylist_prefix(value, start)
        if after is None or not value.startswith("(Arrays.asList(", after):
            continue
        content = after + 15
        end, line_end = closing.at(content + 1), newline.at(content)
        if end != -1 and (line_end == -1 or line_end > end):
            return value[content:end]
    return None


def java_arraylist_adds_body(value: str) -> str | None:
    """java_types.ARRAYLIST_ADDS.search(value), its group(1) (DOTALL): `new\\s+ArrayList<\\w*>\\(\\)\\s*\\{\\{\\s*(.+?)\\s*\\}\\}`.

    After `{{` and the spaces (end w): the group runs from w to the first `}}` after w (less the spaces before it,
    at least one character); with no `}}` after w, a `}}` at w itself gives the last space as the group."""
    closing = _Next(value, "}}")
    for start in _starts(value, "new"):
        after = _arraylist_prefix(value, start)
        if after is None or not value.startswith("()", after):
            continue
        opening = _skip_spaces(value, after + 2)
        if not value.startswith("{{", opening):
            continue
        content = opening + 2
        spaces_end = _skip_spaces(value, content)
        end = closing.at(spaces_end + 1)
        if end != -1:
            return value[spaces_end:max(spaces_end + 1, _run_start(value, end, spaces_end + 1))]
        if spaces_end - 1 >= content and value.startswith("}}", spaces_end):
            return value[spaces_end - 1:spaces_end]
    return None


def java_arraylist_added(body: str) -> list[str]:
    """java_types.ARRAYLIST_ADD.findall(body): `add\\((.+?)\\)`."""
    found = []
    closing, newline = _Next(body, ")"), _Next(body, "\n")
    start = body.find("add(")
    while start != -1:
        content = start + 4
        end, line_end = closing.at(content + 1), newline.at(content)
        if end != -1 and (line_end == -1 or line_end > end):
            found.append(body[content:end])
            start = body.find("add(", end + 1)
        else:
            start = body.find("add(", start + 1)
    return found


def _hashmap_prefix(value: str, start: int) -> int | None:
    """`new\\s+HashMap<` at `start`: the index after `<`, or None."""
    after = _new_then_spaces(value, start)
    return after + 8 if after is not None and value.startswith("HashMap<", after) else None


def _empty_call_after(value: str, angle: int) -> int | None:
    """`>\\s*\\(\\)` at `angle`: the index after `()`, or None."""
    parenthesis = _skip_spaces(value, angle + 1)
    return parenthesis + 2 if value.startswith("()", parenthesis) else None


def java_hashmap_body(value: str) -> str | None:
    """java_types.HASHMAP_BODY.search(value), its group(1) (DOTALL):
    `new\\s+HashMap<.*?>\\s*\\(\\)\\s*\\{\\s*\\{?\\s*(.*?)\\s*\\}?\\s*\\}`.

    The `>` is the first one after `HashMap<` followed by `\\s*\\(\\)\\s*\\{`; the rest matches when a `}` follows,
    and then the group runs from after the spaces, one optional `{` and the spaces after it, to the first `}` (less
    the spaces before it). With no `}` after that `{`, no later start can match either."""
    opened: list[tuple[int, int]] | None = None  # (`>`, its `{`) for every `>` followed by `\s*\(\)\s*\{`
    for start in _starts(value, "new"):
        after = _hashmap_prefix(value, start)
        if after is None:
            continue
        if opened is None:
            opened = []
            for angle in _starts(value, ">"):
                called = _empty_call_after(value, angle)
                if called is not None:
                    brace = _skip_spaces(value, called)
                    if value.startswith("{", brace):
                        opened.append((angle, brace))
        index = bisect_left(opened, (after, -1))
        if index == len(opened):
            return None
        content = _skip_spaces(value, opened[index][1] + 1)
        if value.startswith("{", content):
            content = _skip_spaces(value, content + 1)
        closing = value.find("}", content)
        if closing == -1:
            return None
        return value[content:max(content, _run_start(value, closing, content))]
    return None


def java_hashmap_puts(body: str) -> list[tuple[str, str]]:
    """java_types.HASHMAP_PUT.findall(body): `put\\(\\"(.*?)\\",\\s*(.*?)\\)`.

    A key ends at the first `",` on its line after which (and the spaces, new lines included) a `)` comes on the
    same line; a right-to-left pass finds that `",` for every position at once."""
    length = len(body)
    next_parenthesis = _next_char_table(body, ")")
    next_newline = _next_char_table(body, "\n")

    def value_start(quote: int) -> int:
        return _skip_spaces(body, quote + 2)

    first_key_end: list[int | None] = [None] * (length + 1)
    nearest: int | None = None
    for index in range(length - 1, -1, -1):
        if body[index] == "\n":
            nearest = None
        elif body.startswith('",', index):
            start = value_start(index)
            if start < length and next_parenthesis[start] < next_newline[start]:
                nearest = index
        first_key_end[index] = nearest
    found = []
    start = body.find('put("')
    while start != -1:
        key_end = first_key_end[start + 5]
        if key_end is None:
            start = body.find('put("', start + 1)
            continue
        content = value_start(key_end)
        end = next_parenthesis[content]
        found.append((body[start + 5:key_end], body[content:end]))
        start = body.find('put("', end + 1)
    return found


def java_hashmap_empty(value: str) -> bool:
    """Whether java_types.HASHMAP_EMPTY.search(value) matches: `new\\s+HashMap<.*?>\\s*\\(\\)` (`.` stops at a new
    line, the spaces do not)."""
    called: list[int] | None = None  # every `>` followed by `\s*\(\)`
    newline = _Next(value, "\n")
    for start in _starts(value, "new"):
        after = _hashmap_prefix(value, start)
        if after is None:
            continue
        if called is None:
            called = [angle for angle in _starts(value, ">") if _empty_call_after(value, angle) is not None]
        index = bisect_left(called, after)
        line_end = newline.at(after)
        if index < len(called) and (line_end == -1 or line_end > called[index]):
            return True
    return False

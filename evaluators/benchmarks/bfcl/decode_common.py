"""What every prompt-mode decode starts from, and how a decode fails."""

from __future__ import annotations

# official_wraps_in_brackets / official_strips_backticks_newlines_spaces_only: only these characters are
# stripped from both ends (not tabs, not "\r", not a fence's language tag).
STRIPPED = "`\n "


class DecodeFailure(Exception):
    """The output cannot be decoded; `rule` names the official_* (or strict_*) rule that decided it."""

    def __init__(self, rule: str, detail: str):
        super().__init__(detail)
        self.rule = rule
        self.detail = detail


def bracketed(text: str) -> str:
    """The model's text as the official decoders read it: backticks, newlines and spaces stripped from both
    ends, then `[` prepended and `]` appended where missing (official_wraps_in_brackets)."""
    text = text.strip(STRIPPED)
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    return text

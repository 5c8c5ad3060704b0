"""The official request code as data: where its `model_inference/` folder is, and the prompt texts
read out of it with `ast` (module-level string assignments), never imported or executed."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from evaluators.core.errors import DataError

CODE_DIR = "model_inference"

# The files the official requests are built from, relative to `model_inference/`.
PROMPT_FILES = {
    "en": "prompt_en.py",
    "zh": "prompt_zh.py",
    "multi_turn_agent": "multi_turn/APIModel_agent.py",
    "multi_turn_user": "multi_turn/APIModel_user.py",
    "multi_step_agent": "multi_step/APIModel_agent.py",
}


def find_code_dir(language_dir: Path) -> Path | None:
    """`model_inference/` beside the `data_<lang>` folder (DIR/data_en + DIR/model_inference) or one
    level up from `data_all/` (a repository checkout); None when neither holds the prompt files."""
    for root in (language_dir.parent, language_dir.parent.parent):
        candidate = root / CODE_DIR
        if (candidate / PROMPT_FILES["en"]).is_file():
            return candidate
    return None


def _parse(path: Path) -> ast.Module:
    if not path.is_file():
        raise DataError(f"official prompt file missing (expected {CODE_DIR}/{_relative(path)})", path)
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"official prompt file cannot be read as Python source: {exc}", path) from None


def _relative(path: Path) -> str:
    parts = path.parts
    return "/".join(parts[parts.index(CODE_DIR) + 1:]) if CODE_DIR in parts else path.name


@lru_cache(maxsize=32)
def _constants(path_text: str) -> dict[str, str]:
    constants: dict[str, str] = {}
    for node in _parse(Path(path_text)).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant) and isinstance(value.value, str):
            constants[target.id] = value.value
    return constants


def _resolved(path: Path) -> str:
    """The file's real path, as the parsed texts are cached by it (looked up once: requests ask often)."""
    return _real_path(str(path))


@lru_cache(maxsize=256)
def _real_path(path_text: str) -> str:
    return str(Path(path_text).resolve())


def string_constants(path: Path) -> dict[str, str]:
    """Module-level `NAME = "literal"` assignments of one official file."""
    return dict(_constants(_resolved(path)))


def string_constant(path: Path, name: str) -> str:
    constants = _constants(_resolved(path))
    if name not in constants:
        raise DataError(f"official prompt constant {name} not found in {CODE_DIR}/{_relative(path)}", path)
    return constants[name]


@lru_cache(maxsize=8)
def _opening_lines(path_text: str) -> dict[str, str]:
    """The simulated user's fixed first agent line per language: in `APIUSER.get_init_prompt`, the
    `{"role": "user", "content": "<literal>"}` message of each `if self.language == "<lang>"` branch."""
    tree = _parse(Path(path_text))
    lines: dict[str, str] = {}
    for method in ast.walk(tree):
        if not (isinstance(method, ast.FunctionDef) and method.name == "get_init_prompt"):
            continue
        for branch in ast.walk(method):
            if not isinstance(branch, ast.If):
                continue
            language = _language_test(branch.test)
            if language is None:
                continue
            for node in (n for statement in branch.body for n in ast.walk(statement)):
                text = _user_message_literal(node)
                if text is not None:
                    lines.setdefault(language, text)
    return lines


def _language_test(test: ast.expr) -> str | None:
    """`self.language == "en"` -> "en"."""
    if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.left, ast.Attribute) and test.left.attr == "language"
            and isinstance(test.comparators[0], ast.Constant) and isinstance(test.comparators[0].value, str)):
        return test.comparators[0].value
    return None


def _user_message_literal(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Dict):
        return None
    fields = {k.value: v for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant)}
    role, content = fields.get("role"), fields.get("content")
    if (isinstance(role, ast.Constant) and role.value == "user" and isinstance(content, ast.Constant)
            and isinstance(content.value, str)):
        return content.value
    return None


def opening_line(path: Path, language: str) -> str:
    lines = _opening_lines(_resolved(path))
    if language not in lines:
        raise DataError(f"the simulated user's opening line for {language!r} not found in "
                        f"{CODE_DIR}/{_relative(path)} (APIUSER.get_init_prompt)", path)
    return lines[language]


@dataclass(frozen=True)
class OfficialCode:
    """The official `model_inference/` folder of one data source."""

    root: Path

    def file(self, key: str) -> Path:
        return self.root / PROMPT_FILES[key]

    def constant(self, key: str, name: str) -> str:
        return string_constant(self.file(key), name)

    def opening_line(self, language: str) -> str:
        return opening_line(self.file("multi_turn_user"), language)

    def check(self) -> None:
        """Every file the official requests need exists and parses (a clear error naming the first that does not)."""
        for key in PROMPT_FILES:
            path = self.file(key)
            if not path.is_file():  # checked each time: the parsed texts are cached, the files may have gone
                _parse(path)
            _constants(_resolved(path))

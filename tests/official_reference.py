"""Test-only: the requests the official ACEBench code builds, assembled here from the official files
(constants read with `ast`, never imported) following `generate.py`, `apimodel_inference.py` and the
agent and user classes step by step, independently of the project's own builder."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any


def constants(path: Path) -> dict[str, str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def _wrapped(functions: Any) -> list[Any]:
    return [functions] if isinstance(functions, (dict, str)) else functions


class OfficialReference:
    def __init__(self, root: Path):
        code = root / "model_inference"
        self.prompt = {lang: constants(code / f"prompt_{lang}.py") for lang in ("en", "zh")}
        self.turn_agent = constants(code / "multi_turn" / "APIModel_agent.py")
        self.step_agent = constants(code / "multi_step" / "APIModel_agent.py")
        self.user = constants(code / "multi_turn" / "APIModel_user.py")
        self.user_source = (code / "multi_turn" / "APIModel_user.py").read_text(encoding="utf-8")

    def single_turn(self, row: dict[str, Any], language: str) -> list[dict[str, str]]:
        """generate_singal + APIModelInference.single_turn_inference for a normal or special row."""
        functions = _wrapped(row["function"])
        if "preference" in row["id"]:
            time, profile = "", row["profile"]
        else:
            time, profile = row["time"], ""
        category = row["id"].rsplit("_", 1)[0]
        p, suffix = self.prompt[language], language.upper()
        if "special" in category:
            system = p[f"SYSTEM_PROMPT_FOR_SPECIAL_DATA_{suffix}"].format(time=time, function=functions)
        elif "preference" in category:
            system = p[f"SYSTEM_PROMPT_FOR_PREFERENCE_DATA_{suffix}"].format(profile=profile, function=functions)
        else:
            system = p[f"SYSTEM_PROMPT_FOR_NORMAL_DATA_{suffix}"].format(time=time, function=functions)
        user = p[f"USER_PROMPT_{suffix}"].format(question=row["question"])
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def first_multi_step_agent(self, row: dict[str, Any]) -> list[dict[str, str]]:
        """APIAgent_step built without a language (so "zh"), time "", history = the task's line."""
        functions = _wrapped(row["function"])
        history = "user:" + str(row["question"]) + "\n"
        system = self.step_agent["MULTI_TURN_AGENT_PROMPT_SYSTEM_ZH"].format(time="")
        user = self.step_agent["MULTI_TURN_AGENT_PROMPT_USER_ZH"].format(functions=functions, history=history)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def first_user(self, row: dict[str, Any], language: str) -> list[dict[str, str]]:
        """APIUSER.get_init_prompt: the rules with the instruction, then the fixed opening line."""
        suffix = language.upper()
        if "BaseApi" in row["involved_classes"]:
            template = self.user[f"SYSTEM_PROMPT_BASE_{suffix}"]
        else:
            template = self.user[f"SYSTEM_PROMPT_TRAVEL_{suffix}"]
        return [{"role": "system", "content": template.format(instruction=row["question"])},
                {"role": "user", "content": self._opening(language)}]

    def first_multi_turn_agent(self, row: dict[str, Any], language: str, opening: str) -> list[dict[str, str]]:
        """APIAgent_turn.respond on the history holding the simulated user's first line."""
        suffix = language.upper()
        system = self.turn_agent[f"MULTI_TURN_AGENT_PROMPT_SYSTEM_{suffix}"]
        if "Travel" in row["involved_classes"]:
            system += self.prompt[language][f"TRAVEL_PROMPT_{suffix}"]
        if "BaseApi" in row["involved_classes"]:
            system += self.prompt[language][f"BASE_PROMPT_{suffix}"]
        history = "user:" + opening + "\n"
        user = self.turn_agent[f"MULTI_TURN_AGENT_PROMPT_USER_{suffix}"].format(functions=_wrapped(row["function"]),
                                                                               history=history)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def _opening(self, language: str) -> str:
        """The literal content of the user message in get_init_prompt's branch for this language."""
        tree = ast.parse(self.user_source)
        for node in ast.walk(tree):
            if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                    and getattr(node.test.comparators[0], "value", None) == language):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Dict):
                        pairs = {k.value: v for k, v in zip(inner.keys, inner.values)}
                        if getattr(pairs.get("role"), "value", None) == "user":
                            return pairs["content"].value
        raise AssertionError(f"no opening line for {language}")

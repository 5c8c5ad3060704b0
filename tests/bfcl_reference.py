"""Test-only: the messages the official prompting handler sends, rebuilt here from the wheel's own files
(read from the zip; constants with `ast.literal_eval`, the hint sentences from the f-strings of utils.py;
nothing imported or executed), following `load_dataset_entry` -> `add_language_specific_hint_to_function_doc`
-> `system_prompt_pre_processing_chat_model` -> `formulate_system_prompt` step by step, independently of
the project's builder."""

from __future__ import annotations

import ast
import copy
import json
import zipfile
from pathlib import Path
from typing import Any


class OfficialReference:
    def __init__(self, wheel: Path):
        with zipfile.ZipFile(wheel) as bundle:
            self.prompts = self._assignments(bundle.read("bfcl_eval/constants/default_prompts.py").decode())
            utils = ast.parse(bundle.read("bfcl_eval/utils.py").decode())
        self.doc_hints = self._returned_strings(utils, "_get_language_specific_hint")  # java, js, python
        self.sentences = self._appended_templates(utils, "_func_doc_language_specific_pre_processing")

    @staticmethod
    def _assignments(source: str) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for node in ast.parse(source).body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                try:
                    values[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    pass  # PROMPT_TEMPLATE_MAPPING refers to names; the template is read by its own name
        return values

    @staticmethod
    def _function(tree: ast.Module, name: str) -> ast.FunctionDef:
        return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)

    def _returned_strings(self, tree: ast.Module, name: str) -> list[str]:
        returns = [n for n in ast.walk(self._function(tree, name)) if isinstance(n, ast.Return)]
        return [r.value.value for r in sorted(returns, key=lambda r: r.lineno)]  # type: ignore[union-attr]

    def _appended_templates(self, tree: ast.Module, name: str) -> list[str]:
        """Every `+=` text of the function in source order, as str.format templates ({} per f-string value)."""
        found = []
        for node in ast.walk(self._function(tree, name)):
            if isinstance(node, ast.AugAssign):
                value = node.value
                if isinstance(value, ast.Constant):
                    found.append((node.lineno, value.value.replace("{", "{{").replace("}", "}}")))
                elif isinstance(value, ast.JoinedStr):
                    text = "".join(p.value.replace("{", "{{").replace("}", "}}") if isinstance(p, ast.Constant) else "{}"
                                   for p in value.values)
                    found.append((node.lineno, text))
        return [text for _, text in sorted(found)]

    # -- add_language_specific_hint_to_function_doc ---------------------------------------------------
    def hinted(self, entry: dict[str, Any]) -> list[dict[str, Any]]:
        category = entry["id"].rsplit("_", 1)[0]
        is_js = "javascript" in category
        is_java = "java" in category and not is_js
        java_hint, js_hint, python_hint = self.doc_hints
        java_any, java_type, java_list, js_any, js_type, js_list, js_dict = self.sentences
        function = copy.deepcopy(entry["function"])
        for item in function:
            item["description"] = item["description"] + (java_hint if is_java else js_hint if is_js else python_hint)
            properties = item["parameters"]["properties"]
            if is_java:
                for key, value in properties.items():
                    if value["type"] == "any":
                        properties[key]["description"] += java_any
                    else:
                        value["description"] += java_type.format(value["type"])
                    if value["type"] == "ArrayList" or value["type"] == "Array":
                        value["description"] += java_list.format(value["items"]["type"])
                        del value["items"]
                    value["type"] = "string"
            elif is_js:
                for key, value in properties.items():
                    if value["type"] == "any":
                        properties[key]["description"] += js_any
                    else:
                        value["description"] += js_type.format(value["type"])
                    if value["type"] == "array":
                        value["description"] += js_list.format(value["items"]["type"])
                        del value["items"]
                    if value["type"] == "dict" and "properties" in value:
                        value["description"] += js_dict.format(json.dumps(value["properties"]))
                        del value["properties"]
                    value["type"] = "string"
        return function

    # -- formulate_system_prompt (default configuration) ----------------------------------------------
    def system_prompt(self, functions: list[dict[str, Any]]) -> str:
        p = self.prompts
        config = dict(part.split("=") for part in p["DEFAULT_SYSTEM_PROMPT_FORMAT"].split("&"))
        assert config["func_doc_fmt"] == "json" and config["prompt_fmt"] == "plaintext"
        style = p["PROMPT_STYLE_TEMPLATES"][config["style"]]
        call_key = "tool_call_with_tag" if config["tool_call_tag"] == "True" else "tool_call_no_tag"
        tool_call_format = style[call_key].format(output_format=p["OUTPUT_FORMAT_MAPPING"][config["ret_fmt"]],
                                                  param_types=p["PARAM_TYPE_MAPPING"][config["ret_fmt"]])
        available_tools = style["available_tools"].format(format=config["func_doc_fmt"],
                                                          functions=json.dumps(functions, indent=4))
        return p["_PLAINTEXT_SYSTEM_PROMPT_TEMPLATE"].format(
            persona=style["persona"], task=style["task"], tool_call_format=tool_call_format,
            multiturn_behavior=style["multiturn_behavior"], available_tools=available_tools)

    # -- system_prompt_pre_processing_chat_model + the handler's first-turn messages ------------------
    def messages(self, entry: dict[str, Any]) -> list[dict[str, Any]]:
        prompts = copy.deepcopy(entry["question"][0])
        system_prompt = self.system_prompt(self.hinted(entry))
        if prompts[0]["role"] == "system":
            prompts[0]["content"] = system_prompt + "\n\n" + prompts[0]["content"]
        else:
            prompts.insert(0, {"role": "system", "content": system_prompt})
        return prompts

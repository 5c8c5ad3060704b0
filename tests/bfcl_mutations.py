"""Test-only: BFCL prediction texts built from the gold answers, for comparing our scorer with the official one.

`oracle_answer` is the exact gold written as model text (tests/bfcl_oracle.py; `[]` for the irrelevance
categories, a bare call of the first function for live_relevance). `mutated_answer` changes it in one seeded
way per (item, round): a call-level change (a value, a parameter left out or added, a wrong name, calls
reordered, dropped or repeated, an argument written as an expression, a positional argument, ...) and then,
sometimes, a change of the text around the calls (fences, prose, missing brackets, spacing). Java and
JavaScript answers also get changes of their source text. The same (item, round) always gives the same text.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evaluators.benchmarks.bfcl.categories import IRRELEVANCE, RELEVANCE
from evaluators.core.types import Sample
from tests import bfcl_oracle, bfcl_source_render

SEED = "bfcl-official-parity"
TEXT_CHANGE_SHARE = 0.5


def oracle_answer(sample: Sample) -> str:
    functions = sample.input["function"] or []
    if sample.subset in IRRELEVANCE:
        return "[]"
    if sample.subset in RELEVANCE:
        return f"[{functions[0]['name']}()]"
    return bfcl_oracle.oracle_text(sample.subset, functions, sample.gold)


def mutated_answer(sample: Sample, round_: int) -> tuple[str, str]:
    """(what was changed, the text) for one item in one round."""
    rng = random.Random(f"{SEED}:{round_}:{sample.id}")
    if sample.subset in IRRELEVANCE or sample.subset in RELEVANCE:
        return _detection_text(rng, sample)
    calls = _gold_calls(sample)
    call_kind = rng.choice(list(CALL_CHANGES))
    CALL_CHANGES[call_kind](rng, calls)
    language = sample.meta["language"]
    text = _render(rng, calls, language)
    changes = PYTHON_TEXT_CHANGES if language == "python" else SOURCE_TEXT_CHANGES
    # Half the answers keep the plain text, so the call-level changes are judged on their own too.
    text_kind = rng.choice(list(changes)) if rng.random() < TEXT_CHANGE_SHARE else "as_is"
    text = changes[text_kind](text, language)
    return f"{call_kind}+{text_kind}", text


# ---- the gold calls, as (name, argument -> value or source text) -------------------------------------------


@dataclass
class Argument:
    value: Any
    source: str | None = None  # written as this text instead of the value's rendering


@dataclass
class Call:
    name: str
    arguments: dict[str, Argument]
    allowed: dict[str, list]
    doc: dict
    positional: list[str] | None = None
    splat: bool = False


def _gold_calls(sample: Sample) -> list[Call]:
    functions = sample.input["function"] or []
    calls = []
    for gold_call in sample.gold:
        name, allowed = next(iter(gold_call.items()))
        doc = next((function for function in functions if function.get("name") == name), {})
        arguments = {param: Argument(value) for param, value in bfcl_oracle.needed_arguments(allowed, doc).items()}
        calls.append(Call(name, arguments, allowed, doc))
    return calls


def _render(rng: random.Random, calls: list[Call], language: str) -> str:
    render_value = _value_renderer(rng, language)
    rendered = []
    for call in calls:
        properties = call.doc.get("parameters", {}).get("properties", {})
        parts = list(call.positional or [])
        for param, argument in call.arguments.items():
            source = argument.source if argument.source is not None else render_value(argument.value, properties.get(param, {}))
            parts.append(f"{param}={source}")
        if call.splat:
            parts.append("**kw")
        rendered.append(f"{call.name}({', '.join(parts)})")
    return "[" + ", ".join(rendered) + "]"


def _value_renderer(rng: random.Random, language: str) -> Callable[[Any, dict], str]:
    """Python: repr. Java / JavaScript: one of the two oracle renderers of the tests, chosen per answer."""
    if language == "java":
        return rng.choice([bfcl_oracle.java_value_text, bfcl_source_render.java_value_text])
    if language == "javascript":
        return rng.choice([bfcl_oracle.javascript_value_text, bfcl_source_render.javascript_value_text])
    return lambda value, doc: repr(value)


# ---- call-level changes --------------------------------------------------------------------------------------


def _changed_value(rng: random.Random, value: Any) -> Any:
    if isinstance(value, bool):
        options = [not value, int(value), str(value).lower(), None]
    elif isinstance(value, int):
        options = [value + 1, float(value), str(value), True, -value, [value]]
    elif isinstance(value, float):
        options = [value + 0.5, int(value), str(value), -value, round(value, 1)]
    elif isinstance(value, str):
        options = [value.upper(), value.replace(" ", "-"), value + "x", value.replace(" ", ""), "", [value],
                   value.title(), " " + value + ".", 5, value.replace(",", "")]
    elif isinstance(value, list):
        options = [list(reversed(value)), value[:-1], value + value[:1], tuple(value), [], [str(e) for e in value],
                   [float(e) if isinstance(e, int) and not isinstance(e, bool) else e for e in value], "x"]
    elif isinstance(value, dict):
        keys = list(value)
        without_first = {k: v for k, v in value.items() if keys and k != keys[0]}
        options = [without_first, {**value, "extra_key": 1}, {k: v.upper() if isinstance(v, str) else v for k, v in value.items()},
                   {}, str(value), [value]]
    else:
        options = ["None", 0, ""]
    return rng.choice(options)


def _any_argument(rng: random.Random, calls: list[Call]) -> tuple[Call, str] | None:
    with_arguments = [call for call in calls if call.arguments]
    if not with_arguments:
        return None
    call = rng.choice(with_arguments)
    return call, rng.choice(list(call.arguments))


def value_changed(rng: random.Random, calls: list[Call]) -> None:
    if picked := _any_argument(rng, calls):
        call, param = picked
        call.arguments[param] = Argument(_changed_value(rng, call.arguments[param].value))


def param_missing(rng: random.Random, calls: list[Call]) -> None:
    if picked := _any_argument(rng, calls):
        call, param = picked
        del call.arguments[param]


def param_extra(rng: random.Random, calls: list[Call]) -> None:
    call = rng.choice(calls)
    documented = [p for p in call.doc.get("parameters", {}).get("properties", {}) if p not in call.arguments]
    if documented:
        param = rng.choice(documented)
        value = bfcl_oracle.first_allowed(call.allowed.get(param, [""]))
        call.arguments[param] = Argument(value if value != "" else "zzz")
    else:
        call.arguments["bogus"] = Argument(1)


def optional_given(rng: random.Random, calls: list[Call]) -> None:
    """An optional gold parameter given one of its allowed values (still right)."""
    call = rng.choice(calls)
    optional = [p for p, allowed in call.allowed.items()
                if "" in allowed and p not in call.arguments and bfcl_oracle.first_allowed(allowed) != ""]
    if optional:
        param = rng.choice(optional)
        call.arguments[param] = Argument(bfcl_oracle.first_allowed(call.allowed[param]))


def alternative_allowed(rng: random.Random, calls: list[Call]) -> None:
    """Another allowed value of the gold (still right, unless nested values are needed)."""
    if picked := _any_argument(rng, calls):
        call, param = picked
        alternatives = [value for value in call.allowed.get(param, []) if value != ""]
        if alternatives:
            call.arguments[param] = Argument(rng.choice(alternatives))


def name_wrong(rng: random.Random, calls: list[Call]) -> None:
    call = rng.choice(calls)
    call.name = call.name.replace(".", "_") if "." in call.name else rng.choice([call.name + "x", call.name.upper()])


def calls_reordered(rng: random.Random, calls: list[Call]) -> None:
    rng.shuffle(calls)


def call_missing_or_repeated(rng: random.Random, calls: list[Call]) -> None:
    if len(calls) > 1:
        calls.pop(rng.randrange(len(calls)))
    else:
        calls.append(copy.deepcopy(calls[0]))


def _expression(rng: random.Random, value: Any) -> str:
    """An argument written as Python source other than a plain literal: signs, arithmetic, names, calls,
    containers, literals in other spellings."""
    literal = repr(value)
    options = [f"+{literal}", f"-{literal}", "not True", "not False", f"{literal}*1", f"{literal}+0", f"{literal}+{literal}",
               "x", f"g({literal})", f"g(a={literal})", "d['k']", f"({literal},)", f"[{literal}]*2", "...",
               f"{{'a': {literal}}}", "[{'a': 1}, 'x']", "None", "''", f"[{literal}, None]", "lambda: 1", "math.pi",
               f"{{{literal}}}", "f'{x}'", "2**3", "10/4", "True", "1.0", "[]", "{}", "[[]]", "[{}]", f"[{{'k': {literal}}}]",
               f"({literal})", "1e3", "-0.0", f"str({literal})", "'%s' % 1", "0x1F", "1_000", "-1", "+1.5"]
    if isinstance(value, (list, str)) and value:
        options.append(f"{literal}[0]")
    return rng.choice(options)


def expression_argument(rng: random.Random, calls: list[Call]) -> None:
    if picked := _any_argument(rng, calls):
        call, param = picked
        call.arguments[param].source = _expression(rng, call.arguments[param].value)


def positional_argument(rng: random.Random, calls: list[Call]) -> None:
    rng.choice(calls).positional = [rng.choice(["1", "'a'", "x"])]


def keyword_splat(rng: random.Random, calls: list[Call]) -> None:
    rng.choice(calls).splat = True


def unchanged(rng: random.Random, calls: list[Call]) -> None:
    """The calls stay the gold ones (only the text around them may change)."""


CALL_CHANGES: dict[str, Callable[[random.Random, list[Call]], None]] = {
    change.__name__: change for change in (
        value_changed, param_missing, param_extra, optional_given, alternative_allowed, name_wrong,
        calls_reordered, call_missing_or_repeated, expression_argument, positional_argument, keyword_splat, unchanged)
}


# ---- text-level changes (text, language) -> text ---------------------------------------------------------------

TextChange = Callable[[str, str], str]

PYTHON_TEXT_CHANGES: dict[str, TextChange] = {
    "as_is": lambda text, language: text,
    "fence_python": lambda text, language: f"```python\n{text}\n```",
    "fence_plain": lambda text, language: f"```\n{text}\n```",
    "fence_json": lambda text, language: f"```json\n{text}\n```",
    "prose_before": lambda text, language: "Sure! " + text,
    "prose_after": lambda text, language: text + "\nThese calls answer the question.",
    "period_after": lambda text, language: text + ".",
    "no_brackets": lambda text, language: text[1:-1],
    "spaced_equals": lambda text, language: text.replace("=", " = "),
    "surrounding_space": lambda text, language: f"  {text}\n\n",
    "one_call_per_line": lambda text, language: text.replace("), ", "),\n"),
    "bracket_unclosed": lambda text, language: text[:-1],
    "double_quotes": lambda text, language: text.replace("'", '"'),
    "dotted_prefix": lambda text, language: text.replace("[", "[functions.", 1),
}

SOURCE_TEXT_CHANGES: dict[str, TextChange] = {
    "as_is": lambda text, language: text,
    "single_quotes": lambda text, language: text.replace('"', "'"),
    "no_comma_space": lambda text, language: text.replace(", ", ","),
    "last_argument_cut": lambda text, language: text.rsplit(",", 1)[0] + ")]" if "," in text else text,
    "statement": lambda text, language: text[1:-1] + ";",
    "flipped_literal": lambda text, language: text.replace("true", "false") if "true" in text else text.replace("1", "2"),
    "fenced": lambda text, language: f"```{language}\n{text}\n```",
    "upper_case": lambda text, language: text.upper(),
    "colon_arguments": lambda text, language: text.replace("=", ": "),
    "positional_first": lambda text, language: text.replace("(", "(1, ", 1),
    "suffix_dropped": lambda text, language: text.replace("L,", ",").replace("f,", ",").replace("L)", ")").replace("f)", ")"),
    "prose_before": lambda text, language: "Here you go: " + text,
    "no_brackets": lambda text, language: text[1:-1],
    "float_written_int": lambda text, language: text.replace(".0", ""),
    "int_written_float": lambda text, language: text.replace("=1", "=1.0", 1),
    "string_unquoted": lambda text, language: text.replace('"', "", 2),
}


# ---- irrelevance and relevance ---------------------------------------------------------------------------------


def detection_candidates(functions: list[dict], name: str) -> dict[str, str]:
    """Kind -> text for the irrelevance / relevance items: no call, calls, and calls the decoder rejects."""
    required = functions[0].get("parameters", {}).get("required", []) if functions else []
    first = functions[0]["name"] if functions else name
    arguments = ", ".join(f"{param}='x'" for param in required)
    return {
        "empty_list": "[]", "prose": "I cannot help with that using these functions.", "empty": "",
        "call": f"[{name}(x=1)]", "bare_call": f"{name}(x=1)", "fenced_python_call": f"```python\n[{name}(x=1)]\n```",
        "fenced_plain_call": f"```\n[{name}()]\n```", "bare_name": f"[{name}]", "call_in_prose": f"Call [{name}(x=1)]",
        "lambda_argument": f"[{name}(x=lambda y: y)]", "empty_dict": "[{}]", "positional_call": f"[{name}(1)]",
        "required_arguments": f"[{first}({arguments})]", "two_calls": f"[{name}(), {name}(a=[1, 2])]",
        "none": "None", "nested_empty_list": "[[]]", "dotted_call": f"[{name}.run(q='x')]",
    }


def _detection_text(rng: random.Random, sample: Sample) -> tuple[str, str]:
    functions = sample.input["function"] or []
    name = rng.choice(functions)["name"] if functions else "lookup"
    candidates = detection_candidates(functions, name)
    kind = rng.choice(sorted(candidates))
    return kind, candidates[kind]

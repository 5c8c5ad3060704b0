"""RunSettings: every setting a run takes, declared once (name, type, default, range, help) as a pydantic model.

Every front door is generated from it or held to it by a test (tests/test_run_settings_doors.py): the command
line's `run` flags (evaluators/cli/parser.py builds them from `DOORS`), the Evaluate form's fields (the rarely
changed ones under its *Advanced* fold) and the `start_run` API's parameters. The run request's builder
(evaluators/service/run_request.py) validates a door's raw input with `read_run_settings`, so a wrong value is
refused in the same words whichever door it came in by, then applies the benchmark's and the deployment's rules.

Raw input may write numbers as text (a form box, a flag) or as numbers (an API payload); empty text is unset.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, get_args

import annotated_types
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonDict

from evaluators.core.errors import ToolboardError
from evaluators.core.limits import echoed
from evaluators.engine.settings import DEFAULT_CONCURRENCY, DEFAULT_MAX_ATTEMPTS, DEFAULT_TEMPERATURE, ModelSettings

BENCHMARKS_OWN = "empty for the benchmark's own"
MAX_CONCURRENCY = 256


def setting(default: Any, help: str, *, title: str | None = None, label: str | None = None, empty: str | None = None,
            advanced: bool = False, wrong: str | None = None, **constraints: Any) -> Any:
    """One setting: its default, its help (the flag's help, an Advanced field's label, the API's docs), the form's
    label for a field shown unfolded (`title`), the words a message calls it by (`label`; default its name), what
    leaving it empty means (`empty`; None: it takes its default), whether the form folds it under Advanced, what a
    value of the wrong kind is told (`wrong`), and its range."""
    extra: JsonDict = {"label": label, "empty": empty, "advanced": advanced, "wrong": wrong}
    return Field(default, description=help, title=title, json_schema_extra=extra, **constraints)


Number = Annotated[float, Field(strict=True, allow_inf_nan=False)]
Whole = Annotated[int, Field(strict=True)]


class RoleEndpoint(BaseModel):
    """Another model the benchmark declares a role for (a simulated user, a judge); empty parts are unset."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)
    base_url: str = ""
    model: str = ""
    key_env: str = ""

    @model_validator(mode="before")
    @classmethod
    def _parts(cls, value: Any) -> Any:
        """Each part as text; `api_key_env` (as an Endpoint names it) and `api_base_url` read as aliases."""
        if not isinstance(value, Mapping):
            return value
        return {part: "" if (given := value.get(part) or value.get(f"api_{part}")) is None else str(given).strip()
                for part in ("base_url", "model", "key_env")}


class RunSettings(BaseModel):
    """Every setting of a run, as the front doors take it (the API key apart: it is never part of a setting)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    # The fields the form shows unfolded carry the label it gives them (`title`); the Advanced ones show their help.
    benchmark: str | None = setting(None, "benchmark name (see `list`)", title="Benchmark")
    base_url: str | None = setting(None, "endpoint base URL, e.g. http://127.0.0.1:8000/v1", title="Endpoint base URL")
    model: str | None = setting(None, "model name as the endpoint knows it, or local:smollm2 for the built-in local "
                                      "model (optional install, no key or network needed)", title="Model")
    api_key_env: str | None = setting(None, "environment variable holding the API key (never stored); the command "
                                            "line's default is OPENAI_API_KEY, its user's own; the API reads none "
                                            "unless one is named",
                                      title="…or the environment variable holding the key")
    language: str | None = setting(None, "one of the benchmark's languages, if it has any (default: its first)",
                                   title="Language")
    subsets: tuple[str, ...] = setting((), "subset or group names (default: all)",
                                       title="Subsets or groups (empty = every subset)",
                                       wrong="subsets must be a list of names")
    data_source: str | None = setting(None, "what the run reads: download (the deployment's data, else the "
                                            "published data), built-in example, or local folder", title="Data")
    data_folder: str | None = setting(None, "local copy of the benchmark data (with data_source local folder)",
                                      title="Local data folder")
    limit: Whole | None = setting(None, "at most N samples per subset (whole conversations for multi-turn)",
                                  title="Limit per subset (empty = all): the first N items of each subset; multi-turn "
                                        "subsets keep N whole conversations, each counted as all its turns",
                                  label="the limit per subset", empty="empty for every sample", ge=1)
    concurrency: Whole = setting(DEFAULT_CONCURRENCY, f"requests in flight at once (default {DEFAULT_CONCURRENCY})",
                                 title="Concurrency", ge=1, le=MAX_CONCURRENCY)
    request_mode: str | None = setting(None, "prompt (a text prompt) or tools (native tools); default: the "
                                             "benchmark's first (see `list`)",
                                       title="Request mode (text prompt or native tools)")
    prompt_style: str | None = setting(None, "benchmarks with a request profile (see `list`): official (the "
                                             "requests the official code sends), toolboard (our own wording) or auto "
                                             "(the default: official when the official prompt files are there)",
                                       title="Prompts: official = what the benchmark's official code sends, toolboard "
                                             "= this project's wording; auto = official when its files are there")
    temperature: Number | None = setting(None, f"default: the benchmark's (its official sampling, where it has one), "
                                               f"else {DEFAULT_TEMPERATURE:g}",
                                         title="Temperature (empty = unset: the benchmark's own sampling, else "
                                               f"{DEFAULT_TEMPERATURE:g})",
                                         empty=BENCHMARKS_OWN, ge=0.0, le=2.0)
    top_p: Number | None = setting(None, "default: the benchmark's, else not sent", empty=BENCHMARKS_OWN,
                                   advanced=True, gt=0.0, le=1.0)
    max_tokens: Whole | None = setting(None, "default: the benchmark's, else not sent", empty=BENCHMARKS_OWN,
                                       advanced=True, ge=1, le=1_000_000)
    timeout: Number = setting(ModelSettings.timeout, f"seconds per request (default {ModelSettings.timeout:g})",
                              label="the request timeout (seconds)", advanced=True, gt=0.0, le=3600.0)
    max_attempts: Whole = setting(DEFAULT_MAX_ATTEMPTS, "attempts per request before it counts as an error "
                                                        f"(default {DEFAULT_MAX_ATTEMPTS})",
                                  label="max attempts", advanced=True, ge=1, le=100)
    extra_body: dict[str, Any] = setting({}, 'JSON merged into each request body, e.g. {"top_k": 40}', advanced=True,
                                         wrong='the extra request fields must be a JSON object, e.g. {"top_k": 40}')
    use_cache: bool = setting(True, "reuse a cached response to an identical request (off: send every request)",
                              advanced=True, wrong="use_cache must be true or false")
    roles: dict[str, RoleEndpoint] = setting({}, "the other models the benchmark needs, {role name: {base_url, "
                                                 "model, key_env}} (see `list`)",
                                             wrong='roles must be {role name: {"base_url", "model", "key_env"}}')
    options: dict[str, str] = setting({}, "the benchmark's options, {option name: value} (see `list`)",
                                      wrong="options must be {option name: value}")

    @field_validator("benchmark", "base_url", "model", "api_key_env", "language", "data_source", "data_folder",
                     "request_mode", "prompt_style", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str | None:
        text = "" if value is None else str(value).strip()
        return text or None

    @field_validator("limit", "concurrency", "temperature", "top_p", "max_tokens", "timeout", "max_attempts",
                     mode="before")
    @classmethod
    def _typed_number(cls, value: Any, info: ValidationInfo) -> Any:
        """Text read as a number (empty: unset); a whole number written as 5.0 is 5, a number setting given 5 is
        5.0; unset (None or empty) takes the setting's default. Anything else is left for the field to refuse."""
        if isinstance(value, str):
            value = value.strip()
        if value is None or value == "":
            return default_of(str(info.field_name))
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            return value
        if number_range(str(info.field_name)).whole:
            return int(value) if isinstance(value, float) and math.isfinite(value) and value.is_integer() else value
        return float(value)

    @field_validator("subsets", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if value in (None, ""):
            return ()
        if isinstance(value, str):
            return (value.strip(),)
        if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
            return tuple(item.strip() for item in value if item.strip())
        return value

    @field_validator("extra_body", mode="before")
    @classmethod
    def _json_object(cls, value: Any) -> Any:
        if value in (None, ""):
            return {}
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError:
                return None
        return value

    @field_validator("use_cache", mode="before")
    @classmethod
    def _flag(cls, value: Any) -> Any:
        return True if value is None else value

    @field_validator("roles", "options", mode="before")
    @classmethod
    def _mapping(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("options", mode="before")
    @classmethod
    def _option_values(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {str(name).strip(): "" if given is None else str(given).strip() for name, given in value.items()}
        return value


SETTING_NAMES = tuple(RunSettings.model_fields)


@dataclass(frozen=True)
class NumberRange:
    """What a numeric setting may be, read from its declaration: within [low, high] ((low, high] when
    `low_open`), a whole number when `whole`; `empty` says what unset means (None: it takes its default)."""

    label: str
    low: float
    high: float | None
    empty: str | None
    low_open: bool
    whole: bool

    def bounds(self, high: float | None = None) -> str:
        """What a value must be, e.g. "a whole number at least 1 and at most 256" (`high`: a lower cap)."""
        top = self.high if high is None else high
        bounds = f"{'more than' if self.low_open else 'at least'} {_plain(self.low)}"
        bounds += f" and at most {_plain(top)}" if top is not None else ""
        return f"{'a whole number' if self.whole else 'a number'} {bounds}"

    def expected(self, high: float | None = None, cap: str = "") -> str:
        note = f" ({cap})" if cap else (f" ({self.empty})" if self.empty else "")
        return f"{self.label} must be {self.bounds(high)}{note}"

    def refused(self, value: object, high: float | None = None, cap: str = "") -> ToolboardError:
        return ToolboardError(f"{self.expected(high, cap)}; got {echoed(repr(value))}")


def _plain(number: float) -> str:
    """A bound as people write it: 1000000, not 1e+06; 0.5 as it is."""
    return str(int(number)) if float(number).is_integer() else f"{number:g}"


def _extra(field: FieldInfo) -> dict[str, Any]:
    extra = field.json_schema_extra
    return extra if isinstance(extra, dict) else {}


def label_of(name: str) -> str:
    return str(_extra(RunSettings.model_fields[name]).get("label") or name)


def title_of(name: str) -> str:
    """The form's label for a setting it shows unfolded (its declared title; its name when it declares none)."""
    return RunSettings.model_fields[name].title or name


def help_of(name: str) -> str:
    return RunSettings.model_fields[name].description or ""


def settings_reference() -> str:
    """Every setting by its name, with its declared help and a number's range, a line each: the API's docs list them
    so (the command line's flags and the form's Advanced fields show the same help)."""
    return "\n".join(f"- {name}: {help_of(name)}" + (f"; {number_range(name).bounds()}" if name in NUMBER_SETTINGS else "")
                     for name in SETTING_NAMES)


def wrong_kind_message(name: str) -> str:
    """What a value of the wrong kind for setting `name` is told (its declared `wrong`)."""
    wrong = _extra(RunSettings.model_fields[name]).get("wrong")
    if not wrong:
        raise KeyError(f"the setting {name} declares no message for a value of the wrong kind")
    return str(wrong)


def is_advanced(name: str) -> bool:
    return bool(_extra(RunSettings.model_fields[name]).get("advanced"))


def default_of(name: str) -> Any:
    return RunSettings.model_fields[name].get_default(call_default_factory=True)


def number_range(name: str) -> NumberRange:
    """The range a numeric setting declares (its Field constraints), with the words its messages use."""
    field = RunSettings.model_fields[name]
    low: float | None = None
    high: float | None = None
    low_open = False
    for constraint in field.metadata:
        if isinstance(constraint, annotated_types.Ge):
            low = float(constraint.ge)  # type: ignore[arg-type]  # the declared bounds are numbers
        elif isinstance(constraint, annotated_types.Gt):
            low, low_open = float(constraint.gt), True  # type: ignore[arg-type]
        elif isinstance(constraint, annotated_types.Le):
            high = float(constraint.le)  # type: ignore[arg-type]
    if low is None:
        raise KeyError(f"{name} is not a numeric setting")
    return NumberRange(label_of(name), low, high, _extra(field).get("empty"), low_open, _holds_int(field.annotation))


def _holds_int(annotation: Any) -> bool:
    """Whether a declared type is a whole number (int, Optional[int], Annotated[int, …])."""
    return annotation is int or any(_holds_int(arg) for arg in get_args(annotation))


NUMBER_SETTINGS = tuple(name for name, field in RunSettings.model_fields.items()
                        if any(isinstance(c, annotated_types.Ge | annotated_types.Gt) for c in field.metadata))


def read_run_settings(raw: Mapping[str, Any]) -> RunSettings:
    """A door's raw input (by the names of SETTING_NAMES; `api_key` is not a setting and is left out) as
    RunSettings, or a ToolboardError naming the first wrong setting and what it expects."""
    unknown = sorted(set(raw) - set(SETTING_NAMES) - {"api_key"})
    if unknown:
        raise ToolboardError(f"unknown run setting {echoed(unknown[0])!r}; the settings are: "
                             f"{', '.join(('api_key', *SETTING_NAMES))}")
    try:
        return RunSettings.model_validate({name: value for name, value in raw.items() if name != "api_key"})
    except ValidationError as exc:
        raise _refusal(exc) from None


def _refusal(exc: ValidationError) -> ToolboardError:
    error = exc.errors()[0]
    name = str(error["loc"][0]) if error["loc"] else ""
    if name in NUMBER_SETTINGS:
        return number_range(name).refused(error["input"])
    wrong = _extra(RunSettings.model_fields[name]).get("wrong") if name in RunSettings.model_fields else None
    if name == "roles" and len(error["loc"]) > 1 and wrong:
        return ToolboardError(f'role {echoed(str(error["loc"][1]))!r} must be {{"base_url", "model", "key_env"}}')
    return ToolboardError(wrong or f"{label_of(name)} must be text; got {echoed(repr(error['input']))}")

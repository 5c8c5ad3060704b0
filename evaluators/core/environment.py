"""Settings: every environment variable toolboard reads, declared once (its name, what it does, its default) as
one pydantic model. Modules read a variable through `read_setting(field)` (read anew each call: tests and operators
change the environment while a process runs; the model's schema is built only when `read_settings()` builds them
all, for `env`); how a value is parsed and refused stays with the module that owns its meaning (a quota's "off", a URL's scheme). The README's table of variables is `environment_table()`
(`python -m evaluators env --markdown`); tests/test_environment.py holds the two equal and checks that every
`TOOLBOARD_*` name in the code is declared here."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import JsonDict

PREFIX = "TOOLBOARD_"


def variable(default: str, meaning: str, *, group: str) -> Any:
    """One variable: `default` says what unset means, `meaning` what it does, `group` where the README lists it."""
    extra: JsonDict = {"default": default, "group": group}
    return Field(None, description=meaning, json_schema_extra=extra)


class Settings(BaseModel):
    """The environment's settings as given (text; None when unset or empty). The field `home` is TOOLBOARD_HOME."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    home: str | None = variable("/data/toolboard on a Space with a writable /data, else ~/.cache/toolboard",
                                "where the store, caches, downloads and logs live", group="storage")
    data_dir: str | None = variable("each benchmark's published data is downloaded",
                                    "a local copy of the benchmark data, read instead of the download", group="data")
    public: str | None = variable("on on a Hugging Face Space (SPACE_ID set), else off",
                                  "public mode (1/0): visitors' caps, no server keys or folders, public hosts only",
                                  group="deployment")
    key_vars: str | None = variable("OPENAI_API_KEY", "the key variables a private deployment's form may name "
                                    "(comma-separated)", group="deployment")
    allow_unlisted_models: str | None = variable("off", "1: run a model the endpoint's /models does not list "
                                                 "(ignored on a public deployment)", group="deployment")
    max_upload_mb: str | None = variable("50", "the largest predictions file an upload may be (MB)", group="limits")
    max_runs_per_day: str | None = variable("20 per visitor on a public deployment, else off",
                                            "runs one visitor may start in 24 hours (a number, 0, or off)",
                                            group="limits")
    max_uploads_per_day: str | None = variable("10 per visitor on a public deployment, else off",
                                               "uploads one visitor may add in 24 hours (a number, 0, or off)",
                                               group="limits")
    max_store_mb: str | None = variable("5000 on a public deployment, else off", "the store's size cap (MB)",
                                        group="limits")
    max_stored_mb_per_day: str | None = variable("250 on a public deployment, else off",
                                                 "what one visitor's runs and uploads may store in 24 hours (MB)",
                                                 group="limits")
    min_free_disk_mb: str | None = variable("200", "disk space every deployment keeps free (MB)", group="limits")
    global_concurrency: str | None = variable("256", "requests in flight at once across all runs of a process",
                                              group="runs")
    send_pacing: str | None = variable("on", "0/off: send without pacing requests to an endpoint's answers",
                                       group="runs")
    hub_repo: str | None = variable("nothing is pushed", "org/name: push every finished run and added upload "
                                    "to this Hub dataset (with HF_TOKEN)", group="hub")
    results: str | None = variable("none", "Hub results datasets to show beside the board (org/a,org/b)",
                                   group="hub")
    broker_url: str | None = variable("runs execute in the app", "Redis URL of the run queue "
                                      "(redis://host:port/db)", group="queue")
    queue_name: str | None = variable("toolboard", "the queue's name in Redis", group="queue")
    queue_visibility_s: str | None = variable("300", "seconds before a task a dead worker held is given to another",
                                              group="queue")
    queue_time_limit_s: str | None = variable("21600", "seconds a run may take on a worker", group="queue")
    queue_secret_ttl_s: str | None = variable("21600", "seconds a typed key waits in Redis for its run",
                                              group="queue")
    acebench_archive_url: str | None = variable("the official repository's archive at the pinned commit",
                                                "where ACEBench's data is downloaded from", group="data")
    toolbench_revision: str | None = variable("the pinned revision", "the ToolBench-Static dataset revision to "
                                              "read", group="data")
    stepeval_revision: str | None = variable("the pinned revision", "the StepEval-Audio-Toolcall dataset revision "
                                             "to read", group="data")
    pypi_url: str | None = variable("https://pypi.org/pypi", "the package index's JSON API the BFCL wheel comes "
                                    "from", group="data")
    bfcl_wheel: str | None = variable("downloaded once", "a local copy of the pinned bfcl-eval wheel",
                                      group="data")
    bfcl_wheel_sha256: str | None = variable("the pinned wheel's", "tests only: the sha256 a stand-in wheel is "
                                             "checked against", group="data")
    log_level: str | None = variable("INFO", "the app's log level", group="diagnostics")
    phase_log: str | None = variable("none written", "a file a CLI run writes its phases' times to, as it exits",
                                     group="diagnostics")


def variable_name(field: str) -> str:
    return PREFIX + field.upper()


VARIABLES = {variable_name(field): field for field in Settings.model_fields}


def read_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings the environment gives now (`environ`: os.environ); empty text is unset."""
    source = os.environ if environ is None else environ
    given = {field: (source.get(name) or "").strip() or None for name, field in VARIABLES.items()}
    return Settings(**given)


def read_setting(field: str, environ: Mapping[str, str] | None = None) -> str | None:
    """One declared setting now (None when unset or empty), without building them all: for paths asked per request."""
    if field not in Settings.model_fields:
        raise KeyError(f"{field!r} is not a declared setting")
    return ((os.environ if environ is None else environ).get(variable_name(field)) or "").strip() or None


def environment_table() -> str:
    """The README's table of variables (markdown), in the declaration's order."""
    lines = ["| variable | when unset | what it does |", "|---|---|---|"]
    for field, info in Settings.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        lines.append(f"| `{variable_name(field)}` | {extra.get('default')} | {info.description} |")
    return "\n".join(lines)


# `scheme://user:password@host`: what a variable's value shows instead of its credentials.
_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]*@")


def current_values(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(variable, what it is set to now, or "unset: <default>"), credentials in URLs left out."""
    settings = read_settings(environ)
    rows = []
    for field, info in Settings.model_fields.items():
        value = getattr(settings, field)
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        rows.append((variable_name(field), _CREDENTIALS.sub("***@", value) if value else f"(unset: {extra.get('default')})"))
    return rows

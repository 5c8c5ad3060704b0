"""Settings: every environment variable of toolboard's own, declared once (its name, what it does, what unset means),
and the other tools' variables it honours (OTHER_VARIABLES: their owners define them; read with `read_other`).
The project-wide ones are declared here; a benchmark's own (where its data comes from) in its package, with the
same `declare`, so that adding a benchmark stays one package. Modules read a variable through `read_setting(field)`
(read anew each call: tests and operators change the environment while a process runs); how a value is parsed and
refused stays with the module that owns its meaning (a quota's "off", a URL's scheme), but for a plain number
above 0 and an on/off switch, which `read_number` and `read_flag` read and refuse alike for all. The README's table of
variables is `environment_table()` (`python -m evaluators env --markdown`); tests/test_environment.py holds the two
equal and checks that every `TOOLBOARD_*` name in the code is declared.

Standard library only, besides two small core modules (the error type, the echo of a value): the lowest layer
reads it (the store's folder, the phase log at the first import), and a declaration of text values gains nothing
from a validation library's import on every command's start-up."""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

from evaluators.core.errors import ToolboardError
from evaluators.core.limits import echoed

PREFIX = "TOOLBOARD_"


@dataclass(frozen=True)
class Variable:
    """One environment variable: `field` (TOOLBOARD_<FIELD>), what unset means, what it does."""

    field: str
    default: str
    meaning: str
    # The module that declared it: the table lists the project's first, then each benchmark package's by its name.
    module: str = __name__
    # A number setting's default as a number (its `default` text is this number written out); None for the others.
    number: float | None = None

    @property
    def name(self) -> str:
        return PREFIX + self.field.upper()

    def read(self, environ: Mapping[str, str] | None = None) -> str | None:
        """Its value now; None when unset or empty."""
        return ((os.environ if environ is None else environ).get(self.name) or "").strip() or None


# Every declared variable by field, in the order declared (the project's first, then each benchmark's).
DECLARED: dict[str, Variable] = {}


def declare(field: str, default: str | float, meaning: str) -> Variable:
    """Declare a variable (once: a second declaration of a field is a mistake). A number as the default makes it
    a number setting: the code takes that default from here (`declared_number`), so it is written once, and a
    plain number above 0 is read with `read_number`."""
    if field in DECLARED:
        raise ValueError(f"{PREFIX}{field.upper()} is declared twice")
    caller = inspect.currentframe()
    module = caller.f_back.f_globals.get("__name__", __name__) if caller and caller.f_back else __name__
    text, number = (default, None) if isinstance(default, str) else (f"{default:g}", float(default))
    DECLARED[field] = Variable(field, text, meaning, module, number)
    return DECLARED[field]


HOME = declare("home", "/data/toolboard on a Space with a writable /data, else ~/.cache/toolboard",
               "where the store, caches, downloads and logs live")
DATA_DIR = declare("data_dir", "each benchmark's published data is downloaded",
                   "a local copy of the benchmark data, read instead of the download")
PUBLIC = declare("public", "on where SPACE_ID is set (a Hugging Face Space), else off",
                 "public mode (1/0): visitors' caps, no server keys or folders, public hosts only")
KEY_VARS = declare("key_vars", "OPENAI_API_KEY",
                   "the key variables a private deployment's form may name (comma-separated)")
ALLOW_UNLISTED_MODELS = declare("allow_unlisted_models", "off",
                                "1: run a model the endpoint's /models does not list (ignored on a public deployment)")
MAX_UPLOAD_MB = declare("max_upload_mb", 50, "the largest predictions file an upload may be (MB)")
MAX_RUNS_PER_DAY = declare("max_runs_per_day", "20 per visitor on a public deployment, else off",
                           "runs one visitor may start in 24 hours (a number, 0, or off)")
MAX_UPLOADS_PER_DAY = declare("max_uploads_per_day", "10 per visitor on a public deployment, else off",
                              "uploads one visitor may add in 24 hours (a number, 0, or off)")
MAX_STORE_MB = declare("max_store_mb", "5000 on a public deployment, else off",
                       "the store's size cap (MB)")
MAX_STORED_MB_PER_DAY = declare("max_stored_mb_per_day", "250 on a public deployment, else off",
                                "what one visitor's runs and uploads may store in 24 hours (MB)")
MIN_FREE_DISK_MB = declare("min_free_disk_mb", 200, "disk space every deployment keeps free (MB)")
GLOBAL_CONCURRENCY = declare("global_concurrency", 256,
                             "requests in flight at once across all runs of a process")
SEND_PACING = declare("send_pacing", "on", "0/off: send without pacing requests to an endpoint's answers")
HUB_REPO = declare("hub_repo", "nothing is pushed",
                   "org/name: push every finished run and added upload to this Hub dataset (with HF_TOKEN)")
RESULTS = declare("results", "none", "Hub results datasets to show beside the board (org/a,org/b)")
HUB_REPORTED = declare("hub_reported", "off",
                       "1: show what the Hugging Face Hub reports for the board's benchmarks, read at start and every 30 "
                       "minutes, never ranked")
BROKER_URL = declare("broker_url", "runs execute in the app",
                     "Redis URL of the run queue (redis://host:port/db)")
QUEUE_NAME = declare("queue_name", "toolboard", "the queue's name in Redis")
QUEUE_VISIBILITY_S = declare("queue_visibility_s", 300,
                             "seconds before a task a dead worker held is given to another")
QUEUE_TIME_LIMIT_S = declare("queue_time_limit_s", 6 * 3600, "seconds a run may take on a worker")
QUEUE_SECRET_TTL_S = declare("queue_secret_ttl_s", 6 * 3600,
                             "seconds a typed key waits in Redis for its run")
PYPI_URL = declare("pypi_url", "https://pypi.org/pypi",
                   "the package index's JSON API the pinned wheels of official code come from")
LOG_LEVEL = declare("log_level", "INFO", "the app's log level")
PHASE_LOG = declare("phase_log", "none written",
                    "a file a CLI run writes its phases' times to, as it exits")


# Other tools' variables toolboard honours, with what they do here: their owners define them, so they are not
# declared settings (the README lists them under its table; tests/test_environment.py holds the code to this list).
OTHER_VARIABLES = {
    "HF_TOKEN": "the Hugging Face token: pushes results (TOOLBOARD_HUB_REPO), reads private results datasets",
    "HF_ENDPOINT": "another Hugging Face Hub (a mirror) for downloads and results",
    "SPACE_ID": "set by a Hugging Face Space: public mode and /data storage unless said otherwise",
    "GRADIO_SERVER_NAME": "the address `python app.py` listens on (unset: 127.0.0.1)",
    "XDG_CACHE_HOME": "where the default TOOLBOARD_HOME lies (unset: ~/.cache)",
}


def read_other(name: str) -> str | None:
    """One of OTHER_VARIABLES now; None when unset or empty. KeyError for a name not listed there."""
    if name not in OTHER_VARIABLES:
        raise KeyError(f"{name} is not a listed variable of another tool")
    return os.environ.get(name, "").strip() or None


def hub_endpoint() -> str | None:
    """The Hugging Face Hub to talk to (HF_ENDPOINT: a mirror, or a test's fake Hub), read anew: huggingface_hub
    reads it once, at its import. None: its default."""
    return read_other("HF_ENDPOINT")


def read_setting(field: str, environ: Mapping[str, str] | None = None) -> str | None:
    """A declared variable's value now (None when unset or empty); KeyError for a field nobody declared."""
    if field not in DECLARED:
        raise KeyError(f"{PREFIX}{field.upper()} is not a declared setting")
    return DECLARED[field].read(environ)


def declared_number(field: str) -> float:
    """A number setting's declared default."""
    number = DECLARED[field].number
    if number is None:
        raise KeyError(f"{PREFIX}{field.upper()} is not a number setting")
    return number


def read_number(field: str, *, whole: bool = False, unit: str = "", environ: Mapping[str, str] | None = None) -> float:
    """A number setting's value now: its declared default when unset or empty, else a number above 0 (a whole one
    when `whole`). Anything else is refused naming the variable, what it takes and what it was given."""
    default = declared_number(field)
    raw = read_setting(field, environ)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0 and (value.is_integer() or not whole)):
        kind = "a whole number" if whole else "a number"
        of_unit = f" of {unit}" if unit else ""
        raise ToolboardError(f"{DECLARED[field].name} must be {kind}{of_unit} above 0 (unset: {default:g}), "
                             f"not {echoed(raw)!r}")
    return value


ON_WORDS = ("1", "true", "yes", "on")
OFF_WORDS = ("0", "false", "no", "off")


def read_flag(field: str, *, unset: bool, environ: Mapping[str, str] | None = None) -> bool:
    """An on/off setting's value now: `unset` when unset or empty, else one of ON_WORDS or OFF_WORDS (any case).
    Anything else is refused naming the variable: a typo must not quietly turn public mode off on a Space."""
    raw = read_setting(field, environ)
    if raw is None:
        return unset
    if raw.lower() in ON_WORDS:
        return True
    if raw.lower() in OFF_WORDS:
        return False
    raise ToolboardError(f"{DECLARED[field].name} must be on or off ({'/'.join(ON_WORDS)} or {'/'.join(OFF_WORDS)}; "
                         f"unset: {DECLARED[field].default}), not {echoed(raw)!r}")


# The on/off switches: checked together where a process starts (the app, a run, a worker), so a typo in one is
# refused there, not where a run first reads it (a pacing switch is read by each run's client).
SWITCHES = ("public", "allow_unlisted_models", "send_pacing", "hub_reported")


def check_switches(environ: Mapping[str, str] | None = None) -> None:
    """ToolboardError for the first on/off switch set to anything but an on or off word."""
    for field in SWITCHES:
        read_flag(field, unset=False, environ=environ)


def read_variable(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """`read_setting` by the variable's name (TOOLBOARD_…), for modules whose messages name it."""
    return read_setting(name.removeprefix(PREFIX).lower(), environ)


def all_variables() -> list[Variable]:
    """Every variable declared so far: the project's, and those of the benchmark packages imported (a caller that
    lists them all first imports every package, `registry.all_benchmarks()`: this module sits below the registry)."""
    # Benchmark packages are imported in whatever order a process first needs them: the order of the list is the
    # project's declarations, then each other module's, by module name, each in its own order (sorted is stable).
    return sorted(DECLARED.values(), key=lambda variable: (variable.module != __name__, variable.module))


def read_settings(environ: Mapping[str, str] | None = None) -> dict[str, str | None]:
    """Every declared variable's value at one moment, by field."""
    return {variable.field: variable.read(environ) for variable in all_variables()}


def environment_table() -> str:
    """The README's table of variables (markdown), in the order declared."""
    lines = ["| variable | when unset | what it does |", "|---|---|---|"]
    lines += [f"| `{v.name}` | {v.default} | {v.meaning} |" for v in all_variables()]
    return "\n".join(lines)

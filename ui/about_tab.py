"""About tab: what each benchmark measures, the metrics, official vs strict, data sources, licences
and how to cite. Built from what each benchmark package declares (registry.Benchmark.about, its roles
and options): a new benchmark package appears here without touching this file.

On a private deployment it also has the field "Other results datasets" (repo ids, prefilled from
TOOLBOARD_RESULTS) and a Load button that (re)loads them into the board (evaluators/publish/other_results.py) and says,
per repo, what joined and what was skipped. A public deployment has no such field: a stranger must not make
the server download arbitrary repos."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from evaluators.core.registry import Benchmark, all_benchmarks
from evaluators.publish.other_results import RESULTS_ENV
from evaluators.service.app_services import load_other_results_report
from ui.api import declare_other_results_api
from ui.context import AppContext, as_markdown

OFFICIAL_AND_STRICT = """
## Official and strict scoring

**official** (default) reproduces the reference checker exactly, its quirks included, so our rows can
sit beside published rows. **strict** fixes the documented checker bugs{fixes}. Strict numbers are
never mixed with official ones: the leaderboard shows one mode at a time, and published rows only in
official mode. Each quirk is a named rule; the Explore tab shows which rule decided each sample. The
full lists are in `docs/` of the project.
"""

SOURCES = """
## Where the numbers come from

- **published**: the benchmark authors' tables ({published}), copied as fractions with a link to the
  source and their caveats.
- **evaluated**: runs made here against an OpenAI-compatible endpoint; each has a settings fingerprint
  (benchmark, data and evaluator versions, prompt mode and generation settings). Requests are cached,
  failures are counted apart as request errors and can be re-sent.
- **uploaded**: predictions files scored here, with the uploader's model name and notes.
"""


def measures(benchmark: Benchmark) -> str:
    """`**Title** (`name`, [paper](url)) — what it measures`, then its roles and options."""
    about = benchmark.about
    paper = f"[{about.paper}]({about.paper_url})" if about.paper and about.paper_url else about.paper
    cited = ", ".join(part for part in (f"`{benchmark.name}`", paper) if part)
    lines = [f"**{benchmark.title}** ({cited}) — {about.measures}"]
    for role in benchmark.roles:
        without = f"; without one, {role.fallback}" if role.fallback else ""
        lines.append(f"- Role `{role.name}`, **{role.label}**: {role.description}. Give it a model in its box of the "
                     f"Evaluate form (`--role {role.name}=URL,MODEL` on the command line){without}.")
    for option in benchmark.options:
        lines.append(f"- Option `{option.name}` ({' / '.join(option.choices)}; default {option.default}): "
                     f"{option.description}.")
    return "\n".join(lines)


def strict_fixes(benchmarks: list[Benchmark]) -> str:
    fixes = [f"for {b.title}: {b.about.strict_fixes}" for b in benchmarks if b.about.strict_fixes]
    return f" ({'; '.join(fixes)})" if fixes else ""


def published_sources(benchmarks: list[Benchmark]) -> str:
    return "; ".join(f"{b.title}: {b.about.published}" for b in benchmarks if b.about.published)


def data_and_licence(benchmark: Benchmark) -> str:
    about = benchmark.about
    line = f"- {benchmark.title}: {about.data or 'see its source'}"
    if about.source_url:
        line += f" ([source]({about.source_url}))"
    if about.licence:
        line += f"; licence: {about.licence}"
    return line + "."


def data_section(benchmarks: list[Benchmark]) -> str:
    lines = ["## Data and licences", "", *(data_and_licence(b) for b in benchmarks), "",
             "Benchmark data is downloaded at run time (or read from a local folder); none of it ships with this app."]
    examples = [f"{b.title}: {b.example.note}" for b in benchmarks if b.example is not None]
    if examples:
        lines.append(f"Only small built-in examples ship, to try the app (the *built-in example* data source): "
                     f"{'; '.join(examples)}.")
    return "\n".join(lines)


def citations(benchmarks: list[Benchmark]) -> str:
    cited = "; ".join(f"{b.title} ({b.about.citation})" for b in benchmarks if b.about.citation)
    return ("## How to cite\n\n" + (f"Cite the benchmark papers: {cited}. " if cited else "")
            + "When you report numbers from this app, give the scoring mode and the run's fingerprint.")


def about_text(benchmarks: list[Benchmark] | None = None) -> str:
    """The page's Markdown for the registered benchmarks (or those given)."""
    benchmarks = all_benchmarks() if benchmarks is None else benchmarks
    parts = ["## What the benchmarks measure", *(measures(b) for b in benchmarks),
             OFFICIAL_AND_STRICT.format(fixes=strict_fixes(benchmarks)).strip(),
             SOURCES.format(published=published_sources(benchmarks)).strip(),
             data_section(benchmarks), citations(benchmarks)]
    return "\n\n".join(parts)


OTHER_RESULTS_LABEL = "Other results datasets"
OTHERS_NOTE = """
## Others' results

Rows of other toolboard results datasets (Hugging Face dataset repos) join the board, each labelled with the repo
it came from (its source reads "uploaded · from org/name"; its details start with "from org/name"): their evaluated and uploaded rows only (the
published rows come from this board's own tables), never over a run of this board, and a run in two datasets
from the first one listed.
"""


@dataclass
class AboutParts:
    """What the app wires: the Load button's event (None on a public deployment), to redraw the board after it."""

    loaded: Any | None


def build(context: AppContext | None = None) -> AboutParts:
    gr.Markdown(about_text())
    if context is None or context.public:
        return AboutParts(None)
    gr.Markdown(OTHERS_NOTE.strip())
    with gr.Row():
        repos = gr.Textbox(", ".join(context.other_results.current.repos), label=OTHER_RESULTS_LABEL, scale=4,
                           placeholder="org/name, org/other",
                           info=f"Hub dataset repo ids, comma-separated, read with HF_TOKEN ({RESULTS_ENV} lists"
                                " them at start); Load replaces every row from other datasets with theirs")
        load = gr.Button("Load", scale=1, min_width=100)
    report = gr.Markdown(as_markdown(context.other_results.current.summary()) if context.other_results.version else "")

    def load_and_report(text: str) -> str:
        return as_markdown(load_other_results_report(context, text))

    event = load.click(load_and_report, repos, report, api_visibility="private")
    declare_other_results_api(context)
    return AboutParts(event)

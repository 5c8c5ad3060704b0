"""About tab: what each benchmark measures, the metrics, official vs strict, data sources, licences
and how to cite. Built from what each benchmark package declares (registry.Benchmark.about, its roles
and options): a new benchmark package appears here without touching this file."""

from __future__ import annotations

import gradio as gr

from evaluators.core.registry import Benchmark, all_benchmarks

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


def build() -> None:
    gr.Markdown(about_text())

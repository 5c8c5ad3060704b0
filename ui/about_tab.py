"""About tab: what each benchmark measures, the metrics, official vs strict, data sources, licences
and how to cite."""

from __future__ import annotations

import gradio as gr

ABOUT = """
## What the benchmarks measure

**ACEBench** (`acebench`, arXiv 2501.12851) — 17 categories in English and Chinese.
*Normal* (12): the model must produce the right calls, by name and argument values, for atomic argument
types (bool, enum, number, list, short and deep objects), single and parallel calls, multi-turn dialogues
where the user switches or adjusts the request, similar APIs and user preferences. *Special* (3): the
model must notice missing parameters, wrong parameter values and irrelevant requests instead of calling.
*Agent* (2): the model acts in a simulated phone / messaging / reminder / food / travel world, alone
(multi_step) or with a simulated user (multi_turn); the end state of the world is checked.
Metrics: accuracy per category; *process accuracy* for multi-turn and agent items; **normal** = mean of
the 12 normal categories, **special** and **agent** = means of theirs, **overall** = 0.578·normal +
0.2676·special + 0.1545·agent. The leaderboard columns atom / single / multi / api / pref are the
published table's groupings of the normal categories.

**ToolBench-Static** (`toolbench_static`, alpha-UMi, arXiv 2401.07324) — single decision steps from
ToolBench dialogues, in-domain and out-of-domain. **plan_em**: the step's plan (call a tool, give up,
or finish) is right. **act_em**: the tool name is right. **f1** (easy_f1, hard_f1): F1 over argument
key/value pairs. **hallu_rate**: share of calls to tools that do not exist (lower is better).
**rouge_l**: Rouge-L of the final answer. Scored as EvalScope 1.14.1 scores it.

**StepEval-Audio-Toolcall** (`stepeval_audio`, Step-Audio 2, arXiv 2507.16632) — spoken multi-turn
dialogues where the model must decide whether to call one of four tools (audio search `timbre_rag`,
`get_date_time`, `get_weather`, `web_search`), with text transcripts or audio input. Per tool:
**recall** = positives where the model called anything; **precision** = right calls over right calls
plus negatives that called this tool; **type accuracy** = the right tool among triggered positives;
**parameter accuracy** = arguments judged reasonable (by an LLM judge you configure, or exact match:
the report's `param_method` says which); the counts behind each number are in the report.

## Official and strict scoring

**official** (default) reproduces the reference checker exactly, its quirks included, so our rows can
sit beside published rows. **strict** fixes the documented checker bugs (for ACEBench: whitespace
deletion in strings, unchecked numbers and booleans, substring matches, …; for ToolBench-Static:
reasoning blocks and native tool calls read). Strict numbers are never mixed with official ones: the
leaderboard shows one mode at a time, and published rows only in official mode. Each quirk is a named
rule; the Explore tab shows which rule decided each sample. The full lists are in `docs/` of the
project.

## Where the numbers come from

- **published**: the benchmark authors' tables (ACEBench's site, the alpha-UMi paper, the Step-Audio 2
  paper), copied as fractions with a link to the source and their caveats.
- **evaluated**: runs made here against an OpenAI-compatible endpoint; each has a settings fingerprint
  (benchmark, data and evaluator versions, prompt mode and generation settings). Requests are cached,
  failures are counted apart as request errors and can be re-sent.
- **uploaded**: predictions files scored here, with the uploader's model name and notes.

## Data and licences

- ACEBench: data from the official repository (chenchen0103/ACEBench, pinned commit), MIT licence.
- ToolBench-Static: the `Sandyyy/ToolBench-Static` dataset on the Hugging Face Hub, derived from ToolBench
  (Apache-2.0); check the dataset card.
- StepEval-Audio-Toolcall: the `stepfun-ai/StepEval-Audio-Toolcall` dataset on the Hub; check the dataset
  card for its licence.

Benchmark data is downloaded at run time (or read from a local folder); none of it ships with this app.

## How to cite

Cite the benchmark papers: ACEBench (Chen et al., arXiv 2501.12851); alpha-UMi / ToolBench-Static
(Shen et al., arXiv 2401.07324) and ToolBench (Qin et al., arXiv 2307.16789); Step-Audio 2 (StepFun,
arXiv 2507.16632). When you report numbers from this app, give the scoring mode and the run's
fingerprint.
"""


def build() -> None:
    gr.Markdown(ABOUT)

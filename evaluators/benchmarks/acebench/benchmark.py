"""ACEBench declared for the registry: what it is, its categories, metrics, table and roles."""

from pathlib import Path

from evaluators.benchmarks.acebench import categories
from evaluators.benchmarks.acebench.agent.replay import replay_file
from evaluators.benchmarks.acebench.board import LAYOUT
from evaluators.benchmarks.acebench.checker import score
from evaluators.benchmarks.acebench.data import DATA_VERSION, load
from evaluators.benchmarks.acebench.evidence import EVIDENCE
from evaluators.benchmarks.acebench.predictions import match_predictions, read_predictions
from evaluators.benchmarks.acebench.prompts import build_request
from evaluators.benchmarks.acebench.report import summarize
from evaluators.benchmarks.acebench.request_profile import request_profile
from evaluators.benchmarks.acebench.solve import solve
from evaluators.core.declarations import About, Metric, Overview, Role
from evaluators.core.registry import Benchmark, Example, Replay

ABOUT = About(
    measures=(
        "17 categories in English and Chinese. *Normal* (12): the model must produce the right calls, by name and "
        "argument values, for atomic argument types (bool, enum, number, list, short and deep objects), single and "
        "parallel calls, multi-turn dialogues where the user switches or adjusts the request, similar APIs and user "
        "preferences. *Special* (3): the model must notice missing parameters, wrong parameter values and "
        "irrelevant requests instead of calling. *Agent* (2): the model acts in a simulated phone / messaging / "
        "reminder / food / travel world, alone (multi-step) or with a simulated user (multi-turn); the end state of "
        "the world is checked. Metrics: accuracy per category; *process accuracy* for multi-turn and agent items; "
        "**normal** = mean of the 12 normal categories, **special** and **agent** = means of theirs, **overall** = "
        "0.578·normal + 0.2676·special + 0.1545·agent. The leaderboard columns Atom / Single / Multi / Similar API / "
        "Preference are the published table's groupings of the normal categories."
    ),
    paper="arXiv 2501.12851",
    paper_url="https://arxiv.org/abs/2501.12851",
    source_url="https://github.com/chenchen0103/ACEBench",
    data="data from the official repository (chenchen0103/ACEBench, pinned commit)",
    licence="MIT",
    citation="Chen et al., ACEBench, arXiv 2501.12851",
    strict_fixes="whitespace deletion in strings, unchecked numbers and booleans, substring matches, …",
    published="ACEBench's site",
)

BENCHMARK = Benchmark(
    name="acebench",
    title="ACEBench",
    description="ACEBench (arXiv 2501.12851): normal, special and agent tool use, en and zh.",
    about=ABOUT,
    subsets=categories.CATEGORIES,
    groups=categories.GROUPS,
    metrics=(Metric("accuracy", "Accuracy"),
             Metric("process_accuracy", "Process accuracy", "share of the expected calls made, in order",
                    share_of_items=False)),
    summary_metrics=(
        Metric("normal", "Normal", "mean of the 12 normal categories"),
        Metric("special", "Special", "mean of the 3 special categories"),
        Metric("agent", "Agent", "mean of the 2 agent categories"),
        Metric("overall", "Overall", "0.578·normal + 0.2676·special + 0.1545·agent"),
        Metric("atom", "Atom", "atomic argument types"),
        Metric("single", "Single", "single-turn calls"),
        Metric("multi", "Multi", "multi-turn dialogues"),
        Metric("api", "Similar API", "similar APIs"),
        Metric("pref", "Preference", "user preferences"),
    ),
    languages=categories.LANGUAGES,
    data_version=DATA_VERSION,
    load=load,
    read_predictions=read_predictions,
    match_predictions=match_predictions,
    score=score,
    report=summarize,
    build_request=build_request,
    solve=solve,
    request_profile=request_profile,
    roles=(Role("user", "Simulated user", "plays the user in the multi-turn agent dialogues",
                played_by_tested_model=True, fallback="the model under test plays it"),),
    layout=LAYOUT,
    subset_of_id=categories.category_of_id,
    example=Example(Path(__file__).parent / "example", "en",
                    "a few ACEBench-style items written for this project, and one model's answers",
                    demo_subsets=("normal",)),
    replay=Replay(categories.AGENT, replay_file),
    evidence=EVIDENCE,
    titles=categories.TITLES,
    # English: the published table fills it for the most models (23, against 22 in zh and combined), and
    # one English run is enough to appear.
    overview=Overview("en", ("overall",), "overall",
                      why="the English table: the published one lists the most models in it"),
)

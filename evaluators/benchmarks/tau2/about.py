"""What the About tab and `list` say about τ²-bench: what it measures, the paper, the pinned data and its licence,
the citation, where the published figures come from."""

from __future__ import annotations

from evaluators.benchmarks.tau2.board import OFFICIAL_JUDGE_MODEL, RANKED_USER_MODEL, RANKED_VERSION
from evaluators.benchmarks.tau2.source import COMMIT, REPOSITORY
from evaluators.core.declarations import About

PAPER_ID = "2506.07982"

ABOUT = About(
    measures=(
        "a conversational agent serving a customer under a domain's written policy, in three domains of the text "
        "track: **airline** (50 tasks: bookings, changes, cancellations, baggage, compensation), **retail** (114: "
        "orders, returns, exchanges, addresses) and **telecom** (114: technical support where the *user* also acts "
        "on their phone, the dual control). The agent has the domain's tools over a database; a simulated user (an "
        "LLM given the task's scenario) talks to it, half-duplex, until one side ends the conversation or a limit "
        "is hit. Each trial gets a reward from the task's official criteria: the database at the end equals the "
        "gold actions' (DB), environment assertions hold, the gold actions were called, the required information "
        "was said (communicate), and, where a task has them, natural-language assertions judged by an LLM; the "
        "reward is the product of the components the task's reward basis names. **pass^k** is, per task, the "
        "chance that k trials drawn from its n all succeed, C(c,k)/C(n,k), averaged over the tasks; pass^1 is the mean success rate, and "
        "pass^2..pass^4 say how reliably. **Overall** is the mean of the three domains (taubench.com's). "
        f"Rows are comparable only with the same user simulator and tasks: the board ranks those of "
        f"{RANKED_USER_MODEL} on tau2 {RANKED_VERSION} and keeps every other row apart with the reason. Roles: the "
        f"user simulator, and the NL judge (official default {OFFICIAL_JUDGE_MODEL})."
    ),
    paper=f"Barres, Dong, Ray, Si, Narasimhan: τ²-Bench: Evaluating Conversational Agents in a Dual-Control "
          f"Environment, arXiv {PAPER_ID}",
    paper_url=f"https://arxiv.org/abs/{PAPER_ID}",
    source_url=f"https://github.com/{REPOSITORY}/tree/{COMMIT}",
    data=(f"the official repository ({REPOSITORY}) at commit {COMMIT[:7]} (every file checked by its git blob id): "
          "the tasks, splits (base), policies and databases of airline, retail and telecom; the two files a copy may "
          "lack (airline db.json, telecom tasks.json) from the inspect-evals 0.26.0 wheel, accepted only when their "
          "blob id is the pinned one. The domains' environments are the official code of the same commit, run in "
          "worker processes"),
    licence="MIT",
    citation=(f"Victor Barres, Honghua Dong, Soham Ray, Xujie Si, Karthik Narasimhan: τ²-Bench: Evaluating "
              f"Conversational Agents in a Dual-Control Environment, arXiv {PAPER_ID}, 2025"),
    published=(f"taubench.com's τ²-bench leaderboard, read from the submission files in the official repository "
               f"at {COMMIT[:7]} (leaderboard_data/tau2.json)"),
)

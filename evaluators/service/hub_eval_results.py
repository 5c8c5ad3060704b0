"""The operator's Hub eval results in the app (Explore): the `.eval_results` file a finished, ranked run would add
to a model repo, and one pull request adding it, opened with the operator's token.

Only the operator may: never on a public deployment (TOOLBOARD_PUBLIC, a Space by default, or an app built public),
and only with HF_TOKEN set in the server's environment. The token is read there and never shown; a visitor never
gives a key here. What is written and how a run is refused is publish/eval_results.py's (the CLI's `export
--eval-results` / `--open-pr` write the same file)."""

from __future__ import annotations

from evaluators.core.errors import ToolboardError
from evaluators.engine.redact import redact
from evaluators.engine.store import Store
from evaluators.publish.eval_results import EvalResultFile, eval_result_file
from evaluators.publish.hub_sync import TOKEN_ENV, check_repo_id, token_from_env
from evaluators.service.deployment import is_public_mode
from evaluators.service.run_records import open_eval_results_pr, results_dataset_repo

NOT_HERE = "Hub eval results are the operator's: not available on a public deployment"


def offered_here(public: bool) -> bool:
    """Whether this deployment offers Hub eval results at all: never a public one (`public`: the app's own flag;
    the environment's is_public_mode is read as well, so that either makes it public)."""
    return not public and not is_public_mode()


def operator_token() -> str:
    """The operator's Hub token (HF_TOKEN, from the server's environment only); "" when it is not set."""
    return token_from_env() or ""


def is_operator(public: bool) -> bool:
    """Whether the app offers the operator to open pull requests: a private deployment with HF_TOKEN set."""
    return offered_here(public) and bool(operator_token())


def _check_offered(public: bool) -> None:
    if not offered_here(public):
        raise ToolboardError(NOT_HERE)


def eval_results_preview(store: Store, run_id: str, public: bool) -> EvalResultFile:
    """The file the run's pull request would add (its path and YAML); NotExportable saying why a run cannot be
    exported, refused on a public deployment."""
    _check_offered(public)
    if not (run_id or "").strip():
        raise ToolboardError("Pick a run.")
    return eval_result_file(store, run_id.strip(), results_dataset_repo())


def open_pr_as_operator(store: Store, run_id: str, model_repo: str, public: bool) -> str:
    """One pull request on `model_repo` (org/name) adding the run's eval results file, opened with the operator's
    HF_TOKEN: its URL. Refused with the reason on a public deployment, without the token, for a bad repo id or a run
    that cannot be exported; a Hub failure is one line naming the repo. No message holds the token."""
    _check_offered(public)
    repo = (model_repo or "").strip()
    if not repo:
        raise ToolboardError("Name the model repo the pull request goes to, as org/name.")
    check_repo_id(repo)
    if not (run_id or "").strip():
        raise ToolboardError("Pick a run.")
    token = operator_token()
    if not token:
        raise ToolboardError(f"Opening a pull request needs the operator's Hugging Face token in {TOKEN_ENV} on the "
                             f"server (never given here); nothing was sent to {repo}")
    try:
        return open_eval_results_pr(store, run_id.strip(), repo, token)
    except Exception as error:  # a Hub failure is already one line naming the repo; never the token, whatever it quotes
        if token not in str(error):
            raise
        raise ToolboardError(redact(str(error), [token])) from None

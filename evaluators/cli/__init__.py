"""The command line, `python -m evaluators list | env | score | run | replay | runs | export | demo`.

One module per concern: `parser` (the grammar), `main` (dispatch and exit codes), `offline_commands`
(list, score, demo, replay), `run_config` and `roles` (run flags, --role and --option -> a run request, built by evaluators.service.run_request), `run_command`
(run with a progress bar), `stored_runs` (runs; export: a run's predictions and report, or with --dataset the
results as a Hugging Face dataset folder, --push to the Hub), `report_text` (a report on the terminal).
The engine never sees argparse: it takes the RunConfig and plain values these modules build."""

from evaluators.cli.main import main
from evaluators.cli.report_text import format_report, print_report

__all__ = ["format_report", "main", "print_report"]

"""Runs the official `bfcl` command line (bfcl-eval 2026.3.23's `bfcl_eval.__main__.cli`, the `bfcl` console
script) inside the official venv, for benchmarks/official_side_by_side.py. Never imported by the project: it is
started as `VENV_PYTHON -s benchmarks/bfcl_official_cli.py STAND_INS EXTRAS REGISTRY_NAME MODEL -- generate ...`.

Three things around the unchanged CLI, each because the test venv (tests/bfcl_official_venv.py) is a lean one:
- STAND_INS (the venv's stand-ins for vendor SDKs the prompt handler never calls) and EXTRAS (the CLI's own
  `typer` and `tabulate`, which the lean venv leaves out) are appended to sys.path, so installed packages win;
- the official registry has no prompt-mode model on the plain OpenAI chat-completions handler (its gpt-* prompt
  models use the Responses API), so REGISTRY_NAME is added to `MODEL_CONFIG_MAPPING` as the official
  `OpenAICompletionsHandler` in prompt mode (`is_fc_model=False`) sending MODEL as the request's model. The
  handler reads OPENAI_BASE_URL and OPENAI_API_KEY from the environment.
"""

from __future__ import annotations

import importlib
import sys


def _register_prompt_model(registry_name: str, model: str) -> None:
    config = importlib.import_module("bfcl_eval.constants.model_config")
    handler = importlib.import_module("bfcl_eval.model_handler.api_inference.openai_completion").OpenAICompletionsHandler
    config.MODEL_CONFIG_MAPPING[registry_name] = config.ModelConfig(
        model_name=model, display_name=f"{model} (Prompt, chat completions)", url="http://127.0.0.1/", org="local",
        license="n/a", model_handler=handler, input_price=None, output_price=None, is_fc_model=False,
        underscore_to_dot=False)


def main(argv: list[str]) -> None:
    stand_ins, extras, registry_name, model, separator, *cli_args = argv
    if separator != "--":
        raise SystemExit("usage: bfcl_official_cli.py STAND_INS EXTRAS REGISTRY_NAME MODEL -- BFCL_ARGS...")
    sys.path.extend([stand_ins, extras])
    _register_prompt_model(registry_name, model)
    cli = importlib.import_module("bfcl_eval.__main__").cli
    sys.argv = ["bfcl", *cli_args]
    cli()


if __name__ == "__main__":
    main(sys.argv[1:])

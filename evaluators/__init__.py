"""toolboard: score how well LLMs call tools, one package per benchmark (see `python -m evaluators list`)."""

__version__ = "0.1.0"

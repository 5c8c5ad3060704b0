"""ToolBench-Static: single decision steps of ToolBench dialogues, scored as EvalScope 1.14.1 does.
Declared for the registry in `benchmark.py`."""

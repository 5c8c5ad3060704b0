"""toolboard: score how well LLMs call tools (ACEBench, ToolBench-Static, StepEval-Audio-Toolcall)."""

__version__ = "0.1.0"

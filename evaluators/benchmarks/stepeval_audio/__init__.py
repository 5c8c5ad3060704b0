"""StepEval-Audio-Toolcall: when to call which of four tools in spoken Chinese dialogues, scored per
tool by trigger precision / recall, type accuracy and (judged) parameter accuracy. Declared for the
registry in `benchmark.py`."""

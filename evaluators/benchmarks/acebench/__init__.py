"""ACEBench: 17 categories of tool use (normal, special, agent) in English and Chinese. Declared for
the registry in `benchmark.py`."""

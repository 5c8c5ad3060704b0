"""τ²-bench (text track: airline, retail, telecom). Groundwork: the pinned source and the data records; not yet
registered as a benchmark (no benchmark.py)."""

"""A tiny benchmark package, written into a copy of the project by tests/test_new_benchmark_package.py
to prove that a new benchmark is one package plus its leaderboard_data file."""

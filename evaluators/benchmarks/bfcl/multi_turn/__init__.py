"""BFCL's four multi-turn categories: samples (data.py), the official environments run in worker processes
(environments.py, execution.py, env_host.py, worker.py) and the official multi-turn checker (checker.py)."""

"""BFCL's four multi-turn categories: samples (data.py), the official environments run in worker processes
(environments.py, execution.py, env_host.py, worker.py), the official multi-turn checker (checker.py), uploads
(uploads.py) and the evidence Explore shows (evidence.py)."""

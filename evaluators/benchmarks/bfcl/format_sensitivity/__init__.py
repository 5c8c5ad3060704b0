"""BFCL's non-scoring format sensitivity category: 200 single-turn items under 26 system-prompt configurations
(data.py), their requests (prompts.py), decoders (decode.py), verdicts (checker.py) and statistics (report.py)."""

"""BFCL's five agentic categories (memory kv / vector / rec_sum, web search base / no_snippet): samples read from
the wheel (data.py) and the official agentic checker (checker.py). Scored from uploaded result files; not yet
run against an endpoint (categories.AGENTIC_NOT_RUN)."""

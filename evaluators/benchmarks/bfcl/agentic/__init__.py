"""BFCL's five agentic categories (memory kv / vector / rec_sum, web search base / no_snippet): samples read from
the wheel (data.py), the official agentic checker (checker.py), web search played with a search backend
(web_search.py), memory kv and rec_sum played after their prerequisite chains (memory.py); memory_vector is scored
from uploaded result files only (categories.AGENTIC_NOT_RUN)."""

"""BFCL's five agentic categories (memory kv / vector / rec_sum, web search base / no_snippet): samples read from
the wheel (data.py), the official agentic checker (checker.py), web search played with a search backend
(web_search.py), memory played after its prerequisite chains (memory.py; memory_vector with its optional extra,
vector_extra.py, in a vector worker)."""

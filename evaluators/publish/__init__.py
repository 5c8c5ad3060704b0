"""Publishing: the results dataset, others' results and hub sync; above the engine, never imported by it."""

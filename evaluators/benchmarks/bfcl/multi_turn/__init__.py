"""BFCL's multi-turn categories: several user turns against stateful environments, steps per turn."""

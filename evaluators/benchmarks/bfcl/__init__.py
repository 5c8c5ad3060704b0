"""BFCL (Berkeley Function Calling Leaderboard) v4, the 13 single-turn categories, scored as `bfcl-eval`
2026.3.23 scores a prompt-mode model."""

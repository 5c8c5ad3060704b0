"""The published tables and model facts (JSON files beside this one, each with its sources). A package only so
that an installed toolboard (`pip install .`) carries the files to where `evaluators.core.leaderboard` reads them:
the folder beside the `evaluators` package, in a checkout and in site-packages alike."""

"""The web app's entry point (a Hugging Face Space `app_file`).

The Gradio app is built in a later step; until then this runs the built-in ACEBench example
through the same library the app will use, so `python app.py` already does something useful.
"""

from evaluators.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["demo"]))

"""The web app's entry point (the Hugging Face Space `app_file`): `python app.py`."""

from ui.app import main

if __name__ == "__main__":
    main()

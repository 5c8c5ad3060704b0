"""The application layer: what the front doors (web app, API, CLI, queue worker) ask for, and the rules they share."""

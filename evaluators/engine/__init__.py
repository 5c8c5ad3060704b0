"""The engine: chat client, retries, response cache, SQLite store and the run loop."""

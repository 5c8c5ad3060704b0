"""The Gradio web app: one module per tab over the library (no scoring logic here)."""

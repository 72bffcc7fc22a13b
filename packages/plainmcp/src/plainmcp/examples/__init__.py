"""Small example servers: read them as templates, run them with ``python -m plainmcp.examples.<name>``."""

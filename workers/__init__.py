"""Processes: the worker, the API server, the embedded dev stack and the CLI that starts them."""

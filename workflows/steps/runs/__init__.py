"""Typed calls of activities/runs/ (the module of the same name there)."""

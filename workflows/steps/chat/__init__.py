"""Typed calls of activities/chat/ (the module of the same name there)."""

"""Typed calls of activities/warm/ (the module of the same name there)."""

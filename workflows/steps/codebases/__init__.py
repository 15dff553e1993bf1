"""Typed calls of activities/codebases/ (the module of the same name there)."""

"""Typed calls of activities/environments/ (the module of the same name there)."""

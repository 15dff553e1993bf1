"""Typed calls of activities/results/ (the module of the same name there)."""

"""Typed calls of the activities, with their options: one module per activity module, named alike
(`steps.environments` calls what `activities/environments/records.py` serves)."""

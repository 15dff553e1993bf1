"""Typed calls of the activities, with their options, in folders that mirror `activities/`:
`steps/<folder>/<module>.py` calls what `activities/<folder>/<module>.py` serves (`steps.environments.
records` calls `activities/environments/records.py`). `options.py` holds the options every call
shares, `versions.py` the names of the message path's patches."""

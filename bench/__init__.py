"""`make bench`: figures for the service's speed, each against a baseline measured in the same run."""

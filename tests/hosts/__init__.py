"""Several worker hosts and API processes of one deployment on one machine (tests/hosts/cluster.py)."""

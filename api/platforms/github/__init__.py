"""GitHub's ways in: the webhook (webhook.py), its events' reading (events.py, feedback.py, keys.py) and the approval comments (approvals.py)."""

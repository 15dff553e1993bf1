"""Slack's ways in: the Events API webhook (webhook.py), its events' reading (events.py) and the approval buttons' presses (actions.py)."""

"""Telegram's ways in: the webhook (webhook.py), the getUpdates poller (poller.py) that hands each update to the webhook's own handling, and the approval buttons' presses (callbacks.py)."""

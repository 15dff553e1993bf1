"""The conversations' side: who is talking, and what the bot says back.

`replies.py` delivers every reply once (written to the outbound log first); `platforms/` holds one
module per chat platform (GitHub, Slack, Telegram, Discord) that delivers through the platform's own
SDK and may ask its API what a webhook did not say; `conversations.py` keeps the conversation rows;
`refusals.py` gives a refused sender its one answer per hour.

May import: `activities/database.py` and `isolator/`. Touch it to change what reaches a chat and
how; a new platform is one module in `platforms/` plus its fake API in `tests/fakes/`.
"""

"""Chat: the commands a conversation can send, and everything the bot says."""

"""A fake model API that needs no key: the scripted server the tests drive the real agent CLIs against
(server.py, and Anthropic's format in anthropic.py), and the model `isolator fake-model` serves to a
person trying `AGENT=claude` or approvals, answering each message by its words (scripted.py)."""

"""Deterministic orchestration only: no I/O library is imported here."""

"""The HTTP surface: verifies, parses, and starts or signals workflows. It never runs git."""

"""Ordered plain-SQL migrations (`NNN_name.sql`) and the runner that applies them."""

"""Persistence: SQLModel tables, schema migrations and the ``Store`` facade (SQLite by default)."""

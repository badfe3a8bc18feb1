"""Matches played by workers from a PostgreSQL queue."""

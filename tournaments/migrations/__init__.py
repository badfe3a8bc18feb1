"""Alembic migrations of the cardshark schema; `cardshark db upgrade` runs them."""

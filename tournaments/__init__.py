"""Schedules, SQLModel storage and TrueSkill ratings of cardshark tournaments."""

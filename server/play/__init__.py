"""Matches and tournaments played: the arena, preflight, the tournament runner, load control."""

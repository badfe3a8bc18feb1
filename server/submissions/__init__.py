"""Bots their authors submit: the Submissions service, the intake of uploads, verdicts."""

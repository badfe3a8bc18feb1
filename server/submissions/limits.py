"""What the organizer allows each author: submissions an hour and bots in play."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SubmissionLimits:
    """The limits of `cardshark serve --submissions-per-hour --bots-per-author` (0: none)."""

    per_hour: int = 10
    bots: int = 20

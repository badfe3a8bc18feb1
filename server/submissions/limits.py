"""What the organizer allows each author: submissions an hour, bots in play, a build's time
and size."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SubmissionLimits:
    """The limits of `cardshark serve --submissions-per-hour --bots-per-author` (0: none) and
    `--build-seconds --build-mb` (server.bots.build.BuildLimits's defaults)."""

    per_hour: int = 10
    bots: int = 20
    build_seconds: int = 120
    build_mb: int = 256

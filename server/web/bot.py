"""The bot page's data: its chart (μ and its μ±3σ band after each rated match, from stored
history), and how a bot's author and version are named on every page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tournaments.models import HOUSE_AUTHOR, RatingHistory
from tournaments.store.submissions import version_name
from tournaments.store.web_queries import BotTag, BotVersion

BAND = 3.0  # the band is μ ± 3σ: the rankings' conservative rating is its lower edge
ORGANIZER = "organizer"  # the house author, as the pages name it


def rating_series(history: Sequence[RatingHistory]) -> dict[str, list[float]]:
    """One point per history row, in rating order: x (1, 2, …), μ, μ−3σ, μ+3σ and match ids."""
    return {
        "x": [float(i) for i in range(1, len(history) + 1)],
        "mu": [h.mu_after for h in history],
        "low": [h.mu_after - BAND * h.sigma_after for h in history],
        "high": [h.mu_after + BAND * h.sigma_after for h in history],
        "match": [float(h.match_id) for h in history],
    }


def author_label(author: str) -> str:
    """An author as the pages name them: the house author is the organizer."""
    return ORGANIZER if author == HOUSE_AUTHOR else author


def version_label(name: str, version: int) -> str:
    """What follows a bot's name: "v2" for a version after the first, unless the name (a
    replaced version's NAME@vN) says it already."""
    if version <= 1 or name == version_name(name.partition("@")[0], version):
        return ""
    return f"v{version}"


def tagged(row: dict[str, Any], tag: BotTag | None) -> dict[str, Any]:
    """A leaderboard or standings row with its bot's version label and author added."""
    name = str(row["bot"])
    return {
        **row,
        "version": version_label(name, tag.version) if tag else "",
        "author": author_label(tag.author if tag else HOUSE_AUTHOR),
    }


def successor(versions: Sequence[BotVersion], version: int) -> BotVersion | None:
    """The version that replaced this one, if one did."""
    return next((v for v in versions if v.version == version + 1), None)

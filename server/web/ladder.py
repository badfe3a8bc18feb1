"""A game's ladder as its page shows it: the field ranked by μ − 3σ with provisional bots
marked and each bot's sets, and the latest sets with their tables' totals."""

from __future__ import annotations

from typing import Any

from server.web.bot import tagged
from tournaments import matchmaking
from tournaments.ratings import Rating
from tournaments.store import LadderSet, Store, ranked, web_queries

RECENT_SETS = 10


def ladder_page(store: Store, game: str) -> dict[str, Any] | None:
    """The game's ladder for the page (and its live updates), or None when it has none."""
    ladder = store.latest_ladder(game)
    if ladder is None or ladder.id is None:
        return None
    field = ranked(store.ladder_field(ladder.id))
    recent = store.recent_sets(ladder.id, RECENT_SETS)
    ids = [e.bot_id for e in field] + [b for s in recent for b in s.table]
    tags = web_queries.bot_tags(store, ids)
    names = {b.id: b.name for b in store.tournament_entrants(ladder.id)}
    rows = [
        tagged(
            {
                "rank": rank,
                "bot": e.bot.name,
                "provisional": matchmaking.provisional(Rating(e.mu, e.sigma)),
                "cells": [
                    f"{e.mu:.2f}",
                    f"{e.sigma:.2f}",
                    f"{e.conservative:.2f}",
                    str(e.sets),
                ],
            },
            tags.get(e.bot_id),
        )
        for rank, e in enumerate(field, start=1)
    ]
    return {
        "id": ladder.id,
        "sets": ladder.rounds,
        "rows": rows,
        "recent": [_set(s, names) for s in recent],
    }


def _set(played: LadderSet, names: dict[int | None, str]) -> dict[str, Any]:
    totals = played.totals()
    last = max((m.finished for m in played.matches if m.finished is not None), default=None)
    return {
        "number": played.number + 1,
        "finished": played.finished,
        "at": f"{last:%Y-%m-%d %H:%M:%S}" if last is not None and played.finished else "",
        "first_match": played.matches[0].id,
        "table": [{"bot": names.get(b, str(b)), "total": f"{totals[b]:g}"} for b in played.table],
    }

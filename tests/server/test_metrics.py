"""`/metrics`: the store's counts in Prometheus's text format, on SQLite and PostgreSQL, with
faults by kind counted once each however often it is scraped, and on a real `serve`."""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.routing import Route

from server.web.metrics import metrics_route
from tests.server.webkit import serve_web
from tournaments.ratings import SeatOutcome
from tournaments.store import LADDER, Store

GAME = "knaves"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url) as s:
        yield s


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample by name and sorted labels."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def scrape(route: Route) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    async def get() -> bytes:
        response: Any = await route.endpoint(None)  # the handler reads nothing of its request
        assert response.media_type.startswith("text/plain")
        return bytes(response.body)

    return samples(asyncio.run(get()).decode())


def play_set(store: Store, ladder_id: int, faults: list[str]) -> None:
    """A set at a ladder's one table, every match with these faults of seat 0 in its record."""
    bots = [b.id or 0 for b in store.tournament_entrants(ladder_id)]
    for match in store.add_ladder_set(ladder_id, bots):
        record = {"faults": [{"seat": 0, "kind": kind} for kind in faults]}
        outcomes = [SeatOutcome(10 - seat, len(faults) if seat == 0 else 0) for seat in range(3)]
        store.record_result(match.id or 0, outcomes, record=record)


def test_matches_sets_and_faults_by_kind_are_counted_once(store: Store) -> None:
    for name in ("a", "b", "c"):
        store.add_bot(name)
    ladder = store.create_tournament(GAME, ["a", "b", "c"], format=LADDER, seed=1)
    assert ladder.id is not None
    route = metrics_route(store)
    play_set(store, ladder.id, ["timeout", "illegal"])
    first = scrape(route)
    assert first[("cardshark_matches_total", (("game", GAME), ("status", "finished")))] == 6
    assert first[("cardshark_ladder_sets_total", (("game", GAME),))] == 1
    assert first[("cardshark_faults_total", (("kind", "timeout"),))] == 6
    assert first[("cardshark_faults_total", (("kind", "illegal"),))] == 6
    again = scrape(route)  # nothing new finished: nothing counted twice
    assert again[("cardshark_faults_total", (("kind", "timeout"),))] == 6
    play_set(store, ladder.id, ["timeout"])
    store.add_ladder_set(ladder.id, [b.id or 0 for b in store.tournament_entrants(ladder.id)])
    later = scrape(route)
    assert later[("cardshark_faults_total", (("kind", "timeout"),))] == 12
    assert later[("cardshark_faults_total", (("kind", "illegal"),))] == 6
    assert later[("cardshark_matches_total", (("game", GAME), ("status", "finished")))] == 12
    assert later[("cardshark_matches_total", (("game", GAME), ("status", "pending")))] == 6
    assert later[("cardshark_ladder_sets_total", (("game", GAME),))] == 3
    assert later[("cardshark_loop_lag_seconds", ())] >= 0


def test_a_served_page_answers_metrics_in_prometheus_text(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    with Store(db) as store:
        for name in ("a", "b", "c"):
            store.add_bot(name)
        ladder = store.create_tournament(GAME, ["a", "b", "c"], format=LADDER, seed=1)
        play_set(store, ladder.id or 0, ["timeout"])
    with serve_web(db) as url, urllib.request.urlopen(f"{url}/metrics", timeout=30) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=")
        body = answer.read().decode()
    got = samples(body)
    assert got[("cardshark_faults_total", (("kind", "timeout"),))] == 6
    assert got[("cardshark_ladder_sets_total", (("game", GAME),))] == 1

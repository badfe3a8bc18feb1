"""The operations page's counts read from the store, on SQLite and PostgreSQL: matches by game
and status, ladder sets and load voids by game, submissions by state, and faults by kind
counted once each in batches, however many matches finish in the same instant."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from tournaments.models import BotArchive, SubmissionState
from tournaments.ratings import SeatOutcome
from tournaments.store import LADDER, FaultTally, Store
from tournaments.store import matches as matches_module


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url) as s:
        yield s


def entrants(store: Store, prefix: str, count: int = 3) -> list[int]:
    """`count` new bots named prefix + a, b, c...: their ids."""
    return [store.add_bot(f"{prefix}{n}")[0].id or 0 for n in "abcd"[:count]]


def record(store: Store, match_id: int, faults: list[dict[str, str]] | None) -> None:
    """Record a match of three seats with these faults in its record (None: no record)."""
    outcomes = [SeatOutcome(3 - seat) for seat in range(3)]
    store.record_result(match_id, outcomes, record=None if faults is None else {"faults": faults})


def test_play_figures_count_each_game_format_state_and_void_reason_apart(store: Store) -> None:
    knaves = store.create_tournament("knaves", entrants(store, "k"), seed=1)
    kill = store.create_tournament("kill", entrants(store, "x", 4), seed=2)
    ladder = store.create_tournament("knaves", entrants(store, "l"), format=LADDER, seed=3)
    other = store.create_tournament("knaves", entrants(store, "m"), format=LADDER, seed=4)
    store.create_tournament("kill", entrants(store, "y", 4), format=LADDER, seed=5)  # no sets
    assert knaves.id and kill.id and ladder.id and other.id and knaves.rounds > 0
    first, second, third, *rest = store.matches(knaves.id)
    record(store, first.id or 0, [])
    store.void_match(second.id or 0, "load: the server was behind")
    store.void_match(third.id or 0, "load: again")
    store.void_match(rest[0].id or 0, "worker died")
    store.void_match(store.matches(kill.id)[0].id or 0, "load: kill's")
    for ladder_id, sets in ((ladder.id, 2), (other.id, 1)):
        table = [b.id or 0 for b in store.tournament_entrants(ladder_id)]
        for _ in range(sets):
            store.add_ladder_set(ladder_id, table)
    ann, _ = store.add_author("ann")
    code = BotArchive(digest=hashlib.sha256(b"c").hexdigest(), data=b"c", size=1)
    sent = [
        store.receive_submission(ann.id or 0, f"s{i}", ["knaves"], "run", None, code)
        for i in range(3)
    ]
    store.set_submission_state(sent[0].id or 0, SubmissionState.REJECTED, "FAIL")

    figures = store.play_figures()

    knaves_all = len(store.matches(knaves.id)) + 6 * 3  # its own, the ladders' three sets
    assert figures.matches == {
        ("knaves", "finished"): 1,
        ("knaves", "voided"): 3,
        ("knaves", "pending"): knaves_all - 4,
        ("kill", "voided"): 1,
        ("kill", "pending"): len(store.matches(kill.id)) - 1,
    }
    assert figures.ladder_sets == {"knaves": 3, "kill": 0}  # a round robin's rounds are no sets
    assert figures.submissions == {"rejected": 1, "received": 2}
    assert figures.load_voids == {"knaves": 2, "kill": 1}


def test_an_empty_store_counts_nothing(store: Store) -> None:
    figures = store.play_figures()
    assert (figures.matches, figures.ladder_sets, figures.submissions, figures.load_voids) == (
        {}, {}, {}, {},
    )  # fmt: skip
    assert store.tally_faults(FaultTally()).matches == 0


def test_faults_are_tallied_once_in_batches_of_matches_finished_in_one_instant(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    tournament = store.create_tournament("knaves", entrants(store, "k", 4), seed=1)
    assert tournament.id is not None
    matches = store.matches(tournament.id)
    assert len(matches) > 6
    instant = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
    # A coarse clock: every match of the first three finishes at the same time.
    monkeypatch.setattr(matches_module, "utc_now", lambda: instant)
    record(store, matches[0].id or 0, [{"seat": "0", "kind": "timeout"}])
    record(store, matches[1].id or 0, [{"seat": "1", "kind": "illegal"}, {"seat": "2"}])
    record(store, matches[2].id or 0, [])
    store.void_match(matches[3].id or 0, "worker died", record={"faults": [{"kind": "x"}]})

    tally = FaultTally()
    seen = []
    for _ in range(4):
        tally = store.tally_faults(tally, batch=1)
        seen.append((tally.matches, dict(tally.kinds)))
    assert seen == [
        (1, {"timeout": 1}),
        (2, {"timeout": 1, "illegal": 1, "unknown": 1}),
        (3, {"timeout": 1, "illegal": 1, "unknown": 1}),
        (3, {"timeout": 1, "illegal": 1, "unknown": 1}),  # nothing new: nothing twice
    ]

    # Finished out of id order, and a match recorded with no record at all.
    for second, match, faults in ((1, matches[5], "timeout"), (2, matches[4], "timeout")):
        at = datetime(2026, 11, 27, 12, 0, second, tzinfo=UTC)
        monkeypatch.setattr(matches_module, "utc_now", lambda at=at: at)
        record(store, match.id or 0, [{"seat": "0", "kind": faults}])
    record(store, matches[6].id or 0, None)
    for _ in range(3):
        tally = store.tally_faults(tally, batch=1)
    assert (tally.matches, tally.kinds["timeout"], tally.since) == (6, 3, at)
    fresh = store.tally_faults(FaultTally(), batch=10)  # a new reader counts everything once
    assert (fresh.matches, fresh.kinds) == (6, Counter(tally.kinds))

"""The web page's other reads on a SQLite file, in process: a tournament's rows without match
records, the fingerprints that tell the page to redraw, a bot's history and latest matches,
the newest tournaments with their counts, and whether a deal is still to be played."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import Session, col, select

from tournaments.errors import UnknownTournamentError
from tournaments.models import Match, RatingHistory
from tournaments.ratings import SeatOutcome
from tournaments.store import Store
from tournaments.store.web_queries import (
    bot_history,
    deal_in_play,
    latest_tournaments,
    pulse,
    recent_matches,
    tournament_fingerprint,
    tournament_rows,
)

GAME = "knaves"  # 3 seats


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(f"sqlite:///{tmp_path / 'cs.db'}") as s:
        yield s


def add_bots(store: Store, k: int) -> list[int]:
    ids = []
    for i in range(k):
        bot, _ = store.add_bot(f"bot-{i}")
        assert bot.id is not None
        ids.append(bot.id)
    return ids


def play(store: Store, match: Match, scores: tuple[float, ...] = (3, 2, 1), **kw: int) -> None:
    """Record a match with these scores by seat; `faults`/`forfeit`: the seat that has them."""
    assert match.id is not None
    faults, forfeit = kw.get("faults", -1), kw.get("forfeit", -1)
    store.record_result(
        match.id,
        [SeatOutcome(s, 2 if i == faults else 0, i == forfeit) for i, s in enumerate(scores)],
    )


def reverse_history(store: Store) -> None:
    """Write every rating change again in reverse: the latest rated gets the lowest id."""
    with Session(store.engine) as session:
        rows = session.exec(select(RatingHistory).order_by(col(RatingHistory.id))).all()
        copies = [r.model_dump(exclude={"id"}) for r in rows]
        for row in rows:
            session.delete(row)
        session.flush()
        for copy in reversed(copies):
            session.add(RatingHistory(**copy))
        session.commit()


def test_a_tournaments_rows_are_the_stores_rows_in_the_same_order_without_records(
    store: Store,
) -> None:
    ids = add_bots(store, 4)
    other = store.create_tournament(GAME, ids[:3], seed=1)
    entry = [ids[3], ids[1], ids[0], ids[2]]
    t = store.create_tournament(GAME, entry, seed=2)
    assert t.id is not None and other.id is not None
    matches = store.pending_matches(t.id)
    voided = store.void_match(matches[3].id or 0, "crash", record={"actions": [1]})
    for m in [*matches[6:12], *reversed(matches[:3]), voided, *reversed(matches[4:6])]:
        play(store, m)  # two sets, the second first
    store.start_match(matches[13].id or 0)
    play(store, store.pending_matches(other.id)[0])
    reverse_history(store)  # the last rated rows get the lowest ids

    rows = tournament_rows(store, t.id)
    full = store.tournament_rows(t.id)
    assert rows.tournament.id == t.id and rows.tournament.name == full.tournament.name
    assert [b.id for b in rows.entrants] == entry
    assert [(m.id, m.schedule_index, m.attempt, m.status, m.seats) for m in rows.matches] == [
        (m.id, m.schedule_index, m.attempt, m.status, m.seats) for m in full.matches
    ]
    assert [(m.schedule_index, m.status) for m in rows.matches[:15]] == [
        *((i, "finished") for i in range(3)),
        (3, "voided"),
        *((i, "finished") for i in range(3, 12)),  # the replay first
        (12, "pending"),
        (13, "running"),
    ]
    assert all("record" not in m._fields for m in rows.matches)  # type: ignore[attr-defined]
    assert [(s.match_id, s.seat, s.bot_id, s.score, s.rank) for s in rows.seat_results] == [
        (s.match_id, s.seat, s.bot_id, s.score, s.rank) for s in full.seat_results
    ]
    assert len(rows.seat_results) == 12 * 3
    assert [(h.id, h.match_id, h.bot_id, h.mu_after) for h in rows.history] == [
        (h.id, h.match_id, h.bot_id, h.mu_after) for h in full.history
    ]
    index = {m.id: m.schedule_index for m in rows.matches}
    assert [index[h.match_id] for h in rows.history] == [5] * 3 + [11] * 3  # two sets rated
    with pytest.raises(UnknownTournamentError, match="10000"):
        tournament_rows(store, 10_000)


def test_a_tournaments_fingerprint_and_the_pulse_change_with_each_status(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=1, name="cup")
    other = store.create_tournament("kill", ids, seats=3, seed=2, name="other")
    assert t.id is not None and other.id is not None
    assert tournament_fingerprint(store, t.id) == ("pending", "cup", ("pending", 6))
    assert pulse(store) == (("match:pending", 12), ("tournament:pending", 2))
    first, second, *_ = store.pending_matches(t.id)
    play(store, first)
    store.start_match(second.id or 0)
    assert tournament_fingerprint(store, t.id) == (
        "running",
        "cup",
        ("finished", 1),
        ("pending", 4),
        ("running", 1),
    )
    assert pulse(store) == (
        ("match:finished", 1),
        ("match:pending", 10),
        ("match:running", 1),
        ("tournament:pending", 1),
        ("tournament:running", 1),
    )
    assert tournament_fingerprint(store, other.id) == ("pending", "other", ("pending", 6))
    with pytest.raises(UnknownTournamentError, match="10000"):
        tournament_fingerprint(store, 10_000)


def test_a_bots_history_in_one_game_in_the_order_it_was_rated(store: Store) -> None:
    ids = add_bots(store, 4)
    first = store.create_tournament(GAME, ids, seed=3)  # four tables: four sets
    second = store.create_tournament(GAME, ids[:3], seed=4)
    kill = store.create_tournament("kill", ids[:3], seats=3, seed=5)
    assert first.id is not None and second.id is not None and kill.id is not None
    # The second tournament first, and each in reverse: the rows' ids run against the order.
    for t in (second.id, first.id, kill.id):
        for m in reversed(store.pending_matches(t)):
            play(store, m, tuple(float(b % 3) for b in m.seats))
    reverse_history(store)
    rated = {m.id: (m.tournament_id, m.schedule_index) for m in store.matches(first.id)}
    rated |= {m.id: (m.tournament_id, m.schedule_index) for m in store.matches(second.id)}
    history = bot_history(store, ids[0], GAME)
    assert {h.bot_id for h in history} == {ids[0]} and {h.game for h in history} == {GAME}
    places = [rated[h.match_id] for h in history]
    assert places == sorted(places)
    assert len(history) == 3 + 1  # in three of the first's four sets, and the second's one
    assert [h.mu_after for h in history][:-1] == [h.mu_before for h in history][1:]
    assert len(bot_history(store, ids[3], GAME)) == 3
    assert bot_history(store, ids[3], "kill") == [] and bot_history(store, ids[0], "kill") != []


def test_a_bots_recent_matches_newest_first_with_its_seat_and_outcome(store: Store) -> None:
    ids = add_bots(store, 4)
    t = store.create_tournament(GAME, ids, seed=6)
    kill = store.create_tournament("kill", ids[:3], seats=3, seed=7)
    assert t.id is not None and kill.id is not None
    mine = [m for m in store.pending_matches(t.id) if ids[0] in m.seats]
    a, b, c = mine[0], mine[1], store.pending_matches(kill.id)[0]
    unplayed = mine[2]
    play(store, a, (1, 2, 3), faults=a.seats.index(ids[0]))
    play(store, b, (5, 5, 0), forfeit=b.seats.index(ids[0]))
    play(store, c, (0, 1, 2))
    store.start_match(unplayed.id or 0)
    store.remove_bot("bot-3")  # retired: its name still shows

    recent = recent_matches(store, ids[0], 10)
    assert [r.match_id for r in recent] == [c.id, b.id, a.id]
    assert [(r.tournament_id, r.game) for r in recent] == [
        (kill.id, "kill"),
        (t.id, GAME),
        (t.id, GAME),
    ]
    names = {i: f"bot-{n}" for n, i in enumerate(ids)}
    for r, m in zip(recent, (c, b, a), strict=True):
        assert r.seat == m.seats.index(ids[0])
        assert r.bots == [names[x] for x in m.seats]
    assert [r.scores for r in recent] == [[0, 1, 2], [5, 5, 0], [1, 2, 3]]
    seat_a, seat_b, seat_c = (m.seats.index(ids[0]) for m in (a, b, c))
    assert [r.rank for r in recent] == [3 - seat_c, (1, 1, 3)[seat_b], 3 - seat_a]
    assert [(r.faults, r.forfeited) for r in recent] == [(0, False), (0, True), (2, False)]
    assert [r.match_id for r in recent_matches(store, ids[0], 2)] == [c.id, b.id]
    assert recent_matches(store, 10_000, 5) == []


def test_the_newest_tournaments_with_every_status_counted(store: Store) -> None:
    ids = add_bots(store, 3)
    old = store.create_tournament(GAME, ids, seed=1)
    mid = store.create_tournament("kill", ids, seats=3, seed=2)
    new = store.create_tournament(GAME, ids, seed=3)
    assert old.id is not None and mid.id is not None and new.id is not None
    first, second, third, *_ = store.pending_matches(new.id)
    play(store, first)
    store.void_match(second.id or 0, "crash")
    store.start_match(third.id or 0)

    latest = latest_tournaments(store, 2)
    assert [p.tournament.id for p in latest] == [new.id, mid.id]
    top = latest[0]
    assert top.counts == {
        "pending": 4,  # three never started and the voided one's replay
        "running": 1,
        "finished": 1,
        "voided": 1,
    }
    assert (top.scheduled, top.finished) == (6, 1)
    assert latest[1].counts == {"pending": 6, "running": 0, "finished": 0, "voided": 0}
    assert (latest[1].scheduled, latest[1].finished) == (6, 0)
    assert [p.tournament.id for p in latest_tournaments(store, 5)] == [new.id, mid.id, old.id]
    assert latest_tournaments(store, 0) == []


def test_a_deal_is_in_play_while_any_rotation_of_its_set_is_unplayed(store: Store) -> None:
    ids = add_bots(store, 4)
    t = store.create_tournament(GAME, ids, seed=8)
    # Another tournament, of two rounds, open all along: none of its matches is this deal.
    later = store.create_tournament(GAME, ids, seed=9, rounds=2)
    assert t.id is not None and later.id is not None
    matches = store.pending_matches(t.id)
    first_set = [m for m in matches if m.table_index == 0]
    other_set = [m for m in matches if m.table_index == 1]
    assert len(first_set) == 6 and other_set
    head = first_set[0]
    assert head.id is not None
    assert deal_in_play(store, head.id) and deal_in_play(store, head.id, others=True)
    for m in first_set[1:]:
        play(store, m)
    # Only the match itself is left of its set: in play, but no other rotation is.
    assert deal_in_play(store, head.id) and not deal_in_play(store, head.id, others=True)
    store.start_match(head.id)
    assert deal_in_play(store, head.id)  # running still counts
    play(store, head)
    assert not deal_in_play(store, head.id)
    assert not deal_in_play(store, first_set[1].id or 0)
    # Another table of the same round is another deal: still open, not this one's.
    assert deal_in_play(store, other_set[0].id or 0, others=True)
    # A later round's set of the same table shares no seed with this one.
    round0 = [m for m in store.pending_matches(later.id) if (m.round, m.table_index) == (0, 0)]
    for m in round0[1:]:
        play(store, m)
    assert not deal_in_play(store, round0[0].id or 0, others=True)
    assert not deal_in_play(store, 10_000)

"""Ladders in the store on SQLite and PostgreSQL: a tournament that grows a set at a time,
whose field is its entrants plus accepted submissions naming its game, less retired bots and
disabled authors, each with its rating and its sets."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import replace

import pytest

from tournaments.errors import ScheduleError, TournamentError, UnknownBotError
from tournaments.matchmaking import pair_key
from tournaments.models import BotArchive, SubmissionState, TournamentStatus
from tournaments.ratings import DEFAULT_SIGMA, SeatOutcome
from tournaments.schedule import rotations
from tournaments.store import LADDER, Store, ladder_seed, ranked

GAME = "knaves"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url) as s:
        yield s


def new_ladder(store: Store, bots: list[str], seed: int = 5) -> int:
    ladder = store.create_tournament(GAME, bots, format=LADDER, seed=seed)
    assert ladder.id is not None and ladder.rounds == 0
    assert store.pending_matches(ladder.id) == []
    return ladder.id


def ids(store: Store, *names: str) -> tuple[int, ...]:
    out = []
    for name in names:
        bot_id = store.get_bot(name).id
        assert bot_id is not None
        out.append(bot_id)
    return tuple(out)


def two_ladders(store: Store) -> tuple[int, int, tuple[int, ...]]:
    """Bots a to e; a ladder of all five and another of a, b and c; the five bots' ids."""
    for name in "abcde":
        store.add_bot(name)
    ladder = new_ladder(store, ["a", "b", "c", "d", "e"])
    other = new_ladder(store, ["a", "b", "c"])
    return ladder, other, ids(store, "a", "b", "c", "d", "e")


def play_set(store: Store, ladder_id: int, table: tuple[int, ...], winner: int) -> None:
    for match in store.add_ladder_set(ladder_id, table):
        assert match.id is not None
        scores = [10 if b == winner else 0 for b in match.seats]
        store.record_result(match.id, [SeatOutcome(s) for s in scores])


def test_a_set_is_every_rotation_of_its_table_on_one_seed_numbered_in_order(store: Store) -> None:
    for name in "abcd":
        store.add_bot(name)
    ladder = new_ladder(store, ["a", "b"], seed=5)
    a, b, c, d = ids(store, "a", "b", "c", "d")
    first = store.add_ladder_set(ladder, (a, b, c))
    second = store.add_ladder_set(ladder, (d, a, b))
    assert [tuple(m.seats) for m in first] == rotations([a, b, c])
    assert [m.schedule_index for m in first + second] == list(range(12))
    assert {m.round for m in first} == {0} and {m.round for m in second} == {1}
    assert {(m.attempt, m.table_index) for m in first + second} == {(0, 0)}
    assert {m.seed for m in first} == {ladder_seed(5, 0)}
    assert {m.seed for m in second} == {ladder_seed(5, 1)} != {ladder_seed(5, 0)}
    assert store.get_tournament(ladder).rounds == 2
    assert [bot.name for bot in store.tournament_entrants(ladder)] == ["a", "b", "c", "d"]


def test_a_finished_set_is_rated_and_counted_for_its_bots(store: Store) -> None:
    for name in "abcd":
        store.add_bot(name)
    ladder = new_ladder(store, ["a", "b", "c", "d"])
    a, b, c, d = ids(store, "a", "b", "c", "d")
    play_set(store, ladder, (a, b, c), winner=a)
    open_set = store.add_ladder_set(ladder, (b, c, d))
    field = {e.bot.name: e for e in store.ladder_field(ladder)}
    assert [(field[n].sets, field[n].in_flight, field[n].last_set) for n in "abcd"] == [
        (1, 0, 0), (1, 1, 1), (1, 1, 1), (0, 1, 1),
    ]  # fmt: skip
    assert field["a"].mu > field["b"].mu and field["a"].sigma < DEFAULT_SIGMA
    assert (field["d"].mu, field["d"].sigma) == (25.0, DEFAULT_SIGMA)  # unrated: the prior
    ratings = store.ratings(GAME)
    assert field["a"].mu == ratings[a].mu and field["a"].sigma == ratings[a].sigma
    assert len(open_set) == 6
    assert store.tournament_status(ladder).tournament.status == "running"


def test_the_field_takes_accepted_submissions_of_its_game_and_drops_the_retired(
    store: Store,
) -> None:
    store.add_bot("a")
    store.add_bot("b")
    ladder = new_ladder(store, ["a", "b"])
    ann, _ = store.add_author("ann")
    assert ann.id is not None
    data = b"code"
    code = BotArchive(digest=hashlib.sha256(data).hexdigest(), data=data, size=len(data))
    knaves = store.receive_submission(ann.id, "sub", [GAME], "python3 bot.py", None, code)
    other = store.receive_submission(ann.id, "elsewhere", ["kill"], "python3 b.py", None, code)
    assert knaves.id is not None and other.id is not None
    assert {e.bot.name for e in store.ladder_field(ladder)} == {"a", "b"}  # not yet accepted
    store.accept_submission(knaves.id, "PASS")
    store.accept_submission(other.id, "PASS")
    field = {e.bot.name: e.author for e in store.ladder_field(ladder)}
    assert field == {"a": "house", "b": "house", "sub": "ann"}
    store.remove_bot("a")
    assert {e.bot.name for e in store.ladder_field(ladder)} == {"b", "sub"}
    store.disable_author("ann")
    assert {e.bot.name for e in store.ladder_field(ladder)} == {"b"}


def test_a_new_version_takes_its_predecessors_place_from_its_mu(store: Store) -> None:
    ann, _ = store.add_author("ann")
    assert ann.id is not None
    for name in ("x", "y"):
        store.add_bot(name)

    def submit(text: bytes) -> int:
        code = BotArchive(digest=hashlib.sha256(text).hexdigest(), data=text, size=len(text))
        sent = store.receive_submission(ann.id or 0, "alpha", [GAME], "run", None, code)
        assert sent.id is not None
        return store.accept_submission(sent.id, "PASS").id or 0

    v1 = submit(b"one")
    ladder = new_ladder(store, ["x", "y"])
    x, y = ids(store, "x", "y")
    play_set(store, ladder, (v1, x, y), winner=v1)
    mu = store.ratings(GAME)[v1].mu
    v2 = submit(b"two")
    field = {e.bot_id: e for e in store.ladder_field(ladder)}
    assert v1 not in field and v2 in field
    assert (field[v2].bot.name, field[v2].mu, field[v2].sigma) == ("alpha", mu, DEFAULT_SIGMA)
    assert field[v2].sets == 0


def test_entering_is_once_and_a_bad_table_is_refused_before_any_write(store: Store) -> None:
    for name in "abc":
        store.add_bot(name)
    ladder = new_ladder(store, ["a"])
    assert [b.name for b in store.enter_ladder(ladder, ["b", "a", "b"])] == ["b"]
    a, b, c = ids(store, "a", "b", "c")
    with pytest.raises(ScheduleError, match="seats 3 at a table, not 2"):
        store.add_ladder_set(ladder, (a, b))
    with pytest.raises(ScheduleError, match="a bot sits at a table once"):
        store.add_ladder_set(ladder, (a, b, a))
    assert store.get_tournament(ladder).rounds == 0 and store.pending_matches(ladder) == []
    robin = store.create_tournament(GAME, ["a", "b", "c"], seed=1)
    assert robin.id is not None
    with pytest.raises(TournamentError, match="is a round robin, not a ladder"):
        store.add_ladder_set(robin.id, (a, b, c))
    assert store.latest_ladder(GAME) is not None
    assert store.latest_ladder("kill") is None


def test_recent_sets_are_the_last_ones_newest_first_with_their_totals(store: Store) -> None:
    for name in "abcd":
        store.add_bot(name)
    ladder = new_ladder(store, ["a", "b", "c", "d"])
    a, b, c, d = ids(store, "a", "b", "c", "d")
    play_set(store, ladder, (a, b, c), winner=a)
    play_set(store, ladder, (b, c, d), winner=d)
    store.add_ladder_set(ladder, (c, d, a))
    recent = store.recent_sets(ladder, 2)
    assert [s.number for s in recent] == [2, 1]
    assert [s.finished for s in recent] == [False, True]
    assert recent[1].table == [b, c, d] and len(recent[1].matches) == 6
    assert recent[1].totals() == {b: 0.0, c: 0.0, d: 60.0}
    assert recent[0].totals() == {c: 0.0, d: 0.0, a: 0.0}
    assert [s.number for s in store.recent_sets(ladder, 10)] == [2, 1, 0]


def test_the_order_is_mu_minus_3_sigma_then_mu_then_name(store: Store) -> None:
    for name in "dcba":
        store.add_bot(name)
    ladder = new_ladder(store, ["a", "b", "c", "d"])
    field = {e.bot.name: e for e in store.ladder_field(ladder)}
    rated = {"a": (30.0, 5.0), "b": (24.0, 3.0), "c": (24.0, 3.0), "d": (40.0, 1.0)}
    entries = [replace(field[n], mu=mu, sigma=sigma) for n, (mu, sigma) in rated.items()]
    assert [e.conservative for e in entries] == [15.0, 15.0, 15.0, 37.0]
    assert [e.bot.name for e in ranked(entries)] == ["d", "a", "b", "c"]
    assert [e.bot.name for e in ranked(entries[::-1])] == ["d", "a", "b", "c"]


def test_the_latest_ladder_is_the_newest_of_its_game_not_cancelled(store: Store) -> None:
    for name in "abcd":
        store.add_bot(name)
    older = new_ladder(store, ["a", "b", "c"])
    newer = new_ladder(store, ["a", "b", "c"])
    cancelled = new_ladder(store, ["a", "b", "c"])
    store.set_tournament_status(cancelled, TournamentStatus.CANCELLED)
    store.create_tournament(GAME, ["a", "b", "c", "d"], seed=1)  # a round robin, newer still
    latest = store.latest_ladder(GAME)
    assert latest is not None and latest.id == newer != older


def test_a_retired_bot_is_neither_entered_nor_seated(store: Store) -> None:
    for name in "abc":
        store.add_bot(name)
    ladder = new_ladder(store, ["a", "b", "c"])
    a, b, c = ids(store, "a", "b", "c")
    play_set(store, ladder, (a, b, c), winner=a)
    store.add_bot("e")
    (e,) = ids(store, "e")
    play_set(store, ladder, (a, b, e), winner=a)
    assert store.remove_bot("e") == "retired"
    with pytest.raises(UnknownBotError):
        store.enter_ladder(ladder, ["e"])
    with pytest.raises(UnknownBotError):
        store.add_ladder_set(ladder, (a, b, e))
    assert store.get_tournament(ladder).rounds == 2


def test_a_bots_sets_count_its_own_ladder_and_a_replayed_match_once(store: Store) -> None:
    ladder, other, (a, b, c, d, e) = two_ladders(store)
    play_set(store, ladder, (a, b, c), winner=a)
    play_set(store, ladder, (a, b, d), winner=a)
    first, *rest = store.add_ladder_set(ladder, (c, d, b))
    store.void_match(first.id or 0, "worker died")
    assert len(store.add_ladder_set(other, (a, b, c))) == 6  # open, as set 0 here is not
    store.add_ladder_set(ladder, (c, d, a))
    field = {en.bot.name: (en.sets, en.in_flight, en.last_set) for en in store.ladder_field(ladder)}
    assert field == {
        "a": (2, 1, 3), "b": (2, 1, 2), "c": (1, 2, 3), "d": (1, 2, 3), "e": (0, 0, -1),
    }  # fmt: skip
    (replay,) = [m for m in store.pending_matches(ladder) if m.attempt == 1]
    assert replay.schedule_index == first.schedule_index
    for match in (replay, *rest):
        store.record_result(match.id or 0, [SeatOutcome(s) for s in (1, 2, 3)])
    field = {en.bot.name: (en.sets, en.in_flight, en.last_set) for en in store.ladder_field(ladder)}
    assert field["b"] == (3, 0, 2) and field["c"] == (2, 1, 3)
    newest, replayed = store.recent_sets(ladder, 2)
    assert (replayed.number, replayed.finished, len(replayed.matches)) == (2, True, 6)
    assert replayed.table == [c, d, b] and sum(replayed.totals().values()) == 36.0
    assert (newest.number, newest.table) == (3, [c, d, a])
    assert [s.table for s in store.recent_sets(other, 5)] == [[a, b, c]]


def test_a_submission_no_longer_accepted_brings_no_bot(store: Store) -> None:
    store.add_bot("a")
    store.add_bot("b")
    ladder = new_ladder(store, ["a", "b"])
    ann, _ = store.add_author("ann")
    code = BotArchive(digest=hashlib.sha256(b"c").hexdigest(), data=b"c", size=1)
    sent = store.receive_submission(ann.id or 0, "sub", [GAME], "run", None, code)
    store.accept_submission(sent.id or 0, "PASS")
    assert {e.bot.name for e in store.ladder_field(ladder)} == {"a", "b", "sub"}
    store.set_submission_state(sent.id or 0, SubmissionState.REJECTED, "withdrawn")
    assert {e.bot.name for e in store.ladder_field(ladder)} == {"a", "b"}


def test_a_ladder_started_empty_takes_its_entrants_in_the_order_given(store: Store) -> None:
    for name in "abcd":
        store.add_bot(name)
    ladder = new_ladder(store, [])
    assert [b.name for b in store.enter_ladder(ladder, ["c", "a"])] == ["c", "a"]
    b, c, d = ids(store, "b", "c", "d")
    store.add_ladder_set(ladder, (d, c, b))
    assert [bot.name for bot in store.tournament_entrants(ladder)] == ["c", "a", "d", "b"]


def test_meetings_count_the_sets_each_pair_sat_at_in_its_own_ladder(store: Store) -> None:
    ladder, other, (a, b, c, d, e) = two_ladders(store)
    assert store.ladder_meetings(ladder) == {}
    play_set(store, ladder, (c, a, b), winner=a)
    play_set(store, ladder, (b, d, a), winner=a)
    first, *_ = store.add_ladder_set(ladder, (e, d, b))  # in play, one attempt voided
    store.void_match(first.id or 0, "worker died")
    for _ in range(4):  # another ladder's sets are not counted, at its own set numbers
        play_set(store, other, (a, b, c), winner=a)
    assert store.ladder_meetings(ladder) == {
        pair_key(a, b): 2,
        pair_key(a, c): 1,
        pair_key(b, c): 1,
        pair_key(a, d): 1,
        pair_key(b, d): 2,
        pair_key(b, e): 1,
        pair_key(d, e): 1,
    }
    with pytest.raises(TournamentError):
        store.ladder_meetings(999)

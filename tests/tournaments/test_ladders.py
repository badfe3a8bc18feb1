"""Ladders in the store on SQLite and PostgreSQL: a tournament that grows a set at a time,
whose field is its entrants plus accepted submissions naming its game, less retired bots and
disabled authors, each with its rating and its sets."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest

from tournaments.errors import ScheduleError, TournamentError
from tournaments.models import BotArchive
from tournaments.ratings import DEFAULT_SIGMA, SeatOutcome
from tournaments.schedule import rotations
from tournaments.store import LADDER, Store, ladder_seed

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

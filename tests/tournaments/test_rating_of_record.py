"""The rating of record is TrueSkill: recomputable by anyone from the stored matches.

The reference here reads the stored seat scores with plain SQL and calls the `trueskill`
package itself, following docs/ratings.md step by step, so a drift of the store's rating
from the documented recipe shows as a difference.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trueskill
from sqlalchemy import Engine, event, text
from sqlmodel import Session, delete, select

from tournaments.models import BotRating, Match, RatingHistory
from tournaments.ratings import SeatOutcome, TrueSkillSettings, apply_set, placements
from tournaments.store import Store
from tournaments.store.ratings import RatingMethodRow

ROOT = Path(__file__).resolve().parents[2]
GAME = "knaves"  # 3 seats
DEFAULT = TrueSkillSettings()


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url) as s:
        yield s


def add_bots(store: Store, k: int) -> list[int]:
    ids = []
    for i in range(k):
        bot, _ = store.add_bot(f"bot-{i}")
        assert bot.id is not None
        ids.append(bot.id)
    return ids


def numbers(store: Store) -> dict[int, tuple[float, float, int, float, int]]:
    return {
        b: (r.mu, r.sigma, r.matches, r.score_sum, r.faults) for b, r in store.ratings(GAME).items()
    }


def history(store: Store) -> list[tuple[int, int, float, float, float, float]]:
    return [
        (h.match_id, h.bot_id, h.mu_before, h.sigma_before, h.mu_after, h.sigma_after)
        for h in store.rating_history(GAME)
    ]


def seeded_outcomes(match: Match) -> list[SeatOutcome]:
    rng = random.Random(match.seed * 7 + match.rotation)
    return [
        SeatOutcome(rng.choice([-10, 0, 5, 5, 12, 20]), rng.randrange(2), rng.random() < 0.08)
        for _ in match.seats
    ]


def record_set(store: Store, matches: list[Match], scores: list[list[float]]) -> None:
    for m, row in zip(matches, scores, strict=True):
        assert m.id is not None
        store.record_result(m.id, [SeatOutcome(x) for x in row])


def reference(engine: Engine, game: str, widen: str = "once") -> dict[int, tuple[float, float]]:
    """Every bot's (mu, sigma) by the documented recipe, from the stored seat scores alone.

    widen: "once" (the recipe: at a bot's first set of each later tournament), "never" or
    "every" (every set after the bot's first tournament): the last two are wrong on purpose.
    """
    with engine.connect() as conn:
        settings = {
            row.id: row
            for row in conn.execute(
                text(
                    "SELECT id, ts_mu, ts_sigma, ts_beta, ts_tau, ts_draw_probability "
                    "FROM tournaments WHERE game = :game"
                ),
                {"game": game},
            )
        }
        matches = conn.execute(
            text(
                "SELECT m.id, m.tournament_id, m.round, m.table_index, m.schedule_index, "
                "m.status FROM matches m JOIN tournaments t ON t.id = m.tournament_id "
                "WHERE t.game = :game ORDER BY m.tournament_id, m.schedule_index, m.attempt"
            ),
            {"game": game},
        ).all()
        seats: dict[int, list[Any]] = defaultdict(list)
        for seat in conn.execute(
            text("SELECT match_id, seat, bot_id, score, forfeited FROM seat_results ORDER BY seat")
        ):
            seats[seat.match_id].append(seat)
    sets: dict[tuple[int, int, int], list[Any]] = defaultdict(list)
    for m in matches:
        if m.status != "voided":
            sets[(m.tournament_id, m.round, m.table_index)].append(m)
    complete = [ms for ms in sets.values() if all(m.status == "finished" for m in ms)]
    complete.sort(key=lambda ms: (ms[-1].tournament_id, ms[-1].schedule_index))
    ratings: dict[int, trueskill.Rating] = {}
    first_tournament: dict[int, int] = {}
    widened: set[tuple[int, int]] = set()
    for members in complete:
        t = settings[members[0].tournament_id]
        env = trueskill.TrueSkill(
            mu=t.ts_mu,
            sigma=t.ts_sigma,
            beta=t.ts_beta,
            tau=0.0,
            draw_probability=t.ts_draw_probability,
            backend=None,
        )
        for m in members:
            bots = [s.bot_id for s in seats[m.id]]
            for b in bots:
                if b not in ratings:
                    ratings[b] = env.create_rating()
                    first_tournament[b] = t.id
                later = first_tournament[b] != t.id
                if later and (widen == "every" or (widen == "once" and (b, t.id) not in widened)):
                    r = ratings[b]
                    ratings[b] = env.create_rating(r.mu, math.sqrt(r.sigma**2 + t.ts_tau**2))
                widened.add((b, t.id))
            # by final score, ties shared, a forfeited seat below every seat that played on
            keys = [(bool(s.forfeited), -s.score) for s in seats[m.id]]
            ranks = [sum(1 for k in keys if k < key) for key in keys]
            rated = env.rate([(ratings[b],) for b in bots], ranks=ranks)
            for b, (r,) in zip(bots, rated, strict=True):
                ratings[b] = r
    return {b: (r.mu, r.sigma) for b, r in ratings.items()}


def rankings_json(db: str) -> list[dict[str, Any]]:
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", "rankings", GAME, "--json", "--db", db],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    rows: list[dict[str, Any]] = json.loads(run.stdout)
    return rows


def test_an_independent_trueskill_recomputation_equals_rankings_json(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    with Store(db) as store:
        ids = add_bots(store, 4)
        first = store.create_tournament(GAME, ids[:3], seed=31, rounds=2)
        second = store.create_tournament(
            GAME, [ids[0], ids[1], ids[3]], seed=32, trueskill=TrueSkillSettings(tau=1.5)
        )
        for t in (first, second):
            assert t.id is not None
            for m in store.pending_matches(t.id):
                assert m.id is not None
                store.record_result(m.id, seeded_outcomes(m))
        stored = store.tournament_rows(second.id)  # type: ignore[arg-type]
        engine = store.engine
        expected = reference(engine, GAME)
        wrong = [reference(engine, GAME, "never"), reference(engine, GAME, "every")]
        with engine.connect() as conn:
            seats = conn.execute(text("SELECT match_id, score, forfeited FROM seat_results")).all()
    by_match: dict[int, list[float]] = defaultdict(list)
    for match_id, score, _ in seats:
        by_match[match_id].append(score)
    assert any(len(set(s)) < len(s) for s in by_match.values()), "no tie was played"
    assert any(forfeited for _, _, forfeited in seats), "no forfeit was played"
    assert {s.bot_id for s in stored.seat_results} == {ids[0], ids[1], ids[3]}  # two carried
    rows = rankings_json(db)
    assert {r["bot_id"] for r in rows} == set(ids)
    for row in rows:
        mu, sigma = expected[row["bot_id"]]
        assert row["mu"] == pytest.approx(mu, abs=1e-9)
        assert row["sigma"] == pytest.approx(sigma, abs=1e-9)
        assert row["conservative"] == pytest.approx(mu - 3 * sigma, abs=1e-9)
    order = sorted(expected, key=lambda b: -(expected[b][0] - 3 * expected[b][1]))
    assert [r["bot_id"] for r in rows] == order
    for other in wrong:  # the widening is seen: once, neither never nor at every set
        assert any(abs(other[b][1] - expected[b][1]) > 1e-6 for b in (ids[0], ids[1]))


def test_sigma_shrinks_with_sets_and_widens_once_by_tau_at_the_next_tournament(
    store: Store,
) -> None:
    ids = add_bots(store, 3)
    tau = 2.0
    first = store.create_tournament(GAME, ids, seed=41, rounds=3)
    second = store.create_tournament(
        GAME, ids, seed=42, rounds=2, trueskill=TrueSkillSettings(tau=tau)
    )
    for t in (first, second):
        assert t.id is not None
        for m in store.pending_matches(t.id):
            assert m.id is not None
            store.record_result(m.id, seeded_outcomes(m))
    rows = [h for h in store.rating_history(GAME) if h.bot_id == ids[0]]
    tournament_of = {}
    with Session(store.engine) as session:
        for match in session.exec(select(Match)).all():
            tournament_of[match.id] = match.tournament_id
    in_first = [h for h in rows if tournament_of[h.match_id] == first.id]
    in_second = [h for h in rows if tournament_of[h.match_id] == second.id]
    assert len(in_first) == 3 and len(in_second) == 2  # one history row a set
    sigmas = [DEFAULT.sigma] + [h.sigma_after for h in in_first]
    assert all(b < a for a, b in zip(sigmas, sigmas[1:], strict=False))
    # The next tournament's first set starts from the stored rating widened by tau, once.
    carried = in_second[0]
    assert (carried.mu_before, carried.sigma_before) == (
        in_first[-1].mu_after,
        in_first[-1].sigma_after,
    )
    assert numbers(store)[ids[0]][:2] == pytest.approx(
        reference(store.engine, GAME)[ids[0]], abs=1e-12
    )
    for wrong in ("never", "every"):
        assert reference(store.engine, GAME, wrong)[ids[0]][1] != pytest.approx(
            numbers(store)[ids[0]][1], abs=1e-9
        )


def test_the_set_is_rated_only_when_its_last_match_is_recorded(store: Store) -> None:
    ids = add_bots(store, 4)
    t = store.create_tournament(GAME, ids, seed=3)
    assert t.id is not None
    first_set = store.pending_matches(t.id)[:6]  # a table in both directions' rotations
    assert len({(m.round, m.table_index) for m in first_set}) == 1
    record_set(store, first_set[:5], [[9, 0, 0]] * 5)
    assert {r[:2] for r in numbers(store).values()} == {(DEFAULT.mu, DEFAULT.sigma)}
    assert {r[2] for r in numbers(store).values()} == {5}
    assert history(store) == []
    record_set(store, first_set[5:], [[9, 0, 0]])
    rated = numbers(store)
    assert {h[0] for h in history(store)} == {first_set[5].id}
    expected = apply_set(DEFAULT, {}, [(m.seats, [1, 2, 2]) for m in first_set])
    assert {c.bot_id: (c.after.mu, c.after.sigma) for c in expected} == {
        b: r[:2] for b, r in rated.items()
    }
    assert all(r[1] < DEFAULT.sigma for r in rated.values())
    untouched = next(b for b in ids if b not in first_set[0].seats)
    assert untouched not in rated


def test_a_voided_match_is_replayed_and_the_set_waits_for_the_replay(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=4)
    assert t.id is not None
    matches = store.pending_matches(t.id)
    assert len(matches) == 6
    m1 = matches[1]
    others = [m for m in matches if m is not m1]
    record_set(store, others, [[6, 3, 0]] * 5)
    assert m1.id is not None
    store.start_match(m1.id)
    replay = store.void_match(m1.id, "referee crashed")
    assert history(store) == []  # the voided slot leaves the set incomplete
    assert replay.id is not None
    store.record_result(replay.id, [SeatOutcome(0), SeatOutcome(30), SeatOutcome(0)])
    # the voided attempt counts for nobody: the replay's ranks stand in its slot
    expected = apply_set(
        DEFAULT, {}, [(m.seats, [2, 1, 2] if m is m1 else [1, 2, 3]) for m in matches]
    )
    assert {ch.bot_id: (ch.after.mu, ch.after.sigma) for ch in expected} == {
        bot: r[:2] for bot, r in numbers(store).items()
    }
    assert [h[0] for h in history(store)] == [matches[-1].id] * 3  # the set's last slot


def test_a_forfeited_seat_ranks_below_every_seat_that_played_on(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=5)
    assert t.id is not None
    m0, *rest = store.pending_matches(t.id)
    assert len(rest) == 5
    forfeit = [SeatOutcome(50, faults=3, forfeited=True), SeatOutcome(2), SeatOutcome(1)]
    for m, outcomes in [(m0, forfeit)] + [(m, [SeatOutcome(2)] * 3) for m in rest]:
        assert m.id is not None
        store.record_result(m.id, outcomes)
    a, b, c = m0.seats
    rated = numbers(store)
    # The forfeiter's 50 points place it last; its mean score and faults keep the real ones.
    assert rated[b][0] > rated[c][0] > rated[a][0]
    assert rated[a][3] == 60.0 and rated[a][4] == 3
    assert placements(forfeit) == (3, 1, 2)


def play_everything(store: Store, ids: list[int]) -> list[int]:
    """Two tournaments with a void, forfeits and, in the second, a set left incomplete."""
    first = store.create_tournament(GAME, ids, seed=21, rounds=2)
    second = store.create_tournament(
        GAME, ids[:4], seed=22, trueskill=TrueSkillSettings(mu=20.0, beta=3.0, tau=0.5)
    )
    assert first.id is not None and second.id is not None
    for n, m in enumerate(store.pending_matches(first.id)):
        assert m.id is not None
        if n == 7:
            store.start_match(m.id)
            m = store.void_match(m.id, "server fault")
            assert m.id is not None
        store.record_result(m.id, seeded_outcomes(m))
    pending = store.pending_matches(second.id)
    for m in pending[:-1]:  # the last set stays incomplete: cancelled
        assert m.id is not None
        store.record_result(m.id, seeded_outcomes(m))
    return [first.id, second.id]


def test_recompute_reproduces_the_incremental_ratings_exactly(store: Store) -> None:
    ids = add_bots(store, 5)
    play_everything(store, ids)
    live, live_history = numbers(store), history(store)
    assert len(live) == 5 and len(live_history) > 0
    last: dict[int, tuple[float, float]] = {}
    for _, bot, mu_before, sigma_before, mu_after, sigma_after in live_history:
        assert (mu_before, sigma_before) == last.get(bot, (DEFAULT.mu, DEFAULT.sigma))
        last[bot] = (mu_after, sigma_after)
    assert store.recompute(GAME) == 120 + 23
    assert numbers(store) == live
    assert history(store) == live_history


def test_the_last_rating_tournament_is_kept_with_the_rating_and_no_history_is_read(
    store: Store,
) -> None:
    ids = add_bots(store, 5)
    statements: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        statements.append(statement)

    event.listen(store.engine, "before_cursor_execute", note)
    first, second = play_everything(store, ids)
    event.remove(store.engine, "before_cursor_execute", note)
    # Rating a set once joined the bot's whole history to its matches: linear in it.
    assert statements and not [s for s in statements if "FROM rating_history" in s]
    expected = {b: second for b in ids[:4]} | {ids[4]: first}  # only four play the second
    live = {b: r.last_tournament_id for b, r in store.ratings(GAME).items()}
    assert live == expected
    store.recompute(GAME)
    assert {b: r.last_tournament_id for b, r in store.ratings(GAME).items()} == expected


def test_a_database_of_the_margin_method_is_recomputed_once_when_opened(
    store: Store, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = add_bots(store, 4)
    play_everything(store, ids)
    right = numbers(store)
    expected = reference(store.engine, GAME)
    assert {b: pytest.approx(expected[b], abs=1e-9) for b in expected} == {
        b: r[:2] for b, r in right.items()
    }
    with Session(store.engine) as session:  # as the margin-model cardshark left it
        session.exec(delete(RatingHistory))
        session.get(RatingMethodRow, 1).version = 2  # type: ignore[union-attr]
        for row in session.exec(select(BotRating)).all():
            row.mu, row.sigma = 30.0, 0.71
            session.add(row)
        session.commit()
    capsys.readouterr()
    with Store(db_url) as upgraded:
        assert numbers(upgraded) == right
        assert len(history(upgraded)) > 0
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "cardshark: ratings of knaves recomputed once by the TrueSkill rating of record (method 3)"
    ]
    with Store(db_url) as again:
        assert numbers(again) == right
    assert capsys.readouterr().err == ""


def test_an_upgrade_recomputes_a_game_with_finished_matches_even_without_rating_rows(
    store: Store, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = add_bots(store, 5)
    t = store.create_tournament(GAME, ids[:3], seed=5)  # the only tournament of its game
    kill = store.create_tournament("kill", ids[:3], seats=3, seed=6)
    store.create_tournament("knives", ids, seed=7)  # nothing finished in this game
    assert t.id is not None and kill.id is not None
    for m in [*store.pending_matches(t.id), store.pending_matches(kill.id)[0]]:
        assert m.id is not None
        store.record_result(m.id, seeded_outcomes(m))
    right, right_history = numbers(store), history(store)
    right_kill = store.ratings("kill")
    with Session(store.engine) as session:  # an older method's database that lost its rows
        session.exec(delete(RatingHistory))
        session.exec(delete(BotRating))
        session.get(RatingMethodRow, 1).version = 2  # type: ignore[union-attr]
        session.commit()
    capsys.readouterr()
    with Store(db_url) as upgraded:
        assert numbers(upgraded) == right and history(upgraded) == right_history
        assert upgraded.ratings("kill") == right_kill and upgraded.ratings("knives") == {}
    assert capsys.readouterr().err.splitlines() == [
        "cardshark: ratings of kill, knaves recomputed once by the TrueSkill rating of record "
        "(method 3)"
    ]

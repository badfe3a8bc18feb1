"""Storage on SQLite and PostgreSQL: schedules, results, duplicates, concurrency, resume."""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from sqlmodel import Session, col, func, select

from games.registry import get_game
from tournaments import store as store_module
from tournaments.committer import OrderedCommitter
from tournaments.errors import (
    BotNameError,
    MatchAlreadyFinishedError,
    MatchStateError,
    NotEnoughEntrantsError,
    ResultError,
    ScheduleError,
    TournamentError,
    UnknownBotError,
    UnknownMatchError,
    UnknownTournamentError,
)
from tournaments.models import (
    HOUSE_AUTHOR,
    Bot,
    BotArchive,
    BotRating,
    Match,
    RatingHistory,
    SeatResult,
    TournamentStatus,
)
from tournaments.ratings import (
    Rating,
    SeatOutcome,
    TrueSkillSettings,
    apply_set,
    placements,
)
from tournaments.schedule import gauntlet, round_robin
from tournaments.store import (
    LOAD_VOID_PREFIX,
    UNRECORDED,
    FinishedMatch,
    Store,
    hash_token,
    new_token,
)
from tournaments.store.keys import digest_matches

GAME = "knaves"  # 3 seats


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


def outcomes_for(match: Match) -> list[SeatOutcome]:
    """Deterministic, varied outcomes: ties and forfeits included."""
    rng = random.Random(match.seed)
    out = []
    for _ in match.seats:
        forfeited = rng.random() < 0.1
        out.append(SeatOutcome(rng.choice([-10, 0, 5, 5, 12, 20]), rng.randrange(3), forfeited))
    return out


def count(store: Store, model: type, *where: Any) -> int:
    with Session(store.engine) as session:
        return int(session.exec(select(func.count()).select_from(model).where(*where)).one())


def rating_numbers(store: Store) -> dict[int, tuple[float, float, int, float, int]]:
    return {
        b: (r.mu, r.sigma, r.matches, r.score_sum, r.faults) for b, r in store.ratings(GAME).items()
    }


def history_numbers(store: Store) -> list[tuple[int, int, float, float, float, float]]:
    return [
        (h.match_id, h.bot_id, h.mu_before, h.sigma_before, h.mu_after, h.sigma_after)
        for h in store.rating_history(GAME)
    ]


def replay_in_memory(store: Store, tournament_id: int) -> dict[int, Rating]:
    """Ratings computed without the database: each set's matches in schedule order."""
    settings = store.get_tournament(tournament_id).trueskill
    sets: dict[tuple[int, int], list[tuple[list[int], tuple[int, ...]]]] = {}
    for m in store.matches(tournament_id, include_voided=False):
        assert m.result is not None
        outcomes = [
            SeatOutcome(score, faults, forfeited)
            for score, faults, forfeited in zip(
                m.result["scores"], m.result["faults"], m.result["forfeited"], strict=True
            )
        ]
        sets.setdefault((m.round, m.table_index), []).append((m.seats, placements(outcomes)))
    current: dict[int, Rating] = {}
    for played in sets.values():
        for change in apply_set(settings, current, played):
            current[change.bot_id] = change.after
    return current


def test_create_tournament_stores_the_whole_schedule_pending(store: Store) -> None:
    ids = add_bots(store, 5)
    settings = TrueSkillSettings(mu=30.0, sigma=9.0, beta=4.0, tau=0.1, draw_probability=0.05)
    t = store.create_tournament(
        GAME, ["bot-0", *ids[1:]], rounds=2, seed=1234, bank_ms=5000, trueskill=settings
    )
    assert t.id is not None
    stored = store.get_tournament(t.id)
    assert stored.trueskill == settings
    assert (stored.seats, stored.rounds, stored.seed, stored.clock_ms, stored.bank_ms) == (
        3,
        2,
        1234,
        1000,
        5000,
    )
    assert stored.status == "pending" and stored.options == {}
    assert [b.id for b in store.tournament_entrants(t.id)] == ids
    expected = round_robin(ids, 3, seed=1234, rounds=2)
    rows = store.matches(t.id)
    assert len(rows) == len(expected) == 120
    assert [
        (m.schedule_index, m.round, m.table_index, m.rotation, m.seed, tuple(m.seats), m.status)
        for m in rows
    ] == [(e.index, e.round, e.table, e.rotation, e.seed, e.seats, "pending") for e in expected]
    progress = store.tournament_status(t.id)
    assert progress.counts == {"pending": 120, "running": 0, "finished": 0, "voided": 0}
    assert progress.progress == 0.0
    assert [x.id for x in store.list_tournaments()] == [t.id]


def test_create_tournament_writes_nothing_when_it_cannot_schedule(store: Store) -> None:
    add_bots(store, 2)
    with pytest.raises(NotEnoughEntrantsError, match="2 entrants cannot fill a table of 3"):
        store.create_tournament(GAME, ["bot-0", "bot-1"])
    with pytest.raises(UnknownBotError, match="nobody"):
        store.create_tournament(GAME, ["bot-0", "bot-1", "nobody"])
    bot_1 = store.get_bot("bot-1").id
    with pytest.raises(ScheduleError, match="^a bot enters once; named more than once: bot-1$"):
        store.create_tournament(GAME, ["bot-0", "bot-1", bot_1])  # by name and by id
    twice = "^a bot enters once; named more than once: bot-0, bot-1$"
    with pytest.raises(ScheduleError, match=twice):
        store.create_tournament(GAME, ["bot-1", "bot-0", "bot-1", "bot-0"])
    assert store.list_tournaments() == []
    assert count(store, Match) == 0


def test_record_result_then_duplicate_raises_and_leaves_one_set_of_rows(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=7)
    assert t.id is not None
    first = store.pending_matches(t.id)[0]
    assert first.id is not None
    store.start_match(first.id)
    outcomes = [SeatOutcome(12, faults=1), SeatOutcome(12), SeatOutcome(-3, forfeited=True)]
    done = store.record_result(first.id, outcomes, record={"actions": ["play:QH"]})
    assert done.status == "finished" and done.result is not None
    assert done.result["ranks"] == [1, 1, 3]
    before = rating_numbers(store)
    with pytest.raises(MatchAlreadyFinishedError, match=f"match {first.id}"):
        store.record_result(first.id, [SeatOutcome(0), SeatOutcome(1), SeatOutcome(2)])
    with pytest.raises(MatchAlreadyFinishedError):
        store.start_match(first.id)
    assert count(store, SeatResult, SeatResult.match_id == first.id) == 3
    # The set is not complete: the match is counted but no rating moves yet.
    assert count(store, RatingHistory) == 0
    assert rating_numbers(store) == before
    assert before[first.seats[0]] == (25.0, 25.0 / 3, 1, 12.0, 1)
    seats = store.seat_results(first.id)
    assert [(s.seat, s.bot_id, s.score, s.rank, s.faults, s.forfeited) for s in seats] == [
        (0, first.seats[0], 12.0, 1, 1, False),
        (1, first.seats[1], 12.0, 1, 0, False),
        (2, first.seats[2], -3.0, 3, 0, True),
    ]
    rest = store.pending_matches(t.id)[:5]
    for m in rest:
        assert m.id is not None
        store.record_result(m.id, [SeatOutcome(6), SeatOutcome(3), SeatOutcome(0)])
    assert rest[-1].id is not None
    assert count(store, RatingHistory, RatingHistory.match_id == rest[-1].id) == 3
    a, b, c = first.seats
    assert [tuple(m.seats) for m in rest] == [(b, c, a), (c, a, b), (c, b, a), (b, a, c), (a, c, b)]
    played = [(first.seats, (1, 1, 3))]  # the stored ranks: a tie and a forfeit
    played += [(m.seats, (1, 2, 3)) for m in rest]
    expected = apply_set(TrueSkillSettings(), {}, played)
    after = rating_numbers(store)
    assert {ch.bot_id: (ch.after.mu, ch.after.sigma) for ch in expected} == {
        bot: (r[0], r[1]) for bot, r in after.items()
    }
    detail = store.match_detail(first.id)
    assert detail.match.record == {"actions": ["play:QH"]}
    assert detail.bot_names == {i: f"bot-{n}" for n, i in enumerate(ids)}


def test_record_result_checks_the_seat_count_and_writes_nothing(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=7)
    assert t.id is not None
    m = store.pending_matches(t.id)[0]
    assert m.id is not None
    with pytest.raises(ResultError, match="3 seats but 2 outcomes"):
        store.record_result(m.id, [SeatOutcome(1), SeatOutcome(2)])
    with pytest.raises(UnknownMatchError):
        store.record_result(10_000, [SeatOutcome(1)] * 3)
    assert store.get_match(m.id).status == "pending"
    assert count(store, SeatResult) == 0


def test_a_failure_inside_the_transaction_rolls_everything_back(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=7)
    assert t.id is not None
    m = store.pending_matches(t.id)[0]
    assert m.id is not None

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("rating blew up after the seat rows were flushed")

    for done in store.pending_matches(t.id)[:5]:
        assert done.id is not None
        store.record_result(done.id, [SeatOutcome(1), SeatOutcome(2), SeatOutcome(3)])
    m = store.pending_matches(t.id)[0]  # the match that completes the set
    assert m.id is not None
    monkeypatch.setattr(store_module.recording, "apply_set", broken)
    with pytest.raises(RuntimeError):
        store.record_result(m.id, [SeatOutcome(1), SeatOutcome(2), SeatOutcome(3)])
    monkeypatch.undo()
    assert store.get_match(m.id).status == "pending"
    assert count(store, SeatResult) == 15 and count(store, RatingHistory) == 0
    assert {r[2] for r in rating_numbers(store).values()} == {5}
    store.record_result(m.id, [SeatOutcome(1), SeatOutcome(2), SeatOutcome(3)])
    assert count(store, SeatResult) == 18 and count(store, RatingHistory) == 3
    assert {r[2] for r in rating_numbers(store).values()} == {6}


def record_all_concurrently(stores: list[Store], matches: list[Match]) -> None:
    order = list(matches)
    random.Random(99).shuffle(order)
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for m in order[worker::4]:
                assert m.id is not None
                stores[worker % len(stores)].record_result(m.id, outcomes_for(m))
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


@pytest.mark.parametrize("separate_engines", [False, True], ids=["one-store", "four-engines"])
def test_concurrent_recording_from_four_threads_loses_no_rating_update(
    store: Store, db_url: str, separate_engines: bool
) -> None:
    ids = add_bots(store, 5)
    t = store.create_tournament(GAME, ids, seed=2024)
    assert t.id is not None
    matches = store.pending_matches(t.id)
    stores = [store]
    if separate_engines:
        # Separate engines with separate locks: only the database's own locking protects.
        stores = [Store(db_url) for _ in range(4)]
        for s in stores:
            s._write_lock = threading.Lock()
    try:
        record_all_concurrently(stores, matches)
    finally:
        for s in stores[1:] if not separate_engines else stores:
            s.close()
    played = {b: sum(b in m.seats for m in matches) for b in ids}
    live = rating_numbers(store)
    assert {b: v[2] for b, v in live.items()} == played
    assert count(store, SeatResult) == len(matches) * 3
    sets = {(m.round, m.table_index) for m in matches}
    assert count(store, RatingHistory) == len(sets) * 3
    assert store.tournament_status(t.id).counts["finished"] == len(matches)
    assert store.get_tournament(t.id).status == "finished"
    live_history = history_numbers(store)
    assert store.recompute(GAME) == len(matches)
    assert rating_numbers(store) == live
    assert history_numbers(store) == live_history
    memory = replay_in_memory(store, t.id)
    assert {b: (r.mu, r.sigma) for b, r in memory.items()} == {
        b: (v[0], v[1]) for b, v in live.items()
    }


def test_committer_records_in_schedule_order_and_recompute_gives_the_same_floats(
    store: Store,
) -> None:
    ids = add_bots(store, 6)
    first = store.create_tournament(GAME, ids, seed=1, rounds=2)
    second = store.create_tournament(GAME, ids[:4], seed=2)
    assert first.id is not None and second.id is not None
    for tournament_id in (first.id, second.id):
        pending = store.pending_matches(tournament_id)
        committer: OrderedCommitter[FinishedMatch] = OrderedCommitter(
            [m.schedule_index for m in pending], store.record
        )
        finishing = list(pending)
        random.Random(tournament_id).shuffle(finishing)
        lock = threading.Lock()

        def worker(
            queue: list[Match] = finishing,
            committer: OrderedCommitter[FinishedMatch] = committer,
            lock: threading.Lock = lock,
        ) -> None:
            while True:
                with lock:
                    if not queue:
                        return
                    m = queue.pop()
                assert m.id is not None
                committer.finish(m.schedule_index, FinishedMatch(m.id, tuple(outcomes_for(m))))

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert committer.outstanding == []
    history = store.rating_history(GAME)
    # committed in schedule order: history rows were written in rating order
    assert [h.id for h in history] == sorted(h.id for h in history if h.id is not None)
    live = rating_numbers(store)
    live_history = history_numbers(store)
    sets = {(m.tournament_id, m.round, m.table_index) for m in store.matches(first.id)}
    sets |= {(m.tournament_id, m.round, m.table_index) for m in store.matches(second.id)}
    assert len(live_history) == len(sets) * 3
    store.recompute(GAME)
    assert rating_numbers(store) == live
    assert history_numbers(store) == live_history


def test_out_of_order_recording_still_matches_recompute(store: Store) -> None:
    ids = add_bots(store, 4)
    t = store.create_tournament(GAME, ids, seed=5)
    assert t.id is not None
    pending = store.pending_matches(t.id)
    for m in reversed(pending):
        assert m.id is not None
        store.record_result(m.id, outcomes_for(m))
    live = rating_numbers(store)
    memory = replay_in_memory(store, t.id)
    assert {b: (r.mu, r.sigma) for b, r in memory.items()} == {
        b: (v[0], v[1]) for b, v in live.items()
    }
    store.recompute(GAME)
    assert rating_numbers(store) == live


def test_a_later_tournament_recorded_first_still_matches_recompute(store: Store) -> None:
    # Two tournaments of one game at once: the later one's sets are rated before the
    # earlier one finishes, so the earlier one's results must recompute the game.
    ids = add_bots(store, 4)
    first = store.create_tournament(GAME, ids, seed=5)
    second = store.create_tournament(GAME, ids, seed=6)
    assert first.id is not None and second.id is not None
    for m in [*store.pending_matches(second.id), *store.pending_matches(first.id)]:
        assert m.id is not None
        store.record_result(m.id, outcomes_for(m))
    live, history = rating_numbers(store), history_numbers(store)
    store.recompute(GAME)
    assert rating_numbers(store) == live
    assert history_numbers(store) == history


def test_resume_returns_unfinished_matches_and_never_replays_finished_ones(
    store: Store, db_url: str
) -> None:
    ids = add_bots(store, 4)
    t = store.create_tournament(GAME, ids, seed=77)
    assert t.id is not None
    matches = store.pending_matches(t.id)
    assert len(matches) == 24
    finished = [matches[i] for i in (0, 1, 4, 9)]
    running = [matches[i] for i in (2, 5)]
    for m in finished:
        assert m.id is not None
        store.start_match(m.id)
        store.record_result(m.id, outcomes_for(m))
    for m in running:
        assert m.id is not None
        store.start_match(m.id)
    store.close()

    with Store(db_url) as again:  # a new process after a crash
        pending = again.pending_matches(t.id)
        expected = [m.id for m in matches if m not in finished]
        assert [m.id for m in pending] == expected
        assert [m.status for m in pending if m.id in {r.id for r in running}] == ["running"] * 2
        progress = again.tournament_status(t.id)
        assert progress.counts == {"pending": 18, "running": 2, "finished": 4, "voided": 0}
        assert progress.progress == pytest.approx(4 / 24)
        assert again.get_tournament(t.id).status == "running"
        # a running match left by the dead process is played again
        stale = running[0]
        assert stale.id is not None
        assert again.start_match(stale.id).status == "running"
        for m in pending:
            assert m.id is not None
            again.record_result(m.id, outcomes_for(m))
        for m in finished:
            assert m.id is not None
            with pytest.raises(MatchAlreadyFinishedError):
                again.record_result(m.id, outcomes_for(m))
        assert again.pending_matches(t.id) == []
        assert again.get_tournament(t.id).status == "finished"
        assert count(again, SeatResult) == 24 * 3
        assert {v[2] for v in rating_numbers(again).values()} == {18}


def test_a_voided_match_is_not_rated_and_is_scheduled_again(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=8)
    assert t.id is not None
    m = store.pending_matches(t.id)[1]
    assert m.id is not None
    store.start_match(m.id)
    again = store.void_match(m.id, "referee crashed", record={"actions": []})
    assert again.id is not None and again.id != m.id
    assert (again.schedule_index, again.attempt, again.seed, again.seats, again.status) == (
        m.schedule_index,
        1,
        m.seed,
        m.seats,
        "pending",
    )
    voided = store.get_match(m.id)
    assert voided.status == "voided" and voided.result == {"void_reason": "referee crashed"}
    with pytest.raises(MatchStateError, match="voided"):
        store.record_result(m.id, [SeatOutcome(1)] * 3)
    assert count(store, BotRating) == 0 and count(store, SeatResult) == 0
    pending = store.pending_matches(t.id)
    assert [p.id for p in pending].count(again.id) == 1 and m.id not in [p.id for p in pending]
    assert store.tournament_status(t.id).counts == {
        "pending": 6,
        "running": 0,
        "finished": 0,
        "voided": 1,
    }
    for p in pending:
        assert p.id is not None
        store.record_result(p.id, outcomes_for(p))
    with pytest.raises(MatchAlreadyFinishedError):
        store.void_match(again.id, "too late")
    assert count(store, RatingHistory) == 3  # one set: one update per bot
    live = rating_numbers(store)
    store.recompute(GAME)
    assert rating_numbers(store) == live


def test_a_token_is_never_taken_for_an_option_on_a_kits_command_line(store: Store) -> None:
    # A token_urlsafe token starts with '-' one time in 64: `--token -x…` then failed in
    # every kit's argument parser (a CI run lost a test to it).
    draws = [new_token() for _ in range(3000)] + [store.add_bot(f"b{i}")[1] for i in range(3)]
    assert all(re.fullmatch(r"[0-9a-f]{64}", token) for token in draws)
    assert len(set(draws)) == len(draws)


def test_bots_tokens_are_hashed_and_removal_retires_bots_with_matches(store: Store) -> None:
    bot, token = store.add_bot("alpha", command="python alpha.py")
    assert len(token) >= 40
    with Session(store.engine) as session:
        stored = session.exec(select(Bot.token_hash)).all()
    assert stored == [hash_token(token)] and token not in stored[0]
    found = store.find_bot_by_token(token)
    assert found is not None and found.id == bot.id and found.command == "python alpha.py"
    assert store.find_bot_by_token(token + "x") is None
    with pytest.raises(BotNameError, match="already taken"):
        store.add_bot("alpha")
    with pytest.raises(BotNameError):
        store.add_bot("has space")
    _, token_b = store.add_bot("beta")
    store.add_bot("gamma")
    store.add_bot("delta")
    assert [b.name for b in store.list_bots()] == ["alpha", "beta", "delta", "gamma"]
    assert store.remove_bot("delta") == "deleted"
    t = store.create_tournament(GAME, ["alpha", "beta", "gamma"], seed=3)
    assert t.id is not None
    m = store.pending_matches(t.id)[0]
    assert m.id is not None
    store.record_result(m.id, [SeatOutcome(3), SeatOutcome(2), SeatOutcome(1)])
    assert store.remove_bot("beta") == "retired"
    assert store.find_bot_by_token(token_b) is None
    assert [b.name for b in store.list_bots()] == ["alpha", "gamma"]
    assert [b.name for b in store.list_bots(include_removed=True)] == ["alpha", "beta", "gamma"]
    assert [r.bot for r in store.rankings(GAME)] == ["alpha", "gamma"]
    assert len(store.rankings(GAME, include_removed=True)) == 3
    with pytest.raises(UnknownBotError):
        store.get_bot("beta")
    with pytest.raises(UnknownBotError):
        store.create_tournament(GAME, ["alpha", "beta", "gamma"])
    with pytest.raises(BotNameError, match="removed"):
        store.add_bot("beta")
    assert count(store, SeatResult, col(SeatResult.bot_id) == m.seats[1]) == 1


def test_rankings_sort_by_conservative_rating_with_means_and_faults(store: Store) -> None:
    ids = add_bots(store, 4)
    t = store.create_tournament(GAME, ids, seed=12)
    assert t.id is not None
    strength = {ids[0]: 30, ids[1]: 20, ids[2]: 10, ids[3]: 0}
    for m in store.pending_matches(t.id):
        assert m.id is not None
        store.record_result(
            m.id, [SeatOutcome(strength[b], faults=1 if b == ids[3] else 0) for b in m.seats]
        )
    rows = store.rankings(GAME)
    assert [r.bot for r in rows] == ["bot-0", "bot-1", "bot-2", "bot-3"]
    assert [r.rank for r in rows] == [1, 2, 3, 4]
    conservative = [r.conservative for r in rows]
    assert conservative == sorted(conservative, reverse=True)
    for r in rows:
        assert r.conservative == pytest.approx(r.mu - 3 * r.sigma)
        assert r.matches == 18
        assert r.mean_score == strength[r.bot_id]
    assert rows[3].faults == 18 and rows[0].faults == 0
    assert store.rankings("no-such-game") == []


def test_ranks_stored_follow_placements(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=4)
    assert t.id is not None
    m = store.pending_matches(t.id)[0]
    assert m.id is not None
    outcomes = [SeatOutcome(50, forfeited=True), SeatOutcome(1), SeatOutcome(1)]
    store.record_result(m.id, outcomes)
    assert [s.rank for s in store.seat_results(m.id)] == list(placements(outcomes)) == [3, 1, 1]


def test_bots_tied_on_the_conservative_rating_rank_together_by_mu_then_name(store: Store) -> None:
    ids = add_bots(store, 4)  # bot-0 .. bot-3
    # mu - 3 sigma: 24 for three of them (exactly, in binary), 23 for the last.
    numbers = {ids[0]: (27.0, 1.0), ids[1]: (30.0, 2.0), ids[2]: (27.0, 1.0), ids[3]: (29.0, 2.0)}
    with Session(store.engine) as session:
        for bot_id, (mu, sigma) in numbers.items():
            session.add(BotRating(bot_id=bot_id, game=GAME, mu=mu, sigma=sigma, matches=6))
        session.commit()
    rows = store.rankings(GAME)
    assert [(r.rank, r.bot, r.conservative) for r in rows] == [
        (1, "bot-1", 24.0),  # the higher mu first among equals
        (1, "bot-0", 24.0),  # then by name
        (1, "bot-2", 24.0),
        (4, "bot-3", 23.0),  # the next rank counts the tied ones
    ]


def test_a_cancelled_tournament_stays_cancelled_when_its_last_running_match_finishes(
    store: Store,
) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=9)
    assert t.id is not None
    *first, last = store.pending_matches(t.id)
    for m in first:
        assert m.id is not None
        store.record_result(m.id, [SeatOutcome(2), SeatOutcome(1), SeatOutcome(0)])
    assert last.id is not None
    store.start_match(last.id)
    store.set_tournament_status(t.id, TournamentStatus.CANCELLED)
    store.record_result(last.id, [SeatOutcome(2), SeatOutcome(1), SeatOutcome(0)])
    assert store.get_tournament(t.id).status == TournamentStatus.CANCELLED.value
    assert store.tournament_status(t.id).finished == 6  # the result itself is kept


def test_load_voids_count_the_load_voids_of_each_tournament_of_the_game(store: Store) -> None:
    add_bots(store, 3)
    names = ["bot-0", "bot-1", "bot-2"]
    first = store.create_tournament(GAME, names, seed=1)
    second = store.create_tournament(GAME, names, seed=2)
    other = store.create_tournament("kill", names, seats=3, seed=3)
    assert first.id is not None and second.id is not None and other.id is not None
    assert store.load_voids(GAME) == {}

    def void(tournament_id: int, reason: str) -> None:
        match = store.pending_matches(tournament_id)[0]
        assert match.id is not None
        store.void_match(match.id, reason)

    void(first.id, f"{LOAD_VOID_PREFIX} timeouts of 2 bots")
    void(first.id, f"{LOAD_VOID_PREFIX} the host stalled")
    void(first.id, "referee lost the bot's stream")  # not the load's
    void(second.id, "referee lost the bot's stream")
    void(other.id, f"{LOAD_VOID_PREFIX} timeouts of 3 bots")
    assert store.load_voids(GAME) == {first.id: 2}
    assert store.load_voids("kill") == {other.id: 1}
    assert store.load_voids("knives") == {}


def test_a_void_keeps_its_record_and_time_and_the_replay_its_place(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, rounds=2, seed=8)
    assert t.id is not None
    m = store.pending_matches(t.id)[7]  # round 1, table 0, rotation 1
    assert m.id is not None and (m.round, m.table_index, m.rotation) == (1, 0, 1)
    again = store.void_match(m.id, "referee crashed", record={"faults": [], "actions": ["x"]})
    voided = store.get_match(m.id)
    assert voided.record == {"faults": [], "actions": ["x"]}
    assert voided.finished is not None and voided.finished.tzinfo is not None
    assert again.id is not None
    replay = store.get_match(again.id)
    assert (replay.tournament_id, replay.round, replay.table_index, replay.rotation) == (
        t.id,
        1,
        0,
        1,
    )
    assert (replay.record, replay.result, replay.finished, replay.started) == (None,) * 4
    # The replay is voided in its turn: the third attempt follows it.
    third = store.void_match(again.id, "referee crashed again")
    assert (third.schedule_index, third.attempt) == (m.schedule_index, 2)
    assert [x.attempt for x in store.matches(t.id) if x.schedule_index == m.schedule_index] == [
        0,
        1,
        2,
    ]
    assert [x.id for x in store.matches(t.id, include_voided=False)].count(third.id) == 1
    assert m.id not in [x.id for x in store.matches(t.id, include_voided=False)]
    assert len(store.matches(t.id, include_voided=False)) == 12
    # In schedule order, attempts in order: the replays sit where their match was scheduled.
    order = [(x.schedule_index, x.attempt) for x in store.matches(t.id)]
    assert order == sorted(order) and order[7:10] == [(7, 0), (7, 1), (7, 2)]
    with pytest.raises(MatchStateError, match=f"^cannot void match {m.id}: it is voided$"):
        store.void_match(m.id, "twice")
    with pytest.raises(MatchStateError, match=f"^cannot start match {m.id}: it is voided$"):
        store.start_match(m.id)
    refused = f"^cannot record a result for match {m.id}: it is voided$"
    with pytest.raises(MatchStateError, match=refused):
        store.record_result(m.id, [SeatOutcome(1)] * 3)
    with pytest.raises(UnknownMatchError):
        store.void_match(10_000, "no such match")


def test_starting_a_match_marks_it_and_its_tournament_running(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=8)
    other = store.create_tournament(GAME, ids, seed=9)
    assert t.id is not None and other.id is not None
    m = store.pending_matches(t.id)[2]
    assert m.id is not None
    started = store.start_match(m.id)
    assert (started.id, started.status) == (m.id, "running")
    stored = store.get_match(m.id)
    assert stored.status == "running" and stored.started == started.started
    assert stored.started is not None and stored.finished is None
    assert [x.status for x in store.matches(t.id)].count("running") == 1
    assert store.get_tournament(t.id).status == "running"
    assert store.get_tournament(other.id).status == "pending"
    # A cancelled tournament is not made running again by a match that starts.
    store.set_tournament_status(t.id, TournamentStatus.CANCELLED)
    n = store.pending_matches(t.id)[0]
    assert n.id is not None
    store.start_match(n.id)
    assert store.get_tournament(t.id).status == "cancelled"
    with pytest.raises(UnknownMatchError, match="^no match 10000$"):
        store.start_match(10_000)


def test_a_finished_match_is_recorded_from_its_committed_form_with_every_field(
    store: Store,
) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=8)
    assert t.id is not None
    m = store.pending_matches(t.id)[0]
    assert m.id is not None
    outcomes = (SeatOutcome(4, 0), SeatOutcome(9, 2), SeatOutcome(-1, 1, True))
    done = store.record(FinishedMatch(m.id, outcomes, {"actions": ["a"], "faults": []}))
    assert done.id == m.id and done.status == "finished"
    detail = store.match_detail(m.id)
    # The match handed back is the one stored.
    assert (done.result, done.record) == (detail.match.result, detail.match.record)
    assert done.finished is not None and done.finished == detail.match.finished
    assert detail.match.status == "finished" and detail.match.finished is not None
    assert detail.match.result == {
        "scores": [4.0, 9.0, -1.0],
        "ranks": [2, 1, 3],
        "faults": [0, 2, 1],
        "forfeited": [False, False, True],
    }
    assert detail.match.record == {"actions": ["a"], "faults": []}
    assert detail.tournament.id == t.id and detail.tournament.game == GAME
    assert [
        (s.seat, s.bot_id, s.score, s.rank, s.faults, s.forfeited) for s in detail.seat_results
    ] == [
        (0, m.seats[0], 4.0, 2, 0, False),
        (1, m.seats[1], 9.0, 1, 2, False),
        (2, m.seats[2], -1.0, 3, 1, True),
    ]
    assert detail.seat_results == store.seat_results(m.id)
    assert detail.bot_names == {b: f"bot-{ids.index(b)}" for b in m.seats}
    # Without a record the match keeps none; the other matches have no seat rows yet.
    n = store.pending_matches(t.id)[0]
    assert n.id is not None
    store.record(FinishedMatch(n.id, (SeatOutcome(1), SeatOutcome(1), SeatOutcome(1))))
    assert store.get_match(n.id).record is None
    with pytest.raises(
        MatchAlreadyFinishedError, match=f"^cannot start match {n.id}: it is already"
    ):
        store.start_match(n.id)
    assert store.seat_results(store.pending_matches(t.id)[0].id or 0) == []
    with pytest.raises(UnknownMatchError):
        store.match_detail(10_000)
    with pytest.raises(ResultError, match="^outcomes must be SeatOutcome values, not 1$"):
        store.record_result(n.id, [1, 2, 3])  # type: ignore[list-item]


def test_seat_rows_come_back_by_seat_whatever_order_they_were_written_in(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=8)
    assert t.id is not None
    m = store.pending_matches(t.id)[0]
    assert m.id is not None
    with Session(store.engine) as session:
        for seat in (2, 0, 1):
            bot = m.seats[seat]
            session.add(SeatResult(match_id=m.id, seat=seat, bot_id=bot, score=seat, rank=3 - seat))
        session.commit()
    assert [(s.seat, s.bot_id) for s in store.seat_results(m.id)] == list(enumerate(m.seats))
    detail = store.match_detail(m.id)
    assert [(s.seat, s.bot_id) for s in detail.seat_results] == list(enumerate(m.seats))


def test_a_found_match_reads_as_json_with_names_scores_faults_and_void_reason(
    store: Store,
) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, rounds=2, seed=8)
    assert t.id is not None
    played, voided = store.pending_matches(t.id)[4:6]
    assert played.id is not None and voided.id is not None
    names = [f"bot-{ids.index(b)}" for b in played.seats]
    faults = [{"seat": 2, "kind": "timeout"}, {"seat": 2, "kind": "illegal_action"}]
    store.record_result(
        played.id,
        [SeatOutcome(7), SeatOutcome(-2.5), SeatOutcome(0, 2, True)],
        record={"faults": faults},
    )
    store.void_match(voided.id, "referee crashed", record={"faults": [faults[0]]})
    finished_at = store.get_match(played.id).finished
    assert finished_at is not None

    found = store.find_matches(tournament_id=t.id, statuses=["finished", "voided"])
    assert [s.id for s in found] == [voided.id, played.id]
    assert found[1].to_json() == {
        "id": played.id,
        "tournament": t.id,
        "game": GAME,
        "status": "finished",
        "round": played.round,
        "table": played.table_index,
        "rotation": played.rotation,
        "attempt": 0,
        "seats": names,
        "scores": [7.0, -2.5, 0.0],
        "faults": [0, 0, 2],
        "fault_kinds": [{}, {}, {"timeout": 1, "illegal_action": 1}],
        "void_reason": None,
        "finished": finished_at.isoformat(),
    }
    void = found[0].to_json()
    assert (void["status"], void["scores"], void["void_reason"]) == (
        "voided",
        None,
        "referee crashed",
    )
    assert (void["faults"], void["fault_kinds"]) == ([0, 0, 1], [{}, {}, {"timeout": 1}])
    assert void["round"] == voided.round and void["rotation"] == voided.rotation
    assert [s.id for s in store.find_matches(tournament_id=t.id, statuses=["voided"])] == [
        voided.id
    ]
    pending = store.find_matches(tournament_id=t.id, statuses=["pending"], limit=1)[0].to_json()
    assert (pending["status"], pending["finished"], pending["scores"]) == ("pending", None, None)


def test_pinning_moves_a_tournament_to_a_worker_with_its_jobs_in_one_write(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=8)
    assert t.id is not None
    seen: list[str | None] = []

    def along(conn: Any) -> int:
        seen.append(conn.exec_driver_sql("SELECT worker FROM tournaments").scalar())
        return 4

    pinned, moved = store.pin_tournament(t.id, "w1", along)
    assert (pinned.worker, moved, seen) == ("w1", 4, ["w1"])  # along sees the pin
    assert store.get_tournament(t.id).worker == "w1"
    unpinned, _ = store.pin_tournament(t.id, None, along)
    assert unpinned.worker is None and store.get_tournament(t.id).worker is None
    for status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
        store.set_tournament_status(t.id, status)
        with pytest.raises(TournamentError, match=f"^tournament {t.id} is {status.value}: "):
            store.pin_tournament(t.id, "w2", along)
        assert store.get_tournament(t.id).worker is None
    assert len(seen) == 2


def test_updating_a_bot_keeps_its_token_and_drops_code_no_bot_uses(store: Store) -> None:
    def archive(digest: str) -> BotArchive:
        return BotArchive(digest=digest * 64, data=digest.encode(), size=1)

    bot, token = store.add_bot("alpha", command="run a", archive=archive("a"))
    store.add_bot("bravo", command="run b", archive=archive("b"))
    changed = store.update_bot("alpha", command="run a2")
    assert (changed.command, changed.code_digest) == ("run a2", "a" * 64)
    assert store.bot_archive("a" * 64) == b"a"
    changed = store.update_bot(bot.id or 0, archive=archive("b"))  # the code bravo has
    assert (changed.command, changed.code_digest) == ("run a2", "b" * 64)
    assert store.bot_archive("a" * 64) is None  # no bot uses it any more
    assert store.bot_archive("b" * 64) == b"b"
    found = store.find_bot_by_token(token)
    assert found is not None and found.code_digest == "b" * 64
    store.update_bot("alpha", archive=archive("c"))
    assert store.bot_archive("b" * 64) == b"b"  # bravo still uses it
    assert store.get_bot("bravo").code_digest == "b" * 64
    with pytest.raises(UnknownBotError):
        store.update_bot("nobody", command="x")


def test_create_tournament_stores_every_setting_it_is_given(store: Store) -> None:
    ids = add_bots(store, 4)
    t = store.create_tournament(
        "kill",
        ["bot-2", ids[0], "bot-1", "bot-3"],
        seats=3,
        options={"target": 26},
        tables=3,
        seed=5,
        clock_ms=250,
        bank_ms=100,
        name="cup",
        worker="w1",
    )
    assert t.id is not None
    stored = store.get_tournament(t.id)
    assert (stored.name, stored.game, stored.format, stored.worker) == (
        "cup",
        "kill",
        "round_robin",
        "w1",
    )
    assert stored.options == {**get_game("kill").spec.defaults(), "target": 26}
    assert get_game("kill").spec.defaults()["target"] == 21
    assert (stored.seats, stored.tables, stored.clock_ms, stored.bank_ms) == (3, 3, 250, 100)
    assert stored.trueskill == TrueSkillSettings()
    order = [ids[2], ids[0], ids[1], ids[3]]
    assert [b.id for b in store.tournament_entrants(t.id)] == order
    expected = round_robin(order, 3, seed=5, rounds=1, tables=3)
    assert [(m.table_index, tuple(m.seats)) for m in store.matches(t.id)] == [
        (e.table, e.seats) for e in expected
    ]
    assert {m.attempt for m in store.matches(t.id)} == {0}
    # The game's own move clock when none is given; a seed is drawn when none is given.
    knaves = store.create_tournament(GAME, ids[:3])
    assert knaves.clock_ms == 1000 and knaves.bank_ms == 0 and knaves.name is None
    assert 0 <= knaves.seed < 2**53 and knaves.worker is None and knaves.tables is None
    assert [x.id for x in store.list_tournaments(game="kill")] == [t.id]
    assert [x.id for x in store.list_tournaments(game=GAME)] == [knaves.id]
    assert [x.id for x in store.list_tournaments()] == [knaves.id, t.id]


def test_a_gauntlet_is_stored_as_the_gauntlet_schedule(store: Store) -> None:
    ids = add_bots(store, 5)
    t = store.create_tournament(GAME, ids, format="gauntlet", rounds=2, seed=6)
    assert t.id is not None and store.get_tournament(t.id).format == "gauntlet"
    expected = gauntlet(ids, 3, seed=6, rounds=2)
    assert [
        (m.schedule_index, m.round, m.table_index, m.rotation, m.seed, tuple(m.seats))
        for m in store.matches(t.id)
    ] == [(e.index, e.round, e.table, e.rotation, e.seed, e.seats) for e in expected]


def test_create_tournament_refuses_bad_settings_before_writing(store: Store) -> None:
    ids = add_bots(store, 4)
    with pytest.raises(
        ScheduleError, match="^unknown format 'swiss'; formats: round_robin, gauntlet, ladder$"
    ):
        store.create_tournament(GAME, ids, format="swiss")
    with pytest.raises(
        ScheduleError, match="^a gauntlet plays every table; --tables is for round robins$"
    ):
        store.create_tournament(GAME, ids, format="gauntlet", tables=2)
    with pytest.raises(ResultError, match=r"^clock_ms must be > 0 and bank_ms >= 0 \(got 0, 0\)$"):
        store.create_tournament(GAME, ids, clock_ms=0)
    with pytest.raises(ResultError, match=r"\(got 1000, -1\)$"):
        store.create_tournament(GAME, ids, bank_ms=-1)
    assert store.list_tournaments() == []
    # The edges are allowed: a 1 ms clock and no bank.
    edge = store.create_tournament(GAME, ids, clock_ms=1, bank_ms=0)
    assert (edge.clock_ms, edge.bank_ms) == (1, 0)


def test_progress_counts_every_status_and_says_what_is_resumable(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=8)
    assert t.id is not None
    first, second, third, *_ = store.pending_matches(t.id)
    assert first.id is not None and second.id is not None and third.id is not None
    store.record_result(first.id, [SeatOutcome(1), SeatOutcome(2), SeatOutcome(3)])
    store.start_match(second.id)
    store.void_match(third.id, "crash")
    progress = store.tournament_status(t.id)
    assert progress.counts == {"pending": 4, "running": 1, "finished": 1, "voided": 1}
    assert (progress.scheduled, progress.finished) == (6, 1)
    assert progress.progress == pytest.approx(1 / 6)
    assert progress.tournament.id == t.id and progress.resumable
    resumable = {}
    for status in TournamentStatus:
        store.set_tournament_status(t.id, status)
        assert store.get_tournament(t.id).status == status.value
        resumable[status.value] = store.tournament_status(t.id).resumable
    assert resumable == {
        "pending": True,
        "running": True,
        "finished": False,
        "cancelled": False,
        "interrupted": True,
    }
    empty = store_module.TournamentProgress(store.get_tournament(t.id), {}, 0, 0)
    assert empty.progress == 1.0


def test_a_match_search_filters_by_tournament_game_and_bot_across_batches(store: Store) -> None:
    ids = add_bots(store, 5)
    big = store.create_tournament(GAME, ids, rounds=2, seed=1)  # 120 matches
    small = store.create_tournament("kill", ids[:3], seats=3, seed=2)  # 6
    third = store.create_tournament(GAME, ids[1:4], rounds=15, seed=3)  # 90
    assert big.id is not None and small.id is not None and third.id is not None

    def found(**filters: Any) -> list[int | None]:
        return [m.id for m in store.find_matches(limit=1000, **filters)]

    def newest_first(*tournaments: int) -> list[int | None]:
        rows = [m for t in tournaments for m in store.matches(t)]
        return sorted((m.id for m in rows), key=lambda i: -(i or 0))

    assert found() == newest_first(big.id, small.id, third.id)  # 216: two batches
    assert found(tournament_id=big.id) == newest_first(big.id)
    assert found(game="kill") == newest_first(small.id)
    assert found(game=GAME, tournament_id=third.id) == newest_first(third.id)
    with_4 = [m.id for m in store.matches(big.id) if ids[4] in m.seats]
    assert found(bot="bot-4") == sorted(with_4, key=lambda i: -(i or 0))
    assert found(bot=ids[0], game="kill") == newest_first(small.id)
    assert found(statuses=["finished"]) == []
    assert len(store.find_matches()) == 50
    assert [m.id for m in store.find_matches(limit=3)] == found()[:3]
    summaries = store.find_matches(tournament_id=small.id)
    assert {s.game for s in summaries} == {"kill"} and {s.tournament_id for s in summaries} == {
        small.id
    }
    assert all(s.seats == tuple(f"bot-{ids.index(b)}" for b in s.bot_ids) for s in summaries)
    with pytest.raises(UnknownTournamentError):
        store.find_matches(tournament_id=10_000)


def test_a_bot_profile_has_its_ratings_by_game_tournaments_author_and_latest_matches(
    store: Store,
) -> None:
    store.add_author("ann")
    store.add_bot("alpha", author="ann")
    ids = [store.get_bot("alpha").id or 0, *add_bots(store, 2)]
    knaves = store.create_tournament(GAME, ids, seed=1)
    kill = store.create_tournament("kill", ids, seats=3, seed=2)
    assert knaves.id is not None and kill.id is not None
    played = []
    for t in (knaves.id, kill.id):
        m = store.pending_matches(t)[0]
        assert m.id is not None
        store.record_result(m.id, [SeatOutcome(1), SeatOutcome(2), SeatOutcome(3)])
        played.append(m.id)
    profile = store.bot_profile("alpha")
    assert profile.author == "ann" and profile.bot.name == "alpha"
    assert [(r.game, r.matches) for r in profile.ratings] == [("kill", 1), (GAME, 1)]
    assert profile.tournaments == 2
    assert [m.id for m in profile.recent] == played[::-1]
    assert [m.id for m in store.bot_profile(ids[0], recent=1).recent] == played[1:]
    assert store.bot_profile("alpha", recent=0).recent == []
    house = store.bot_profile("bot-0")
    assert house.author == HOUSE_AUTHOR and house.tournaments == 2 and house.faults == {}
    store.add_bot("idle")
    idle = store.bot_profile("idle")
    assert (idle.ratings, idle.tournaments, idle.recent) == ([], 0, [])


def test_rating_history_of_one_bot_by_name_or_id_retired_or_not(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=8)
    assert t.id is not None
    for m in store.pending_matches(t.id):
        assert m.id is not None
        store.record_result(m.id, [SeatOutcome(3), SeatOutcome(2), SeatOutcome(1)])
    every = store.rating_history(GAME)
    assert len(every) == 3 and {h.bot_id for h in every} == set(ids)
    assert [h.id for h in store.rating_history(GAME, "bot-1")] == [
        h.id for h in every if h.bot_id == ids[1]
    ]
    assert store.remove_bot("bot-1") == "retired"
    assert [h.bot_id for h in store.rating_history(GAME, ids[1])] == [ids[1]]
    assert store.rating_history("kill") == [] and store.rating_history("kill", "bot-0") == []
    with pytest.raises(UnknownBotError):
        store.rating_history(GAME, "nobody")


def test_a_rating_without_matches_has_a_mean_score_of_zero(store: Store) -> None:
    ids = add_bots(store, 2)
    with Session(store.engine) as session:
        session.add(BotRating(bot_id=ids[0], game=GAME, mu=25.0, sigma=2.0, matches=0))
        session.add(
            BotRating(bot_id=ids[1], game=GAME, mu=20.0, sigma=2.0, matches=4, score_sum=-6.0)
        )
        session.commit()
    rows = store.rankings(GAME)
    assert [(r.rank, r.bot, r.bot_id, r.matches, r.mean_score) for r in rows] == [
        (1, "bot-0", ids[0], 0, 0.0),
        (2, "bot-1", ids[1], 4, -1.5),
    ]
    assert [(r.mu, r.sigma, r.conservative, r.faults) for r in rows] == [
        (25.0, 2.0, 19.0, 0),
        (20.0, 2.0, 14.0, 0),
    ]


def test_recording_rates_with_the_tournaments_own_trueskill_settings(store: Store) -> None:
    ids = add_bots(store, 3)
    settings = TrueSkillSettings(mu=40.0, sigma=6.0, beta=5.0, tau=0.2, draw_probability=0.3)
    t = store.create_tournament(GAME, ids, seed=8, trueskill=settings)
    assert t.id is not None
    first, *rest = store.pending_matches(t.id)
    assert first.id is not None
    store.record_result(first.id, [SeatOutcome(3), SeatOutcome(2), SeatOutcome(1)])
    # Counted, not yet rated: each bot starts at the tournament's prior, not the default one.
    assert {b: (r[0], r[1]) for b, r in rating_numbers(store).items()} == {
        b: (40.0, 6.0) for b in ids
    }
    played = [(first.seats, (1, 2, 3))]
    for m in rest:
        assert m.id is not None
        store.record_result(m.id, [SeatOutcome(1), SeatOutcome(1), SeatOutcome(0)])
        played.append((m.seats, (1, 1, 3)))
    expected = {c.bot_id: (c.after.mu, c.after.sigma) for c in apply_set(settings, {}, played)}
    assert {b: (r[0], r[1]) for b, r in rating_numbers(store).items()} == expected
    default = apply_set(TrueSkillSettings(mu=40.0, sigma=6.0, beta=5.0, tau=0.2), {}, played)
    assert expected != {c.bot_id: (c.after.mu, c.after.sigma) for c in default}


def test_a_tournaments_rows_come_in_entry_and_schedule_order_whatever_the_recording_order(
    store: Store,
) -> None:
    ids = add_bots(store, 4)
    other = store.create_tournament(GAME, ids[:3], seed=1)
    entry = [ids[3], ids[1], ids[0], ids[2]]
    t = store.create_tournament(GAME, entry, seed=2)
    assert t.id is not None and other.id is not None
    matches = store.pending_matches(t.id)
    index = {m.id: m.schedule_index for m in matches}
    voided = store.void_match(matches[3].id or 0, "crash")
    for m in [*reversed(matches[:3]), voided, *reversed(matches[4:])]:
        assert m.id is not None
        store.record_result(m.id, [SeatOutcome(3), SeatOutcome(2), SeatOutcome(1)])
    index[voided.id] = voided.schedule_index
    o = store.pending_matches(other.id)[0]
    assert o.id is not None
    store.record_result(o.id, [SeatOutcome(1), SeatOutcome(2), SeatOutcome(3)])

    rows = store.tournament_rows(t.id)
    assert rows.tournament.id == t.id
    assert [b.id for b in rows.entrants] == entry
    assert [(m.schedule_index, m.attempt) for m in rows.matches] == sorted(
        (m.schedule_index, m.attempt) for m in store.matches(t.id)
    )
    assert len(rows.matches) == 25 and rows.matches[3].status == "voided"
    seats = [(index[s.match_id], s.seat) for s in rows.seat_results]
    assert seats == sorted(seats) and len(seats) == 24 * 3
    assert all(s.match_id in index for s in rows.seat_results)
    history = [index[h.match_id] for h in rows.history]
    assert history == sorted(history) and len(history) == 4 * 3  # four tables, three bots
    assert {h.match_id for h in rows.history} <= set(index)
    with pytest.raises(UnknownTournamentError):
        store.tournament_rows(10_000)


def test_recompute_rebuilds_one_game_and_leaves_the_others(store: Store) -> None:
    ids = add_bots(store, 3)
    knaves = store.create_tournament(GAME, ids, seed=1)
    kill = store.create_tournament("kill", ids, seats=3, seed=2)
    assert knaves.id is not None and kill.id is not None
    for t, count_ in ((knaves.id, 6), (kill.id, 4)):
        for m in store.pending_matches(t)[:count_]:
            assert m.id is not None
            store.record_result(m.id, [SeatOutcome(3), SeatOutcome(2), SeatOutcome(1)])
    live = {game: store.ratings(game) for game in (GAME, "kill")}
    assert store.recompute(GAME) == 6
    assert store.recompute("kill") == 4
    for game, rows in live.items():
        assert {b: (r.mu, r.sigma, r.matches, r.score_sum) for b, r in rows.items()} == {
            b: (r.mu, r.sigma, r.matches, r.score_sum) for b, r in store.ratings(game).items()
        }
    assert {r.matches for r in store.ratings("kill").values()} == {4}
    assert len(store.rating_history(GAME)) == 3 and store.rating_history("kill") == []


def test_rating_history_is_in_rating_order_whatever_order_its_rows_were_written_in(
    store: Store,
) -> None:
    ids = add_bots(store, 4)
    t = store.create_tournament(GAME, ids, seed=3)  # four tables: four sets
    assert t.id is not None
    for m in store.pending_matches(t.id):
        assert m.id is not None
        store.record_result(m.id, [SeatOutcome(3), SeatOutcome(2), SeatOutcome(1)])
    in_order = history_numbers(store)
    assert len({h[0] for h in in_order}) == 4
    with Session(store.engine) as session:
        rows = session.exec(select(RatingHistory)).all()
        copies = [r.model_dump(exclude={"id"}) for r in rows]
        for row in rows:
            session.delete(row)
        session.flush()
        for copy in reversed(copies):  # the last set's rows get the lowest ids
            session.add(RatingHistory(**copy))
        session.commit()
    assert [h[0] for h in history_numbers(store)] == [h[0] for h in in_order]
    rows = store.tournament_rows(t.id).history
    assert [h.match_id for h in rows] == [h[0] for h in in_order]
    # Each bot played 18: a profile shows the latest 10 unless told otherwise.
    assert len(store.bot_profile("bot-0").recent) == 10


def test_a_retired_bot_cannot_be_updated(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=3)
    assert t.id is not None
    assert store.remove_bot("bot-0") == "retired"
    with pytest.raises(UnknownBotError):
        store.update_bot("bot-0", command="python new.py")
    assert store.get_bot("bot-0", include_removed=True).command is None
    profile = store.bot_profile("bot-0")  # a retired bot still has its profile
    assert profile.bot.removed is not None and profile.tournaments == 1


def test_a_set_completed_by_a_late_replay_is_rated_in_its_schedule_place(store: Store) -> None:
    ids = add_bots(store, 4)
    t = store.create_tournament(GAME, ids, seed=5)  # four sets of six sharing bots
    assert t.id is not None
    matches = store.pending_matches(t.id)
    assert [(m.table_index, m.rotation) for m in matches[:7]] == [(0, r) for r in range(6)] + [
        (1, 0)
    ]
    replay = store.void_match(matches[5].id or 0, "crash")  # the first set's last match
    scores = {b: float(b % 5) for b in ids}
    for m in [*matches[:5], *matches[6:], replay]:  # the replay comes last of all
        assert m.id is not None
        store.record_result(m.id, [SeatOutcome(scores[b]) for b in m.seats])
    ranked: dict[int, Rating] = {}
    for table in range(4):  # in schedule order: the replayed set first
        members = [m for m in (*matches[:5], replay, *matches[6:]) if m.table_index == table]
        played = [(m.seats, placements([SeatOutcome(scores[b]) for b in m.seats])) for m in members]
        for change in apply_set(TrueSkillSettings(), ranked, played):
            ranked[change.bot_id] = change.after
    assert {b: Rating(r.mu, r.sigma) for b, r in store.ratings(GAME).items()} == ranked


def test_a_bots_own_faults_find_its_matches_and_unrecorded_ones_add_up(store: Store) -> None:
    ids = add_bots(store, 3)
    t = store.create_tournament(GAME, ids, seed=8)
    assert t.id is not None
    first, second, third, *_ = store.pending_matches(t.id)
    assert first.id is not None and second.id is not None and third.id is not None
    seat = first.seats.index(ids[0])
    # bot-0 alone faults twice, the record names one of them; then once more, unrecorded.
    store.record_result(
        first.id,
        [SeatOutcome(1, 2 if s == seat else 0) for s in range(3)],
        record={"faults": [{"seat": seat, "kind": "timeout"}]},
    )
    seat = second.seats.index(ids[0])
    store.record_result(second.id, [SeatOutcome(1, int(s == seat)) for s in range(3)])
    store.record_result(third.id, [SeatOutcome(1, 1 if b == ids[1] else 0) for b in third.seats])
    assert store.bot_profile("bot-0").faults == {"timeout": 1, UNRECORDED: 2}
    assert [m.id for m in store.find_matches(faults=True, bot="bot-0")] == [second.id, first.id]
    assert [m.id for m in store.find_matches(faults=True, bot="bot-1")] == [third.id]
    assert [m.id for m in store.find_matches(fault_kind="timeout", bot="bot-0")] == [first.id]
    assert store.find_matches(faults=True, bot="bot-2") == []


def test_a_bot_with_no_author_is_the_house_authors_in_its_profile(store: Store) -> None:
    ids = add_bots(store, 3)
    with Session(store.engine) as session:  # the column allows it: a bot no author row owns
        bot = session.get(Bot, ids[0])
        assert bot is not None
        bot.author_id = None
        session.add(bot)
        session.commit()
    profile = store.bot_profile("bot-0")
    assert (profile.bot.author_id, profile.author) == (None, HOUSE_AUTHOR)


def test_a_bot_is_deleted_only_if_it_never_entered_and_is_removed_once(store: Store) -> None:
    ids = add_bots(store, 5)
    t = store.create_tournament(GAME, ids[:4], seed=3)
    assert t.id is not None
    m = next(m for m in store.pending_matches(t.id) if ids[3] not in m.seats)
    store.record_result(m.id or 0, [SeatOutcome(3), SeatOutcome(2), SeatOutcome(1)])
    # Others played; this one never entered: nothing of it is kept.
    assert store.remove_bot("bot-4") == "deleted"
    assert [b.name for b in store.list_bots(include_removed=True)] == [f"bot-{i}" for i in range(4)]
    assert store.remove_bot("bot-3") == "retired"  # entered, never played: its schedule stays
    assert store.remove_bot("bot-0") == "retired"
    removed = store.get_bot("bot-0", include_removed=True).removed
    with pytest.raises(UnknownBotError):
        store.remove_bot("bot-0")
    assert store.get_bot("bot-0", include_removed=True).removed == removed


def test_what_is_not_found_or_refused_is_named_exactly(store: Store) -> None:
    store.create_tournament(GAME, add_bots(store, 3), seed=1)
    assert store.remove_bot("bot-1") == "retired"
    with pytest.raises(UnknownBotError) as unknown:
        store.get_bot("nobody")
    assert str(unknown.value) == "no bot 'nobody'; registered bots: bot-0, bot-2"
    with pytest.raises(UnknownTournamentError) as no_tournament:
        store.get_tournament(10_000)
    with pytest.raises(UnknownMatchError) as no_match:
        store.get_match(10_000)
    assert [str(no_tournament.value), str(no_match.value)] == [
        "no tournament 10000",
        "no match 10000",
    ]
    refused = []
    for name in ("bad name", "bot-0", "bot-1"):
        with pytest.raises(BotNameError) as error:
            store.add_bot(name)
        refused.append((error.value.name, str(error.value)))
    assert refused == [
        (
            "bad name",
            "bot name 'bad name' must be 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit",
        ),
        ("bot-0", "bot name 'bot-0' is already taken"),
        ("bot-1", "bot name 'bot-1' is taken by a removed bot"),
    ]
    assert not digest_matches(None, hash_token("anything"))  # a row with no key matches none
    assert digest_matches(hash_token("k"), hash_token("k"))
    assert not digest_matches(hash_token("k"), hash_token("j"))


def test_a_bot_name_the_database_refuses_as_taken_is_reported_as_taken(store: Store) -> None:
    """Two servers adding one name at once: the second's check saw none, its insert fails."""
    store.add_bot("alpha")
    with Session(store.engine) as session:  # stands in for the other server's row
        session.connection().exec_driver_sql(
            "CREATE UNIQUE INDEX bots_name_folded ON bots (lower(name))"
        )
        session.commit()
    with pytest.raises(BotNameError) as taken:
        store.add_bot("ALPHA")
    assert (taken.value.name, str(taken.value)) == ("ALPHA", "bot name 'ALPHA' is already taken")
    assert [b.name for b in store.list_bots()] == ["alpha"]

"""One tournament's result: the interval maths on hand-made numbers, then standings, the
cross-table, rating before/after and void counts of a stored tournament with chosen scores;
and the store's fault counts and match search that the inspection commands read."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import pytest

from tournaments.confidence import ConfidenceGoal
from tournaments.ratings import SeatOutcome
from tournaments.standings import (
    INTERVAL,
    P_ABOVE,
    Estimate,
    estimate,
    summarise,
    unresolved,
)
from tournaments.store import LOAD_VOID_PREFIX, UNRECORDED, Store

GAME = "knaves"  # 3 seats
T1 = 12.706204736174698  # Student's t 97.5 % quantile, 1 degree of freedom
T3 = 3.182446305284263  # ... 3 degrees of freedom


def test_the_interval_is_mean_plus_minus_t_times_s_over_root_n() -> None:
    # 1, 2, 3, 4: mean 2.5, s = sqrt(5/3) = 1.2909944, half = t(3) * s / 2 = 2.0542603
    e = estimate([1.0, 2.0, 3.0, 4.0])
    assert e.n == 4 and e.mean == 2.5
    assert e.low == pytest.approx(0.4457397, abs=1e-6)
    assert e.high == pytest.approx(4.5542603, abs=1e-6)
    assert e.high - e.mean == pytest.approx(T3 * math.sqrt(5 / 3) / 2, rel=1e-12)


def test_two_values_use_one_degree_of_freedom() -> None:
    # -3, 3: mean 0, s = sqrt(18), s / sqrt(2) = 3, half = 3 * 12.7062047
    e = estimate([-3.0, 3.0])
    assert (e.n, e.mean) == (2, 0.0)
    assert e.low == pytest.approx(-38.1186142, abs=1e-6)
    assert e.high == pytest.approx(38.1186142, abs=1e-6)


def test_equal_values_have_a_zero_width_interval() -> None:
    assert estimate([2.0, 2.0, 2.0]) == Estimate(3, 2.0, 2.0, 2.0)


def test_below_two_values_the_interval_is_unknown() -> None:
    assert estimate([5.0]) == Estimate(1, 5.0, None, None)
    assert estimate([]) == Estimate(0, None, None, None)


def test_flipping_negates_and_swaps_the_bounds_without_negative_zero() -> None:
    flipped = Estimate(4, 0.0, -1.0, 3.0).flipped()
    assert flipped == Estimate(4, 0.0, -3.0, 1.0)
    assert math.copysign(1.0, flipped.mean or 0.0) == 1.0
    assert Estimate(1, 5.0, None, None).flipped() == Estimate(1, -5.0, None, None)
    assert Estimate(0, None, None, None).flipped() == Estimate(0, None, None, None)


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url) as s:
        yield s


# Per round (one deal: the single table of 3 bots in its 6 seatings), each bot's score.
SCORES = [{"alpha": 10, "bravo": 4, "charlie": 1}, {"alpha": 2, "bravo": 4, "charlie": 7}]


def play(
    store: Store,
    tournament_id: int,
    names: dict[int, str],
    voids: bool = False,
    scores: list[dict[str, int]] = SCORES,
) -> None:
    """Record every match with `scores` (per round); charlie forfeits round 1 rotation 0 with
    2 faults."""
    for match in store.pending_matches(tournament_id):
        assert match.id is not None
        if voids and (match.round, match.rotation) == (0, 0):
            match = store.void_match(match.id, f"{LOAD_VOID_PREFIX} timeouts of 2 bots")
            assert match.id is not None
            match = store.void_match(match.id, "referee lost the bot's stream")
            assert match.id is not None
        outcomes = []
        for bot_id in match.seats:
            name = names[bot_id]
            forfeit = name == "charlie" and (match.round, match.rotation) == (1, 0)
            outcomes.append(SeatOutcome(scores[match.round][name], 2 if forfeit else 0, forfeit))
        store.record_result(match.id, outcomes)


def test_summary_of_a_stored_tournament(store: Store) -> None:
    ids = {name: store.add_bot(name)[0].id or 0 for name in ("charlie", "alpha", "bravo")}
    names = {i: n for n, i in ids.items()}
    t = store.create_tournament(GAME, ["alpha", "bravo", "charlie"], rounds=2, seed=5)
    assert t.id is not None
    pending = summarise(store.tournament_rows(t.id))
    assert (pending.finished, pending.scheduled) == (0, 12)
    assert all(s.matches == 0 and s.mean is None and s.before is None for s in pending.standings)
    assert all(p.difference == Estimate(0, None, None, None) for p in pending.pairs)

    play(store, t.id, names, voids=True)
    result = summarise(store.tournament_rows(t.id))

    assert (result.finished, result.scheduled) == (12, 12)
    assert (result.load_voids, result.other_voids) == (1, 1)
    rows = [
        (s.bot, s.matches, s.total, s.mean, s.places, s.faults, s.forfeits)
        for s in result.standings
    ]
    # ranks: round 0 alpha, bravo, charlie; round 1 charlie, bravo, alpha, except where
    # charlie forfeits (placed last): bravo, alpha, charlie. Bravo and charlie tie at 4.0.
    assert rows == [
        ("alpha", 12, 72.0, 6.0, (6, 1, 5), 0, 0),
        ("bravo", 12, 48.0, 4.0, (1, 11, 0), 0, 0),
        ("charlie", 12, 48.0, 4.0, (5, 0, 7), 2, 1),
    ]
    pairs = {(p.a, p.b): p for p in result.pairs}
    assert list(pairs) == [("alpha", "bravo"), ("alpha", "charlie"), ("bravo", "charlie")]
    # Deal means of A - B: (6, -2), (9, -5), (3, -3); s / sqrt(2) = 4, 7, 3.
    for (a, b), (mean, scale) in {
        ("alpha", "bravo"): (2.0, 4.0),
        ("alpha", "charlie"): (2.0, 7.0),
        ("bravo", "charlie"): (0.0, 3.0),
    }.items():
        d = pairs[(a, b)].difference
        assert (pairs[(a, b)].matches, d.n, d.mean) == (12, 2, mean)
        assert d.low == pytest.approx(mean - scale * T1, rel=1e-9)
        assert d.high == pytest.approx(mean + scale * T1, rel=1e-9)
    backwards = result.difference(ids["charlie"], ids["alpha"])
    assert backwards.mean == -2.0 and backwards.high == pytest.approx(-2.0 + 7.0 * T1)

    prior = t.trueskill.initial()
    after_first = {b: r.rating for b, r in store.ratings(GAME).items()}
    assert all(s.before == prior for s in result.standings)
    assert {s.bot_id: s.after for s in result.standings} == after_first

    # A second tournament starts from where the first left each bot.
    t2 = store.create_tournament(GAME, ["bravo", "charlie", "alpha"], seed=6)
    assert t2.id is not None
    play(store, t2.id, names)
    second = summarise(store.tournament_rows(t2.id))
    assert {s.bot_id: s.before for s in second.standings} == after_first
    assert {s.bot_id: s.after for s in second.standings} == {
        b: r.rating for b, r in store.ratings(GAME).items()
    }
    assert all(s.before != s.after for s in second.standings)
    assert (second.load_voids, second.other_voids) == (0, 0)
    assert summarise(store.tournament_rows(t.id)).standings == result.standings


def test_json_names_unknown_numbers_null(store: Store) -> None:
    for name in ("a1", "b1", "c1"):
        store.add_bot(name)
    t = store.create_tournament(GAME, ["a1", "b1", "c1"], seed=1)
    assert t.id is not None
    data = summarise(store.tournament_rows(t.id)).to_json()
    assert data["tournament"]["scheduled"] == 6 and data["tournament"]["finished"] == 0
    assert [s["mean_score"] for s in data["standings"]] == [None, None, None]
    assert [s["rating_before"] for s in data["standings"]] == [None, None, None]
    assert {(p["a"], p["b"], p["n"], p["ci_low"]) for p in data["cross_table"]} == {
        ("a1", "b1", 0, None),
        ("a1", "c1", 0, None),
        ("b1", "c1", 0, None),
    }
    assert data["voids"] == {"load": 0, "other": 0}


def test_faults_are_counted_for_the_seat_that_made_them(store: Store) -> None:
    for name in ("alpha", "bravo", "charlie"):
        store.add_bot(name)
    t = store.create_tournament(GAME, ["alpha", "bravo", "charlie"], seed=3)
    assert t.id is not None
    first, second, third, *_ = store.pending_matches(t.id)
    assert first.id is not None and second.id is not None and third.id is not None
    ids = {b.name: b.id for b in store.list_bots()}
    seat_of = {name: first.seats.index(i) for name, i in ids.items() if i is not None}
    faults = [
        {"seat": seat_of["alpha"], "kind": "timeout"},
        {"seat": seat_of["alpha"], "kind": "timeout"},
        {"seat": seat_of["bravo"], "kind": "illegal_action"},
    ]
    counts = [Counter(f["seat"] for f in faults)[s] for s in range(3)]
    store.record_result(
        first.id, [SeatOutcome(5, n) for n in counts], record={"faults": faults, "actions": []}
    )
    # No record: the count is known, the kind is not.
    bravo = second.seats.index(ids["bravo"] or 0)
    store.record_result(second.id, [SeatOutcome(1, int(s == bravo)) for s in range(3)])
    timeout = {"seat": third.seats.index(ids["alpha"] or 0), "kind": "timeout"}
    store.void_match(third.id, "referee lost the bot's stream", record={"faults": [timeout]})

    assert store.bot_profile("alpha").faults == {"timeout": 2}
    assert store.bot_profile("bravo").faults == {"illegal_action": 1, UNRECORDED: 1}
    assert store.bot_profile("charlie").faults == {}
    void, replay = [m for m in store.matches(t.id) if m.schedule_index == third.schedule_index]
    assert (void.status, replay.status) == ("voided", "pending")
    # Recent matches are played ones: the pending replay is left out.
    assert [m.id for m in store.bot_profile("charlie", recent=2).recent] == [void.id, second.id]

    def found(**filters: Any) -> list[int | None]:
        return [m.id for m in store.find_matches(**filters)]

    assert found(faults=True) == [void.id, second.id, first.id]
    assert found(faults=True, bot="alpha") == [void.id, first.id]
    assert found(faults=True, bot="charlie") == []
    assert found(fault_kind="timeout") == [void.id, first.id]
    assert found(fault_kind="illegal_action", bot="alpha") == []
    assert found(fault_kind="illegal_action", bot="bravo") == [first.id]
    untouched = sorted(  # the set's last three, never played
        (m.id or 0 for m in store.matches(t.id) if m.status == "pending" and m.id != replay.id),
        reverse=True,
    )
    assert found(statuses=["voided", "pending"]) == [replay.id, *untouched, void.id]
    assert found(statuses=["voided", "pending"], limit=1) == [replay.id]
    (summary,) = store.find_matches(fault_kind="illegal_action")
    assert summary.faults == tuple(counts)
    assert summary.fault_kinds[seat_of["alpha"]] == {"timeout": 2}


def test_json_carries_every_number_of_the_summary(store: Store) -> None:
    ids = {name: store.add_bot(name)[0].id or 0 for name in ("charlie", "alpha", "bravo")}
    names = {i: n for n, i in ids.items()}
    t = store.create_tournament(GAME, ["alpha", "bravo", "charlie"], rounds=2, seed=5)
    assert t.id is not None
    play(store, t.id, names, voids=True)
    result = summarise(store.tournament_rows(t.id))
    data = result.to_json()
    assert data["tournament"] == {
        "id": t.id,
        "name": t.name,
        "game": GAME,
        "format": t.format,
        "status": "finished",
        "seats": 3,
        "rounds": 2,
        "finished": 12,
        "scheduled": 12,
        "worker": None,
    }
    assert data["standings"] == [
        {
            "bot": s.bot,
            "bot_id": s.bot_id,
            "retired": False,
            "matches": 12,
            "total_score": s.total,
            "mean_score": s.mean,
            "places": list(s.places),
            "faults": s.faults,
            "forfeits": s.forfeits,
            "rating_before": {"mu": s.before.mu, "sigma": s.before.sigma} if s.before else None,
            "rating_after": {"mu": s.after.mu, "sigma": s.after.sigma} if s.after else None,
            "p_above_next": result.p_above_next(s.bot_id),
        }
        for s in result.standings
    ]
    assert [s["bot"] for s in data["standings"]] == ["alpha", "bravo", "charlie"]
    assert data["standings"][0]["rating_after"] is not None
    assert data["cross_table"] == [
        {
            "a": p.a,
            "b": p.b,
            "matches": p.matches,
            "n": p.difference.n,
            "mean_difference": p.difference.mean,
            "ci_low": p.difference.low,
            "ci_high": p.difference.high,
        }
        for p in result.pairs
    ]
    assert [(n["a"], n["b"], n["n"]) for n in data["neighbours"]] == [
        ("alpha", "bravo", 2),
        ("bravo", "charlie", 2),
    ]
    assert data["neighbours"][0]["p_above"] == result.p_above_next(ids["alpha"])
    assert data["neighbours"][0]["mean_difference"] == 2.0
    assert data["neighbours"][1]["ci_low"] < 0 < data["neighbours"][1]["ci_high"]
    assert data["interval"] == INTERVAL and data["p_above"] == P_ABOVE
    assert data["voids"] == {"load": 1, "other": 1}


def test_a_mean_of_zero_ranks_by_its_value_and_a_bot_yet_to_play_ranks_last(
    store: Store,
) -> None:
    # Four bots at three-seat tables: after one recorded match one entrant has not played.
    for name in ("dora", "alpha", "bravo", "charlie"):
        store.add_bot(name)
    t = store.create_tournament(GAME, ["dora", "alpha", "bravo", "charlie"], seed=2)
    assert t.id is not None
    ids = {b.name: b.id or 0 for b in store.tournament_entrants(t.id)}
    first = store.pending_matches(t.id)[0]
    assert first.id is not None
    seated = sorted(n for n, i in ids.items() if i in first.seats)
    idle = next(n for n in ids if n not in seated)
    # The first seated bot scores 0.5, the second 0 and the third -2: 0 sits between them.
    score = dict(zip(seated, (0.5, 0.0, -2.0), strict=True))
    names = {i: n for n, i in ids.items()}
    store.record_result(first.id, [SeatOutcome(score[names[b]]) for b in first.seats])

    result = summarise(store.tournament_rows(t.id))
    assert [(s.bot, s.mean) for s in result.standings] == [
        (seated[0], 0.5),
        (seated[1], 0.0),
        (seated[2], -2.0),
        (idle, None),
    ]
    order = [ids[n] for n in (*seated, idle)]
    assert [(n.a_id, n.b_id) for n in result.neighbours] == list(pairwise(order))
    assert [n.difference.n for n in result.neighbours] == [1, 1, 0]
    assert [n.difference.mean for n in result.neighbours] == [0.5, 2.0, None]


def test_unresolved_leaves_out_the_pairs_the_goal_separates(store: Store) -> None:
    ids = {name: store.add_bot(name)[0].id or 0 for name in ("alpha", "bravo", "charlie")}
    names = {i: n for n, i in ids.items()}
    t = store.create_tournament(GAME, ["alpha", "bravo", "charlie"], rounds=2, seed=4)
    assert t.id is not None
    # alpha beats bravo by 6 in both deals (P = 1); bravo - charlie is +3 then -3 (P = 0.5).
    scores = [{"alpha": 10, "bravo": 4, "charlie": 1}, {"alpha": 10, "bravo": 4, "charlie": 7}]
    play(store, t.id, names, scores=scores)
    result = summarise(store.tournament_rows(t.id))
    assert [(n.a, n.b, n.p_above) for n in result.neighbours] == [
        ("alpha", "bravo", 1.0),
        ("bravo", "charlie", 0.5),
    ]
    assert [(n.a, n.b) for n in unresolved(result, ConfidenceGoal(0.9))] == [("bravo", "charlie")]


def test_the_difference_of_a_bot_that_is_not_an_entrant_is_a_key_error(store: Store) -> None:
    for name in ("alpha", "bravo", "charlie", "outsider"):
        store.add_bot(name)
    t = store.create_tournament(GAME, ["alpha", "bravo", "charlie"], seed=1)
    assert t.id is not None
    ids = {b.name: b.id or 0 for b in store.list_bots()}
    result = summarise(store.tournament_rows(t.id))
    assert result.difference(ids["bravo"], ids["alpha"]) == Estimate(0, None, None, None)
    outsider, alpha = ids["outsider"], ids["alpha"]
    with pytest.raises(KeyError, match=f"bots {alpha} and {outsider} are not both entrants"):
        result.difference(alpha, outsider)

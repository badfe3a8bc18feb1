"""`tournament run --until-confident P`: add whole rounds until the standings' order is known.

After the scheduled matches are played, the standings' neighbour pairs are checked on the
committed results only; while a pair is not separated and the cap allows, one more round of
the schedule is appended (fresh seeds from the master seed) and played. So an interrupted
run resumed with `tournament resume` reaches the verdict of an uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from server.cli.common import console
from server.cli.running import interrupted
from tournaments.confidence import ConfidenceGoal
from tournaments.models import TournamentStatus
from tournaments.standings import Neighbours, summarise, unresolved
from tournaments.store import Store

Say = Callable[[str], None]


def say_plainly(line: str) -> None:
    """One plain line on stdout, as written."""
    console.print(line, markup=False, highlight=False, soft_wrap=True)


def play_until_confident(
    store: Store, tournament_id: int, play: Callable[[], None], say: Say = say_plainly
) -> list[Neighbours]:
    """Play, check, and append rounds until every neighbour pair is separated or the goal's
    max rounds are played; returns the pairs left unresolved."""
    goal = store.goal(tournament_id)
    if goal is None:
        raise ValueError(f"tournament {tournament_id} has no --until-confident goal")
    say(threshold_line(goal))
    while True:
        play()  # handles its own Ctrl-C and SIGTERM
        try:
            rounds = store.get_tournament(tournament_id).rounds
            left = unresolved(summarise(store.tournament_rows(tournament_id)), goal)
            say(round_line(rounds, goal, left))
            if not left or rounds >= goal.max_rounds:
                break
            store.add_round(tournament_id)
        except KeyboardInterrupt:
            # Between rounds every match is played, but the goal is not reached: resumable.
            store.set_tournament_status(tournament_id, TournamentStatus.INTERRUPTED)
            interrupted(store, tournament_id, "Ctrl-C")
    store.set_tournament_status(tournament_id, TournamentStatus.FINISHED)
    say(verdict_line(rounds, goal, left))
    return left


def _pairs(pairs: Sequence[Neighbours]) -> str:
    return ", ".join(
        f"{p.a} over {p.b} "
        + ("P n/a" if p.p_above is None else f"P {p.p_above:.4f}")
        + f" n={p.difference.n}"
        for p in pairs
    )


def threshold_line(goal: ConfidenceGoal) -> str:
    """The first line: the P(above next) that separates a pair at each look, and why."""
    return (
        f"a pair is separated at P(above next) ≥ {goal.threshold:.5f} (per look): "
        f"1 - (1-{goal.confidence:g})/(2*{goal.max_rounds}), "
        f"Bonferroni over both orders and up to {goal.max_rounds} looks (one a round)"
    )


def round_line(rounds: int, goal: ConfidenceGoal, left: Sequence[Neighbours]) -> str:
    """The line printed after each round: the pairs not yet separated."""
    head = f"round {rounds} of at most {goal.max_rounds}: "
    if not left:
        return head + f"every neighbour pair separated (P(above next) ≥ {goal.threshold:.5f})"
    return (
        head
        + f"{len(left)} unresolved (P(above next) < {goal.threshold:.5f}, the per-look "
        + "threshold): "
        + _pairs(left)
    )


def verdict_line(rounds: int, goal: ConfidenceGoal, left: Sequence[Neighbours]) -> str:
    """The last line: resolved, or which pairs stayed unresolved at the cap."""
    head = f"until-confident {goal.confidence:g}: "
    if not left:
        return head + f"order known after {rounds} round(s): every neighbour pair separated"
    return (
        head
        + f"stopped at --max-rounds {goal.max_rounds} with {len(left)} pair(s) unresolved: "
        + _pairs(left)
    )

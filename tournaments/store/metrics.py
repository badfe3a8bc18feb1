"""What the operations page counts (`/metrics`): matches, ladder sets, submissions, faults
by kind and load voids, read from the store so that they hold whichever process played."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from sqlmodel import col, func, select

from tournaments.models import Match, MatchStatus, Submission, Tournament
from tournaments.store.base import StoreBase
from tournaments.store.matches import LOAD_VOID_PREFIX

LADDER_FORMAT = "ladder"


@dataclass
class PlayFigures:
    """Counts by label: matches by (game, status), ladder sets and load voids by game,
    submissions by state."""

    matches: dict[tuple[str, str], int] = field(default_factory=dict)
    ladder_sets: dict[str, int] = field(default_factory=dict)
    submissions: dict[str, int] = field(default_factory=dict)
    load_voids: dict[str, int] = field(default_factory=dict)


@dataclass
class FaultTally:
    """Faults by kind in finished matches, counted up to the match finished last that was
    read (its time and the ids finished then), kept by the caller: each call reads only the
    matches finished since, whichever tournament or process they came from."""

    kinds: Counter[str] = field(default_factory=Counter)
    matches: int = 0
    since: datetime | None = None
    ids_then: set[int] = field(default_factory=set)


class MetricsStore(StoreBase):
    """Counts for monitoring."""

    def play_figures(self) -> PlayFigures:
        """Matches by game and status, ladder sets, submissions by state, load voids."""
        figures = PlayFigures()
        with self._read() as session:
            for game, status, n in session.exec(
                select(Tournament.game, Match.status, func.count())
                .join(Tournament, col(Tournament.id) == col(Match.tournament_id))
                .group_by(col(Tournament.game), col(Match.status))
            ).all():
                figures.matches[(game, status)] = int(n)
            for game, sets in session.exec(
                select(Tournament.game, func.sum(Tournament.rounds))
                .where(Tournament.format == LADDER_FORMAT)
                .group_by(col(Tournament.game))
            ).all():
                figures.ladder_sets[game] = int(sets or 0)
            for state, n in session.exec(
                select(Submission.state, func.count()).group_by(col(Submission.state))
            ).all():
                figures.submissions[state] = int(n)
            voided = session.exec(
                select(Tournament.game, Match.result)
                .join(Tournament, col(Tournament.id) == col(Match.tournament_id))
                .where(Match.status == MatchStatus.VOIDED.value)
            ).all()
        for game, result in voided:
            if str((result or {}).get("void_reason", "")).startswith(LOAD_VOID_PREFIX):
                figures.load_voids[game] = figures.load_voids.get(game, 0) + 1
        return figures

    def tally_faults(self, tally: FaultTally, batch: int = 1000) -> FaultTally:
        """`tally` with the faults of up to `batch` matches finished since it was last
        brought up to date added, in the order they finished."""
        query = select(Match.id, Match.finished, Match.record).where(
            Match.status == MatchStatus.FINISHED.value, col(Match.finished).is_not(None)
        )
        if tally.since is not None:
            query = query.where(col(Match.finished) >= tally.since)
        with self._read() as session:
            rows = session.exec(
                query.order_by(col(Match.finished), col(Match.id)).limit(
                    batch + len(tally.ids_then)
                )
            ).all()
        for match_id, finished, record in rows:
            if match_id is None or finished is None or match_id in tally.ids_then:
                continue
            if finished != tally.since:
                tally.since, tally.ids_then = finished, set()
            tally.ids_then.add(match_id)
            tally.matches += 1
            for fault in (record or {}).get("faults", []):
                tally.kinds[str(fault.get("kind", "unknown"))] += 1
        return tally

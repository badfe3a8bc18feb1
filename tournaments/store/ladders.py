"""Ladders: a tournament of format "ladder" that grows one duplicate set at a time.

A ladder is stored as a tournament (docs/ladder.md), so its sets, seeds and results are
read by `tournament show`, `match list`, the replays and `recompute` as any other's. Set k
is round k, table 0, in every rotation of the table picked for it; its deal seed comes
from the ladder's master seed and k alone, so a resumed or repeated ladder deals the same.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import insert
from sqlmodel import Session, col, func, select

from tournaments.errors import ScheduleError, TournamentError
from tournaments.models import (
    Author,
    Bot,
    BotRating,
    LadderError,
    Match,
    MatchStatus,
    Submission,
    SubmissionState,
    Tournament,
    TournamentEntrant,
    TournamentStatus,
)
from tournaments.schedule import SEED_LIMIT, rotations
from tournaments.store.base import StoreBase

LADDER = "ladder"


@dataclass(frozen=True)
class LadderEntry:
    """A bot the ladder may seat now: its rating in the game, its author and its sets."""

    bot: Bot
    author: str
    mu: float
    sigma: float
    sets: int  # sets it sat in, finished
    in_flight: int  # sets it sits in with a match still to play
    last_set: int  # the number of its latest set, -1 for none

    @property
    def bot_id(self) -> int:
        """The bot's id (a stored bot always has one)."""
        assert self.bot.id is not None
        return self.bot.id

    @property
    def conservative(self) -> float:
        """μ − 3σ, the ladder's sort key."""
        return self.mu - 3 * self.sigma


def ranked(entries: Sequence[LadderEntry]) -> list[LadderEntry]:
    """A ladder's field in its order: by μ − 3σ, then μ, then name."""
    return sorted(entries, key=lambda e: (-e.conservative, -e.mu, e.bot.name))


@dataclass(frozen=True)
class LadderSet:
    """One set of a ladder: its number and its matches in schedule order."""

    number: int
    matches: list[Match]

    @property
    def table(self) -> list[int]:
        """Its bots, in the seat order of its first rotation."""
        return list(self.matches[0].seats)

    @property
    def finished(self) -> bool:
        """Whether every match of it is recorded."""
        return all(m.status == MatchStatus.FINISHED.value for m in self.matches)

    def totals(self) -> dict[int, float]:
        """Each bot's score summed over the set's recorded matches."""
        out = dict.fromkeys(self.table, 0.0)
        for match in self.matches:
            for bot, score in zip(
                match.seats, (match.result or {}).get("scores", []), strict=False
            ):
                out[bot] += float(score)
        return out


def ladder_seed(master_seed: int, set_number: int) -> int:
    """The deal seed of a ladder's set: from the master seed and the set's number only."""
    return random.Random(f"cardshark-ladder:{master_seed}:{set_number}").randrange(SEED_LIMIT)


class LadderStore(StoreBase):
    """A game's ladder: the latest one, its field, its entrants and its sets."""

    def latest_ladder(self, game: str) -> Tournament | None:
        """The game's newest ladder that is not cancelled, or None."""
        with self._read() as session:
            return session.exec(
                select(Tournament)
                .where(
                    Tournament.game == game,
                    Tournament.format == LADDER,
                    Tournament.status != TournamentStatus.CANCELLED.value,
                )
                .order_by(col(Tournament.id).desc())
            ).first()

    def enter_ladder(self, ladder_id: int, names: Sequence[int | str]) -> list[Bot]:
        """Enter bots (ids or names) in a ladder; those already in are left as they are.
        The bots newly entered, in the order given."""
        with self._write(ratings=False) as session:
            self._ladder(session, ladder_id)
            bots = [self._bot(session, key, include_removed=False) for key in names]
            return _enter(session, ladder_id, bots)

    def ladder_field(self, ladder_id: int) -> list[LadderEntry]:
        """Who the ladder may seat now, by bot id: its entrants and every bot accepted from a
        submission naming its game, less retired bots and those of disabled authors."""
        with self._read() as session:
            ladder = self._ladder(session, ladder_id)
            entered = set(
                session.exec(
                    select(TournamentEntrant.bot_id).where(
                        TournamentEntrant.tournament_id == ladder_id
                    )
                ).all()
            )
            submitted = session.exec(
                select(Submission.bot_id, Submission.games).where(
                    Submission.state == SubmissionState.ACCEPTED.value,
                    col(Submission.bot_id).is_not(None),
                )
            ).all()
            ids = entered | {b for b, games in submitted if b is not None and ladder.game in games}
            rows = session.exec(
                select(Bot, Author.name)
                .join(Author, col(Author.id) == col(Bot.author_id))
                .where(col(Bot.id).in_(ids), col(Bot.removed).is_(None), ~col(Author.disabled))
                .order_by(col(Bot.id))
            ).all()
            ratings = {
                r.bot_id: r
                for r in session.exec(select(BotRating).where(BotRating.game == ladder.game)).all()
            }
            sets = _sets_by_bot(session, ladder_id)
        entries = []
        for bot, author in rows:
            assert bot.id is not None
            rating = ratings.get(bot.id)
            prior = (bot.prior_mu or {}).get(ladder.game, ladder.ts_mu)
            done, flying, last = sets.get(bot.id, (0, 0, -1))
            entries.append(
                LadderEntry(
                    bot,
                    author,
                    rating.mu if rating else prior,
                    rating.sigma if rating else ladder.ts_sigma,
                    done,
                    flying,
                    last,
                )
            )
        return entries

    def ladder_meetings(self, ladder_id: int) -> dict[tuple[int, int], int]:
        """How many of the ladder's sets (finished or in play) each pair of bots sat at
        together, keyed by the pair's ids, smaller first (tournaments.matchmaking.pair_key)."""
        with self._read() as session:
            self._ladder(session, ladder_id)
            tables = _tables_by_set(session, ladder_id)
        out: dict[tuple[int, int], int] = {}
        for bots in tables.values():
            for i, a in enumerate(bots):
                for b in bots[i + 1 :]:
                    key = (a, b) if a < b else (b, a)
                    out[key] = out.get(key, 0) + 1
        return out

    def add_ladder_set(self, ladder_id: int, table: Sequence[int]) -> list[Match]:
        """Append the next set at this table (bot ids, in seat order of its first rotation),
        pending; its bots are entered if they were not. The set's matches, in schedule order."""
        if len(set(table)) != len(table):
            raise ScheduleError(f"a bot sits at a table once: {list(table)}")
        with self._write(ratings=False) as session:
            ladder = self._ladder(session, ladder_id)
            if len(table) != ladder.seats:
                raise ScheduleError(
                    f"ladder {ladder_id} seats {ladder.seats} at a table, not {len(table)}"
                )
            bots = [self._bot(session, b, include_removed=False) for b in table]
            _enter(session, ladder_id, bots)
            number = ladder.rounds
            last = session.exec(
                select(func.max(Match.schedule_index)).where(Match.tournament_id == ladder_id)
            ).one()
            first = 0 if last is None else int(last) + 1
            seed = ladder_seed(ladder.seed, number)
            session.exec(
                insert(Match),
                params=[
                    {
                        "tournament_id": ladder_id,
                        "schedule_index": first + r,
                        "attempt": 0,
                        "round": number,
                        "table_index": 0,
                        "rotation": r,
                        "seed": seed,
                        "seats": list(seating),
                        "status": MatchStatus.PENDING.value,
                    }
                    for r, seating in enumerate(rotations(list(table)))
                ],
            )
            ladder.rounds = number + 1
            ladder.status = TournamentStatus.RUNNING.value
            session.add(ladder)
            session.flush()
            return list(
                session.exec(
                    select(Match)
                    .where(Match.tournament_id == ladder_id, Match.round == number)
                    .order_by(col(Match.schedule_index))
                ).all()
            )

    def recent_sets(self, ladder_id: int, count: int) -> list[LadderSet]:
        """The ladder's last `count` sets, newest first, each with its matches (not voided)."""
        with self._read() as session:
            ladder = self._ladder(session, ladder_id)
            rows = session.exec(
                select(Match)
                .where(
                    Match.tournament_id == ladder_id,
                    col(Match.round) >= ladder.rounds - count,
                    Match.status != MatchStatus.VOIDED.value,
                )
                .order_by(col(Match.schedule_index))
            ).all()
        sets: dict[int, list[Match]] = {}
        for match in rows:
            sets.setdefault(match.round, []).append(match)
        return [LadderSet(n, sets[n]) for n in sorted(sets, reverse=True)]

    def note_ladder_error(self, ladder_id: int, message: str) -> LadderError:
        """Keep an error a run of the ladder met, stamped now; the row kept."""
        with self._write(ratings=False) as session:
            self._ladder(session, ladder_id)
            row = LadderError(tournament_id=ladder_id, message=message)
            session.add(row)
            session.flush()
            return row

    def last_ladder_error(self, ladder_id: int) -> LadderError | None:
        """The latest error kept for the ladder, or None."""
        with self._read() as session:
            return session.exec(
                select(LadderError)
                .where(LadderError.tournament_id == ladder_id)
                .order_by(col(LadderError.id).desc())
            ).first()

    def _ladder(self, session: Session, ladder_id: int) -> Tournament:
        tournament = self._tournament(session, ladder_id)
        if tournament.format != LADDER:
            raise TournamentError(
                f"tournament {ladder_id} is a {tournament.format.replace('_', ' ')}, not a ladder"
            )
        return tournament


def _enter(session: Session, ladder_id: int, bots: Sequence[Bot]) -> list[Bot]:
    """Append the bots not yet entered to the ladder's entrants; the new ones."""
    rows = session.exec(
        select(TournamentEntrant.bot_id, TournamentEntrant.position).where(
            TournamentEntrant.tournament_id == ladder_id
        )
    ).all()
    entered = {b for b, _ in rows}
    position = max((p for _, p in rows), default=-1) + 1
    new: list[Bot] = []
    for bot in bots:
        if bot.id is None or bot.id in entered:
            continue
        entered.add(bot.id)
        session.add(TournamentEntrant(tournament_id=ladder_id, position=position, bot_id=bot.id))
        position += 1
        new.append(bot)
    session.flush()
    return new


def _sets_by_bot(session: Session, ladder_id: int) -> dict[int, tuple[int, int, int]]:
    """Per bot: sets finished, sets with a match still to play, and its latest set's number."""
    open_sets = set(
        session.exec(
            select(Match.round)
            .where(
                Match.tournament_id == ladder_id,
                col(Match.status).in_([MatchStatus.PENDING.value, MatchStatus.RUNNING.value]),
            )
            .distinct()
        ).all()
    )
    out: dict[int, tuple[int, int, int]] = {}
    for number, bots in _tables_by_set(session, ladder_id).items():
        for bot in bots:
            done, flying, last = out.get(bot, (0, 0, -1))
            if number in open_sets:
                flying += 1
            else:
                done += 1
            out[bot] = (done, flying, max(last, number))
    return out


def _tables_by_set(session: Session, ladder_id: int) -> dict[int, list[int]]:
    """Each set's bots, by set number: its first rotation's seats (every rotation seats the
    same bots, and a voided attempt is replaced at once, so that is one row a set)."""
    rows = session.exec(
        select(Match.round, Match.seats).where(
            Match.tournament_id == ladder_id,
            Match.rotation == 0,
            Match.status != MatchStatus.VOIDED.value,
        )
    ).all()
    out: dict[int, list[int]] = {}
    for number, seats in rows:
        out.setdefault(number, list(seats))
    return out

"""Storage operations: authors, bots, tournaments with schedules, results, ratings, queries.

One `Store` class assembled from a part per thing stored: base (engine, sessions, writes),
authors (whose bots they are; BotStore builds on it), bots, submissions (an author's bots as
sent, which become bots), tournaments (with schedules), ladders (tournaments that grow a
set at a time),
matches (with results), live (the public snapshot of each match in play), ratings,
read-only queries, rounds (a tournament's confidence goal and the rounds appended to reach
it), and staging (workers' results, recorded in schedule order).
"""

from __future__ import annotations

from tournaments.ratings import apply_match
from tournaments.store.authors import AUTHOR_NAME, AuthorRow, AuthorStore, check_author_name
from tournaments.store.base import StoreBase
from tournaments.store.bots import BOT_NAME, hash_token, new_token
from tournaments.store.ladders import (
    LADDER,
    LadderEntry,
    LadderSet,
    LadderStore,
    ladder_seed,
    ranked,
)
from tournaments.store.live import LiveRead, LiveStore
from tournaments.store.matches import (
    LOAD_VOID_PREFIX,
    UNFINISHED,
    FinishedMatch,
    MatchDetail,
    MatchStore,
)
from tournaments.store.metrics import FaultTally, MetricsStore, PlayFigures
from tournaments.store.queries import (
    UNRECORDED,
    BotProfile,
    MatchSummary,
    QueryStore,
    TournamentRows,
)
from tournaments.store.ratings import RankingRow, RatingStore
from tournaments.store.rounds import RoundStore
from tournaments.store.staging import StagingStore
from tournaments.store.submissions import AuthorsBots, SubmissionStore, version_name
from tournaments.store.tournaments import FORMATS, TournamentProgress, TournamentStore

__all__ = [
    "AUTHOR_NAME",
    "BOT_NAME",
    "FORMATS",
    "FaultTally",
    "LADDER",
    "LOAD_VOID_PREFIX",
    "UNFINISHED",
    "UNRECORDED",
    "AuthorRow",
    "AuthorStore",
    "AuthorsBots",
    "BotProfile",
    "FinishedMatch",
    "LadderEntry",
    "LadderSet",
    "LiveRead",
    "LiveStore",
    "MatchDetail",
    "MatchSummary",
    "PlayFigures",
    "RankingRow",
    "Store",
    "StoreBase",
    "SubmissionStore",
    "TournamentProgress",
    "TournamentRows",
    "apply_match",
    "check_author_name",
    "hash_token",
    "ladder_seed",
    "ranked",
    "new_token",
    "version_name",
]


class Store(
    SubmissionStore,
    TournamentStore,
    LadderStore,
    StagingStore,
    MatchStore,
    LiveStore,
    RatingStore,
    QueryStore,
    RoundStore,
    MetricsStore,
):
    """The database of one cardshark installation (SQLite file or PostgreSQL)."""

"""The Submissions gRPC service: authors send bots, follow their verdicts, list and retire
their own bots; every call authenticated by the author's key before it reads anything."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn, TypeAlias, TypeVar

import grpc

from cardshark.v1 import submissions_pb2 as pb
from cardshark.v1 import submissions_pb2_grpc
from games.errors import UnknownGameError
from games.registry import get_game
from server.bots.archive import ArchiveError
from server.match.records import MatchRecord
from server.play.bot_test import fault_json, fault_lines
from server.submissions.intake import ArchiveIntake
from server.submissions.limits import SubmissionLimits
from server.submissions.verdicts import Verdicts, tail_lines
from tournaments.errors import (
    BotNameError,
    NotFoundError,
    TournamentError,
    UnknownMatchError,
)
from tournaments.models import SUBMISSION_DONE, Author, Bot, BotArchive, Submission
from tournaments.store import BOT_NAME, MatchDetail, Store

T = TypeVar("T")
Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"
MAX_COMMAND = 1024
WATCH_POLL_S = 5.0
STDERR_LINES = 50  # a Watch also rereads the row this often (a state changed elsewhere)


def submission_message(s: Submission, version: int) -> pb.Submission:
    """A stored submission as a message."""
    return pb.Submission(
        id=s.id or 0,
        name=s.name,
        version=version,
        state=s.state,
        detail=s.detail,
        digest=s.digest,
        games=list(s.games),
        created=s.created.isoformat(),
        updated=s.updated.isoformat(),
    )


class SubmissionsService(submissions_pb2_grpc.SubmissionsServicer):
    """Submissions, for the author whose key each call carries."""

    def __init__(
        self, store: Store, verdicts: Verdicts, limits: SubmissionLimits | None = None
    ) -> None:
        self.store = store
        self.verdicts = verdicts
        self.limits = limits or SubmissionLimits()

    def add_to(self, server: grpc.aio.Server) -> None:
        """Register on a server."""
        submissions_pb2_grpc.add_SubmissionsServicer_to_server(self, server)  # type: ignore[no-untyped-call]

    async def Submit(  # noqa: N802
        self, request_iterator: AsyncIterator[pb.SubmitChunk], context: Context
    ) -> pb.Submission:
        """Take a header and an archive; store them and queue the test."""
        author = await self._author(context)  # before the first chunk is read
        if author.id is None:
            raise AssertionError("a stored author has an id")
        chunks = aiter(request_iterator)
        first = await anext(chunks, None)
        if first is None or first.WhichOneof("part") != "header":
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, "send the header first")
        header = first.header
        await self._check_header(header, context)
        await self._check_limits(author.id, header.name, context)
        intake = ArchiveIntake()
        try:
            async for chunk in chunks:
                if chunk.WhichOneof("part") != "data":
                    await _abort(
                        context, grpc.StatusCode.INVALID_ARGUMENT, "send the header once, first"
                    )
                intake.feed(chunk.data)
            received = intake.finish()
        except ArchiveError as exc:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        archive = BotArchive(digest=received.digest, data=received.data, size=received.size)
        submission = await self._call(
            context,
            lambda: self.store.receive_submission(
                author.id or 0,
                header.name,
                list(dict.fromkeys(get_game(g).spec.name for g in header.games)),
                header.command,
                header.build or None,
                archive,
            ),
        )
        assert submission.id is not None
        self.verdicts.enqueue(submission.id)
        return submission_message(submission, await self._version_of(submission))

    async def Watch(  # noqa: N802
        self, request: pb.WatchRequest, context: Context
    ) -> AsyncIterator[pb.Submission]:
        """Stream a submission's states until its verdict."""
        author = await self._author(context)
        last: tuple[str, str] | None = None
        while True:
            seen = self.verdicts.generation
            submission = await self._call(
                context, lambda: self.store.submission(request.submission_id, author.id)
            )
            if (submission.state, submission.detail) != last:
                last = (submission.state, submission.detail)
                yield submission_message(submission, await self._version_of(submission))
            if submission.state in SUBMISSION_DONE:
                return
            await self.verdicts.changed_since(seen, WATCH_POLL_S)

    async def ListMine(  # noqa: N802
        self, request: pb.ListMineRequest, context: Context
    ) -> pb.ListMineResponse:
        """The caller's bots and submissions."""
        author = await self._author(context)
        mine = await self._call(context, lambda: self.store.authors_bots(author.id or 0))
        versions = {b.id: b.version for b in mine.bots}
        return pb.ListMineResponse(
            bots=[_my_bot(b) for b in mine.bots],
            submissions=[
                submission_message(s, versions.get(s.bot_id, 0)) for s in mine.submissions
            ],
        )

    async def Retire(self, request: pb.RetireRequest, context: Context) -> pb.RetireResponse:  # noqa: N802
        """Retire one of the caller's bots."""
        author = await self._author(context)

        def retire() -> str:
            bot = self.store.authors_bot(author.id or 0, request.name)
            return self.store.remove_bot(bot.id or 0)

        return pb.RetireResponse(outcome=await self._call(context, retire))

    async def MatchLog(  # noqa: N802
        self, request: pb.MatchLogRequest, context: Context
    ) -> pb.MatchLogResponse:
        """One of the caller's bots in one match: seats, scores, faults, stderr."""
        author = await self._author(context)

        def find() -> tuple[Bot, MatchDetail, list[int]]:
            bot = self.store.authors_bot(author.id or 0, request.bot, include_removed=True)
            detail = self.store.match_detail(request.match_id)
            seats = [i for i, b in enumerate(detail.match.seats) if b == bot.id]
            if not seats:
                raise UnknownMatchError(request.match_id)  # not theirs: as if none
            return bot, detail, seats

        bot, detail, seats = await self._call(context, find)
        match = detail.match
        faults: list[str] = []
        scores: list[int] = []
        if match.record:
            record = MatchRecord.from_json(match.record)
            scores = list(record.scores)
            for fault in record.faults:
                if fault.seat in seats:
                    shown = fault_json(match.id or 0, record, fault, detail.tournament.clock_ms)
                    shown["match"] = match.id
                    faults.append("\n".join(fault_lines(shown)))
        logs = self.verdicts.settings.log_dir / f"tournament-{match.tournament_id}"
        return pb.MatchLogResponse(
            match_id=match.id or 0,
            bot=bot.name,
            game=detail.tournament.game,
            status=match.status,
            seats=seats,
            scores=scores,
            faults=faults,
            stderr="\n".join(tail_lines(logs / f"{bot.name}.stderr.log", STDERR_LINES)),
        )

    # -- checks ----------------------------------------------------------------------------

    async def _author(self, context: Context) -> Author:
        given = str(dict(context.invocation_metadata() or ()).get("authorization", ""))
        key = given.removeprefix("Bearer ").strip() if given.startswith("Bearer ") else ""
        author = await asyncio.to_thread(self.store.author_for_key, key) if key else None
        if author is None:
            await _abort(
                context,
                grpc.StatusCode.UNAUTHENTICATED,
                "missing, wrong or disabled author key (metadata 'authorization: Bearer <key>', "
                "from `cardshark author add NAME`)",
            )
        return author

    async def _check_header(self, header: pb.SubmitHeader, context: Context) -> None:
        """Refuse a bad header before the archive is read, naming the bad value."""
        problem = None
        if not BOT_NAME.fullmatch(header.name):
            problem = (
                f"bot name {header.name!r} must be 1-64 letters, digits, '_', '.' or '-', "
                "starting with a letter or digit"
            )
        elif not header.games:
            problem = "name at least one game the bot plays (see `cardshark games`)"
        elif not header.command.strip() or len(header.command) > MAX_COMMAND:
            problem = f"give the command that starts the bot (1-{MAX_COMMAND} characters)"
        elif len(header.build) > MAX_COMMAND:
            problem = f"the build command is longer than {MAX_COMMAND} characters"
        else:
            for game in header.games:
                try:
                    get_game(game)
                except UnknownGameError as exc:
                    problem = str(exc)
                    break
        if problem is not None:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, problem)

    async def _check_limits(self, author_id: int, name: str, context: Context) -> None:
        """Refuse, in one line naming the limit, a submission over the organizer's limits."""
        hour_ago = datetime.now(UTC) - timedelta(hours=1)
        sent, bots = await asyncio.to_thread(self.store.author_activity, author_id, hour_ago)
        problem = None
        if self.limits.per_hour and sent >= self.limits.per_hour:
            problem = (
                f"you sent {sent} submissions in the last hour: this server takes "
                f"{self.limits.per_hour} an hour from each author; try again later"
            )
        elif self.limits.bots and bots >= self.limits.bots:
            try:
                await asyncio.to_thread(self.store.authors_bot, author_id, name)
            except BotNameError:  # a new name: one more bot
                problem = (
                    f"you have {bots} bots in play: this server allows {self.limits.bots} "
                    "an author; retire one (cardshark-bot retire NAME) or send a new version "
                    "of one"
                )
        if problem is not None:
            await _abort(context, grpc.StatusCode.RESOURCE_EXHAUSTED, problem)

    async def _call(self, context: Context, work: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(work)
        except NotFoundError as exc:
            await _abort(context, grpc.StatusCode.NOT_FOUND, str(exc))
        except (TournamentError, ValueError) as exc:
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc))

    async def _version_of(self, submission: Submission) -> int:
        if submission.bot_id is None:
            return 0
        bot = await asyncio.to_thread(self.store.get_bot, submission.bot_id, include_removed=True)
        return bot.version


def _my_bot(bot: Bot) -> pb.MyBot:
    return pb.MyBot(
        name=bot.name,
        version=bot.version,
        retired=bot.removed is not None,
        created=bot.created.isoformat(),
    )


async def _abort(context: Context, code: grpc.StatusCode, message: str) -> NoReturn:
    await context.abort(code, message)
    raise AssertionError("abort returned")

"""The Admin gRPC service: the cardshark command's operations for remote tools."""

from __future__ import annotations

import asyncio
import inspect
import os
import secrets
import stat
import types
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeAlias, TypeVar

import grpc
from google.protobuf import json_format

from cardshark.v1 import admin_pb2 as pb
from cardshark.v1 import admin_pb2_grpc
from games.errors import GameError, UnknownGameError
from games.registry import all_games
from server.codec import protocol
from server.play.arena import Arena
from server.play.tournament import Progress, run_tournament
from tournaments.errors import NotFoundError, TournamentError
from tournaments.models import Bot, TournamentStatus
from tournaments.store import Store, TournamentProgress

T = TypeVar("T")
Context: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


def bot_info(bot: Bot) -> pb.BotInfo:
    """A stored bot as a message."""
    return pb.BotInfo(
        id=bot.id or 0, name=bot.name, command=bot.command or "", created=bot.created.isoformat()
    )


def progress_message(p: TournamentProgress, last_match_id: int = 0) -> pb.TournamentProgress:
    """A tournament's progress as a message."""
    t = p.tournament
    return pb.TournamentProgress(
        tournament_id=t.id or 0,
        game=t.game,
        status=t.status,
        finished=p.finished,
        scheduled=p.scheduled,
        last_match_id=last_match_id,
    )


ADMIN_METHODS = tuple(pb.DESCRIPTOR.services_by_name["Admin"].methods_by_name)


class AdminTokenError(Exception):
    """The admin token cannot be used as given; the message is one line for the user."""


def admin_token_source(
    value: str | None, token_file: Path | None, argv: Sequence[str]
) -> tuple[str | None, str | None]:
    """The admin token from --admin-token-file (0600), the environment or the flag, and a
    warning when it came from the flag (it is then visible in `ps`)."""
    on_command_line = any(a == "--admin-token" or a.startswith("--admin-token=") for a in argv)
    if token_file is None:
        warning = None
        if value and on_command_line:
            warning = (
                "warning: --admin-token is visible to every user in `ps`; use "
                "CARDSHARK_ADMIN_TOKEN or --admin-token-file (mode 0600) instead"
            )
        return value or None, warning
    if value:
        raise AdminTokenError(
            "give the admin token once: --admin-token-file, or CARDSHARK_ADMIN_TOKEN / "
            "--admin-token, not both"
        )
    try:
        fd = os.open(token_file, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise AdminTokenError(
            f"cannot read admin token file {token_file}: {exc.strerror}"
        ) from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode  # of the file opened, not of a name swapped since
        if not stat.S_ISREG(mode):
            raise AdminTokenError(f"admin token file {token_file} is not a regular file")
        if mode & 0o077:
            raise AdminTokenError(
                f"admin token file {token_file} is readable by others "
                f"(mode {stat.S_IMODE(mode):04o}); chmod 600 {token_file}"
            )
        token = f.read(4096).decode("utf-8", "replace").strip()
    if not token:
        raise AdminTokenError(f"admin token file {token_file} is empty")
    return token, None


class AdminService(admin_pb2_grpc.AdminServicer):
    """Admin calls, each checked against the admin token, run on the store off the loop.

    Register it with add_to only: that is where every RPC gets its token check, before the
    method reads or changes anything.
    """

    def __init__(
        self, store: Store, arena: Arena, admin_token: str | None, processes: int | None = 1
    ) -> None:
        self.store = store
        self.arena = arena
        self.admin_token = admin_token
        # Referee processes a tournament is played by (None: as many as it pays for).
        self.processes = processes
        self.running: dict[int, asyncio.Task[int]] = {}

    async def interrupt_all(self) -> list[int]:
        """Stop every tournament this service is running (the server is shutting down):
        unfinished ones are marked interrupted, to be resumed. Returns their ids."""
        stopped = [tid for tid, task in self.running.items() if not task.done()]
        for tid in stopped:
            self.running[tid].cancel()
        await asyncio.gather(*(self.running[t] for t in stopped), return_exceptions=True)
        for tid in stopped:
            status = await asyncio.to_thread(self.store.tournament_status, tid)
            if status.finished < status.scheduled:
                await asyncio.to_thread(
                    self.store.set_tournament_status, tid, TournamentStatus.INTERRUPTED
                )
        return stopped

    def add_to(self, server: grpc.aio.Server) -> None:
        """Register on a server, every RPC behind the token check."""
        guarded = types.SimpleNamespace(
            **{name: self._guard(getattr(self, name)) for name in ADMIN_METHODS}
        )
        admin_pb2_grpc.add_AdminServicer_to_server(guarded, server)  # type: ignore[no-untyped-call]

    def _guard(self, method: Callable[..., Any]) -> Callable[..., Any]:
        """method behind the token check (a streaming RPC stays a stream)."""
        if inspect.isasyncgenfunction(method):

            async def stream(request: Any, context: Context) -> AsyncIterator[Any]:
                await self._authorize(context)
                async for item in method(request, context):
                    yield item

            return stream

        async def unary(request: Any, context: Context) -> Any:
            await self._authorize(context)
            result = method(request, context)
            return await result if inspect.isawaitable(result) else result

        return unary

    async def _call(self, context: Context, work: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(work)
        except (NotFoundError, UnknownGameError) as exc:
            await self._abort(context, grpc.StatusCode.NOT_FOUND, str(exc))
        except (GameError, TournamentError, ValueError) as exc:
            await self._abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(exc))

    async def _authorize(self, context: Context) -> None:
        if not self.admin_token:
            await self._abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                "the admin service is off; start the server with CARDSHARK_ADMIN_TOKEN set "
                "or with --admin-token-file",
            )
        given = dict(context.invocation_metadata() or ()).get("authorization", "")
        expected = f"Bearer {self.admin_token}"
        if not secrets.compare_digest(str(given).encode(), expected.encode()):
            await self._abort(
                context,
                grpc.StatusCode.UNAUTHENTICATED,
                "missing or wrong admin token (metadata 'authorization: Bearer <token>')",
            )

    @staticmethod
    async def _abort(context: Context, code: grpc.StatusCode, message: str) -> NoReturn:
        await context.abort(code, message)
        raise AssertionError("abort returned")

    async def AddBot(self, request: pb.AddBotRequest, context: Context) -> pb.AddBotResponse:  # noqa: N802
        """Register a bot."""
        bot, token = await self._call(
            context, lambda: self.store.add_bot(request.name, request.command or None)
        )
        return pb.AddBotResponse(bot=bot_info(bot), token=token)

    async def ListBots(self, request: pb.ListBotsRequest, context: Context) -> pb.ListBotsResponse:  # noqa: N802
        """List bots."""
        bots = await self._call(context, self.store.list_bots)
        return pb.ListBotsResponse(bots=[bot_info(b) for b in bots])

    async def RemoveBot(  # noqa: N802
        self, request: pb.RemoveBotRequest, context: Context
    ) -> pb.RemoveBotResponse:
        """Remove or retire a bot."""
        outcome = await self._call(context, lambda: self.store.remove_bot(request.name))
        return pb.RemoveBotResponse(outcome=outcome)

    async def ListGames(  # noqa: N802
        self, request: pb.ListGamesRequest, context: Context
    ) -> pb.ListGamesResponse:
        """List games."""
        games = [
            pb.GameInfo(
                name=name,
                title=g.spec.title,
                seat_counts=list(g.spec.seat_counts),
                default_seats=g.spec.default_seats,
                move_ms=g.spec.move_ms,
                options=protocol.struct(g.spec.defaults()),
            )
            for name, g in all_games().items()
        ]
        return pb.ListGamesResponse(games=games)

    async def CreateTournament(  # noqa: N802
        self, request: pb.CreateTournamentRequest, context: Context
    ) -> pb.CreateTournamentResponse:
        """Create a tournament and store its schedule."""
        options = json_format.MessageToDict(request.options)
        for name, value in options.items():
            if isinstance(value, float) and value.is_integer():
                options[name] = int(value)  # Struct numbers arrive as doubles

        def create() -> TournamentProgress:
            t = self.store.create_tournament(
                request.game,
                list(request.bots),
                seats=request.seats if request.HasField("seats") else None,
                options=options,
                rounds=request.rounds or 1,
                tables=request.tables if request.HasField("tables") else None,
                seed=request.seed if request.HasField("seed") else None,
                clock_ms=request.move_ms or None,
                bank_ms=request.bank_ms,
                format=request.format or "round_robin",
            )
            return self.store.tournament_status(t.id or 0)

        created = await self._call(context, create)
        return pb.CreateTournamentResponse(tournament=progress_message(created))

    async def RunTournament(  # noqa: N802
        self, request: pb.RunTournamentRequest, context: Context
    ) -> AsyncIterator[pb.TournamentProgress]:
        """Play a tournament here, streaming progress after each recorded match."""
        tid = request.tournament_id
        await self._call(context, lambda: self.store.get_tournament(tid))
        if tid in self.running and not self.running[tid].done():
            await self._abort(
                context, grpc.StatusCode.FAILED_PRECONDITION, f"tournament {tid} is already running"
            )
        updates: asyncio.Queue[pb.TournamentProgress | None] = asyncio.Queue()

        def on_progress(p: Progress) -> None:
            status = self.store.tournament_status(tid)
            updates.put_nowait(progress_message(status, int(p.last.match_id) if p.last else 0))

        task = asyncio.create_task(
            run_tournament(
                self.store,
                tid,
                concurrency=request.concurrency or 1,
                arena=self.arena,
                on_progress=on_progress,
                processes=self.processes,
            )
        )
        self.running[tid] = task
        task.add_done_callback(lambda _: updates.put_nowait(None))
        while (update := await updates.get()) is not None:
            yield update
        if task.cancelled():
            await self._abort(context, grpc.StatusCode.CANCELLED, f"tournament {tid} was cancelled")
        if task.exception() is not None:
            await self._abort(context, grpc.StatusCode.INTERNAL, str(task.exception()))
        yield progress_message(await asyncio.to_thread(self.store.tournament_status, tid))

    async def CancelTournament(  # noqa: N802
        self, request: pb.CancelTournamentRequest, context: Context
    ) -> pb.TournamentProgress:
        """Stop a running tournament; what finished stays recorded."""
        tid = request.tournament_id
        task = self.running.get(tid)
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        progress = await self._call(
            context,
            lambda: (
                self.store.set_tournament_status(tid, TournamentStatus.CANCELLED),
                self.store.tournament_status(tid),
            )[1],
        )
        return progress_message(progress)

    async def GetTournament(  # noqa: N802
        self, request: pb.GetTournamentRequest, context: Context
    ) -> pb.TournamentProgress:
        """One tournament's progress."""
        progress = await self._call(
            context, lambda: self.store.tournament_status(request.tournament_id)
        )
        return progress_message(progress)

    async def ListTournaments(  # noqa: N802
        self, request: pb.ListTournamentsRequest, context: Context
    ) -> pb.ListTournamentsResponse:
        """Every tournament's progress."""

        def work() -> list[TournamentProgress]:
            return [self.store.tournament_status(t.id or 0) for t in self.store.list_tournaments()]

        rows = await self._call(context, work)
        return pb.ListTournamentsResponse(tournaments=[progress_message(p) for p in rows])

    async def GetRankings(  # noqa: N802
        self, request: pb.GetRankingsRequest, context: Context
    ) -> pb.GetRankingsResponse:
        """A game's leaderboard."""
        from games.registry import get_game

        rows = await self._call(
            context, lambda: self.store.rankings(get_game(request.game).spec.name)
        )
        return pb.GetRankingsResponse(
            rows=[
                pb.RankingRow(
                    rank=r.rank,
                    bot=r.bot,
                    mu=r.mu,
                    sigma=r.sigma,
                    conservative=r.conservative,
                    matches=r.matches,
                    mean_score=r.mean_score,
                    faults=r.faults,
                )
                for r in rows
            ]
        )

    async def GetMatch(self, request: pb.GetMatchRequest, context: Context) -> pb.GetMatchResponse:  # noqa: N802
        """A match's result and record."""
        detail = await self._call(context, lambda: self.store.match_detail(request.match_id))
        m = detail.match
        return pb.GetMatchResponse(
            match_id=m.id or 0,
            tournament_id=m.tournament_id,
            status=m.status,
            seats=[detail.bot_names.get(b, str(b)) for b in m.seats],
            result=protocol.struct(m.result or {}),
            record=protocol.struct(m.record or {}),
        )

"""A submission's verdict: its code tested against the house bots of each game it names, in
the sandbox every bot plays in, one submission at a time; accepted or rejected with why."""

# One at a time, on the server's own loop: a test is a few matches (one per seat) with the
# house bots, and the sandbox's CPU limits keep a submission from starving the tournaments
# played beside it. The verdict is stored with the state in one transaction
# (SubmissionStore.accept_submission), so a server killed mid-test leaves the submission
# "testing"; the next start tests it again from its stored archive.

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import tempfile
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from games.registry import get_game
from server.bots.archive import ArchiveError, pack_directory
from server.bots.build import BuildLimits, build
from server.bots.code import cache_for, remove_tree
from server.bots.sandbox import SandboxPolicy
from server.match.sessions import BotIdentity
from server.play.bot_test import (
    TAIL_LINES,
    Outcome,
    Plan,
    fault_json,
    fault_lines,
    play_trial,
    summary,
    tested_faults,
)
from tournaments.errors import TournamentError
from tournaments.models import SUBMISSION_DONE, BotArchive, Submission, SubmissionState
from tournaments.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class VerdictSettings:
    """How submissions are tested: the sandbox, where logs go, the seed of the deals."""

    sandbox: SandboxPolicy
    log_dir: Path
    seed: int = 1
    rotations: int = 1  # each seat this many times per game
    build: BuildLimits = field(default_factory=BuildLimits)


@dataclass(frozen=True)
class Built:
    """A build's product: the built tree and its archive (None: nothing to build), and the
    line the verdict starts with."""

    tree: Path | None
    archive: BotArchive | None
    line: str


@dataclass(frozen=True)
class GameVerdict:
    """How one game's test went: passed, the summary line, and the lines that say why not."""

    game: str
    passed: bool
    line: str
    why: list[str]


class Verdicts:
    """The queue of submissions to test, and the task that tests them."""

    def __init__(self, store: Store, settings: VerdictSettings) -> None:
        self.store = store
        self.settings = settings
        self.changed = asyncio.Condition()
        self.generation = 0  # counts state changes made here, for watchers
        self._queue: asyncio.Queue[int] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> list[int]:
        """Start testing; submissions left unfinished by an earlier run are tested first.
        Returns their ids."""
        # What a server killed mid-build left (its tests start again from the archive).
        await asyncio.to_thread(remove_tree, self._work())
        left = await asyncio.to_thread(self.store.unfinished_submissions)
        for submission in left:
            assert submission.id is not None
            self._queue.put_nowait(submission.id)
        self._task = asyncio.create_task(self._run(), name="submission verdicts")
        return [s.id for s in left if s.id is not None]

    def enqueue(self, submission_id: int) -> None:
        """Test this submission after those before it."""
        self._queue.put_nowait(submission_id)

    async def stop(self) -> None:
        """Stop testing (a submission being tested is tested again at the next start)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def idle(self) -> None:
        """Wait until every queued submission has its verdict."""
        await self._queue.join()

    async def _run(self) -> None:
        while True:
            submission_id = await self._queue.get()
            try:
                await self.judge(submission_id)
            except asyncio.CancelledError:
                raise
            except Exception:  # one submission's failure must not stop the others'
                log.exception("testing submission %s failed", submission_id)
                await self._set(
                    submission_id,
                    SubmissionState.REJECTED,
                    "the server failed while testing it (its log says why); submit it again",
                )
            finally:
                self._queue.task_done()

    async def judge(self, submission_id: int) -> None:
        """Test one submission and store its verdict."""
        submission = await asyncio.to_thread(self.store.submission, submission_id)
        if submission.state in SUBMISSION_DONE:
            return
        cache = cache_for(self.settings.sandbox)
        load = partial(self.store.bot_archive, submission.digest)
        try:
            tree, hold = await asyncio.to_thread(cache.checkout, submission.digest, load)
        except (ArchiveError, OSError) as exc:
            await self._set(submission_id, SubmissionState.REJECTED, f"its code was refused: {exc}")
            return
        work = Path(tempfile.mkdtemp(prefix=f"submission-{submission_id}-", dir=self._work()))
        try:
            with hold:
                built = await self._build(submission, tree, work / "built")
                if built is None:
                    return
                if built.tree is not None:
                    tree = built.tree
                await self._set(
                    submission_id,
                    SubmissionState.TESTING,
                    f"{built.line}playing the house bots in {', '.join(submission.games)}",
                )
                verdicts = [await self._test(submission, game, tree) for game in submission.games]
        finally:
            await asyncio.to_thread(remove_tree, work)
        failed = [v for v in verdicts if not v.passed]
        if failed:
            detail = "\n".join(
                line for v in failed for line in [f"{v.game}: {v.line}", *v.why]
            ).strip()
            await self._set(submission_id, SubmissionState.REJECTED, detail)
            return
        detail = built.line + "\n".join(f"{v.game}: {v.line}" for v in verdicts)
        try:
            await asyncio.to_thread(
                self.store.accept_submission, submission_id, detail, built.archive
            )
        except TournamentError as exc:  # e.g. the author was disabled meanwhile
            await self._set(submission_id, SubmissionState.REJECTED, str(exc))
            return
        await self._tell()

    async def _build(self, submission: Submission, source: Path, built: Path) -> Built | None:
        """Run the submission's build, if it has one; None once it is rejected for it."""
        assert submission.id is not None
        if not submission.build:
            return Built(None, None, "")
        await self._set(submission.id, SubmissionState.BUILDING, f"running: {submission.build}")
        result = await build(
            source, submission.build, built, self.settings.sandbox, self.settings.build
        )
        if not result.ok:
            detail = f"build failed: {result.reason}\n{result.log.rstrip()}".rstrip()
            await self._set(submission.id, SubmissionState.REJECTED, detail)
            return None
        try:
            packed = await asyncio.to_thread(pack_directory, built)
        except ArchiveError as exc:
            await self._set(submission.id, SubmissionState.REJECTED, f"the built tree: {exc}")
            return None
        archive = BotArchive(digest=packed.digest, data=packed.data, size=packed.size)
        return Built(built, archive, f"built in {result.seconds:.1f} s\n")

    async def _test(self, submission: Submission, game: str, tree: Path) -> GameVerdict:
        spec = get_game(game).spec
        log_dir = Path(tempfile.mkdtemp(prefix=f"submission-{submission.id}-", dir=self._logs()))
        plan = Plan(
            name=submission.name,
            bot=BotIdentity(f"submission:{submission.id}", submission.name),
            command=submission.command,
            game=spec.name,
            seats=spec.default_seats,
            matches=spec.default_seats * self.settings.rotations,
            seed=self.settings.seed,
            move_ms=spec.move_ms,
            sandbox=self.settings.sandbox,
            log_dir=log_dir,
            host="127.0.0.1",
            port=0,
            authenticate=None,
            workdir=tree,
        )
        try:
            outcome = await play_trial(plan, _quiet, _quiet)
            if not outcome.stderr and plan.stderr_log is not None:
                outcome.stderr = tail_lines(plan.stderr_log, TAIL_LINES)
        finally:
            shutil.rmtree(log_dir, ignore_errors=True)
        if outcome.error:
            return GameVerdict(game, False, f"not tested: {outcome.error}", [])
        result = summary(plan, outcome)
        return GameVerdict(
            game, bool(result["passed"]), str(result["verdict"]), _why(plan, outcome)
        )

    def _work(self) -> Path:
        where = self.settings.log_dir / "submissions" / "work"
        where.mkdir(parents=True, exist_ok=True)
        return where

    def _logs(self) -> Path:
        where = self.settings.log_dir / "submissions"
        where.mkdir(parents=True, exist_ok=True)
        return where

    async def _set(self, submission_id: int, state: SubmissionState, detail: str) -> None:
        await asyncio.to_thread(self.store.set_submission_state, submission_id, state, detail)
        await self._tell()

    async def changed_since(self, generation: int, timeout: float) -> None:
        """Return once a state changed after generation was read, or after timeout."""
        async with self.changed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self.changed.wait_for(lambda: self.generation != generation), timeout
                )

    async def _tell(self) -> None:
        async with self.changed:
            self.generation += 1
            self.changed.notify_all()


def _why(plan: Plan, outcome: Outcome) -> list[str]:
    """What the author needs to see of a failed test: the first fault with its request and
    the legal actions, and the bot's stderr tail when it ended."""
    lines: list[str] = []
    faults = tested_faults(plan, outcome.records)
    if faults:
        index, fault = faults[0]
        lines += fault_lines(fault_json(index, outcome.records[index], fault, plan.move_ms))
    if outcome.ended or faults:
        lines.append(f"{plan.name}'s stderr, last lines:")
        lines += [f"  {line}" for line in outcome.stderr or ["(nothing)"]]
    return lines


def tail_lines(path: Path, lines: int, width: int = 200) -> list[str]:
    """The last lines of a bot's stderr log, each cut to width (a bot writes what it likes);
    none if there is no log."""
    try:
        with path.open("rb") as f:
            f.seek(max(0, f.seek(0, 2) - 256 * lines))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    return [line[:width] for line in text.splitlines()[-lines:]]


def _quiet(line: str) -> None:
    return None

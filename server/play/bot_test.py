"""`cardshark bot test`'s engine: a registered bot against the house bots, nothing stored.

The tested bot plays every seat in turn (each deal once per rotation) against the game's
rule bot and random bots; its faults are listed with the requests they answered.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from server.bots.house import EXAMPLES, example_bots
from server.bots.process import ManagedBot
from server.bots.sandbox import SandboxPolicy
from server.bots.start import BotToStart
from server.match.records import ClockSettings, Fault, MatchRecord
from server.match.sessions import BotIdentity
from server.play.arena import Arena
from server.play.preflight import start_managed
from server.transport.service import Authenticator, Refusal
from server.views.request_of_step import request_of_fault

REMOTE_WAIT_S = 300.0
TAIL_LINES = 10


@dataclass(frozen=True)
class Plan:
    """What one `bot test` plays: the bot, its game, the matches and their clock."""

    name: str
    bot: BotIdentity
    command: str | None
    game: str
    seats: int
    matches: int
    seed: int
    move_ms: int
    sandbox: SandboxPolicy
    log_dir: Path
    host: str
    port: int
    authenticate: Authenticator | None
    transport: str = "local"
    workdir: Path | None = None  # the tested bot's stored code, unpacked (bot add --dir)

    @property
    def clock(self) -> ClockSettings:
        """The clock of every match."""
        return ClockSettings(move_ms=self.move_ms)

    @property
    def stderr_log(self) -> Path | None:
        """Where a managed tested bot's stderr goes (a remote bot's is its own)."""
        return None if self.command is None else self.log_dir / f"{self.name}.stderr.log"

    def seat_of(self, match: int) -> int:
        """The tested bot's seat in a match (each seat in turn)."""
        return match % self.seats

    def seed_of(self, match: int) -> int:
        """A match's seed: the deals repeat once per rotation, so every seat gets each deal."""
        return self.seed + match // self.seats


@dataclass
class Outcome:
    """What the test showed: the matches' records and why the bot stopped playing, if it did."""

    records: list[MatchRecord] = field(default_factory=list)
    ended: str = ""  # e.g. "exited with status 1 before saying Hello"
    stderr: list[str] = field(default_factory=list)  # its last lines when it ended
    error: str = ""  # the server's own failure (a house bot did not start): no verdict


def house_bots(game: str, seats: int) -> dict[str, str]:
    """The house: the game's rule-following example bot, then random bots for the rest."""
    scripts = example_bots(game, seats - 2)
    return {
        name.replace("demo-", "house-", 1): shlex.join([sys.executable, str(EXAMPLES / script)])
        for name, script in scripts.items()
    }


def only_the_tested(
    plan: Plan, authenticate: Authenticator, notice: Callable[[str], None]
) -> Authenticator:
    """The remote bot's authenticator for a test: the tested bot alone gets in, and each
    kind of refusal is said once (the test otherwise waits minutes, saying nothing)."""
    said: set[str] = set()

    def tell(line: str) -> None:
        if line not in said:
            said.add(line)
            notice(line)

    def admit(token: str) -> BotIdentity | Refusal | None:
        identity = authenticate(token)
        if identity is None:
            tell(
                "refused a bot: its token is no registered bot's "
                f"(give it {plan.name}'s token, from `cardshark bot add`)"
            )
        elif isinstance(identity, BotIdentity) and identity.bot_id != plan.bot.bot_id:
            tell(f"refused {identity.name}: this test plays {plan.name}, with {plan.name}'s token")
            return Refusal(
                grpc.StatusCode.UNAUTHENTICATED,
                f"this test plays {plan.name}, not {identity.name}: start {plan.name} with "
                f"{plan.name}'s token",
            )
        return identity

    return admit


async def play_trial(
    plan: Plan, say: Callable[[str], None], notice: Callable[[str], None]
) -> Outcome:
    """Start an arena with the house bots and the tested bot, play the matches, stop; say
    tells how each match went, notice where a remote bot should connect and who was refused."""
    outcome = Outcome()
    authenticate = plan.authenticate
    if authenticate is not None:
        authenticate = only_the_tested(plan, authenticate, notice)
    arena = Arena(
        plan.log_dir,
        plan.host,
        plan.port,
        authenticate,
        sandbox=plan.sandbox,
        transport=plan.transport,
    )
    async with arena:
        house = [
            BotToStart(name, f"house:{name}", command)
            for name, command in house_bots(plan.game, plan.seats).items()
        ]
        tested = []
        if plan.command is not None:
            tested = [BotToStart(plan.name, plan.bot.bot_id, plan.command, workdir=plan.workdir)]
            # The stderr tail shown must be this run's.
            (plan.log_dir / f"{plan.name}.stderr.log").unlink(missing_ok=True)
        else:
            notice(
                f"waiting for {plan.name} to connect to {arena.address} "
                f"(start it with --server {arena.address} and its token; up to "
                f"{REMOTE_WAIT_S:g} s)"
            )
        # A bot that exits before its Hello fails here at once, not at the no-show timeout.
        preflight = await start_managed(arena, [*house, *tested], plan.clock.no_show_s)
        for failure in preflight.failures:
            if failure.server_fault or failure.name != plan.name:
                outcome.error = f"the server could not start the house: {failure.message()}"
                return outcome
            outcome.ended = failure.reason
            outcome.stderr = list(failure.stderr)
            return outcome
        assert arena.running is not None
        if plan.command is None and not await arena.hub.wait_for(plan.bot.bot_id, REMOTE_WAIT_S):
            outcome.ended = f"did not connect within {REMOTE_WAIT_S:g} s"
            return outcome
        managed = next((b for b in preflight.started if b.name == plan.name), None)
        seated = [BotIdentity(b.bot_id, b.name) for b in house]
        await _play(arena, plan, seated, managed, outcome, say)
    return outcome


async def _play(
    arena: Arena,
    plan: Plan,
    house: list[BotIdentity],
    managed: ManagedBot | None,
    outcome: Outcome,
    say: Callable[[str], None],
) -> None:
    for index in range(plan.matches):
        seat = plan.seat_of(index)
        record = await arena.play(
            plan.game,
            [*house[:seat], plan.bot, *house[seat:]],
            seed=plan.seed_of(index),
            clock=plan.clock,
            match_id=f"test-{index + 1}",
        )
        outcome.records.append(record)
        say(match_line(index, seat, record))
        for fault in record.faults_of(seat):
            for line in fault_lines(fault_json(index, record, fault, plan.move_ms)):
                say(line)
        if managed is not None and managed.exited:
            # A bot that crashed mid-match was charged (and forfeited) by the referee; the
            # next match would only charge its no-show.
            await managed.drained()
            outcome.ended = f"{managed.exit_description()} in match {index + 1}"
            outcome.stderr = managed.stderr_tail(TAIL_LINES)
            return


def match_line(index: int, seat: int, record: MatchRecord) -> str:
    """One line for a finished match: the bot's seat, the scores and its faults."""
    scores = " / ".join(
        f"{'*' if s == seat else ''}{name} {score}"
        for s, (name, score) in enumerate(zip(record.seats, record.scores, strict=True))
    )
    faults = len(record.faults_of(seat))
    status = "" if record.status == "finished" else f" [{record.status}: {record.reason}]"
    return (
        f"match {index + 1} (seat {seat}, seed {record.seed}): {scores}; "
        f"{faults} fault{'s' if faults != 1 else ''}{status}"
    )


def fault_json(index: int, record: MatchRecord, fault: Fault, move_ms: int) -> dict[str, Any]:
    """A fault with its match, decision and the request it answered (rebuilt), as JSON."""
    request = request_of_fault(record, fault, move_ms)
    return {
        "match": index + 1,
        "decision": fault.decision,
        "request_decision": None if request is None else request.decision,
        "seat": fault.seat,
        "kind": fault.kind,
        "detail": fault.detail,
        "request_id": fault.request_id,
        "fallback": fault.fallback,
        "request": None if request is None else request.to_json(),
        "view": None if request is None else request.view(),
        "legal": None if request is None else request.legal(),
    }


def fault_lines(fault: dict[str, Any]) -> list[str]:
    """A fault as text: what, where, the request that caused it and what was played."""
    lines = [
        f"fault in match {fault['match']}, decision {fault['decision']}: "
        f"{fault['kind']}: {fault['detail']}"
    ]
    if fault["request"] is None:
        lines.append("  request: none (the fault answered no request)")
    else:
        asked = fault["request_decision"]
        where = "" if asked == fault["decision"] else f" (decision {asked})"
        rid = f" {fault['request_id']}" if fault["request_id"] else ""  # 0: never recorded
        lines.append(f"  request{rid}{where}, seat {fault['seat']}:")
        lines.append(f"  view: {json.dumps(fault['view'], separators=(',', ':'))}")
        lines.append(f"  legal: {', '.join(fault['legal'])}")
    played = fault["fallback"] or "nothing instead (the answer already given stood)"
    lines.append(f"  referee played: {played}")
    return lines


def tested_faults(plan: Plan, records: list[MatchRecord]) -> list[tuple[int, Fault]]:
    """The tested bot's faults (not the house bots'), each with its match's index."""
    return [(i, f) for i, r in enumerate(records) for f in r.faults_of(plan.seat_of(i))]


def summary(plan: Plan, outcome: Outcome) -> dict[str, Any]:
    """The verdict and its numbers."""
    records = outcome.records
    faults = [f for _, f in tested_faults(plan, records)]
    kinds = Counter(f.kind for f in faults)
    voided = [i + 1 for i, r in enumerate(records) if r.status != "finished"]
    own = [r.scores[plan.seat_of(i)] for i, r in enumerate(records)]
    others = [
        score
        for i, r in enumerate(records)
        for s, score in enumerate(r.scores)
        if s != plan.seat_of(i)
    ]
    passed = not faults and not voided and not outcome.ended and len(records) == plan.matches
    n = len(records)
    if passed:
        line = (
            f"PASS: {n} match{'es' if n != 1 else ''}, 0 faults, mean score "
            f"{_mean(own):.1f} (house bots {_mean(others):.1f})"
        )
    else:
        why = []
        if outcome.ended:
            why.append(f"{plan.name} {outcome.ended}")
        if faults:
            counted = ", ".join(f"{k} {c}" for k, c in sorted(kinds.items()))
            why.append(f"{len(faults)} fault{'s' if len(faults) != 1 else ''} ({counted})")
        if voided:
            why.append(f"voided match {', '.join(map(str, voided))}")
        played = f"{n} match{'es' if n != 1 else ''}" + (
            "" if n == plan.matches else f" of {plan.matches}"
        )
        line = f"FAIL: {'; '.join(why)}" + (f" in {played}" if n else "")
    return {
        "passed": passed,
        "verdict": line,
        "matches_played": n,
        "fault_count": len(faults),
        "fault_kinds": dict(kinds),
        "mean_score": _mean(own),
        "house_mean_score": _mean(others),
        "ended": outcome.ended,
        "stderr_tail": outcome.stderr,
    }


def _mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def report_json(plan: Plan, outcome: Outcome, result: dict[str, Any]) -> dict[str, Any]:
    """The whole test for --json: the plan, the verdict (summary's result), every match and
    the tested bot's faults."""
    faults = [
        fault_json(i, outcome.records[i], f, plan.move_ms)
        for i, f in tested_faults(plan, outcome.records)
    ]
    return {
        "bot": plan.name,
        "game": plan.game,
        "seed": plan.seed,
        "move_ms": plan.move_ms,
        **result,
        "stderr_log": None if plan.stderr_log is None else str(plan.stderr_log),
        "matches": [
            {
                "match": i + 1,
                "seat": plan.seat_of(i),
                "seed": r.seed,
                "seats": r.seats,
                "scores": r.scores,
                "status": r.status,
                "reason": r.reason,
            }
            for i, r in enumerate(outcome.records)
        ],
        "faults": faults,
    }

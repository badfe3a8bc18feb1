"""The referee loop: runs one match of any registered game against connected bots."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from cardshark.v1 import referee_pb2 as pb
from games.base import Action, Game, MatchState
from server.codec import protocol
from server.match.hub import BotHub
from server.match.limits import cap_text
from server.match.live import LIVE, LiveMatch, LiveMatches
from server.match.records import ClockSettings, Fault, FaultKind, MatchRecord
from server.match.sessions import BotIdentity, Reply
from tournaments.ratings import SeatOutcome, placements

log = logging.getLogger(__name__)


def fallback_index(seed: int, decision: int, choices: int) -> int:
    """The deterministic fallback choice for a decision: a function of seed and position only."""
    digest = hashlib.blake2b(f"{seed}:{decision}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % choices


def _copy(msg: pb.RefereeMessage) -> pb.RefereeMessage:
    out = pb.RefereeMessage()
    out.CopyFrom(msg)
    return out


class MatchRunner:
    """Runs one match: asks each seat's bot, enforces clock and rules, charges faults."""

    def __init__(
        self,
        hub: BotHub,
        game: Game[Any],
        match_id: str,
        seed: int,
        bots: Sequence[BotIdentity],
        options: Mapping[str, Any] | None = None,
        clock: ClockSettings | None = None,
        live: LiveMatches = LIVE,
    ) -> None:
        self.hub = hub
        self.game = game
        self.match_id = match_id
        self.seed = seed
        self.bots = list(bots)
        self.clock = clock or ClockSettings()
        self.options = game.spec.resolve(options)
        game.spec.check_seats(len(self.bots))
        n = len(self.bots)
        # Bots' own randomness follows the deal and the seating, never a database id, so a
        # seeded tournament replays the same in any database (every match of a set seats
        # the bots differently).
        names = [b.name for b in self.bots]
        self.random_seeds = [protocol.bot_random_seed(seed, names, seat) for seat in range(n)]
        self.fault_counts = [0] * n
        self.forfeited = [False] * n
        self.bank_ms = [self.clock.bank_ms] * n
        self.record = MatchRecord(
            match_id=match_id,
            game=game.spec.name,
            options=dict(self.options),
            seed=seed,
            seats=[b.name for b in self.bots],
        )
        self._universe: set[str] | None = None
        self._hands_sent = 0
        self._hands_out: list[bytes] = []  # HandEnded messages to send after this decision
        self._ahead = -1  # the decision whose action _look_ahead already applied
        self._next: tuple[int, pb.RefereeMessage] | None = None  # (decision, its request)
        self._lives = live
        # Spectators read the record's actions; they are told of a step only while they watch.
        self.live = LiveMatch(game, seed, n, self.options, self.record.actions)

    async def run(self) -> MatchRecord:
        """Play the match to its end; a failure of the server itself voids it."""
        record = self.record
        state: MatchState | None = None
        self.hub.seat(self, [b.bot_id for b in self.bots])
        self._lives.open(self.match_id, self.live)
        try:
            await self._seat_everyone()
            state = self.game.new_match(self.seed, len(self.bots), self.options)
            await self._play(state)
            result = self.game.result(state)
            record.scores = list(result.scores)
            record.status = "finished"
        except asyncio.CancelledError:
            record.status, record.reason = "voided", "cancelled"
            self._end()
            raise
        except Exception as exc:  # the server's own failure: void, never rate
            log.exception("match %s voided", self.match_id)
            record.status, record.reason = "voided", f"server error: {exc!r}"
            if state is not None:
                record.scores = self.game.scores(state)
        self._end()
        return record

    def _end(self) -> None:
        record = self.record
        if not record.scores:
            record.scores = [0] * len(self.bots)
        record.forfeited = list(self.forfeited)
        outcomes = [
            SeatOutcome(s, 0, f) for s, f in zip(record.scores, record.forfeited, strict=True)
        ]
        record.ranks = list(placements(outcomes))
        self.hub.forget_match(self)
        self._lives.close(self.match_id, self.live)
        msg = protocol.match_ended(
            match_id=self.match_id,
            scores=record.scores,
            ranks=record.ranks,
            forfeited=record.forfeited,
            voided=record.status == "voided",
            reason=record.reason,
        )
        self._broadcast(msg)

    async def _seat_everyone(self) -> None:
        waits = [self.hub.wait_for(b.bot_id, self.clock.no_show_s) for b in self.bots]
        sessions = await asyncio.gather(*waits)
        for seat, session in enumerate(sessions):
            if session is None:
                bot = self.bots[seat]
                gone = self.hub.why_gone(bot.bot_id)
                detail = f"bot {bot.name!r} " + (
                    gone or f"did not connect within {self.clock.no_show_s:g} s"
                )
                self.charge(seat, "no_show", detail, 0, "")
                self._forfeit(seat)
        names = [b.name for b in self.bots]
        for seat, bot in enumerate(self.bots):
            live = self.hub.live(bot.bot_id)
            if live is not None:
                live.send(
                    protocol.match_started(
                        match_id=self.match_id,
                        game_name=self.game.spec.name,
                        options=self.options,
                        seat=seat,
                        names=names,
                        move_ms=self.clock.move_ms,
                        bank_ms=self.clock.bank_ms,
                    )
                )

    async def _play(self, state: MatchState) -> None:
        game, record = self.game, self.record
        while (seat := game.to_act(state)) is not None:
            index = len(record.actions)
            legal = game.legal_actions(state)
            if self.forfeited[seat]:
                self._next = None
                action, elapsed = self._fallback(legal), 0.0
            else:
                action, elapsed = await self._ask(state, seat, legal, index)
            if self._ahead != index:
                self._advance(state, action)
            elif action is not legal[0]:
                raise RuntimeError(f"decision {index} was applied ahead as {legal[0].id}")
            record.actions.append(action.id)
            record.move_ms.append(round(elapsed, 3))
            if self.live.watchers:
                self.live.step()
            for data in self._hands_out:
                self._send_all(data)
            self._hands_out.clear()

    def _advance(self, state: MatchState, action: Action) -> None:
        """Apply an action and encode the HandEnded of every hand it finished."""
        game = self.game
        game.apply(state, action)
        if game.hands_finished(state) == self._hands_sent:
            return
        hands, scores = game.hand_records(state), game.scores(state)
        while self._hands_sent < len(hands):
            msg = protocol.hand_ended(
                match_id=self.match_id,
                hand_number=self._hands_sent,
                scores=scores,
                record=hands[self._hands_sent],
            )
            self._hands_out.append(msg.SerializeToString())
            self._hands_sent += 1

    def _look_ahead(self, state: MatchState, action: Action, index: int) -> None:
        """While a bot answers a decision with one legal action, whose outcome its answer
        cannot change (a wrong one is a fault and falls back to that action), apply it and
        build the next request, so they are ready when the answer comes."""
        self._advance(state, action)
        self._ahead = index
        seat = self.game.to_act(state)
        if seat is not None and not self.forfeited[seat]:
            self._next = (index + 1, self._request(state, seat, self.game.legal_actions(state)))

    def _request(self, state: MatchState, seat: int, legal: list[Action]) -> pb.RefereeMessage:
        """A DecisionRequest for seat; its request id and bank are set when it is sent."""
        return protocol.decision_request(
            game_name=self.game.spec.name,
            request_id=0,
            match_id=self.match_id,
            seat=seat,
            view=self.game.view(state, seat),
            actions=legal,
            move_ms=self.clock.move_ms,
            bank_ms=0,
            random_seed=self.random_seeds[seat],
        )

    async def _ask(
        self, state: MatchState, seat: int, legal: list[Action], index: int
    ) -> tuple[Action, float]:
        bot = self.bots[seat]
        ready, self._next = self._next, None
        request = ready[1] if ready is not None and ready[0] == index else None
        if request is None:
            request = self._request(state, seat, legal)
        attempt = 0
        while True:
            session = self.hub.live(bot.bot_id)
            if session is None:
                since = self.hub.disconnected_since(bot.bot_id, time.monotonic())
                left = self.clock.grace_s - (time.monotonic() - since)
                session = await self.hub.wait_for(bot.bot_id, max(0.0, left))
                if session is None:
                    detail = f"disconnected and not back within {self.clock.grace_s:g} s"
                    fallback = self._fallback(legal)
                    self.charge(seat, "disconnected", detail, 0, fallback.id)
                    self._forfeit(seat)
                    return fallback, 0.0
            req = self.hub.open_request(session, self, seat)
            msg = request if attempt == 0 else _copy(request)  # the first may still be queued
            attempt += 1
            msg.request.request_id = req.request_id
            msg.request.clock.bank_ms = self.bank_ms[seat]
            limit_ms = self.clock.move_ms + self.bank_ms[seat]
            start = time.monotonic()
            session.send(msg)
            self.hub.arm(req, limit_ms / 1000)
            if len(legal) == 1 and self._ahead != index:
                if not session.writes_at_once:
                    await asyncio.sleep(0)  # let the request go out first
                self._look_ahead(state, legal[0], index)
            if not req.future.done():
                session.take_reply()
            reply = await req.future
            # A reply that arrives during the look-ahead waits for it (well under a
            # millisecond), and that wait counts in elapsed.
            elapsed = (time.monotonic() - start) * 1000
            if reply.kind == "timeout":
                self.bank_ms[seat] = 0
                waited = (self.hub.loop.time() - req.opened) * 1000
                kind = "CPU" if req.cpu_open >= 0 else "wall"
                detail = (
                    f"no reply within {limit_ms} ms "
                    f"({kind} clock; cut off after {waited:.0f} ms of wall time)"
                )
                fallback = self._fallback(legal)
                self.charge(seat, "timeout", detail, req.request_id, fallback.id)
                return fallback, float(limit_ms)
            if self.bank_ms[seat]:
                # The bank pays for the bot's own time only, as the deadline does.
                used_ms = self.hub.charged_s(req) * 1000
                self.bank_ms[seat] = max(
                    0, self.bank_ms[seat] - max(0, int(used_ms) - self.clock.move_ms)
                )
            if reply.kind == "disconnected":
                continue
            chosen = self._check(seat, req.request_id, reply, legal, state)
            return chosen, elapsed

    def _check(
        self,
        seat: int,
        request_id: int,
        reply: Reply,
        legal: list[Action],
        state: MatchState,
    ) -> Action:
        if reply.kind == "fault":
            assert reply.fault_kind, reply  # the hub names the fault of every fault reply
            fallback = self._fallback(legal)
            self.charge(seat, reply.fault_kind, reply.detail, request_id, fallback.id)
            return fallback
        for action in legal:
            if action.id == reply.action_id:
                return action
        if self._universe is None:
            self._universe = set(self.game.all_action_ids(state))
        kind: FaultKind = (
            "illegal_action" if reply.action_id in self._universe else "unknown_action"
        )
        shown = ", ".join(a.id for a in legal[:12]) + (" …" if len(legal) > 12 else "")
        given = cap_text(reply.action_id)  # the bot's text, stored and shown: capped
        detail = f"action {given!r} is not legal now; legal: {shown}"
        if kind == "unknown_action":
            detail = f"action {given!r} is no action of {self.game.spec.name}"
        fallback = self._fallback(legal)
        self.charge(seat, kind, detail, request_id, fallback.id)
        return fallback

    def _fallback(self, legal: list[Action]) -> Action:
        """The action played for a seat that cannot or may not decide (computed only then)."""
        return legal[fallback_index(self.seed, len(self.record.actions), len(legal))]

    def charge(
        self, seat: int, kind: FaultKind, detail: str, request_id: int, fallback: str
    ) -> None:
        """Record a fault against a seat, tell its bot, and forfeit it past the fault limit."""
        self.fault_counts[seat] += 1
        self.record.faults.append(
            Fault(seat, kind, detail, request_id, len(self.record.actions), fallback)
        )
        if self.fault_counts[seat] > self.clock.fault_limit:
            self._forfeit(seat)
        self._tell(
            seat,
            protocol.fault_charged(
                match_id=self.match_id,
                seat=seat,
                kind=kind,
                detail=detail,
                request_id=request_id,
                fallback=fallback,
                faults=self.fault_counts[seat],
                forfeited=self.forfeited[seat],
            ),
        )

    def _forfeit(self, seat: int) -> None:
        self.forfeited[seat] = True

    def _tell(self, seat: int, msg: Any) -> None:
        session = self.hub.live(self.bots[seat].bot_id)
        if session is not None:
            session.send(msg)

    def _broadcast(self, msg: pb.RefereeMessage) -> None:
        self._send_all(msg.SerializeToString())  # serialized once, not once per stream

    def _send_all(self, data: bytes) -> None:
        for bot_id in dict.fromkeys(b.bot_id for b in self.bots):
            session = self.hub.live(bot_id)
            if session is not None:
                session.send(data)

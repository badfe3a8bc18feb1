"""Connected bot sessions and their open decision requests, routed by request id."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Sequence

from cardshark.v1 import referee_pb2 as pb
from server.match.clocks import CpuMeter, LagMonitor, wall_cap
from server.match.limits import cap_text
from server.match.sessions import (
    BotIdentity,
    BotSession,
    Incident,
    IncidentKind,
    MatchContext,
    PendingRequest,
    Reply,
    StrayKind,
)

log = logging.getLogger(__name__)
ISSUED_MEMORY = 100_000
CPU_RECHECK_S = 0.002  # shortest wait before a CPU clock is read again at its deadline
INCIDENT_MEMORY = 100  # incidents kept per bot (the log has every one that was logged)


def cpu_share(used_s: float, open_requests: int) -> float:
    """This request's part of the CPU a bot used while it was open.

    A bot seated in several matches at once serves all their requests with one process: the
    CPU it spent on the others is not this request's time (at concurrency 1 there are none),
    so the CPU is shared among the requests open now. The wall cap still bounds every one.
    """
    return used_s / max(1, open_requests)


class BotHub:
    """Tracks which bots are connected and routes their decisions to the matches asking."""

    def __init__(self, cpu_clocks: bool = True) -> None:
        self._sessions: dict[str, BotSession] = {}
        self._arrived: dict[str, asyncio.Event] = {}
        self._requests: dict[int, PendingRequest] = {}
        # Who each request of a finished match went to, so a late reply to it is recognised
        # as this bot's own (and ignored) rather than charged to another match.
        self._issued: OrderedDict[int, str] = OrderedDict()
        self._ids = itertools.count(1)
        self.disconnected_at: dict[str, float] = {}
        # Managed bots whose process has exited, with why: they cannot connect any more, so
        # a match waiting for one charges its no-show at once instead of after the timeout.
        self.gone: dict[str, str] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        # Deadlines of armed requests, earliest first, served by one timer: a TimerHandle per
        # request would cost a Python-compared heap push and a cancel on every decision.
        self._deadlines: list[tuple[float, int]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._timer_when = math.inf
        # The seats each bot holds in each running match: a stray reply of a bot with no open
        # request is charged to one of them.
        self._seated: dict[str, dict[MatchContext, list[int]]] = {}
        self.incidents: dict[str, deque[Incident]] = {}
        self._incident_counts: dict[str, int] = {}
        self.cpu_clocks = cpu_clocks  # managed bots with a CPU meter are timed by their CPU
        self.meters: dict[str, CpuMeter] = {}  # by bot id, registered by whoever started it
        self._lag: LagMonitor | None = None
        self.extensions = 0  # deadlines moved because the time was not the bot's
        # Told the bot's name at every timeout as it happens (the runner's storm watch).
        self.timeout_listeners: list[Callable[[str], None]] = []
        # Told the identity of a bot whose live stream ended (a disconnect or a Goodbye).
        self.detach_listeners: list[Callable[[BotIdentity], None]] = []

    @property
    def lag(self) -> LagMonitor:
        """The referee's own loop lag, measured while requests are open."""
        if self._lag is None:
            self._lag = LagMonitor(self.loop)
        return self._lag

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The hub's event loop (asked once: in 3.11 every get_running_loop is a getpid call)."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    def attach(self, session: BotSession, peer: str = "") -> bool:
        """Make session the live one of its bot; refused (False, an incident) while the bot
        already has a live stream: a valid token never takes over a live stream's seats."""
        bot_id = session.identity.bot_id
        old = self._sessions.get(bot_id)
        if old is not None and old is not session:
            if not old.closed:
                where = f" from {cap_text(peer, 64)}" if peer else ""
                self.record_incident(
                    bot_id, "second_stream", f"a second stream{where} was refused: one is live"
                )
                return False
            self.detach(old)  # its stream ended; the rest of its teardown is under way
        self._sessions[bot_id] = session
        session.meter = self.meters.get(bot_id)
        self.disconnected_at.pop(bot_id, None)
        self.gone.pop(bot_id, None)
        self._event(bot_id).set()
        return True

    def detach(self, session: BotSession) -> None:
        """Forget a closed session; its open requests learn the bot disconnected."""
        bot_id = session.identity.bot_id
        if self._sessions.get(bot_id) is session:
            del self._sessions[bot_id]
            self.disconnected_at[bot_id] = time.monotonic()
            self._event(bot_id).clear()
            for listener in list(self.detach_listeners):
                listener(session.identity)
        for req in list(session.pending.values()):
            req.cut()
        session.ended.set()

    def managed_started(self, bot_id: str, meter: CpuMeter | None) -> None:
        """A managed bot's process started: time its stream by meter (its cgroup's CPU, if
        any), and forget that an earlier process of it is gone."""
        if meter is not None:
            self.meters[bot_id] = meter
        self.gone.pop(bot_id, None)

    def managed_exited(self, bot_id: str) -> CpuMeter | None:
        """A managed bot's process exited: its meter, no longer used, for its owner to close."""
        return self.meters.pop(bot_id, None)

    def why_gone(self, bot_id: str) -> str | None:
        """Why the bot will not connect (its process exited, it did not start), if known."""
        return self.gone.get(bot_id)

    def disconnected_since(self, bot_id: str, default: float) -> float:
        """When the bot's last stream dropped (time.monotonic()), or default if it has none."""
        return self.disconnected_at.get(bot_id, default)

    def listen(
        self,
        on_detach: Callable[[BotIdentity], None] | None = None,
        on_timeout: Callable[[str], None] | None = None,
    ) -> Callable[[], None]:
        """Call on_detach with a bot whose stream dropped, on_timeout with a bot id cut off
        at a deadline; returns what stops it."""
        if on_detach is not None:
            self.detach_listeners.append(on_detach)
        if on_timeout is not None:
            self.timeout_listeners.append(on_timeout)

        def stop() -> None:
            if on_detach is not None:
                self.detach_listeners.remove(on_detach)
            if on_timeout is not None:
                self.timeout_listeners.remove(on_timeout)

        return stop

    def live(self, bot_id: str) -> BotSession | None:
        """The bot's connected session, if any."""
        return self._sessions.get(bot_id)

    def connected(self) -> list[BotIdentity]:
        """Every bot connected now."""
        return [s.identity for s in self._sessions.values()]

    async def farewell(
        self, bot_ids: Iterable[str], reason: str, timeout: float = 1.0
    ) -> list[str]:
        """Tell each of these bots on its live stream that it has nothing more to play (a
        Goodbye with reason), end the stream (status OK), and wait up to timeout seconds for
        the streams to close. Returns the ids of the bots told; unconnected ones are skipped."""
        goodbye = pb.RefereeMessage(goodbye=pb.Goodbye(reason=reason))
        told: list[BotSession] = []
        for bot_id in dict.fromkeys(bot_ids):
            session = self._sessions.get(bot_id)
            if session is None or session.closed:
                continue
            session.send(goodbye)
            session.close()
            told.append(session)
        waits = [asyncio.ensure_future(s.ended.wait()) for s in told if not s.ended.is_set()]
        if waits:
            _, late = await asyncio.wait(waits, timeout=timeout)
            for waiter in late:
                waiter.cancel()
        return [s.identity.bot_id for s in told]

    def mark_gone(self, bot_id: str, why: str) -> None:
        """A managed bot's process exited: wake whoever waits for it to connect."""
        self.gone[bot_id] = why
        self._event(bot_id).set()

    async def wait_for(self, bot_id: str, timeout: float) -> BotSession | None:
        """The bot's session once it connects, or None after timeout seconds (at once when
        its process is gone)."""
        deadline = time.monotonic() + timeout
        while (session := self._sessions.get(bot_id)) is None:
            left = deadline - time.monotonic()
            if left <= 0 or bot_id in self.gone:
                return None
            try:
                await asyncio.wait_for(self._event(bot_id).wait(), left)
            except TimeoutError:
                return None
        return session

    def open_request(self, session: BotSession, match: MatchContext, seat: int) -> PendingRequest:
        """Register a new request to session for a seat of a match."""
        future: asyncio.Future[Reply] = self.loop.create_future()
        req = PendingRequest(next(self._ids), match, seat, session, future)
        self._requests[req.request_id] = req
        session.pending[req.request_id] = req
        return req

    def arm(self, req: PendingRequest, limit_s: float) -> None:
        """Expire req once the bot has had limit_s of its own time, unless settled first."""
        now = self.loop.time()
        session = req.session
        req.opened, req.limit = now, limit_s
        if session.meter is not None and self.cpu_clocks:
            req.cpu_open = session.meter.read()
        lag = self.lag
        if not lag.running:
            lag.start()
        req.lag_open = lag.total_at(now)
        req.received_open, req.answered_open = session.received, session.answered
        deadline = now + limit_s
        heapq.heappush(self._deadlines, (deadline, req.request_id))
        if deadline < self._timer_when:
            self._schedule(deadline)

    def _schedule(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.loop.call_at(when, self._expire_due)
        self._timer_when = when

    def _expire_due(self) -> None:
        self._timer, self._timer_when = None, math.inf
        now = self.loop.time()
        heap = self._deadlines
        while heap:
            deadline, rid = heap[0]
            req = self._requests.get(rid)
            if req is not None and req.state == "open":
                if deadline > now:
                    self._schedule(deadline)
                    return
                heapq.heappop(heap)
                later = self._extension(req, now)
                if later is None:
                    req.expire()
                    for listener in self.timeout_listeners:
                        listener(req.session.identity.name)
                else:
                    self.extensions += 1
                    heapq.heappush(heap, (later, rid))
                continue
            heapq.heappop(heap)
        if self._lag is not None:
            self._lag.stop()  # nothing armed: nothing to measure lag against

    def _extension(self, req: PendingRequest, now: float) -> float | None:
        """A later deadline if the time gone was not all the bot's, else None (time's up)."""
        cap = req.opened + wall_cap(req.limit)
        if now >= cap:
            return None
        session = req.session
        if req.cpu_open >= 0 and session.meter is not None:
            used = cpu_share(session.meter.read() - req.cpu_open, len(session.pending))
            if used >= req.limit:
                return None
            return min(cap, now + max(req.limit - used, CPU_RECHECK_S))
        if session.received - req.received_open > session.answered - req.answered_open:
            return None  # it sent what answered nothing: no extension for lag it may cause
        due = req.opened + req.limit + (self.lag.total_at(now) - req.lag_open)
        return min(due, cap) if now < due else None

    def charged_s(self, req: PendingRequest) -> float:
        """The bot's own time on req so far: its CPU, or wall time less the server's lag."""
        now = self.loop.time()
        if req.cpu_open >= 0 and req.session.meter is not None:
            used = req.session.meter.read() - req.cpu_open
            return max(0.0, cpu_share(used, len(req.session.pending)))
        return max(0.0, now - req.opened - (self.lag.total_at(now) - req.lag_open))

    def seat(self, match: MatchContext, bot_ids: Sequence[str]) -> None:
        """Note a running match's bots, seat by seat, until forget_match."""
        for seat, bot_id in enumerate(bot_ids):
            self._seated.setdefault(bot_id, {}).setdefault(match, []).append(seat)

    def seats_of(self, bot_id: str) -> dict[MatchContext, list[int]]:
        """The running matches a bot sits in and its seats there."""
        return self._seated.get(bot_id, {})

    def forget_match(self, match: MatchContext) -> None:
        """Drop every request of a finished match, remembering only whose each was."""
        for bot_id in [b for b, matches in self._seated.items() if match in matches]:
            matches = self._seated[bot_id]
            del matches[match]
            if not matches:
                del self._seated[bot_id]
        for rid in [r for r, req in self._requests.items() if req.match is match]:
            req = self._requests.pop(rid)
            req.session.pending.pop(rid, None)
            if not req.future.done():
                req.future.cancel()
            self._issued[rid] = req.session.identity.bot_id
        while len(self._issued) > ISSUED_MEMORY:
            self._issued.popitem(last=False)

    def on_decision(self, session: BotSession, decision: pb.Decision) -> None:
        """Route a bot's Decision to its request, turning every misuse into a fault."""
        rid = decision.request_id
        req = self._requests.get(rid)
        session.received += 1
        if req is None and self._issued.get(rid) == session.identity.bot_id:
            session.answered += 1  # its own, only late: not a flood
            return  # a late reply to a match that has ended: cut off, already handled
        if req is None or (
            req.session is not session and req.session.identity.bot_id != session.identity.bot_id
        ):
            self._stray(session, "not_yours", f"reply to request {rid}, which is not this bot's")
            return
        if req.state in ("timed_out", "cut"):
            session.answered += 1
            return  # cut off at the deadline (the timeout was charged) or with its stream
        if req.state == "answered":
            req.match.charge(
                req.seat,
                "duplicate",
                f"second reply to request {rid}: {cap_text(decision.action_id)!r}",
                rid,
                "",
            )
            return
        wrong_match = decision.match_id and decision.match_id != req.match.match_id
        wrong_seat = decision.HasField("seat") and decision.seat != req.seat
        if wrong_match or wrong_seat:
            detail = (
                f"reply to request {rid} names match {cap_text(decision.match_id, 64)!r} seat "
                f"{decision.seat if decision.HasField('seat') else '-'}; the request was for "
                f"match {req.match.match_id!r} seat {req.seat}"
            )
            req.resolve(Reply("fault", fault_kind="not_yours", detail=detail))
        elif not decision.action_id:
            req.resolve(Reply("fault", fault_kind="malformed", detail="empty action_id"))
        else:
            session.answered += 1
            req.resolve(Reply("decision", action_id=decision.action_id))

    def on_malformed(self, session: BotSession, detail: str) -> None:
        """A message that could not be parsed answers the oldest open request as a fault."""
        session.received += 1
        self._stray(session, "malformed", cap_text(detail))

    def _stray(self, session: BotSession, kind: StrayKind, detail: str) -> None:
        """Charge a message that answers none of the bot's requests to the bot itself: its
        oldest open request, else a seat of a running match it sits in, else an incident."""
        target = session.oldest_open()
        if target is not None:
            target.resolve(Reply("fault", fault_kind=kind, detail=detail))
            return
        bot_id = session.identity.bot_id
        seated = next(iter(self.seats_of(bot_id).items()), None)
        if seated is not None:
            match, seats = seated
            match.charge(seats[0], kind, detail, 0, "")
        else:
            self.record_incident(bot_id, kind, detail)

    def record_incident(self, bot_id: str, kind: IncidentKind, detail: str) -> None:
        """Keep (and log) a misuse of a bot's token that no match is charged with."""
        matches = tuple(m.match_id for m in self.seats_of(bot_id))
        kept = self.incidents.setdefault(bot_id, deque(maxlen=INCIDENT_MEMORY))
        kept.append(Incident(kind, detail, time.time(), matches))
        count = self._incident_counts[bot_id] = self._incident_counts.get(bot_id, 0) + 1
        if count <= 10 or count & (count - 1) == 0:  # a flood must not flood the log
            seated = f" (seated in match {', '.join(matches)})" if matches else ""
            log.warning("bot %s%s: %s: %s [incident %d]", bot_id, seated, kind, detail, count)

    def _event(self, bot_id: str) -> asyncio.Event:
        return self._arrived.setdefault(bot_id, asyncio.Event())

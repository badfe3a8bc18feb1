"""Tournament throughput with storage and ratings on, and the fastest fair concurrency.

Usage: python bench/tournament.py [--matches 1000] [--at C] [--transport T] [--sweep]
                                  [--concurrency 1,2,4,8,16,32] [--move-ms 20] [--json]
The round robin: 16 managed copies of the deterministic Knaves example bot, sandboxed, enough
tables for --matches matches (6 per table), at concurrency --at (default: what the cores
serve), stored in SQLite and rated as `cardshark tournament run` does. Printed:
`matches_per_s`, `seconds_per_1000`, and `store_rate_share`: the wall time spent in the
store's calls (starting, recording and rating matches, in worker threads) over the
tournament's wall time, with `store_rate_cpu_share`, the CPU those calls used over it.
With --sweep, the fairness sweep too: 45 tables at every --concurrency level on one seed; a
level is fair when it ends with 0 faults and the same per-bot scores as concurrency 1.
Printed per level: matches/s, whether it was fair, the matches voided for load, the lowest
limit the runner fell to, and the referee's own loop lag (p50, p99).
`max_fair_matches_per_s` is the best fair level's throughput. `preflight_s` is the wall time
to start 5 sandboxed managed bots and hear each say Hello (median of 3).
`processes_scaling` (--processes-scaling PAIRS, default 3): the same round robin with
`--processes 1` and `--processes 2`, alternating, PAIRS times; each pair's ratio of
matches/s (2 over 1) and their median, with the seconds and CPU per 1000 matches of each.
`cpu_s_per_1000`: the CPU the round robin used per 1000 matches, every process counted (the
run's, its referee processes', the bots'), split as `run_cpu_s_per_1000` (of it, the store's
calls: `store_cpu_s_per_1000`), `bots_cpu_s_per_1000` and the rest of
`children_cpu_s_per_1000` (referee processes); `--processes N` for the main round robin.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shlex
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.bots.sandbox import SandboxPolicy, unavailable_reason  # noqa: E402
from server.bots.start import BotToStart  # noqa: E402
from server.play.arena import Arena  # noqa: E402
from server.play.load import fitting_concurrency  # noqa: E402
from server.play.preflight import start_managed  # noqa: E402
from server.play.tournament import Progress, database_authenticator, run_tournament  # noqa: E402
from tournaments.models import Match, Tournament  # noqa: E402
from tournaments.schedule import min_covering_tables, seatings_per_table  # noqa: E402
from tournaments.store import FinishedMatch, Store  # noqa: E402

BOT = [sys.executable, str(ROOT / "clients" / "python" / "examples" / "knaves_bot.py")]
COPIES, TABLES, SEED = 16, 45, 5
T = TypeVar("T")


class TimedStore(Store):
    """A Store that adds up the wall and CPU time of the calls a running tournament makes."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.wall = self.cpu = 0.0
        self.calls = 0
        self._lock = threading.Lock()

    def _timed(self, call: Callable[[], T]) -> T:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return call()
        finally:
            cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
            with self._lock:
                self.wall += wall
                self.cpu += cpu
                self.calls += 1

    def reset(self) -> None:
        """Forget the time counted so far."""
        with self._lock:
            self.wall = self.cpu = 0.0
            self.calls = 0

    def get_tournament(self, tournament_id: int) -> Tournament:
        return self._timed(lambda: super(TimedStore, self).get_tournament(tournament_id))

    def start_match(self, match_id: int) -> Match:
        return self._timed(lambda: super(TimedStore, self).start_match(match_id))

    def void_match(
        self, match_id: int, reason: str, *, record: dict[str, Any] | None = None
    ) -> Match:
        return self._timed(
            lambda: super(TimedStore, self).void_match(match_id, reason, record=record)
        )

    def record(self, finished: FinishedMatch) -> Match:
        return self._timed(lambda: super(TimedStore, self).record(finished))


class UnwrittenStore(TimedStore):
    """A TimedStore that writes no match: the same tournament without its bookkeeping."""

    def start_match(self, match_id: int) -> Match:
        return self._timed(lambda: self.get_match(match_id))

    def record(self, finished: FinishedMatch) -> Match:
        return self._timed(lambda: Match(id=finished.match_id))  # type: ignore[call-arg]


def system_time() -> float:
    """CPU seconds this process has spent in the kernel."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_stime


def cpu_times() -> tuple[float, float]:
    """CPU seconds (user and system) of this process, and of its children waited for."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


class DescendantsCpu:
    """The CPU seconds of this process's descendants (bots, referee processes, sandboxes),
    read from /proc every `every` seconds while they run: a child that is never waited for
    (a sandboxed bot's) reports none through getrusage. `bots` is the part of it under a
    sandbox (bwrap) or named like the bench's bot; the rest is referee processes. The
    sampler's own CPU is `cost`."""

    def __init__(self, every: float = 0.25) -> None:
        self.every = every
        self.seen: dict[tuple[int, int], float] = {}  # (pid, start time): CPU seconds
        self.system: dict[tuple[int, int], float] = {}  # of it, in the kernel
        self.bot_keys: set[tuple[int, int]] = set()  # of them, the bots' processes
        self.cost = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._tick = os.sysconf("SC_CLK_TCK")

    def __enter__(self) -> DescendantsCpu:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def total(self) -> float:
        """CPU seconds of every descendant seen, as last read."""
        return sum(self.seen.values())

    @property
    def bots(self) -> float:
        """CPU seconds of the bots' processes (and their sandboxes) seen, as last read."""
        return sum(cpu for key, cpu in self.seen.items() if key in self.bot_keys)

    @property
    def bots_system(self) -> float:
        """Of the bots' CPU seconds, those spent in the kernel."""
        return sum(cpu for key, cpu in self.system.items() if key in self.bot_keys)

    def _run(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.every):
                return

    def sample(self) -> None:
        """Read every descendant's CPU time now."""
        start = time.thread_time()
        parents: dict[int, int] = {}
        names: dict[int, bytes] = {}
        stats: dict[int, tuple[int, float, float]] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    head, tail = f.read().rsplit(b")", 1)
            except (OSError, ValueError):
                continue
            fields = tail.split()
            pid = int(entry.name)
            names[pid] = head.split(b"(", 1)[-1]
            parents[pid] = int(fields[1])
            user, system = int(fields[11]) / self._tick, int(fields[12]) / self._tick
            stats[pid] = (int(fields[19]), user + system, system)
        me = os.getpid()
        for pid, (started, cpu, system) in stats.items():
            up, hops, sandboxed = parents.get(pid, 0), 0, names.get(pid) == b"bwrap"
            while up not in (0, 1, me) and hops < 64:
                sandboxed = sandboxed or names.get(up) == b"bwrap"
                up, hops = parents.get(up, 0), hops + 1
            if up == me:
                self.seen[(pid, started)] = cpu
                self.system[(pid, started)] = system
                if sandboxed:
                    self.bot_keys.add((pid, started))
        self.cost += time.thread_time() - start


def percentile(values: list[float], q: float) -> float:
    """The q-quantile of values (0 if none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def play(concurrency: int, move_ms: int, tmp: str) -> dict[str, Any]:
    """One whole tournament at this concurrency; its result signature and figures."""
    store = Store(f"sqlite:///{tmp}/c{concurrency}.db")
    names = []
    for i in range(COPIES):
        bot, _ = store.add_bot(f"copy{i}", shlex.join(BOT))
        names.append(bot.name)
    tournament = store.create_tournament(
        "knaves", names, tables=TABLES, seed=SEED, clock_ms=move_ms
    )
    assert tournament.id is not None
    lowest = [concurrency]
    voids = [0]

    def seen(p: Progress) -> None:
        lowest[0] = min(lowest[0], p.limit or concurrency)
        voids[0] = p.load_voids

    arena = Arena(
        f"{tmp}/logs", authenticate=database_authenticator(store), sandbox=SandboxPolicy()
    )
    async with arena:
        start = time.perf_counter()
        await run_tournament(
            store,
            tournament.id,
            concurrency=concurrency,
            arena=arena,
            on_progress=seen,
            log_dir=f"{tmp}/logs",
        )
        elapsed = time.perf_counter() - start
        assert arena.running is not None
        lag = list(arena.running.hub.lag.history)
    matches = store.matches(tournament.id, include_voided=False)
    scores: dict[str, float] = {}
    faults = 0
    for m in matches:
        for seat, bot_id in enumerate(m.seats):
            name = names[bot_id - 1]
            scores[name] = scores.get(name, 0.0) + float((m.result or {})["scores"][seat])
        faults += len((m.record or {}).get("faults", []))
    store.close()
    return {
        "concurrency": concurrency,
        "matches": len(matches),
        "seconds": elapsed,
        "matches_per_s": len(matches) / elapsed,
        "faults": faults,
        "load_voids": voids[0],
        "lowest_limit": lowest[0],
        "lag_p50_ms": percentile(lag, 0.5) * 1000,
        "lag_p99_ms": percentile(lag, 0.99) * 1000,
        "scores": scores,
    }


async def preflight(tmp: str, bots: int = 5) -> float:
    """Seconds to start `bots` sandboxed example bots and hear every Hello."""
    arena = Arena(f"{tmp}/logs", sandbox=SandboxPolicy())
    async with arena:
        wanted = [BotToStart(f"p{i}", f"p{i}", shlex.join(BOT)) for i in range(bots)]
        started = await start_managed(arena, wanted, 10.0)
        assert not started.failures, [f.message() for f in started.failures]
        await arena.stop_bots(started.started)
    return started.seconds


async def throughput(
    matches: int,
    concurrency: int,
    move_ms: int | None,
    tmp: str,
    transport: str | None = None,
    *,
    write: bool = True,
    processes: int = 1,
) -> dict[str, Any]:
    """One round robin of at least `matches` matches, stored and rated (or, without write,
    played with no match written); its figures."""
    db = Path(tmp) / "throughput.db"
    db.unlink(missing_ok=True)
    store = (TimedStore if write else UnwrittenStore)(f"sqlite:///{db}")
    names = [store.add_bot(f"copy{i}", shlex.join(BOT))[0].name for i in range(COPIES)]
    # Every pair must meet: below that many tables the schedule is refused.
    tables = max(-(-matches // seatings_per_table(3)), min_covering_tables(COPIES, 3))
    tournament = store.create_tournament(
        "knaves", names, tables=tables, seed=SEED, clock_ms=move_ms
    )
    assert tournament.id is not None
    voids = [0]

    def seen(p: Progress) -> None:
        voids[0] = p.load_voids

    # The managed bots' transport: the arena's default unless one is named.
    chosen: dict[str, Any] = {} if transport is None else {"transport": transport}
    arena = Arena(
        f"{tmp}/logs",
        authenticate=database_authenticator(store),
        sandbox=SandboxPolicy(),
        **chosen,
    )
    own, children = cpu_times()
    own_system = system_time()
    descendants = DescendantsCpu()
    with descendants:
        async with arena:
            store.reset()
            start = time.perf_counter()
            played = await run_tournament(
                store,
                tournament.id,
                concurrency=concurrency,
                arena=arena,
                on_progress=seen,
                log_dir=f"{tmp}/logs",
                processes=processes,
            )
            elapsed = time.perf_counter() - start
            descendants.sample()  # the bots' last figures, before the arena stops them
    own_after, children_after = cpu_times()
    own, children = own_after - own, children_after - children
    own_system = system_time() - own_system
    own -= descendants.cost
    children = max(children, descendants.total)
    faults = sum(
        len((m.record or {}).get("faults", []))
        for m in store.matches(tournament.id, include_voided=False)
    )
    figures = {
        "transport": transport or "default",
        "processes": processes,
        "matches": played,
        "concurrency": concurrency,
        "seconds": elapsed,
        "matches_per_s": played / elapsed,
        "seconds_per_1000": 1000 * elapsed / played,
        "store_rate_share": store.wall / elapsed,
        "store_rate_cpu_share": store.cpu / elapsed,
        "store_calls": store.calls,
        "store_ms_per_match": 1000 * store.wall / played,
        "cpu_s_per_1000": 1000 * (own + children) / played,
        "run_cpu_s_per_1000": 1000 * own / played,
        "children_cpu_s_per_1000": 1000 * children / played,
        "bots_cpu_s_per_1000": 1000 * descendants.bots / played,
        "bots_system_cpu_s_per_1000": 1000 * descendants.bots_system / played,
        "run_system_cpu_s_per_1000": 1000 * own_system / played,
        "store_cpu_s_per_1000": 1000 * store.cpu / played,
        "sampler_cpu_s": descendants.cost,  # left out of the run's CPU above
        "faults": faults,
        "load_voids": voids[0],
    }
    store.close()
    return figures


def main() -> None:
    """Run the round robin (and the sweep if asked), print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--matches", type=int, default=1000, help="at least this many matches")
    parser.add_argument("--at", type=int, default=0, help="its concurrency (0: what fits)")
    parser.add_argument("--transport", help="managed bots' transport (default: the arena's)")
    parser.add_argument("--sweep", action="store_true", help="the fairness sweep too")
    parser.add_argument("--concurrency", default="1,2,4,8,16,32", help="the sweep's levels")
    parser.add_argument("--move-ms", type=int, default=20, help="the sweep's move clock")
    parser.add_argument(
        "--store-cost",
        type=int,
        default=0,
        metavar="PAIRS",
        help="also play PAIRS round robins with nothing written, alternating with stored ones",
    )
    parser.add_argument(
        "--processes-scaling",
        type=int,
        default=3,
        metavar="PAIRS",
        help="pairs of round robins at --processes 1 and 2 (0: none)",
    )
    parser.add_argument(
        "--processes", type=int, default=1, help="the round robin's referee processes"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if (why := unavailable_reason()) is not None:
        parser.error(f"the sandbox cannot be built here: {why}")
    if args.matches < 1:
        parser.error(f"--matches {args.matches}: need at least 1")
    at = args.at or fitting_concurrency()
    with tempfile.TemporaryDirectory() as tmp:
        summary = asyncio.run(
            throughput(args.matches, at, None, tmp, args.transport, processes=args.processes)
        )
        print("round robin: done", file=sys.stderr, flush=True)
        if args.store_cost:
            summary["store_cost"] = store_cost(args, at, tmp)
        if args.processes_scaling:
            summary["processes_scaling"] = processes_scaling(args, at, tmp)
        if args.sweep:
            summary["sweep"] = sweep(args, tmp)
    if args.json:
        print(json.dumps(summary))
        return
    print(
        f"{summary['matches']} matches at concurrency {at}: {summary['matches_per_s']:.2f} "
        f"matches/s, {summary['seconds_per_1000']:.1f} s per 1000; store and ratings "
        f"{100 * summary['store_rate_share']:.1f} % of wall time "
        f"({100 * summary['store_rate_cpu_share']:.1f} % as CPU, "
        f"{summary['store_ms_per_match']:.1f} ms per match); faults {summary['faults']}, "
        f"load voids {summary['load_voids']}"
    )
    print(
        f"CPU per 1000 matches: {summary['cpu_s_per_1000']:.1f} core-s (the run's process "
        f"{summary['run_cpu_s_per_1000']:.1f}, of it store calls "
        f"{summary['store_cpu_s_per_1000']:.1f}; bots {summary['bots_cpu_s_per_1000']:.1f}; "
        f"referee processes "
        f"{summary['children_cpu_s_per_1000'] - summary['bots_cpu_s_per_1000']:.1f})"
    )
    if args.sweep:
        print_sweep(summary["sweep"], args.move_ms)
    if args.processes_scaling:
        scaling = summary["processes_scaling"]
        print(
            f"--processes 2 over 1: {scaling['median_ratio']:.2f}x (median of "
            f"{len(scaling['ratios'])} pairs: "
            + ", ".join(f"{r:.2f}" for r in scaling["ratios"])
            + f"); s per 1000 at 2: {scaling['seconds_per_1000'][2]:.1f}, "
            f"at 1: {scaling['seconds_per_1000'][1]:.1f}"
        )
    if args.store_cost:
        cost = summary["store_cost"]
        print(
            f"store cost: {100 * cost['share']:.1f} % of the stored run's wall time "
            f"(median of {len(cost['pairs'])} pairs; each: "
            + ", ".join(f"{100 * p:.1f} %" for p in cost["pairs"])
            + ")"
        )


def processes_scaling(args: argparse.Namespace, at: int, tmp: str) -> dict[str, Any]:
    """The round robin at --processes 1 and 2, alternating, args.processes_scaling times."""
    ratios: list[float] = []
    seconds: dict[int, list[float]] = {1: [], 2: []}
    cpu: dict[int, list[float]] = {1: [], 2: []}
    for pair in range(args.processes_scaling):
        rates = {}
        for processes in (1, 2) if pair % 2 == 0 else (2, 1):
            run = asyncio.run(throughput(args.matches, at, None, tmp, processes=processes))
            assert run["faults"] == 0, f"faults at --processes {processes}: {run}"
            rates[processes] = run["matches_per_s"]
            seconds[processes].append(run["seconds_per_1000"])
            cpu[processes].append(run["cpu_s_per_1000"])
            print(f"processes {processes}: done", file=sys.stderr, flush=True)
        ratios.append(rates[2] / rates[1])
    return {
        "ratios": ratios,
        "median_ratio": statistics.median(ratios),
        "seconds_per_1000": {n: statistics.median(s) for n, s in seconds.items()},
        "cpu_s_per_1000": {n: statistics.median(c) for n, c in cpu.items()},
        "cores": len(os.sched_getaffinity(0)),
    }


def store_cost(args: argparse.Namespace, at: int, tmp: str) -> dict[str, Any]:
    """What writing the matches costs: pairs of the same round robin, stored and not stored,
    played one after the other; per pair (stored - unwritten) / stored wall time."""
    pairs = []
    for n in range(args.store_cost):
        order = (True, False) if n % 2 == 0 else (False, True)
        seconds = {}
        for write in order:
            run = asyncio.run(throughput(args.matches, at, None, tmp, args.transport, write=write))
            seconds[write] = run["seconds"]
        pairs.append((seconds[True] - seconds[False]) / seconds[True])
        print(f"store cost pair {n + 1}: done", file=sys.stderr, flush=True)
    return {"share": statistics.median(pairs), "pairs": pairs}


def sweep(args: argparse.Namespace, tmp: str) -> dict[str, Any]:
    """Every concurrency level, each compared with concurrency 1."""
    levels = sorted({1, *(int(c) for c in args.concurrency.split(",") if c)})
    rows = []
    preflight_s = statistics.median(asyncio.run(preflight(tmp)) for _ in range(3))
    for level in levels:
        rows.append(asyncio.run(play(level, args.move_ms, tmp)))
        print(f"concurrency {level}: done", file=sys.stderr, flush=True)
    alone = rows[0]["scores"]
    for row in rows:
        row["fair"] = row["faults"] == 0 and row.pop("scores") == alone
    fair = [r for r in rows if r["fair"]]
    best = max(fair, key=lambda r: r["matches_per_s"]) if fair else None
    summary = {
        "move_ms": args.move_ms,
        "max_fair_matches_per_s": best["matches_per_s"] if best else 0.0,
        "at_concurrency": best["concurrency"] if best else 0,
        "lag_p50_ms": best["lag_p50_ms"] if best else 0.0,
        "lag_p99_ms": best["lag_p99_ms"] if best else 0.0,
        "median_matches_per_s": statistics.median(r["matches_per_s"] for r in rows),
        "preflight_s": preflight_s,
        "by_concurrency": rows,
    }
    return summary


def print_sweep(summary: dict[str, Any], move_ms: int) -> None:
    """The sweep as a table."""
    rows = summary["by_concurrency"]
    print(
        f"{'concurrency':>11}{'matches/s':>11}{'fair':>6}{'faults':>8}{'load voids':>12}"
        f"{'lowest limit':>14}{'lag p50 ms':>12}{'lag p99 ms':>12}"
    )
    for r in rows:
        print(
            f"{r['concurrency']:>11}{r['matches_per_s']:>11.2f}{'yes' if r['fair'] else 'NO':>6}"
            f"{r['faults']:>8}{r['load_voids']:>12}{r['lowest_limit']:>14}"
            f"{r['lag_p50_ms']:>12.1f}{r['lag_p99_ms']:>12.1f}"
        )
    print(
        f"max_fair_matches_per_s {summary['max_fair_matches_per_s']:.2f} at concurrency "
        f"{summary['at_concurrency']} (move {move_ms} ms)"
    )
    print(f"preflight of 5 sandboxed managed bots: {summary['preflight_s']:.2f} s")


if __name__ == "__main__":
    main()

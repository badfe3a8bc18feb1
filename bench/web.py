"""Server time of the web page's pages over a big database: 1,000 bots and 100,000 matches.

Usage: python bench/web.py [--bots 1000] [--matches 100000] [--tournaments 100] [--db PATH]
                           [--repeat 5] [--json]
Fills a fresh SQLite file (bulk inserts, one transaction per table) with Knaves tournaments of
--bots/--tournaments entrants each, finished matches with real records (a pool of real
playouts, each stored under its own seed), seat results, a rating history row per seat and
ratings; then calls the web application in process (ASGI, no network) and prints the server
time per page: leaderboard, bot page, tournament page (a tournament not viewed before, and
one unchanged since its last view: its standings are kept until a match of it finishes),
replay JSON (full table and one seat, a new match each call: not cached) — the first call
and the median of --repeat more.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import insert  # noqa: E402

from games.base import competition_ranks  # noqa: E402
from games.registry import get_game  # noqa: E402
from server.web.app import make_app  # noqa: E402
from tournaments.models import (  # noqa: E402
    Bot,
    BotRating,
    Match,
    RatingHistory,
    SeatResult,
    Tournament,
    TournamentEntrant,
)
from tournaments.store import Store  # noqa: E402

GAME = "knaves"
SEATS = 3
PLAYOUTS = 40  # distinct real matches; every stored match is one of them under its seed
CHUNK = 5000


def playouts(n: int) -> list[tuple[int, list[str], list[int]]]:
    """n seeded random Knaves matches: (seed, action ids, final scores)."""
    game = get_game(GAME)
    out = []
    for i in range(n):
        rng = random.Random(i)
        seed = rng.randrange(2**62)
        state = game.new_match(seed, SEATS)
        while game.to_act(state) is not None:
            game.apply(state, rng.choice(game.legal_actions(state)))
        out.append((seed, list(state.history), game.scores(state)))
    return out


def bulk(store: Store, table: Any, rows: list[dict[str, Any]]) -> None:
    """Insert rows in chunks inside one transaction."""
    with store.engine.begin() as conn:
        for start in range(0, len(rows), CHUNK):
            conn.execute(insert(table), rows[start : start + CHUNK])


def fill(store: Store, bots: int, matches: int, tournaments: int) -> dict[str, float]:
    """Store the bots, tournaments, matches, seat results, history and ratings; timings."""
    rng = random.Random(7)
    pool = playouts(PLAYOUTS)
    times: dict[str, float] = {}
    start = time.perf_counter()
    bulk(
        store,
        Bot,
        [
            {
                "id": i,
                "name": f"bot{i:04d}",
                "token_hash": f"{i:064x}",
                "command": None,
                "created": datetime.now(UTC),
                "removed": None,
            }
            for i in range(1, bots + 1)
        ],
    )
    per = bots // tournaments
    tables = []
    entrants = []
    for t in range(1, tournaments + 1):
        tables.append(
            {
                "id": t,
                "name": f"bench {t}",
                "game": GAME,
                "options": {},
                "format": "round_robin",
                "seats": SEATS,
                "rounds": 1,
                "tables": None,
                "seed": t,
                "clock_ms": 1000,
                "bank_ms": 0,
                "ts_mu": 25.0,
                "ts_sigma": 25 / 3,
                "ts_beta": 25 / 6,
                "ts_tau": 25 / 300,
                "ts_draw_probability": 0.1,
                "status": "finished",
                "created": datetime.now(UTC),
            }
        )
        entrants += [
            {"tournament_id": t, "position": p, "bot_id": (t - 1) * per + p + 1} for p in range(per)
        ]
    bulk(store, Tournament, tables)
    bulk(store, TournamentEntrant, entrants)
    times["bots_tournaments_s"] = time.perf_counter() - start
    match_rows, seat_rows, history_rows = [], [], []
    rating: dict[int, list[float]] = {}  # bot -> [mu, sigma, matches, score_sum]
    when = datetime(2026, 1, 1, tzinfo=UTC)
    per_tournament = matches // tournaments
    start = time.perf_counter()
    for m in range(1, matches + 1):
        t = (m - 1) // per_tournament + 1
        index = (m - 1) % per_tournament
        seats = rng.sample(range((t - 1) * per + 1, t * per + 1), SEATS)
        seed, actions, scores = pool[m % PLAYOUTS]
        ranks = list(competition_ranks(scores))
        record = {
            "match_id": str(m),
            "game": GAME,
            "options": {},
            "seed": seed,
            "seats": [str(b) for b in seats],
            "actions": actions,
            "move_ms": [1.0] * len(actions),
            "faults": [],
            "scores": scores,
            "ranks": ranks,
            "forfeited": [False] * SEATS,
            "status": "finished",
            "reason": "",
        }
        match_rows.append(
            {
                "id": m,
                "tournament_id": t,
                "schedule_index": index,
                "attempt": 0,
                "round": index // 60,
                "table_index": (index // 6) % 10,
                "rotation": index % 6,
                "seed": seed,
                "seats": seats,
                "status": "finished",
                "result": {
                    "scores": [float(s) for s in scores],
                    "ranks": ranks,
                    "faults": [0] * SEATS,
                    "forfeited": [False] * SEATS,
                },
                "record": record,
                "started": when,
                "finished": when,
            }
        )
        when += timedelta(seconds=1)
        for s, bot in enumerate(seats):
            seat_rows.append(
                {
                    "match_id": m,
                    "seat": s,
                    "bot_id": bot,
                    "score": float(scores[s]),
                    "rank": ranks[s],
                    "faults": 0,
                    "forfeited": False,
                }
            )
            mu, sigma, n, total = rating.setdefault(bot, [25.0, 25 / 3, 0, 0.0])
            after = mu + rng.gauss(0, sigma / 4)
            history_rows.append(
                {
                    "bot_id": bot,
                    "game": GAME,
                    "match_id": m,
                    "mu_before": mu,
                    "sigma_before": sigma,
                    "mu_after": after,
                    "sigma_after": sigma * 0.97,
                }
            )
            rating[bot] = [after, sigma * 0.97, n + 1, total + scores[s]]
    times["generate_s"] = time.perf_counter() - start
    for table, rows, label in (
        (Match, match_rows, "matches"),
        (SeatResult, seat_rows, "seats"),
        (RatingHistory, history_rows, "history"),
    ):
        start = time.perf_counter()
        bulk(store, table, rows)
        times[f"insert_{label}_s"] = time.perf_counter() - start
    bulk(
        store,
        BotRating,
        [
            {
                "bot_id": b,
                "game": GAME,
                "mu": r[0],
                "sigma": r[1],
                "matches": int(r[2]),
                "score_sum": r[3],
                "faults": 0,
            }
            for b, r in rating.items()
        ],
    )
    return times


async def call(app: Any, path: str) -> tuple[int, int]:
    """GET path through the ASGI app in process; (status, body bytes)."""
    body = bytearray()
    status = 0
    path, _, query = path.partition("?")

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            body.extend(message.get("body", b""))

    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "headers": [],
        "scheme": "http",
        "server": ("bench", 80),
        "client": ("bench", 1),
        "http_version": "1.1",
        "root_path": "",
        "app": app,
    }
    await app(scope, receive, send)
    return status, len(body)


def timed(app: Any, paths: Callable[[int], str], repeat: int) -> dict[str, float]:
    """Wall and CPU milliseconds (the process's, every thread) of the first call and the
    median of `repeat` more (paths(i) each): CPU shows the cost on a busy machine."""
    wall, cpu = [], []
    size = 0
    for i in range(repeat + 1):
        start, start_cpu = time.perf_counter(), time.process_time()
        status, size = asyncio.run(call(app, paths(i)))
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        assert status == 200, (paths(i), status)
    return {
        "first_ms": round(wall[0], 1),
        "median_ms": round(statistics.median(wall[1:]), 1),
        "first_cpu_ms": round(cpu[0], 1),
        "median_cpu_ms": round(statistics.median(cpu[1:]), 1),
        "bytes": size,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=1000)
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--tournaments", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db", type=Path, help="SQLite file to fill (default: a temporary one)")
    parser.add_argument("--no-fill", action="store_true", help="time the pages of --db as it is")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    path = args.db or Path(tempfile.mkdtemp()) / "web-bench.db"
    store = Store(f"sqlite:///{path}")
    start = time.perf_counter()
    fill_times = {} if args.no_fill else fill(store, args.bots, args.matches, args.tournaments)
    fill_times["fill_s"] = time.perf_counter() - start
    app = make_app(store)
    per = args.matches // args.tournaments
    pages = {
        "home": lambda i: "/",
        "leaderboard": lambda i: f"/rankings/{GAME}",
        "bot page": lambda i: f"/bots/bot{1 + 37 * i:04d}",
        "tournament page, new": lambda i: f"/tournaments/{1 + (i * 7) % args.tournaments}",
        "tournament page, again": lambda i: f"/tournaments/{args.tournaments}",
        "replay JSON": lambda i: f"/api/matches/{1 + 997 * i}/replay",
        "replay JSON, one seat": lambda i: f"/api/matches/{2 + 991 * i}/replay?seat=1",
    }
    results = {name: timed(app, paths, args.repeat) for name, paths in pages.items()}
    out = {
        "bots": args.bots,
        "matches": args.matches,
        "tournaments": args.tournaments,
        "matches_per_tournament": per,
        "db_mb": round(path.stat().st_size / 1e6, 1),
        "fill": {k: round(v, 2) for k, v in fill_times.items()},
        "pages": results,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(
        f"{args.bots} bots, {args.matches} matches in {args.tournaments} tournaments "
        f"({per} each); database {out['db_mb']} MB filled in {fill_times['fill_s']:.1f} s"
    )
    for name, r in results.items():
        print(
            f"{name:24} first {r['first_ms']:7.1f} ms (CPU {r['first_cpu_ms']:6.1f})"
            f"   median {r['median_ms']:7.1f} ms (CPU {r['median_cpu_ms']:6.1f})"
            f"   {r['bytes']:>8} bytes"
        )


if __name__ == "__main__":
    main()

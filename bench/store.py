"""The store's cost per match, alone: start, record and rate a Knaves round robin's matches.

Plays no cards: every scheduled match of a 16-bot Knaves round robin is started and
recorded with seeded scores and a match record the size of a real one (408 actions), in
schedule order, as a running tournament's writer does. Prints CPU ms per match (the
store's own work, measured with the thread's CPU clock), SQL statements and transactions
per match, on a SQLite file (or `--db URL`).

    python bench/store.py [--matches 600] [--db postgresql://...] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import event

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tournaments.ratings import SeatOutcome  # noqa: E402
from tournaments.store import FinishedMatch, Store  # noqa: E402

BOTS, SEED = 16, 11


def fake_record(match_id: int, rng: random.Random) -> dict[str, Any]:
    """A match record shaped and sized like a real Knaves one (about 7.5 kB of JSON)."""
    actions = [f"play:{rng.choice('23456789TJQKA')}{rng.choice('SHDC')}" for _ in range(408)]
    return {
        "match_id": str(match_id),
        "game": "knaves",
        "options": {},
        "seed": rng.getrandbits(52),
        "seats": ["a", "b", "c"],
        "actions": actions,
        "move_ms": [round(rng.random(), 3) for _ in actions],
        "faults": [],
        "scores": [17, 17, 17],
        "ranks": [1, 1, 1],
        "forfeited": [False] * 3,
        "status": "finished",
        "reason": "",
    }


def measure(url: str, matches: int) -> dict[str, Any]:
    """Start and record up to `matches` matches; the store's CPU and statements per match."""
    store = Store(url)
    bots = [store.add_bot(f"b{i}", "true")[0].id for i in range(BOTS)]
    tournament = store.create_tournament(
        "knaves", [b for b in bots if b is not None], rounds=1, seed=SEED
    )
    assert tournament.id is not None
    pending = store.pending_matches(tournament.id)[:matches]
    rng = random.Random(SEED)
    plays = []
    for match in pending:
        assert match.id is not None
        scores = [float(rng.randint(0, 34)) for _ in match.seats]
        outcomes = tuple(SeatOutcome(s, 0, False) for s in scores)
        plays.append(FinishedMatch(match.id, outcomes, fake_record(match.id, rng)))
    statements = transactions = 0

    def count(*_: object) -> None:
        nonlocal statements
        statements += 1

    def begun(*_: object) -> None:
        nonlocal transactions
        transactions += 1

    event.listen(store.engine, "before_cursor_execute", count)
    event.listen(store.engine, "begin", begun)
    cpu, wall = time.thread_time(), time.perf_counter()
    for finished in plays:
        store.start_match(finished.match_id)
        store.record(finished)
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    n = len(pending)
    store.close()
    return {
        "matches": n,
        "cpu_ms_per_match": 1000 * cpu / n,
        "wall_ms_per_match": 1000 * wall / n,
        "statements_per_match": statements / n,
        "transactions_per_match": transactions / n,
    }


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=600)
    parser.add_argument("--db", help="database URL (default: a SQLite file in a temp dir)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db or f"sqlite:///{tmp}/store.db"
        summary = measure(url, args.matches)
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(
        f"{summary['matches']} matches: {summary['cpu_ms_per_match']:.2f} ms CPU "
        f"({summary['wall_ms_per_match']:.2f} ms wall) per match, "
        f"{summary['statements_per_match']:.1f} statements and "
        f"{summary['transactions_per_match']:.1f} transactions per match"
    )


if __name__ == "__main__":
    main()

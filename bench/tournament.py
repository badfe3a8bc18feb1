"""Tournament throughput: a 6-bot Knaves round robin, 2 rounds (120 matches), at several
concurrency levels, beside the referee's single-match decisions/s measured in the same run.

Usage: python bench/tournament.py [--concurrency 1,2,4] [--rounds 2] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from referee import referee_run  # noqa: E402

from server.tournament_runner import run_tournament  # noqa: E402
from tournaments.store import Store  # noqa: E402

EXAMPLES = ROOT / "clients" / "python" / "examples"
BOTS = [
    "knaves_bot.py",
    "knaves_bot.py",
    "random_bot.py",
    "random_bot.py",
    "random_bot.py",
    "random_bot.py",
]


def measure(concurrency: int, rounds: int) -> dict[str, float]:
    """Play the whole round robin once at this concurrency (fresh database)."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/bench.db")
        names = []
        for i, script in enumerate(BOTS):
            bot, _ = store.add_bot(f"bot{i}", shlex.join([sys.executable, str(EXAMPLES / script)]))
            names.append(bot.name)
        tournament = store.create_tournament("knaves", names, rounds=rounds, seed=1)
        assert tournament.id is not None
        start = time.perf_counter()
        asyncio.run(
            run_tournament(store, tournament.id, concurrency=concurrency, log_dir=f"{tmp}/logs")
        )
        elapsed = time.perf_counter() - start
        matches = store.matches(tournament.id, include_voided=False)
        decisions = sum(len((m.record or {}).get("actions", [])) for m in matches)
        assert all(m.status == "finished" for m in matches)
        store.close()
    return {
        "matches": len(matches),
        "seconds": elapsed,
        "matches_per_s": len(matches) / elapsed,
        "decisions_per_s": decisions / elapsed,
    }


def main() -> None:
    """Print matches/s and decisions/s per concurrency level and the ratio to one match."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--concurrency", default="1,2,4")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    single = asyncio.run(referee_run("knaves", 3))["decisions_per_s"]
    out: dict[str, dict[str, float]] = {}
    for level in (int(c) for c in args.concurrency.split(",")):
        row = measure(level, args.rounds)
        row["ratio_to_single_match"] = row["decisions_per_s"] / single
        out[str(level)] = row
    if args.json:
        print(json.dumps({"single_match_decisions_per_s": single, "by_concurrency": out}))
        return
    print(f"referee, one match at a time: {single:.0f} decisions/s")
    print(
        f"{'concurrency':>11}{'matches':>9}{'seconds':>9}{'matches/s':>11}{'decisions/s':>13}"
        f"{'vs single':>11}"
    )
    for level, row in out.items():
        print(
            f"{level:>11}{row['matches']:>9.0f}{row['seconds']:>9.1f}{row['matches_per_s']:>11.2f}"
            f"{row['decisions_per_s']:>13.0f}{row['ratio_to_single_match']:>11.2f}"
        )


if __name__ == "__main__":
    main()

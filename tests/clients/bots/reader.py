"""A JSON-lines bot for the stdio bridge that keeps every line it reads, for the test to check.

Usage: reader.py LOG SEED. Each line from stdin is appended to LOG as read; each request gets
a legal action drawn from random.Random(SEED), so a match of these bots replays exactly.
Uses only the standard library.
"""

from __future__ import annotations

import json
import random
import sys


def main() -> None:
    log_path, seed = sys.argv[1], sys.argv[2]
    rng = random.Random(seed)
    with open(log_path, "a", encoding="utf-8") as log:
        for line in sys.stdin:
            log.write(line)
            log.flush()
            request = json.loads(line).get("request")
            if request is None:
                continue
            legal = [action["id"] for action in request["legal_actions"]]
            answer = {"request_id": request["request_id"], "action_id": rng.choice(legal)}
            print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()

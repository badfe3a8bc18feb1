"""A JSON-lines bot for the stdio bridge that misbehaves on purpose, then plays legally.

Usage: scripted.py MODE [N]. On its first N requests (default 2) it:
  junk  writes a line that is not JSON;
  empty writes a Decision with an empty action_id;
  exit  exits with code 3 (on the first request, N is ignored);
  slow  answers only after the request's deadline has passed (from a timer, reading on).
Every other request gets a random legal action. Uses only the standard library.
"""

from __future__ import annotations

import json
import random
import sys
import threading

MODE = sys.argv[1]
BAD = int(sys.argv[2]) if len(sys.argv) > 2 else 2


LOCK = threading.Lock()


def answer(request_id: int, action_id: str) -> None:
    with LOCK:
        print(json.dumps({"request_id": request_id, "action_id": action_id}), flush=True)


def main() -> None:
    seen = 0
    for line in sys.stdin:
        request = json.loads(line).get("request")
        if request is None:
            continue
        seen += 1
        rid = request["request_id"]
        legal = [a["id"] for a in request["legal_actions"]]
        if seen <= BAD:
            if MODE == "junk":
                print("I fold! (this is not JSON)", flush=True)
                continue
            if MODE == "empty":
                answer(rid, "")
                continue
            if MODE == "exit":
                sys.exit(3)
            if MODE == "slow":
                clock = request.get("clock", {})
                late = (clock.get("move_ms", 0) + clock.get("bank_ms", 0)) / 1000 + 0.3
                threading.Timer(late, answer, (rid, random.choice(legal))).start()
                continue
        answer(rid, random.choice(legal))


if __name__ == "__main__":
    main()

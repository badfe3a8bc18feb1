"""A bot that first writes to stderr every descriptor it was started with, then plays as the
random example bot (exec keeps those descriptors): what a bot could reach of its referee's."""

import os
import sys
from pathlib import Path

RANDOM_BOT = (
    Path(__file__).resolve().parents[3] / "clients" / "python" / "examples" / "random_bot.py"
)

seen = []
for fd in sorted(int(n) for n in os.listdir("/proc/self/fd")):
    try:
        seen.append(f"{fd}={os.readlink(f'/proc/self/fd/{fd}')}")
    except OSError:
        continue  # the listing's own descriptor, closed by now
print("FDS " + " ".join(seen), file=sys.stderr, flush=True)
os.execv(sys.executable, [sys.executable, str(RANDOM_BOT), *sys.argv[1:]])

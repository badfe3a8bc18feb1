"""Run inside the sandbox by tests/server/test_seams.py: prints, as JSON, every mount with its
read-only or read-write flag, the environment's names, and which paths the bot could write."""

import json
import os


def writable(directory: str) -> bool:
    """Whether a new file can be made in directory (it is removed again)."""
    path = os.path.join(directory, f".probe-{os.getpid()}")
    try:
        with open(path, "w") as f:
            f.write("x")
    except OSError:
        return False
    os.unlink(path)
    return True


mounts = []
with open("/proc/self/mountinfo") as info:
    for line in info:
        parts = line.split()
        kind = parts[parts.index("-") + 1]
        mounts.append({"point": parts[4], "rw": "rw" in parts[5].split(","), "fstype": kind})
here = os.path.dirname(os.path.abspath(__file__))
places = ["/", "/usr", "/etc", "/tmp", os.environ.get("HOME", "/"), here, "/run/cardshark"]
print(
    json.dumps(
        {
            "mounts": mounts,
            "env": sorted(os.environ),
            "writable": [p for p in places if writable(p)],
            "uid": os.getuid(),
        }
    )
)

"""The Node.js kit's own unit tests (`npm test` in clients/node), run as part of pytest."""

from __future__ import annotations

import subprocess

from tests.clients.kits import NODE_DIR, ensure_node


def test_npm_test_passes() -> None:
    ensure_node()
    done = subprocess.run(
        ["npm", "test", "--silent"], cwd=NODE_DIR, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    assert "# fail 0" in done.stdout, done.stdout[-3000:]

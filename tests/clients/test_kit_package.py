"""The Python kit is a package of its own: a wheel with the kit and the stubs, depending on
gRPC and protobuf only, with the `cardshark-bot` command."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_kit_builds_a_wheel_of_its_own_without_the_server(tmp_path: Path) -> None:
    source = tmp_path / "kit"  # a copy: setuptools writes its build/ beside the sources
    shutil.copytree(ROOT / "clients" / "python", source, ignore=shutil.ignore_patterns("build"))
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("cardshark_bot-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        meta = next(n for n in names if n.endswith("METADATA"))
        metadata = archive.read(meta).decode()
        entry = archive.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    packages = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert packages == {"cardshark", "cardshark_bot"}
    assert "cardshark_bot/submit.py" in names and "cardshark/v1/submissions_pb2.py" in names
    requires = sorted(
        line.split(":", 1)[1].strip().split(">")[0]
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:")
    )
    assert requires == ["grpcio", "protobuf"]
    assert "cardshark-bot = cardshark_bot.submit:main" in entry

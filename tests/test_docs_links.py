"""The docs name only files of this repository, and every file they name exists.

Scanned: docs/, README.md, every clients/**/README.md and the text files of proto/. Found in
them: markdown links, backticked paths (`server/foo.py`, `clients/`), and bare paths with a
file extension (docs/protocol.md). A path names the repository when it is a .md file or starts
with an entry of the repository's root or of the document's own directory (of proto/ too, for
.proto imports); the rest are the reader's own or the running server's (`mybot/main.py`,
`logs/`). Each one that names the repository must be one of its files or directories (tracked,
or new and not ignored), relative to the document or to the root; `<game>` and `*` stand for
any name. The design notes the project was specified from live outside the repository, so no
document may send a reader to them.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROTO_TEXT = {".proto", ".yaml", ".yml", ".py", ".json", ".md"}
EXTENSIONS = r"(?:md|py|pyi|proto|js|cc|h|pl|yaml|yml|toml|json|txt|sh|html|cfg)"
LINK = re.compile(r"\]\(([^)\s]+)\)")
BACKTICKED = re.compile(r"`([^`\s]+)`")
BARE = re.compile(
    rf"(?<![\w./<>*`-])((?:[\w.<>*-]+/)+[\w.<>*-]+\.{EXTENSIONS}|[\w-]+\.md)(?![\w/-])"
)
# Outside the repository: the design notes, the rulings and the seed texts beside it.
OUTSIDE = re.compile(r"RULINGS|DESIGN(?:\.md|\s*§)|(?<![\w-])shared/|seeds/")


def documents() -> list[Path]:
    found = sorted((ROOT / "docs").rglob("*.md"))
    found.append(ROOT / "README.md")
    found += sorted(
        p for p in (ROOT / "clients").rglob("README.md") if "node_modules" not in p.parts
    )
    found += sorted(
        p
        for p in (ROOT / "proto").rglob("*")
        if p.is_file()
        and p.suffix in PROTO_TEXT
        and "node_modules" not in p.parts
        and p.name != "package-lock.json"
    )
    return found


@cache
def repo_files() -> frozenset[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return frozenset(p for p in listed if (ROOT / p).exists())


@cache
def repo_dirs() -> frozenset[str]:
    dirs = set()
    for path in repo_files():
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    return frozenset(dirs)


def looks_like_a_path(token: str) -> bool:
    if "://" in token or token.startswith(("/", "~", "$", "-", "#", "unix:", "mailto:")):
        return False
    if any(c in token for c in "$=:@{}()[],;'\"|\\"):
        return False
    return "/" in token or token.endswith(".md")


def references(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    found = {m.group(1) for m in BARE.finditer(text)}
    if path.suffix == ".md":
        found |= {m.group(1).split("#")[0] for m in LINK.finditer(text)}
        found |= {m.group(1) for m in BACKTICKED.finditer(text)}
    tokens = {t.rstrip(".,:") for t in found}
    return {t for t in tokens if t and looks_like_a_path(t) and names_the_repo(t, path)}


def bases(document: Path) -> list[str]:
    """Where a document's relative paths may start: the root, its directory, proto/."""
    parent = document.parent.resolve()
    here = parent.relative_to(ROOT).as_posix() if parent.is_relative_to(ROOT) else ""
    found = ["", here] if here not in ("", ".") else [""]
    if here.startswith("proto"):
        found.append("proto")  # the import root of the .proto files
    return found


def names_the_repo(token: str, document: Path) -> bool:
    """A .md file, or a path that starts at an entry of the root or of a base directory."""
    if token.endswith(".md"):
        return True
    for base in bases(document):
        full = posixpath.normpath(posixpath.join(base, token))
        if full.startswith(".."):
            continue
        inside = full[len(base) :].lstrip("/") if base and full.startswith(f"{base}/") else full
        first = posixpath.join(base, inside.split("/")[0]) if base else inside.split("/")[0]
        if first in repo_dirs() or first in repo_files():
            return True
    return False


def exists(token: str, document: Path) -> bool:
    pattern = re.sub(r"<[^>]+>", "*", token).rstrip("/")
    for base in bases(document):
        full = posixpath.normpath(posixpath.join(base, pattern))
        if full.startswith(".."):
            continue
        if "*" in full:
            if fnmatch.filter(repo_files(), full) or fnmatch.filter(repo_dirs(), full):
                return True
        elif full in repo_files() or full in repo_dirs():
            return True
    return False


def test_the_scan_finds_the_documents_and_their_references() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in documents()}
    assert {"README.md", "docs/protocol.md", "clients/README.md", "proto/buf.yaml"} <= names
    assert "proto/cardshark/v1/referee.proto" in names
    assert "docs/protocol.md" in references(ROOT / "proto" / "cardshark" / "v1" / "referee.proto")
    assert "clients/perl/random_bot.pl" in references(ROOT / "docs" / "protocol.md")


def test_the_checker_tells_a_missing_file_from_a_present_one(tmp_path: Path) -> None:
    doc = ROOT / "docs" / "protocol.md"
    assert exists("server/match/hub.py", doc) and exists("clients/", doc)
    assert exists("docs/rules/<game>.md", doc) and exists("rules/knaves.md", doc)
    assert exists("proto/cardshark/v1/*.proto", doc)
    assert not exists("server/no_such_file.py", doc)
    assert not exists("docs/rules/<game>.txt", doc)
    sample = tmp_path / "sample.md"
    sample.write_text(
        "See [the guide](../docs/guide.md#top), `server/gone.py`, `unix:/run/x.sock`,\n"
        "`/usr/bin`, `$HOME/x`, `logs/`, `mybot/main.py`, tests/test_stubs.py and RULINGS.md §2.\n"
    )
    assert references(sample) == {
        "../docs/guide.md",
        "server/gone.py",
        "tests/test_stubs.py",
        "RULINGS.md",
    }
    assert OUTSIDE.search(sample.read_text())


@pytest.mark.parametrize("document", documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_file_a_document_names_exists(document: Path) -> None:
    missing = sorted(t for t in references(document) if not exists(t, document))
    assert not missing, f"{document.relative_to(ROOT)} names files not in the repository: {missing}"


@pytest.mark.parametrize("document", documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_document_names_the_notes_outside_the_repository(document: Path) -> None:
    hits = [
        f"line {n}: {line.strip()}"
        for n, line in enumerate(document.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not hits, f"{document.relative_to(ROOT)} names files outside the repository: {hits}"

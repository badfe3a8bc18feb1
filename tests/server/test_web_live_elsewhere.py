"""A match played by another process than the web page's is followed live in Chromium: by a
real `cardshark worker` on PostgreSQL, and by a `cardshark tournament resume` on SQLite (in
process, and in a referee process of `--processes 2`). The
page draws the table as the replay does (seats with the bots' names, the trick in the middle)
and it changes as moves arrive, one decision behind, with no reload and no card some seat
cannot see; when the match ends the page turns into the replay."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from games.registry import get_game
from server.match.live import LiveMatch
from server.views.spectator import Spectator, shown
from tests.server.test_what_the_public_sees import public_truth
from tests.server.test_workers import SLOW_BOT, create, slow_bots, start_worker, workers
from tests.server.webkit import ROOT, chromium_page, free_port, play_match, serve_web
from tournaments.store import Store

# Each change of the live section: the step, the table's text, the cards of the trick in play,
# and the cards drawn in hands (there must be none: every hand is hidden from the public).
OBSERVE = """() => { const root = document.getElementById('live-match');
    new MutationObserver(() => {
        const table = document.getElementById('table');
        sawStep(Number(root.dataset.step || '0'), table.innerText,
                [...table.querySelectorAll('#trick [data-card]')].map(c => c.dataset.card),
                table.querySelectorAll('.hand [data-card]').length,
                [...document.querySelectorAll('#live-moves li')].map(li => li.dataset.label));
    }).observe(root, {attributes: true, childList: true, subtree: true}); }"""


@pytest.fixture()
def page() -> Iterator[Page]:
    with chromium_page() as p:
        yield p


def last_rotation(store: Store, tid: int) -> int:
    """Play every rotation of the deal but the last in process (so the last may be shown) and
    return the last one's id."""
    *others, last = store.matches(tid)
    for m in others:
        play_match(store, m.id or 0)
    return last.id or 0


def follow(page: Page, url: str, mid: int, play: Callable[[], None], store: Store) -> None:
    """Open the match's page, start the other process playing it, and check what the page
    showed against the match as it was played."""
    page.goto(f"{url}/matches/{mid}")
    expect(page.locator("#live-match")).to_be_visible()
    page.evaluate("window.keptAcrossUpdates = 42")
    shown: list[tuple[int, str, list[str], int, list[str]]] = []
    page.expose_function("sawStep", lambda *seen: shown.append(seen))
    page.evaluate(OBSERVE)
    play()
    for at_least in (3, 30):
        # Until the step is reached, or the match is over and the page became its replay.
        page.wait_for_function(
            "(() => { const root = document.getElementById('live-match');"
            f" return !root || Number(root.dataset.step) >= {at_least}; }})()",
            timeout=120_000,
        )
        assert page.locator("#live-match").count(), f"over before step {at_least} was shown live"
    assert page.evaluate("window.keptAcrossUpdates") == 42  # no reload while in play
    names = [f"slow{i}" for i in range(3)]
    for name in names:
        expect(page.locator("#seats .seat .bot", has_text=name)).to_have_count(1)
    expect(page.locator("#replay")).to_be_visible(timeout=120_000)  # over: the replay
    detail = store.match_detail(mid)
    assert detail.match.status == "finished"
    actions = list((detail.match.record or {})["actions"])
    labels, _, hidden, _ = public_truth(
        get_game("knaves"), detail.match.seed, 3, detail.tournament.options, actions
    )
    drawn = [s for s in shown if s[1]]
    steps = sorted({s[0] for s in drawn})
    assert len(steps) > 5 and steps[-1] < len(actions)  # moves as they arrive, always behind
    assert len({s[1] for s in drawn}) > 5  # the table changes with them
    assert any(s[2] for s in drawn)  # a trick drawn in the middle
    for step, _, trick, in_hands, moves in drawn:
        assert in_hands == 0, f"step {step}: a hand drawn"
        assert not set(trick) & set().union(*hidden[step]), f"step {step}: a hidden card"
        assert moves == [m["label"] for m in labels[:step]], f"step {step}: not the public moves"


def test_a_match_played_by_a_worker_is_followed_live(
    postgres_database: str, tmp_path: Path, page: Page
) -> None:
    db = postgres_database
    tid = create(db, slow_bots(db, 3), 5)
    with Store(db) as store, serve_web(db) as url:
        mid = last_rotation(store, tid)
        with workers(db, tmp_path, []) as procs:

            def play() -> None:
                procs["w1"] = start_worker(db, tmp_path, "w1")

            follow(page, url, mid, play, store)


@pytest.mark.parametrize("processes", [1, 2], ids=["in-process", "referee-processes"])
def test_a_match_played_by_a_cli_tournament_is_followed_live(
    tmp_path: Path, page: Page, processes: int
) -> None:
    """With --processes 2 the match is played in a referee process, which sends its snapshots
    to the run, which writes them."""
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    with Store(db) as store:
        names = [
            store.add_bot(f"slow{i}", f"{sys.executable} {SLOW_BOT}")[0].name for i in range(3)
        ]
        tid = store.create_tournament("knaves", names, seed=5).id or 0
        mid = last_rotation(store, tid)
        runs: list[subprocess.Popen[Any]] = []
        with serve_web(db) as url:

            def play() -> None:
                runs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "server.cli", "tournament", "resume", str(tid)]
                        + ["--concurrency", "1", "--port", str(free_port()), "--db", db]
                        + ["--processes", str(processes)],
                        cwd=ROOT,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                )

            try:
                follow(page, url, mid, play, store)
                assert runs[0].wait(timeout=120) == 0
            finally:
                for run in runs:
                    if run.poll() is None:
                        run.kill()
                        run.wait()


@pytest.mark.parametrize(
    ("game", "seats"),
    [("knaves", 3), ("knives", 5), ("kill", 4), ("kansas-city", 4), ("ninja-whist", 4)],
)
def test_every_game_draws_its_live_table(tmp_path: Path, page: Page, game: str, seats: int) -> None:
    """Snapshots of a seeded random match, every third step, drawn on a pending match's live
    page by the game's renderer: no error, every seat around the table, no card face among a
    seat's objects (Knives' piles lie face down), and by a seat no card some seat cannot see
    (what lies face up there, Kill's cards set aside or Kansas City's trump numbers, is
    public)."""
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    with Store(db) as store:
        ids = [store.add_bot(f"p{i}")[0].id or 0 for i in range(seats)]
        match = store.matches(store.create_tournament(game, ids, seed=7).id or 0)[0]
    engine = get_game(game)
    state = engine.new_match(match.seed, seats)
    rng = random.Random(7)
    spectator = Spectator(LiveMatch(engine, match.seed, seats, state.options, state.history))
    snapshots, hidden = [], []
    while engine.to_act(state) is not None:
        engine.apply(state, rng.choice(engine.legal_actions(state)))
        spectator.advance()
        if spectator.step % 3 == 0:
            snapshots.append(json.loads(json.dumps(shown(spectator.published(), True, 0))))
            at = spectator.state
            hidden.append(set().union(*(engine.hidden_cards(at, s) for s in range(seats))))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    with serve_web(db) as url:
        page.goto(f"{url}/matches/{match.id}")
        expect(page.locator("#live-match")).to_be_visible()
        drawn = page.evaluate(
            """([game, names, snapshots]) => snapshots.map((s) => {
                Replay.live(game, names, s);
                return [document.querySelectorAll('#seats .seat').length,
                        [...document.querySelectorAll('#seats .hand [data-card]')].map(
                            (c) => c.dataset.card),
                        [...document.querySelectorAll('#seats .objects [data-card]')].map(
                            (c) => c.dataset.card)];
            })""",
            [game, [f"p{i}" for i in range(seats)], snapshots],
        )
    assert not errors
    assert len(drawn) > 10 and [n for n, _, _ in drawn] == [seats] * len(drawn)
    for (_, cards, objects), unseen in zip(drawn, hidden, strict=True):
        assert not set(cards) & unseen
        assert not objects  # tokens, markers and piles by a seat: no card face, live

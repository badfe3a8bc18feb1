"""A running match watched live in Chromium, from a real `cardshark serve` playing real bots:
the step count moves with no reload, the table is drawn as the replay draws it, the page never
holds a card some seat cannot see, it stays at least one decision behind, and it turns into the
replay when the match ends."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from playwright.sync_api import Page, expect

from cardshark.v1 import admin_pb2 as pb
from cardshark.v1 import admin_pb2_grpc
from games.registry import get_game
from tests.server.webkit import ROOT, chromium_page, play_match, serve_web_and_admin
from tournaments.store import Store

SLOW_BOT = ROOT / "tests" / "server" / "bots" / "slow_bot.py"  # 40 ms a decision
TOKEN = "spectate-admin"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
CARD = re.compile(r"\b[2-9TJQKA][SHDC]\b")  # a Knaves card code as the page writes it


@pytest.fixture()
def page() -> Iterator[Page]:
    with chromium_page() as p:
        yield p


def test_a_running_match_is_watched_step_by_step_with_public_cards_only(
    tmp_path: Path, page: Page
) -> None:
    db = f"sqlite:///{tmp_path / 'cs.db'}"
    store = Store(db)
    names = []
    for i in range(3):
        bot, _ = store.add_bot(f"slow{i}", f"{sys.executable} {SLOW_BOT}")
        names.append(bot.name)
    tid = store.create_tournament("knaves", names, rounds=1, seed=5).id or 0
    *others, last = store.matches(tid)
    for m in others:  # the deal's other rotations are played: the last one may be shown
        play_match(store, m.id or 0)
    mid = last.id or 0
    with serve_web_and_admin(db, TOKEN, tmp_path / "logs") as (url, address):
        page.goto(f"{url}/matches/{mid}")
        expect(page.locator("#live-match")).to_be_visible()  # pending: it goes live when played
        page.evaluate("window.keptAcrossUpdates = 42")
        shown: list[tuple[int, list[str], str, list[str], int]] = []
        page.expose_function(
            "sawStep",
            lambda step, moves, rest, trick, hands: shown.append(
                (int(step), moves, rest, trick, hands)
            ),
        )
        # Each change: the step, the moves listed, the whole page but those and the table, the
        # cards of the trick in play and how many cards are drawn in hands.
        page.evaluate("""() => { const root = document.getElementById('live-match');
            new MutationObserver(() => {
                const rest = document.documentElement.cloneNode(true);
                for (const id of ['live-moves', 'table', 'move', 'last-hand']) {
                    rest.querySelector('#' + id).remove();
                }
                const table = document.getElementById('table');
                sawStep(root.dataset.step || '0',
                        [...document.querySelectorAll('#live-moves li')].map(
                            li => `seat ${li.dataset.seat}: ${li.dataset.label}`),
                        rest.outerHTML,
                        [...table.querySelectorAll('#trick [data-card]')].map(c => c.dataset.card),
                        table.querySelectorAll('.hand [data-card]').length);
            }).observe(root, {attributes: true, childList: true, characterData: true,
                              subtree: true}); }""")

        def run() -> None:
            with grpc.insecure_channel(address) as channel:
                admin = admin_pb2_grpc.AdminStub(channel)
                request = pb.RunTournamentRequest(tournament_id=tid, concurrency=1)
                list(admin.RunTournament(request, metadata=AUTH))

        runner = threading.Thread(target=run)
        runner.start()
        try:
            for at_least in (3, 30):
                page.wait_for_function(
                    f"Number(document.getElementById('live-match').dataset.step) >= {at_least}",
                    timeout=60_000,
                )
            assert page.evaluate("window.keptAcrossUpdates") == 42  # no reload while in play
            expect(page.locator("#live-moves li")).not_to_have_count(0)
            expect(page.locator("#seats .seat")).to_have_count(3)  # the replay's table
            # Over: the page reloads into the replay, every rotation of the deal being played.
            expect(page.locator("#replay")).to_be_visible(timeout=60_000)
        finally:
            runner.join(timeout=120)
    detail = store.match_detail(mid)
    store.close()
    assert detail.match.status == "finished"
    actions = list((detail.match.record or {})["actions"])
    game = get_game("knaves")
    steps = sorted({s[0] for s in shown})
    assert len(steps) > 10 and steps[-1] < len(actions)  # one decision behind, always
    state = game.new_match(detail.match.seed, 3, detail.tournament.options)
    public, hand_of, hidden_at = [], [], []
    for action in actions:
        hand_of.append(game.hands_finished(state))
        public.append(f"seat {game.to_act(state)}: {game.public_label(state, action)}")
        hidden_at.append(set().union(*(game.hidden_cards(state, s) for s in range(3))))
        game.apply(state, action)
    assert any(trick for *_, trick, _ in shown)  # a trick drawn in the middle
    for step, moves, rest, trick, hands in shown:
        assert moves == public[:step]  # public labels of the moves shown, nothing else
        assert not CARD.findall(rest), f"step {step}: a card outside the moves and the table"
        assert hands == 0 and not set(trick) & hidden_at[step], f"step {step}: a hidden card"
        # Cards of the hand in play are public once played; earlier hands' are history.
        # (The step is never the last: hidden_at[step] is the table the page shows.)
        hidden = hidden_at[step]
        for i in range(step):
            if hand_of[i] == hand_of[step]:
                assert not set(CARD.findall(moves[i])) & hidden, f"step {step}, move {i}"

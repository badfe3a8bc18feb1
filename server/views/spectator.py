"""A match in play as a spectator may see it: the public table, one decision behind.

A spectator may be a seated bot's author, or the bot itself, so it is shown only what every
seat already knows: the moves by their public labels (`Game.public_label`), whose turn it is,
the scores, the table every seat's view agrees on (`public_table`) and the record of a hand
just ended (every seat is sent it), always at least DELAY decisions behind the table; never a
hand. While another rotation of the same deal is still to be played even that stays hidden
(its moves, even the order of turns, would give away the deal): only the step count moves
(`shown`). The web page shows this in process (server/web/spectate.py) and the process that
plays a match publishes it through the store for pages in other processes
(server/play/publish.py): both go through this module.
"""

from __future__ import annotations

import json
from typing import Any

from games.base import Game, MatchState
from server.match.live import LiveMatch

DELAY = 1  # decisions a spectator stays behind the table
PRIVATE = ("hand", "seat")  # a seat's own cards and number: never public, even when all agree


def meet(values: list[Any]) -> tuple[bool, Any]:
    """What a list of JSON-like values have in common: (True, value) when they are equal, the
    dicts' agreeing keys and same-length lists' agreeing items (met in turn), else (False,
    None)."""
    first = values[0]
    if all(v == first for v in values[1:]):
        return True, first
    if all(isinstance(v, dict) for v in values):
        out = {}
        for key in first:
            if all(key in v for v in values):
                ok, value = meet([v[key] for v in values])
                if ok:
                    out[key] = value
        return True, out
    if all(isinstance(v, list | tuple) and len(v) == len(first) for v in values):
        items = [meet([v[i] for v in values]) for i in range(len(first))]
        if all(ok for ok, _ in items):
            return True, [value for _, value in items]
    return False, None


def public_table(game: Game[Any], state: MatchState) -> dict[str, Any]:
    """The table as every seat's view has it: each key (and inside it each key or list item)
    that all views agree on, but a seat's own hand and number. What differs, some seat cannot
    know, and is left out."""
    views = [dict(game.view(state, s)) for s in range(state.seats)]
    for view in views:
        for key in PRIVATE:
            view.pop(key, None)
    _, table = meet(json.loads(json.dumps(views)))  # tuples as lists, as a page reads them
    return dict(table)


def shown(published: dict[str, Any], public: bool, first: int) -> dict[str, Any]:
    """A published snapshot as one watcher is sent it: with the moves from index `first`, or,
    while the deal is in play elsewhere (public False), the step count only."""
    return {
        "state": "running",
        "step": published["step"],
        "to_act": published["to_act"] if public else None,  # who won a trick: the deal
        "public": public,
        "scores": published["scores"] if public else None,
        "first": first,
        "moves": published["moves"][first:] if public else [],
        "table": published["table"] if public else None,
        "hand_ended": published["hand_ended"] if public else None,
    }


class Spectator:
    """One watcher's own replay of a running match, advanced only as far as may be shown."""

    def __init__(self, live: LiveMatch) -> None:
        self.live = live
        self.state = live.game.new_match(live.seed, live.seats, live.options)
        self.moves: list[dict[str, Any]] = []
        self.hand_ended: dict[str, Any] | None = None  # the hand the last shown move ended
        self._table: tuple[int, dict[str, Any]] | None = None  # (step, its public table)

    @property
    def step(self) -> int:
        """How many actions this spectator has seen."""
        return len(self.moves)

    def advance(self) -> None:
        """Apply the actions the table is at least DELAY decisions past."""
        game, actions = self.live.game, self.live.actions
        for action in actions[self.step : max(0, len(actions) - DELAY)]:
            seat = game.to_act(self.state)
            self.moves.append({"seat": seat, "label": game.public_label(self.state, action)})
            before = game.hands_finished(self.state)
            game.apply(self.state, action)
            self.hand_ended = None
            if game.hands_finished(self.state) > before:
                record = game.hand_records(self.state)[-1]
                self.hand_ended = {"number": before, "record": record}

    def published(self) -> dict[str, Any]:
        """Everything a spectator may be shown at the current step (`shown` cuts it down for
        one watcher)."""
        game = self.live.game
        if self._table is None or self._table[0] != self.step:
            self._table = (self.step, public_table(game, self.state))
        return {
            "step": self.step,
            "to_act": game.to_act(self.state),
            "scores": game.scores(self.state),
            "moves": self.moves,
            "table": self._table[1],
            "hand_ended": self.hand_ended,
        }

    def snapshot(self, public: bool, first: int) -> dict[str, Any]:
        """The shown step, with the moves from index `first` (none unless public)."""
        return shown(self.published(), public, first)

"""The web page: leaderboards per game, bot pages, match lists and a replay viewer."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from games.errors import UnknownGameError
from games.registry import all_games, get_game
from server.transcript import seat_names, transcript
from tournaments.errors import NotFoundError
from tournaments.store import Store

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
RECENT = 50


def make_app(store: Store) -> Starlette:
    """The web application over one store; its handlers are sync, so Starlette runs them
    in a thread pool and the referee's event loop never waits on the database."""

    def page(request: Request, template: str, **context: Any) -> Response:
        return TEMPLATES.TemplateResponse(request, template, {"games": all_games(), **context})

    def home(request: Request) -> Response:
        tournaments = [store.tournament_status(t.id or 0) for t in store.list_tournaments()]
        return page(request, "home.html", tournaments=tournaments[:RECENT])

    def rankings(request: Request) -> Response:
        try:
            game = get_game(request.path_params["game"])
        except UnknownGameError as exc:
            raise HTTPException(404, str(exc)) from None
        rows = store.rankings(game.spec.name)
        return page(request, "rankings.html", game=game.spec, rows=rows)

    def bot(request: Request) -> Response:
        try:
            # A retired bot's page still answers: its matches are listed everywhere else.
            found = store.get_bot(request.path_params["name"], include_removed=True)
        except NotFoundError as exc:
            raise HTTPException(404, str(exc)) from None
        ratings = []
        for name in all_games():
            rating = store.ratings(name).get(found.id or 0)
            if rating is not None:
                ratings.append((name, rating))
        matches = []
        for t in store.list_tournaments():
            for m in store.matches(t.id or 0, include_voided=False):
                if found.id in m.seats and m.status == "finished":
                    matches.append((t, m))
        return page(request, "bot.html", bot=found, ratings=ratings, matches=matches[:RECENT])

    def match_list(request: Request) -> Response:
        try:
            tid = int(request.path_params["tournament"])
            status = store.tournament_status(tid)
            names = {b.id: b.name for b in store.tournament_entrants(tid)}
        except NotFoundError as exc:
            raise HTTPException(404, str(exc)) from None
        matches = store.matches(tid)
        return page(request, "matches.html", status=status, matches=matches, names=names)

    def match(request: Request) -> Response:
        try:
            detail = store.match_detail(int(request.path_params["match"]))
        except NotFoundError as exc:
            raise HTTPException(404, str(exc)) from None
        steps = [dataclasses.asdict(s) for s in transcript(detail)]
        return page(request, "match.html", detail=detail, names=seat_names(detail), steps=steps)

    routes = [
        Route("/", home),
        Route("/rankings/{game}", rankings),
        Route("/bots/{name}", bot),
        Route("/tournaments/{tournament:int}", match_list),
        Route("/matches/{match:int}", match),
    ]
    return Starlette(routes=routes)

"""`/metrics` on the web port: Prometheus's text format (prometheus_client), read from the
store at each scrape so that the figures hold whichever process played (docs/ladder.md)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry
from sqlalchemy import text
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tournaments.store import FaultTally, Store

# procrastinate's jobs by status, when the store is the workers' PostgreSQL.
QUEUE_DEPTH = text("SELECT status::text, count(*) FROM procrastinate_jobs GROUP BY status")


class StoreCollector(Collector):
    """The store's counts as metric families, read when scraped."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._faults = FaultTally()
        self._lock = threading.Lock()  # two scrapes at once must not count a match twice
        self.loop_lag_s: float | None = None

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        """Every family, from one read of the store (and the faults finished since the last)."""
        figures = self._store.play_figures()
        with self._lock:
            faults = self._store.tally_faults(self._faults)
            kinds = dict(faults.kinds)
        matches = CounterMetricFamily(
            "cardshark_matches", "Matches by game and status (voided attempts included).",
            labels=["game", "status"],
        )  # fmt: skip
        for (game, status), n in sorted(figures.matches.items()):
            matches.add_metric([game, status], n)
        yield matches
        sets = CounterMetricFamily("cardshark_ladder_sets", "Ladder sets by game.", labels=["game"])
        for game, n in sorted(figures.ladder_sets.items()):
            sets.add_metric([game], n)
        yield sets
        voids = CounterMetricFamily(
            "cardshark_load_voids", "Matches voided for the server's load and replayed.",
            labels=["game"],
        )  # fmt: skip
        for game, n in sorted(figures.load_voids.items()):
            voids.add_metric([game], n)
        yield voids
        fault = CounterMetricFamily(
            "cardshark_faults", "Faults by kind in finished matches counted so far.",
            labels=["kind"],
        )  # fmt: skip
        for kind, n in sorted(kinds.items()):
            fault.add_metric([kind], n)
        yield fault
        submissions = GaugeMetricFamily(
            "cardshark_submissions", "Submissions by state (builds and verdicts).", labels=["state"]
        )
        for state, n in sorted(figures.submissions.items()):
            submissions.add_metric([state], n)
        yield submissions
        yield from self._queue()
        if self.loop_lag_s is not None:
            yield GaugeMetricFamily(
                "cardshark_loop_lag_seconds",
                "How late the serving process's event loop ran a callback, at the scrape.",
                value=self.loop_lag_s,
            )

    def _queue(self) -> Iterator[GaugeMetricFamily]:
        if self._store.engine.dialect.name != "postgresql":
            return
        with self._store.engine.connect() as conn:
            has_queue = conn.execute(text("SELECT to_regclass('procrastinate_jobs')")).scalar()
            rows = conn.execute(QUEUE_DEPTH).all() if has_queue else []
        depth = GaugeMetricFamily(
            "cardshark_queue_jobs", "The workers' queue: jobs by status.", labels=["status"]
        )
        for status, n in rows:
            depth.add_metric([str(status)], int(n))
        yield depth


def metrics_route(store: Store) -> Route:
    """The `/metrics` route over this store."""
    collector = StoreCollector(store)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)

    async def metrics(request: Request) -> Response:
        loop = asyncio.get_running_loop()
        asked = loop.time()
        ran = asyncio.Event()
        loop.call_soon(ran.set)
        await ran.wait()
        collector.loop_lag_s = loop.time() - asked
        body = await asyncio.to_thread(generate_latest, registry)
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    return Route("/metrics", metrics)

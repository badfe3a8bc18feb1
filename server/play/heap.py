"""The garbage collector during play: what the process holds before it plays is frozen.

A tournament run holds a large, long-lived heap before its first match (SQLAlchemy's
mappers and caches, the engines, protobuf's descriptors: ~120k tracked objects), and every
full collection walked all of it. Play allocates steadily (requests, futures, records), so
full collections came every few hundred decisions and took ~120 ms each: about 3.5 ms of
the run's CPU a match, a sixth of the referee's (docs/performance.md). `frozen_heap` moves
what is alive when play starts into the collector's permanent generation (gc.freeze):
collections then walk only what play itself made. Garbage is collected first, so nothing
dead is frozen; on the way out the frozen objects go back to the oldest generation
(gc.unfreeze), so a long-lived process (`serve`) collects them again like any others.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Play inside: the heap alive on entry is left out of collections until the exit."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()

"""Small performance helpers shared by the batch jobs (import, nightly gauge)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """Pauses the cyclic garbage collector while a job builds many small acyclic objects (records, dicts,
    tallies): its full collections would walk the whole Django heap again and again — measured 40% of an
    import's validation time and 0.3 s of a 1M-turn gauge run. Reference counting still frees everything;
    the previous state is restored."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

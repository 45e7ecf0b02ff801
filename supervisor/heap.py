"""Keeping the cyclic garbage collector's full passes short.

A full (generation 2) pass walks every container the process holds. The daemon's
start-up heap (modules, compiled patterns, tables, the souls' first state) made such a
pass take ~60 ms on the benchmark machine, a stall every client felt once the pass came
due. :func:`freeze_start_up_heap` collects once and then moves everything alive into the
permanent generation, so that later passes walk only what was made since.

What is frozen is still freed by reference counting when its last reference goes. A
reference cycle among frozen objects that is dropped later (a soul reloaded, say) is
not collected: that costs at most the start-up heap, once, since whatever replaces it
is made after the freeze and collected as usual.
"""

from __future__ import annotations

import gc

__all__ = ["freeze_start_up_heap"]


def freeze_start_up_heap() -> int:
    """Collect, then freeze what is alive; returns how many objects were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()

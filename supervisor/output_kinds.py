"""The kinds of output the outputs hub (:mod:`supervisor.outputs`) carries: the one list.

Souls publish ``card``, ``direct``, ``internal_signal``, ``reflect``, ``spark``, ``tide``
and ``wakeup``; the daemon ``log`` (its log lines) and ``reply`` (the responder's
answers); a subscription itself ``overflow`` (what it dropped). The hub refuses to
publish any other kind, ``subscribe`` (socket and HTTP) refuses to filter on one, and
``soupd watch --kind`` offers these. Standard library only: the CLI's parser reads it
and ``soupd --help`` loads nothing heavy. The client package ``soupd`` mirrors it
(``soupd.OUTPUT_KINDS``; a test holds the two equal).
"""

from __future__ import annotations

__all__ = ["OUTPUT_KINDS", "kinds_problem"]

OUTPUT_KINDS: tuple[str, ...] = (
    "card",
    "direct",
    "internal_signal",
    "log",
    "overflow",
    "reflect",
    "reply",
    "spark",
    "tide",
    "wakeup",
)


def kinds_problem(kinds: list[str]) -> str | None:
    """What is wrong with ``kinds`` as a subscription's filter (None: nothing)."""
    unknown = [kind for kind in kinds if kind not in OUTPUT_KINDS]
    if not unknown:
        return None
    return f"unknown output kind {unknown[0]!r}; the kinds are {', '.join(OUTPUT_KINDS)}"

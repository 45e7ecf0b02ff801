"""Pieces the tests of the daemon's shared PostgreSQL store (supervisor/shared.py) share:
its ``[store]`` table, and a plain note to append."""

from __future__ import annotations

import msgspec

from souls.store.store import NewEvent
from souls.text.tokenize import fts_document
from supervisor.config import StoreBackendConfig

__all__ = ["note", "postgres_config"]


def postgres_config(**keys: object) -> StoreBackendConfig:
    """A [store] table of backend "postgres" as soupd.toml would give it (``keys`` set
    on it), past its validation, which asks for advertise: the daemon's, given to
    SharedStore by the tests."""
    config = StoreBackendConfig(pool_min=1, pool_max=4)
    for name, value in {"backend": "postgres", **keys}.items():
        msgspec.structs.force_setattr(config, name, value)
    return config


def note(i: int) -> NewEvent:
    """Note ``i``: ref ``r<i>``, from ann on the web."""
    text = f"note {i}"
    return NewEvent(
        ref=f"r{i}", kind="message", channel="web", sender="ann", group=None,
        mentioned=False, session=None, ts=1.0 + i, recorded=1.0 + i, salience=0.5,
        text=text, doc=fts_document(text),
    )  # fmt: skip

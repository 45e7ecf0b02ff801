"""The credential rule over every other text a request carries (DESIGN §3.1).

An event's text passes the whole hygiene gate; every other string a soul is sent may
be stored or logged too — a push's ``sender``, ``ref`` or ``session``, a claim's
subject, a goal's triggers, a card's tags, a task, a recall query (kept in the
assemblies log), a person's name. :func:`screen` refuses a request when any of them
looks like a secret, with the same rules (the built-in ones and the soul's
``extra_patterns``) and a message naming the field, never quoting it.

Cost. The texts of one request are joined and scanned once; only a hit is traced back
to its field, so a clean request costs one scan whatever its number of fields. The scan
is linear in the request, and a request is bounded by the frame cap.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

import msgspec

from souls.intake.credential_scan import find_credential
from souls.intake.hygiene_gate import HygieneGate
from supervisor.errors import RejectedInput

__all__ = ["WITHHELD", "screen", "shown"]

WITHHELD = "(withheld: looks like a credential)"


def screen(gate: HygieneGate, request: msgspec.Struct, *, skip: Collection[str] = ()) -> None:
    """Raise RejectedInput (``hygiene.credential``, ``field`` set) if a string anywhere in
    ``request`` — nested structs, lists, dicts — holds a secret. ``skip``: top-level
    fields checked elsewhere (an event's ``text`` passes the whole gate)."""
    texts = list(_texts(request, "", skip))
    if not texts or gate.find_secret("\n".join(text for _, text in texts)) is None:
        return
    # The joined scan can see a secret no single field holds (one split across two
    # fields) or give up on too many candidates: each field's own verdict decides.
    for field, text in texts:
        what = gate.find_secret(text)
        if what is not None:
            raise RejectedInput(
                "credential",
                f"{field} looks like it contains a credential ({what}); remove the secret "
                "and send again — soupd never stores credentials",
                field=field,
            )


def shown(value: str | None, gate: HygieneGate | None = None) -> str | None:
    """``value`` as a log line or a message may carry it: itself, or a placeholder if it
    holds a secret — by ``gate``'s rules, or the built-in ones where no soul's gate is at
    hand (a channel logging the ref of an event a soul refused)."""
    if value is None:
        return None
    what = gate.find_secret(value) if gate is not None else find_credential(value)
    return value if what is None else WITHHELD


def _texts(value: object, path: str, skip: Collection[str] = ()) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        if value:
            yield path or "text", value
    elif isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            if name in skip:
                continue
            child = getattr(value, name)
            # A nested struct's fields are named as the caller sent them: a goal's
            # ``statement``, not ``update.statement``; in a list, ``events[3].sender``.
            yield from _texts(
                child, path if isinstance(child, msgspec.Struct) else _join(path, name)
            )
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _texts(item, f"{path}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(key, f"{path} (a key)")
            yield from _texts(item, f"{path}[{key!r}]")


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name

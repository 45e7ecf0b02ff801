"""A memory's id as people and programs give it: its number (``7``) or its label
(``m7``), the form ``soupd memories``, recall and a context show. The one reading of it
that the socket's methods, the MCP tools and the CLI share (the client package ``soupd``
sends what it is given, and the socket reads it here).
"""

from __future__ import annotations

from supervisor.errors import InvalidParams

__all__ = ["memory_id"]

# Ids are SQLite rowids: from 1, below 2**63.
_LIMIT = 2**63


def memory_id(value: object) -> int:
    """The memory id ``value`` names: a whole number from 1, or that number after
    ``m`` (``m7``, as ids are shown). Raises InvalidParams, naming the accepted forms,
    for anything else."""
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        digits = value[1:] if value[:1] in ("m", "M") else value
        # ASCII digits only: str.isdigit also takes '²' and other scripts' digits.
        if digits.isascii() and digits.isdigit() and len(digits) <= 19:
            number = int(digits)
    if number is None or not 1 <= number < _LIMIT:
        raise InvalidParams(
            f"not a memory id: {value!r}; give its number (7) or its label (m7), as "
            "`soupd memories SOUL` lists them"
        )
    return number

"""What a recall (or a memory listing) is narrowed to: :class:`Scope`, and the memory
ids within it on SQLite (:meth:`Scope.sql`; :mod:`souls.store.postgres.scope` on
PostgreSQL)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Scope"]


@dataclass(frozen=True, slots=True)
class Scope:
    """What a recall is narrowed to: memories of events said by ``sender`` (that
    account, or the person linked to it), in ``session``, of ``kind`` (the event's, or
    the memory's), from ``since`` (inclusive) to ``until`` (exclusive, Unix seconds).
    With any of them set, a memory of no event is out."""

    sender: str | None = None
    session: str | None = None
    kind: str | None = None
    since: float | None = None
    until: float | None = None

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.sender, self.session, self.kind, self.since,
                                            self.until))  # fmt: skip

    def sql(self) -> tuple[str, list[object]]:
        """The memory ids in scope, as a subquery, and its arguments."""
        where: list[str] = []
        args: list[object] = []
        if self.sender is not None:
            where.append("(e.sender = ? OR e.person = ?)")
            args += [self.sender, self.sender]
        if self.session is not None:
            where.append("e.session = ?")
            args.append(self.session)
        if self.kind is not None:
            where.append("(e.kind = ? OR m.kind = ?)")
            args += [self.kind, self.kind]
        if self.since is not None:
            where.append("e.ts >= ?")
            args.append(self.since)
        if self.until is not None:
            where.append("e.ts < ?")
            args.append(self.until)
        sql = (
            "SELECT m.id FROM events AS e JOIN memories AS m ON m.event_id = e.id"
            f" WHERE {' AND '.join(where) or '1'}"
        )
        return sql, args

"""A recall's scope (:class:`~souls.store.store.Scope`) on PostgreSQL: the memory ids
within it, as a subquery of one soul, its parameters numbered as the caller needs."""

from __future__ import annotations

from souls.store.scope import Scope

__all__ = ["scope_sql"]


def scope_sql(scope: Scope, first: int) -> tuple[str, list[object]]:
    """:meth:`Scope.sql` for the soul of ``$1``, its parameters numbered from ``first``."""
    where: list[str] = ["e.soul = $1"]
    args: list[object] = []

    def arg(value: object) -> str:
        args.append(value)
        return f"${first + len(args) - 1}"

    if scope.sender is not None:
        where.append(f"(e.sender = {arg(scope.sender)} OR e.person = {arg(scope.sender)})")
    if scope.session is not None:
        where.append(f"e.session = {arg(scope.session)}")
    if scope.kind is not None:
        where.append(f"(e.kind = {arg(scope.kind)} OR m.kind = {arg(scope.kind)})")
    if scope.since is not None:
        where.append(f"e.ts >= {arg(scope.since)}")
    if scope.until is not None:
        where.append(f"e.ts < {arg(scope.until)}")
    sql = (
        "SELECT m.id FROM events AS e JOIN memories AS m"
        f" ON m.soul = e.soul AND m.event_id = e.id WHERE {' AND '.join(where)}"
    )
    return sql, args

"""What ``forget`` clears besides the events and what was derived from them: the logs that
quote them, and the bytes SQLite would otherwise keep.

A forgotten sentence lingers where nothing cites it by id: the ledger (a draw's topic, a
verdict's reasons), the assembly log behind ``soupd why`` (the query), the knowledge
gaps (a topic asked about), a spark held for the next context, the tide reports beside
the soul's cards; and below the tables, in the full-text index's old segments, in freed
pages and in the write-ahead log. :func:`scrub` says how to rewrite the first kind, from
the logs as the store reads them (``SoulStore.logs``: :mod:`souls.store.logs`, on either
backend), and the store rewrites them (:func:`souls.store.logs.write` inside the forget
transaction, ``SoulStore.scrub`` in one of its own);
:meth:`souls.actor.rights.DataRights.forget` then merges the index into fresh segments
and truncates the WAL, with ``secure_delete`` on so that freed pages are zeroed.

Goals read from conversation keep the words they came from (a statement, notes that
quote a sentence): :func:`scrub` deletes a goal said in a forgotten text and cuts the
notes that quote one.

What counts as quoting: a needle (the forget's ``match``, each forgotten text, and the
opening of a long one, as a verdict quotes it cut short) found in the field, ignoring
case. Logs are rewritten in place and keep their shape: a draw keeps its cards and
verdicts (criterion, passed, evidence), its topic and reasons read ``(forgotten)``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from souls.store.logs import FORGOTTEN, Logs, Scrub

__all__ = ["FORGOTTEN", "needles", "scrub", "scrub_reports"]

# How much of a long text's opening is a needle of its own (reasons quote lines cut).
_OPENING = 60
_MIN_NEEDLE = 3


def needles(texts: Iterable[str], match: str | None = None) -> list[str]:
    """The strings whose presence in a log means it quotes what is forgotten."""
    found = {match.casefold()} if match else set()
    for text in texts:
        text = " ".join(text.split()).casefold()
        found.add(text)
        if len(text) > _OPENING:
            found.add(text[:_OPENING])
    return sorted(n for n in found if len(n) >= _MIN_NEEDLE)


def _quotes(value: str | None, found: Sequence[str]) -> bool:
    if not value:
        return False
    folded = " ".join(value.split()).casefold()
    return any(needle in folded for needle in found)


def scrub(logs: Logs, found: Sequence[str], redacted_cards: Sequence[int]) -> Scrub:
    """What of ``logs`` to rewrite: the log rows that quote a needle or name a redacted
    card, and the goals read from forgotten words (:func:`_goals`)."""
    redacted = set(redacted_cards)
    draws: list[tuple[int, str, str]] = []
    for draw, topic, cards, verdicts in logs.draws:
        topic_hit = _quotes(topic, found)
        reasons_hit = _quotes(verdicts, found) or bool(redacted & set(json.loads(cards)))
        if not (topic_hit or reasons_hit):
            continue
        rows = json.loads(verdicts)
        if reasons_hit:
            for row in rows:
                row["reason"] = FORGOTTEN
                for line in row.get("lines", ()):
                    line["text"] = FORGOTTEN  # the card lines a verdict rests on
        draws.append((draw, FORGOTTEN if topic_hit else topic, json.dumps(rows)))
    gone, notes = _goals(logs.goals, found)
    return Scrub(
        draws=draws,
        queries=[row_id for row_id, query in logs.queries if _quotes(query, found)],
        gaps=[
            row_id
            for row_id, topic, detail in logs.gaps
            if _quotes(topic, found) or _quotes(detail, found)
        ],
        # The soul's own small values: a spark held for the next context quotes card lines.
        state=[key for key, value in logs.state.items() if _quotes(value, found)],
        goals_gone=gone,
        notes=notes,
    )


def _goals(
    goals: Sequence[tuple[int, str, str]], found: Sequence[str]
) -> tuple[list[int], list[tuple[int, str]]]:
    """Goals read from forgotten words go with them: a goal whose statement was said in
    a forgotten text (or holds the forget's pattern) is deleted, a progress note that
    quotes one is cut (a note keeps the sentence it came from). The goals deleted, and
    the others' progress as cut."""
    gone: list[int] = []
    notes: list[tuple[int, str]] = []
    for goal_id, statement, progress in goals:
        if _said_in(_HORIZON.sub("", statement), found):
            gone.append(goal_id)
            continue
        held = json.loads(progress)
        kept = [note for note in held if not _said_in(str(note.get("text", "")), found)]
        if len(kept) != len(held):
            notes.append((goal_id, json.dumps(kept)))
    return gone, notes


def _said_in(value: str, found: Sequence[str]) -> bool:
    """Whether ``value`` was said in a forgotten text (it stands in one) or quotes one."""
    folded = " ".join(value.split()).casefold()
    if len(folded) < _MIN_NEEDLE:
        return False
    return any(folded in needle or needle in folded for needle in found)


# The horizon a goal read from conversation carries: "run a half marathon (this year)".
_HORIZON = re.compile(r"\s*\([^()]*\)\s*$")


def scrub_reports(folder: Path, found: Sequence[str], *, remove: bool = True) -> int:
    """Remove the tide reports under ``folder/tide`` that quote a needle (views of the
    ledger: the next tide writes a fresh one); how many (only counted when not
    ``remove``: a dry run). Blocking: run in a thread."""
    removed = 0
    for report in sorted((folder / "tide").glob("*.*")):
        if report.is_symlink() or not report.is_file():
            continue
        if _quotes(report.read_text(encoding="utf-8", errors="replace"), found):
            if remove:
                report.unlink()
            removed += 1
    return removed

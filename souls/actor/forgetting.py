"""The user's full forget (DESIGN §3.12) on either backend: decided here in Python from
what the store reads of the events (``SoulStore.forgetting``: their texts and memories,
the cards that cite them, the summary versions, the events that remain) and its logs
(``SoulStore.logs``), then applied by the store in one transaction
(``SoulStore.forget_all``), and the file scrubbed after (``SoulStore.compact``).

What :func:`plan` decides, as :class:`~souls.store.forgetting.ForgetPlan`:

* the card lines (and titles) that repeat a forgotten text, ignoring case, read
  :data:`~souls.store.forgetting.REDACTED`, and a note on the card says how many;
  cards keep their numbers (never reused);
* every summary version that cites a forgotten memory (``m12``) goes;
* the somatic markers are recomputed from the events that remain: the appraisals of
  each, added up (decay aside), as the mind perceives them (the person's too), labels
  from the events in the order they were stored, as they did live;
* the logs that quote a forgotten text (or the forget's ``match``) or name a cited card
  are scrubbed (:mod:`souls.actor.scrub`).

The store itself deletes, by event id, the events, their memories (index rows, edges,
vectors, sources), card sources, claims, questions, unspoken items, and reopens the
questions they settled.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from pathlib import Path

import anyio
import msgspec

from souls.actor.scrub import needles, scrub, scrub_reports
from souls.mind.appraisal import appraise, with_person
from souls.mind.markers import Markers
from souls.mind.somatic import SomaticConfig
from souls.store.forgetting import CardText, ForgetPlan, Forgetting, MarkerRow, Redaction
from souls.store.interface import SoulStore
from souls.store.logs import Logs
from souls.text.tokenize import tokens

__all__ = ["ForgetResult", "forget", "markers_of", "plan"]


class ForgetResult(msgspec.Struct, frozen=True):
    """What a forget deleted, rewrote and recomputed (or would have: ``dry_run``)."""

    events: int
    memories: int
    edges: int
    summaries: int
    markers: int  # markers after recomputing them from the remaining events
    card_lines: int = 0  # card lines redacted (cards keep their numbers)
    claims: int = 0  # claims extracted from the events
    questions: int = 0  # questions asked in them (settled ones reopen if it was the answer)
    scrubbed: int = 0  # log rows that quoted them, rewritten (ledger, assemblies, gaps)
    goals: int = 0  # goals said in them (deleted) or whose notes quoted them (cut)
    dry_run: bool = False  # only counted: nothing was deleted


async def forget(
    store: SoulStore,
    somatic: SomaticConfig,
    folder: Path | None,
    event_ids: Sequence[int],
    now: float,
    *,
    match: str | None = None,
    dry_run: bool = False,
) -> tuple[ForgetResult, list[int]]:
    """Forget the events and everything derived from them (:func:`plan`, applied by
    ``store`` in one transaction); also returns the numbers of the cards that cited
    them (their Markdown files need rewriting). Then the store is compacted (on
    SQLite no byte of them stays in the file or its WAL) and the tide reports under
    ``folder`` that quote them are removed.

    A ``dry_run`` applies the plan in a transaction the store rolls back, so its counts
    are the real forget's, and removes no file: nothing changes (no card to rewrite)."""
    read = await store.forgetting(event_ids)
    decided = plan(event_ids, read, await store.logs(), somatic, now, match)
    forgotten = await store.forget_all(decided, dry_run=dry_run)
    scrubbed = decided.scrub.logs
    with anyio.CancelScope(shield=True):
        if event_ids and not dry_run:
            await store.compact()
        if event_ids and folder is not None:
            scrubbed += await anyio.to_thread.run_sync(
                functools.partial(scrub_reports, remove=not dry_run),
                folder,
                needles(read.texts, match),
            )
    result = ForgetResult(
        len(event_ids),
        forgotten.memories,
        forgotten.edges,
        len(decided.summaries),
        len(decided.markers),
        sum(len(r.lines) for r in decided.redactions),
        forgotten.claims,
        forgotten.questions,
        scrubbed,
        decided.scrub.goals,
        dry_run,
    )
    return result, [] if dry_run else _cited(read)


# A summary's citation of a memory: m12.
_CITED = re.compile(r"\bm(\d+)\b")


def plan(
    event_ids: Sequence[int],
    read: Forgetting,
    logs: Logs,
    somatic: SomaticConfig,
    now: float,
    match: str | None = None,
) -> ForgetPlan:
    """The full forget of ``event_ids``, from what the store read of them (``read``)
    and of its logs (``logs``)."""
    folded = [text.casefold() for text in read.texts]
    memory_ids = set(read.memories)
    return ForgetPlan(
        events=sorted(set(event_ids)),
        redactions=[r for card in read.cards if (r := _redaction(card, folded)) is not None],
        summaries=[
            summary_id
            for summary_id, text in read.summaries
            if memory_ids & {int(n) for n in _CITED.findall(text)}
        ],
        markers=markers_of(read.remaining, somatic),
        scrub=scrub(logs, needles(read.texts, match), _cited(read)),
        now=now,
    )


def _cited(read: Forgetting) -> list[int]:
    """The cards that cited a forgotten event (their files need rewriting), by number."""
    return [card.number for card in read.cards]


def markers_of(
    events: Sequence[tuple[str, float, str | None]], somatic: SomaticConfig
) -> list[MarkerRow]:
    """The markers of ``events`` (text, salience, person), in the order they were
    stored, as (topic, valence, weight, label) rows."""
    markers = Markers()
    for text, salience, person in events:
        appraisal = appraise(text, salience, somatic, tokens(text))
        if appraisal is not None:
            markers.add(with_person(appraisal, person))
    return [(t, v, w, markers.label(t)) for t, v, w in markers.rows()]


def _redaction(card: CardText, forgotten: Sequence[str]) -> Redaction | None:
    """What of ``card`` repeats a forgotten text (``forgotten``, casefolded): one
    contains the other. None when nothing does."""

    def repeats(text: str) -> bool:
        folded = text.casefold()
        return any(folded in f or f in folded for f in forgotten)

    doomed = [position for position, kind, text in card.lines if kind != "note" and repeats(text)]
    title = repeats(card.title)
    if not (doomed or title):
        return None
    note = None
    if doomed:
        last = max(position for position, _, _ in card.lines)
        note = (last + 1, f"{len(doomed)} line(s) redacted after forget")
    return Redaction(card.number, doomed, title, note)

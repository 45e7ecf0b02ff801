"""The context block an agent puts in its system prompt, laid out section by section
(what goes into its recalled part is chosen by :mod:`souls.recall.assembly`).

Sections come in a fixed order, stable ones first, so that the prefix stays
byte-identical (and the model's prompt cache warm) until something stable changes.
Every section has a character budget and so does the whole block; a section over its
budget is cut at a line boundary and says so. Same inputs → same bytes → same hash.

Without a SOUL.md the identity section is :data:`BUILTIN_IDENTITY`: what this memory is
and how to use it (linghun's identity card and memory discipline, in a few lines). Goals
have a channel of their own (DESIGN §3.10): their statements, after the summaries,
never competing with recalled memories for the recalled section's slots. With
``[context] map = true`` the four-axis memory map follows them, within ``map_chars``.

Recalled items carry their id with a letter for where it drills down (``memory.read``):
``m`` memories, ``c`` claims and other typed entries, ``g`` goals, ``q`` questions,
``t`` tasks. When the session budget is spent, the recalled section is replaced by a
notice that says so and when recall resumes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import msgspec

from souls.events import HEARD
from souls.results import ContextResult, RecallItem, Section

__all__ = [
    "BEFORE_RECALL",
    "BUILTIN_IDENTITY",
    "STABLE",
    "ContextConfig",
    "assemble",
    "label",
    "room",
]

_CUT = "\n[…cut to fit the budget]"

# The identity of a soul whose user wrote no SOUL.md. Byte-stable: it opens the cached
# prefix of every context. In the spirit of linghun's identity card and memory
# discipline: what the memory is, how to use what it recalls, honesty first.
BUILTIN_IDENTITY = """\
You have a long-term memory of your conversations. This context comes from it: what \
you know in summary, the goals and values people told you, and items recalled for this \
turn, each with its id (m12 a memory, c5 a fact, g3 a goal, q2 a question, t7 a \
task).
- Answer from what memory holds, as it holds it; say which item you rely on when it helps.
- If memory holds nothing on it, say "I don't know" or ask, rather than guess.
- When two items disagree, the more recent one holds; never rely on a superseded fact, \
and check one marked "needs verification" before you rely on it.
- Goals and values are the person's own: let them shape your help, do not recite them.
- Honesty first, then kindness, then usefulness."""


class ContextConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Character budget of the identity section (SOUL.md).
    identity_chars: int = 4000
    # Character budget of the consolidated summary (MEMORY.md).
    summary_chars: int = 6000
    # Character budget of the weekly summary.
    weekly_chars: int = 3000
    # Character budgets of the gut feelings, known gaps and internal signal sections.
    gut_chars: int = 800
    gaps_chars: int = 800
    signal_chars: int = 400
    # Character budget of the due tasks (TASKS.md lines due soon or overdue).
    tasks_chars: int = 800
    # Due tasks shown: those due within this many hours (and every overdue one).
    tasks_hours: float = 24.0
    # Character budget of the goal channel: the statements of the open goals and values
    # (those the query activates first), apart from the recalled memories.
    goals_chars: int = 1200
    # Inject the four-axis memory map (situations, goals, archive, evidence) after the
    # goals, within map_chars characters.
    map: bool = False
    map_chars: int = 2000
    # Character budget of the recalled memories.
    recalled_chars: int = 4000
    # Character budget of a spark (a collision that passed the gate).
    spark_chars: int = 1200
    # Character budget of the whole block; later sections give way first.
    total_chars: int = 16000
    # How many memories a context with a query recalls.
    recall_k: int = 8
    # Session budget: characters of recalled items all contexts of one session may
    # inject within session_window seconds; once spent, recalled items pause (the
    # context says so) until the window has room again. 0 = no cap.
    session_chars: int = 40000
    session_window: float = 3600.0

    def __post_init__(self) -> None:
        budgets = (
            self.identity_chars,
            self.summary_chars,
            self.weekly_chars,
            self.gut_chars,
            self.gaps_chars,
            self.signal_chars,
            self.tasks_chars,
            self.goals_chars,
            self.map_chars,
            self.recalled_chars,
            self.spark_chars,
        )
        if min(budgets) < 0 or self.total_chars < 0 or self.recall_k < 1:
            raise ValueError("budgets must be >= 0 and recall_k >= 1")
        if self.session_chars < 0 or self.session_window <= 0 or self.tasks_hours < 0:
            raise ValueError("session_chars >= 0, session_window > 0 and tasks_hours >= 0")


# The stable sections, first: they change only at reflect, so the prefix they form
# stays byte-identical (and the model's prompt cache warm) in between.
STABLE = ("identity", "summary", "weekly")
# Every section before the recalled items, in order (then come recalled and spark).
BEFORE_RECALL = (
    *STABLE,
    "goals",
    "memory_map",
    "gut_feelings",
    "known_gaps",
    "due_tasks",
    "internal_signal",
)
_HEADERS = {
    "identity": "IDENTITY",
    "summary": "MEMORY",
    "weekly": "THIS WEEK",
    "goals": "GOALS AND VALUES",
    "memory_map": "MEMORY MAP",
    "gut_feelings": "GUT FEELINGS",
    "known_gaps": "KNOWN GAPS",
    "due_tasks": "DUE TASKS",
    "internal_signal": "INTERNAL SIGNAL",
    "spark": "SPARK",
    "recalled": "RECALLED MEMORIES",
}
# The letter of an item's id, by kind; memories (any other kind) are "m".
_LETTERS = {
    "fact": "c",
    "rule": "r",
    "event": "c",
    "commitment": "c",
    "goal": "g",
    "question": "q",
    "task": "t",
}


def label(kind: str, item_id: int) -> str:
    """An item's id as the context shows it, e.g. ``m12`` or ``g3``."""
    return f"{_LETTERS.get(kind, 'm')}{item_id}"


def room(name: str, budget: int) -> int:
    """Characters left for the body of section ``name`` in ``budget`` (its header and
    closing blank line take the rest)."""
    return max(budget - len(_header(name)) - 2, 0)


def assemble(
    config: ContextConfig,
    *,
    identity: str,
    summary: str,
    recalled: Sequence[RecallItem],
    goals: Sequence[RecallItem] = (),
    memory_map: str = "",
    weekly: str = "",
    gut_feelings: str = "",
    known_gaps: str = "",
    due_tasks: str = "",
    internal_signal: str = "",
    spark: str = "",
    paused: str = "",
) -> ContextResult:
    """Build the context block from its parts (pure). ``identity`` empty (no SOUL.md):
    :data:`BUILTIN_IDENTITY`. ``goals``: the goal channel's items, in order, shown
    while they fit. ``paused``, when set, is the notice shown instead of the recalled
    items (the session budget is spent)."""
    sections: list[Section] = []
    remaining = config.total_chars
    for name, body, budget in (
        ("identity", identity.strip() or BUILTIN_IDENTITY, config.identity_chars),
        ("summary", summary, config.summary_chars),
        ("weekly", weekly, config.weekly_chars),
    ):
        section = _text_section(name, body.strip(), min(budget, remaining))
        if section is not None:
            sections.append(section)
            remaining -= section.chars
    goal_section = _items_section("goals", goals, min(config.goals_chars, remaining))
    if goal_section is not None:
        sections.append(goal_section)
        remaining -= goal_section.chars
    for name, body, budget in (
        ("memory_map", memory_map, config.map_chars if config.map else 0),
        ("gut_feelings", gut_feelings, config.gut_chars),
        ("known_gaps", known_gaps, config.gaps_chars),
        ("due_tasks", due_tasks, config.tasks_chars),
        ("internal_signal", internal_signal, config.signal_chars),
    ):
        section = _text_section(name, body.strip(), min(budget, remaining))
        if section is not None:
            sections.append(section)
            remaining -= section.chars
    budget = min(config.recalled_chars, remaining)
    if paused:
        recalled_section = _text_section("recalled", paused.strip(), budget)
    else:
        recalled_section = _items_section("recalled", recalled, budget)
    if recalled_section is not None:
        sections.append(recalled_section)
        remaining -= recalled_section.chars
    spark_section = _text_section("spark", spark.strip(), min(config.spark_chars, remaining))
    if spark_section is not None:
        sections.append(spark_section)
    text = "".join(s.text for s in sections)
    prefix = "".join(s.text for s in sections if s.name in STABLE)
    return ContextResult(
        text=text, sections=sections, hash=_digest(text), prefix_hash=_digest(prefix)
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _header(name: str) -> str:
    return f"## {_HEADERS.get(name, name.upper())}\n"


def _text_section(name: str, body: str, budget: int) -> Section | None:
    if not body:
        return None
    header = _header(name)
    room = budget - len(header) - 2
    if room <= len(_CUT):
        return None
    truncated = len(body) > room
    if truncated:
        body = _cut_at_line(body, room - len(_CUT)) + _CUT
    text = f"{header}{body}\n\n"
    return Section(name=name, text=text, chars=len(text), truncated=truncated)


def _items_section(name: str, items: Sequence[RecallItem], budget: int) -> Section | None:
    header = _header(name)
    used = len(header) + 1
    lines: list[str] = []
    ids: list[int] = []
    labels: list[str] = []
    for item in items:
        heard = HEARD if item.kind == "voice" else ""
        line = f"- [{label(item.kind, item.id)}] {heard}{' '.join(item.text.split())}\n"
        if used + len(line) > budget:
            break
        lines.append(line)
        labels.append(label(item.kind, item.id))
        if labels[-1].startswith("m"):
            ids.append(item.id)
        used += len(line)
    if not lines:
        return None
    text = header + "".join(lines) + "\n"
    return Section(
        name=name,
        text=text,
        chars=len(text),
        truncated=len(lines) < len(items),
        memory_ids=ids,
        items=labels,
    )


def _cut_at_line(body: str, limit: int) -> str:
    cut = body[: max(limit, 0)]
    newline = cut.rfind("\n")
    return cut[:newline] if newline > limit // 2 else cut

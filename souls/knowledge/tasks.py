"""TASKS.md (DESIGN §3.9): checkbox lines with an ``@due(...)`` marker, text in, data out.

A task line is a list item (any indentation) ``- [ ] text``, ``* [x] text`` or ``+ [X] text``.
Only task lines carrying an ``@due(...)`` marker become Tasks; every other line is ignored,
as are markers inside inline code (`` `@due(...)` ``) and every line inside a fenced code
block (```` ``` ```` or ``~~~``), so examples that explain the syntax never fire. A task line
whose marker is malformed (bad date, empty, unclosed, two markers, no text left) is a
TaskError, never silently dropped; so is a fence that is never closed, since it hides every
line after it.

A Task's ``key`` is its identity: the same text (whitespace collapsed) and the same instant
give the same key wherever the line sits or however it is spelled (zone, ``T`` or space).
``TaskList.tasks`` never holds two tasks with one key: the first wins and each later copy is
a TaskError that names the line it duplicates, because the caller uses keys as primary keys.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

__all__ = ["Task", "TaskError", "TaskList", "append_task", "due_time", "parse_tasks", "task_line"]

_FORM = "use @due(YYYY-MM-DD) or @due(YYYY-MM-DD HH:MM[:SS][±HH:MM|Z])"
_TASK = re.compile(r"[ \t]*[-*+] \[([ xX])\][ \t]+(\S.*)")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")
_MARKER = "@due("
_TICKS = re.compile(r"`+")
_DUE = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)"
    r"(?:[Tt ](\d\d):(\d\d)(?::(\d\d))?[ ]?([Zz]|[+-]\d\d:?\d\d)?)?"
)


@dataclass(frozen=True, slots=True)
class Task:
    line: int  # 1-based
    text: str  # without checkbox and marker, whitespace collapsed
    due: float  # Unix seconds, always whole
    done: bool
    key: str  # sha256(f"{text}\n{YYYY-MM-DDTHH:MM:SSZ}") hex, first 16 chars


@dataclass(frozen=True, slots=True)
class TaskError:
    line: int  # 1-based
    source: str  # the offending line, stripped
    problem: str  # one sentence: what is wrong and what to write instead


@dataclass(frozen=True, slots=True)
class TaskList:
    tasks: list[Task]  # file order, keys unique
    errors: list[TaskError]  # file order, except an unclosed fence, which comes last

    def pending(self) -> list[Task]:
        return [task for task in self.tasks if not task.done]


def due_time(value: str) -> float:
    """Unix seconds for the inside of ``@due(...)``; ValueError naming the expected form.

    A date alone is midnight UTC; a date-time without a zone is UTC, never local time.
    """
    return _moment(value).timestamp()


def task_line(text: str, due: float) -> str:
    """``- [ ] {text} @due(2026-12-01T09:00Z)``: the due time in UTC, seconds only when not
    zero (a fraction of a second is dropped), whitespace in ``text`` collapsed, so the line
    parses back to ``text`` and ``due``. ValueError for text that could not round-trip."""
    if "\n" in text or "\r" in text or _MARKER in text:
        raise ValueError("a task's text must be one line without '@due(': remove them")
    words = " ".join(text.split())
    if not words:
        raise ValueError("a task needs text: say what is due")
    try:  # floor raises for NaN and infinities, fromtimestamp outside years 1..9999
        moment = datetime.fromtimestamp(math.floor(due), UTC)
    except (ValueError, OverflowError, OSError):
        raise ValueError(f"due {due!r} is not a Unix time between years 1 and 9999") from None
    stamp = _iso(moment) if moment.second else _iso(moment).removesuffix(":00Z") + "Z"
    return f"- [ ] {words} @due({stamp})"


def append_task(document: str, line: str) -> str:
    """``document`` with ``line`` as its new last line. Every existing byte is kept: at most a
    line ending is added first when the document lacks a final one; the result ends with a
    line ending, ``\\r\\n`` when the document's first line ends that way, else ``\\n``."""
    if "\n" in line or "\r" in line:
        raise ValueError("append_task takes one line: split it and append each")
    eol = "\r\n" if document.split("\n", 1)[0].endswith("\r") and "\n" in document else "\n"
    gap = eol if document and not document.endswith("\n") else ""
    return f"{document}{gap}{line}{eol}"


def parse_tasks(text: str) -> TaskList:
    """Every task with a valid ``@due`` and every malformed one, in file order."""
    tasks: list[Task] = []
    errors: list[TaskError] = []
    first_line: dict[str, int] = {}  # key -> line of the Task that holds it
    fence: tuple[str, int, int, str] | None = None  # char, length, line, source
    # Only "\n" ends a line (with an optional "\r"), as in editors; str.splitlines would also
    # split on \v, \f, U+2028... and shift every line number after them.
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        run = _FENCE.fullmatch(line)
        if fence is not None:
            # Closed by a bare run of the same character, at least as long as the opener.
            if run and run[1][0] == fence[0] and len(run[1]) >= fence[1] and not run[2].strip():
                fence = None
            continue
        if run and not (run[1][0] == "`" and "`" in run[2]):  # ```x``` is inline code
            fence = (run[1][0], len(run[1]), number, line.strip())
            continue
        item = _TASK.fullmatch(line)
        if item is None:
            continue
        try:
            task = _task(number, item[2], done=item[1] != " ")
        except ValueError as exc:
            errors.append(TaskError(number, line.strip(), str(exc)))
            continue
        if task is None:
            continue
        if task.key in first_line:
            problem = (
                f"duplicate of line {first_line[task.key]}: the same text and due time; delete one"
            )
            errors.append(TaskError(number, line.strip(), problem))
            continue
        first_line[task.key] = number
        tasks.append(task)
    if fence is not None:
        problem = (
            f"code fence {fence[0] * fence[1]} is never closed, so every line after it is "
            f"ignored: close it with {fence[0] * fence[1]} on a line of its own"
        )
        errors.append(TaskError(fence[2], fence[3], problem))
    return TaskList(tasks, errors)


def _task(number: int, body: str, *, done: bool) -> Task | None:
    """The Task in a checkbox item's ``body``; None without a marker; ValueError if malformed."""
    masked = _mask_code(body)
    starts = [m.start() for m in re.finditer(re.escape(_MARKER), masked)]
    if not starts:
        return None
    if len(starts) > 1:
        raise ValueError(f"{len(starts)} @due markers on one line: keep one, {_FORM}")
    start = starts[0]
    end = masked.find(")", start)
    if end < 0:
        raise ValueError(f"@due( is not closed: {_FORM}")
    value = body[start + len(_MARKER) : end]
    if not value.strip():
        raise ValueError(f"@due() is empty: {_FORM}")
    moment = _moment(value)
    text = " ".join((body[:start] + " " + body[end + 1 :]).split())
    if not text:
        raise ValueError(f"@due({value.strip()}) has no task text: say what is due before it")
    digest = hashlib.sha256(f"{text}\n{_iso(moment)}".encode()).hexdigest()[:16]
    return Task(number, text, moment.timestamp(), done, digest)


def _mask_code(body: str) -> str:
    """``body`` with inline code spans blanked out; a backtick run opens a span that the next
    run of the same length closes (CommonMark), and a run that is never matched is literal."""
    runs = list(_TICKS.finditer(body))
    i = 0
    while i < len(runs):
        opener = runs[i]
        close = next((j for j in range(i + 1, len(runs)) if len(runs[j][0]) == len(opener[0])), 0)
        if close:
            start, end = opener.start(), runs[close].end()
            body = body[:start] + "\0" * (end - start) + body[end:]
            i = close + 1
        else:
            i += 1
    return body


def _moment(value: str) -> datetime:
    """The instant ``value`` names, in UTC; ValueError naming the expected form."""
    problem = ValueError(f"@due({value.strip()}) is not a date: {_FORM}")
    match = _DUE.fullmatch(value.strip())
    if match is None:
        raise problem
    year, month, day, hour, minute, second, zone = match.groups()
    tz = UTC
    if zone and zone.upper() != "Z":
        hours, minutes = int(zone[1:3]), int(zone[-2:])
        if hours > 23 or minutes > 59:
            raise problem
        offset = timedelta(hours=hours, minutes=minutes)
        tz = timezone(-offset if zone[0] == "-" else offset)
    try:
        parts = (int(hour or 0), int(minute or 0), int(second or 0))
        return datetime(int(year), int(month), int(day), *parts, tzinfo=tz).astimezone(UTC)
    except (ValueError, OverflowError):
        raise problem from None


def _iso(moment: datetime) -> str:
    # By hand, not strftime: %Y does not zero-pad years before 1000 on every platform.
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z"
    )

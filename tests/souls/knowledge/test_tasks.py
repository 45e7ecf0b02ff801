"""TASKS.md parsing, due times, task lines and appending (DESIGN §3.9)."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

import souls.knowledge.tasks
from souls.knowledge.tasks import Task, TaskError, append_task, due_time, parse_tasks, task_line

FORM = "use @due(YYYY-MM-DD) or @due(YYYY-MM-DD HH:MM[:SS][±HH:MM|Z])"

EXAMPLE = """\
# Tasks
- [ ] call the dentist @due(2026-12-01 09:00)
- [x] renew the domain @due(2026-11-20)
* [ ] standup notes @due(2026-12-01T09:00+01:00) #work
  - [ ] nested items count too @due(2026-12-02 18:30:00Z)
- [ ] a task without a due marker is just a task
Some prose lines and headings are ignored.
"""


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> float:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp()


def test_public_surface() -> None:
    assert sorted(souls.knowledge.tasks.__all__) == [
        "Task",
        "TaskError",
        "TaskList",
        "append_task",
        "due_time",
        "parse_tasks",
        "task_line",
    ]


def test_example_document() -> None:
    parsed = parse_tasks(EXAMPLE)
    assert parsed.errors == []
    assert [(t.line, t.text, t.due, t.done) for t in parsed.tasks] == [
        (2, "call the dentist", utc(2026, 12, 1, 9), False),
        (3, "renew the domain", utc(2026, 11, 20), True),
        (4, "standup notes #work", utc(2026, 12, 1, 8), False),
        (5, "nested items count too", utc(2026, 12, 2, 18, 30), False),
    ]
    assert [t.line for t in parsed.pending()] == [2, 4, 5]


def test_key_is_sha256_of_text_and_utc_time() -> None:
    (task,) = parse_tasks("- [ ] standup @due(2026-12-01T10:00+01:00)").tasks
    expected = hashlib.sha256(b"standup\n2026-12-01T09:00:00Z").hexdigest()[:16]
    assert task.key == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-12-01", datetime(2026, 12, 1, tzinfo=UTC)),
        ("2026-12-01 09:00", datetime(2026, 12, 1, 9, tzinfo=UTC)),
        ("2026-12-01T09:00", datetime(2026, 12, 1, 9, tzinfo=UTC)),
        ("2026-12-01 09:00:30", datetime(2026, 12, 1, 9, 0, 30, tzinfo=UTC)),
        ("2026-12-01T09:00Z", datetime(2026, 12, 1, 9, tzinfo=UTC)),
        ("2026-12-01t09:00z", datetime(2026, 12, 1, 9, tzinfo=UTC)),
        ("2026-12-01 09:00 Z", datetime(2026, 12, 1, 9, tzinfo=UTC)),
        ("2026-12-01T09:00+01:00", datetime(2026, 12, 1, 9, tzinfo=timezone(timedelta(hours=1)))),
        ("2026-12-01T09:00+0100", datetime(2026, 12, 1, 9, tzinfo=timezone(timedelta(hours=1)))),
        (
            "2026-12-01 00:15:00-05:30",
            datetime(2026, 12, 1, 0, 15, tzinfo=timezone(-timedelta(hours=5, minutes=30))),
        ),
        ("  2026-12-01  ", datetime(2026, 12, 1, tzinfo=UTC)),
    ],
)
def test_due_time_forms(value: str, expected: datetime) -> None:
    assert due_time(value) == expected.timestamp()


def test_zone_crosses_midnight() -> None:
    # 00:30 at +01:00 is 23:30 UTC the day before.
    assert due_time("2026-12-01T00:30+01:00") == utc(2026, 11, 30, 23, 30)


def test_no_zone_is_utc_not_local_time() -> None:
    assert due_time("2026-12-01") == utc(2026, 12, 1)
    assert due_time("2026-12-01 09:00") == utc(2026, 12, 1, 9)


@pytest.mark.parametrize(
    "value",
    [
        "2026-13-01",
        "2026-02-30",
        "2026-12-01 25:00",
        "2026-12-01 09:60",
        "2026-12-01 09:00:61",
        "2026-12-01 9:00",
        "2026-12-01T09:00+24:00",
        "2026-12-01T09:00+01:75",
        "2026-12-01Z",
        "2026-12-01 09:00.5",
        "2026/12/01",
        "tomorrow",
        "",
    ],
)
def test_due_time_rejects(value: str) -> None:
    with pytest.raises(ValueError, match=r"is not a date: use @due\(YYYY-MM-DD\)"):
        due_time(value)


def test_bad_month_message() -> None:
    with pytest.raises(
        ValueError, match=f"^{re.escape(f'@due(2026-13-01) is not a date: {FORM}')}$"
    ):
        due_time("2026-13-01")


BAD = """\
# Tasks
- [ ] bad month @due(2026-13-01)
- [ ] bad time @due(2026-12-01 25:00)
- [ ] unclosed @due(2026-12-01 09:00
- [ ] empty @due()
- [ ] blank @due(   )
- [ ] two @due(2026-12-01) and @due(2026-12-02)
- [ ] @due(2026-12-01)
- [ ] fine @due(2026-12-01)
"""


def test_errors_name_line_source_and_fix() -> None:
    parsed = parse_tasks(BAD)
    assert [t.line for t in parsed.tasks] == [9]
    assert parsed.errors == [
        TaskError(2, "- [ ] bad month @due(2026-13-01)", f"@due(2026-13-01) is not a date: {FORM}"),
        TaskError(
            3,
            "- [ ] bad time @due(2026-12-01 25:00)",
            f"@due(2026-12-01 25:00) is not a date: {FORM}",
        ),
        TaskError(4, "- [ ] unclosed @due(2026-12-01 09:00", f"@due( is not closed: {FORM}"),
        TaskError(5, "- [ ] empty @due()", f"@due() is empty: {FORM}"),
        TaskError(6, "- [ ] blank @due(   )", f"@due() is empty: {FORM}"),
        TaskError(
            7,
            "- [ ] two @due(2026-12-01) and @due(2026-12-02)",
            f"2 @due markers on one line: keep one, {FORM}",
        ),
        TaskError(
            8,
            "- [ ] @due(2026-12-01)",
            "@due(2026-12-01) has no task text: say what is due before it",
        ),
    ]


def test_prose_and_inline_code_are_not_markers() -> None:
    doc = (
        "Write `@due(2026-12-01)` after a task; @due(2026-13-99) in prose is ignored.\n"
        "- [ ] explain `@due(...)` to the team\n"
        "- [ ] fix ``code with ` and @due(bad)`` @due(2026-12-01)\n"
        "- [ ] an unmatched ` backtick @due(2026-12-02)\n"
        "> - [ ] quoted @due(2026-13-01)\n"
        "1. [ ] numbered @due(2026-13-01)\n"
        "-[ ] no space @due(2026-13-01)\n"
        "- [] no box @due(2026-13-01)\n"
        "- [y] other mark @due(2026-13-01)\n"
    )
    parsed = parse_tasks(doc)
    assert parsed.errors == []
    assert [(t.line, t.text) for t in parsed.tasks] == [
        (3, "fix ``code with ` and @due(bad)``"),
        (4, "an unmatched ` backtick"),
    ]


def test_fenced_code_is_ignored_and_an_unclosed_fence_is_an_error() -> None:
    doc = (
        "```markdown\n"
        "- [ ] example @due(2026-13-01)\n"
        "```\n"
        "~~~~\n"
        "- [ ] example @due(2026-12-01)\n"
        "~~~\n"
        "~~~~~\n"
        "- [ ] real @due(2026-12-01)\n"
        "  ```\n"
        "- [ ] hidden @due(2026-12-02)\n"
    )
    parsed = parse_tasks(doc)
    assert [t.text for t in parsed.tasks] == ["real"]
    (error,) = parsed.errors
    assert (error.line, error.source) == (9, "```")
    assert "never closed" in error.problem


def test_inline_triple_backticks_do_not_open_a_fence() -> None:
    parsed = parse_tasks("```x``` is code\n- [ ] after @due(2026-12-01)\n")
    assert [t.text for t in parsed.tasks] == ["after"]
    assert parsed.errors == []


def test_indentation_and_markers() -> None:
    doc = "\t- [X] tabbed @due(2026-12-01)\n      + [ ] deep @due(2026-12-01)\n"
    parsed = parse_tasks(doc)
    assert [(t.line, t.text, t.done) for t in parsed.tasks] == [
        (1, "tabbed", True),
        (2, "deep", False),
    ]


def test_crlf_line_endings() -> None:
    crlf = EXAMPLE.replace("\n", "\r\n")
    assert parse_tasks(crlf) == parse_tasks(EXAMPLE)
    (error,) = parse_tasks("x\r\n- [ ] bad @due(2026-13-01)\r\n").errors
    assert error == TaskError(
        2, "- [ ] bad @due(2026-13-01)", f"@due(2026-13-01) is not a date: {FORM}"
    )


def test_line_numbers_count_only_newlines() -> None:
    (task,) = parse_tasks("a\x0bb\u2028c\n- [ ] t @due(2026-12-01)").tasks
    assert task.line == 2


def test_key_stable_across_whitespace_spelling_and_place() -> None:
    a = parse_tasks("- [ ] call   the dentist @due(2026-12-01 09:00)\n").tasks[0]
    b = parse_tasks("\n\n  * [x]\tcall the\tdentist    @due( 2026-12-01T10:00+01:00 )  ").tasks[0]
    assert a.text == b.text == "call the dentist"
    assert a.key == b.key
    moved = parse_tasks("- [ ] call the dentist @due(2026-12-01 09:01)").tasks[0]
    assert moved.key != a.key
    renamed = parse_tasks("- [ ] call the doctor @due(2026-12-01 09:00)").tasks[0]
    assert renamed.key != a.key


def test_duplicates_keep_the_first_and_report_the_rest() -> None:
    doc = (
        "- [ ] water plants @due(2026-12-01)\n"
        "- [x] water  plants @due(2026-12-01T00:00Z)\n"
        "- [ ] water plants @due(2026-12-02)\n"
        "- [ ] water plants @due(2026-12-01 01:00+01:00)\n"
    )
    parsed = parse_tasks(doc)
    assert [t.line for t in parsed.tasks] == [1, 3]
    assert [(e.line, e.problem.split(":")[0]) for e in parsed.errors] == [
        (2, "duplicate of line 1"),
        (4, "duplicate of line 1"),
    ]
    assert len({t.key for t in parsed.tasks}) == len(parsed.tasks)


def test_checkbox_without_marker_is_neither_task_nor_error() -> None:
    parsed = parse_tasks("- [ ] just a task\n- [ ]\n- [ ]   \n")
    assert parsed.tasks == []
    assert parsed.errors == []


def test_task_line_format() -> None:
    assert task_line("call  the dentist", utc(2026, 12, 1, 9)) == (
        "- [ ] call the dentist @due(2026-12-01T09:00Z)"
    )
    assert task_line("x", utc(2026, 12, 1, 9, 0, 30) + 0.9) == "- [ ] x @due(2026-12-01T09:00:30Z)"
    assert task_line("x", utc(999, 1, 2)) == "- [ ] x @due(0999-01-02T00:00Z)"


@pytest.mark.parametrize("text", ["two\nlines", "cr\rline", "has @due(2026-12-01)", "", "  \t"])
def test_task_line_rejects_text(text: str) -> None:
    with pytest.raises(ValueError, match="task"):
        task_line(text, utc(2026, 12, 1))


@pytest.mark.parametrize("due", [float("nan"), float("inf"), 1e20])
def test_task_line_rejects_impossible_times(due: float) -> None:
    with pytest.raises(ValueError, match="not a Unix time"):
        task_line("x", due)


MINUTES = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 12, 31, 23, 59)
).map(lambda d: d.replace(second=0, microsecond=0, tzinfo=UTC))
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1).filter(
    lambda s: s.split() and "@due(" not in s and "\n" not in s and "\r" not in s
)


@given(MINUTES, TEXT)
def test_task_line_round_trips(moment: datetime, text: str) -> None:
    line = task_line(text, moment.timestamp())
    (task,) = parse_tasks(line).tasks
    assert task.due == moment.timestamp()
    assert task.text == " ".join(text.split())
    assert due_time(line[line.index("@due(") + 5 : -1]) == moment.timestamp()


@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1)))
def test_due_time_agrees_with_datetime_in_any_zone(moment: datetime) -> None:
    moment = moment.replace(microsecond=0)
    for hours, minutes in [(1, 0), (-5, -30), (14, 0), (-12, 0)]:
        aware = moment.replace(tzinfo=timezone(timedelta(hours=hours, minutes=minutes)))
        assert due_time(aware.isoformat()) == aware.timestamp()


def test_append_task() -> None:
    line = "- [ ] new @due(2026-12-01T09:00Z)"
    assert append_task("", line) == line + "\n"
    assert append_task("# Tasks\n", line) == f"# Tasks\n{line}\n"
    assert append_task("# Tasks", line) == f"# Tasks\n{line}\n"
    assert append_task("- [ ] a\n\n", line) == f"- [ ] a\n\n{line}\n"
    assert append_task("# T\r\n- [ ] a", line) == f"# T\r\n- [ ] a\r\n{line}\r\n"
    with pytest.raises(ValueError, match="one line"):
        append_task("", "a\nb")


# Markdown-ish documents: list items, broken markers, blank lines, both line endings.
PIECES = ["\n", "\r\n", " ", "\t", "- ", "[ ]", "[x]", "x", "#", "@due(", ")", "2026-12-01", "é"]
DOCUMENTS = st.lists(st.sampled_from(PIECES)).map("".join)


@given(st.text())
def test_append_task_never_changes_existing_text(document: str) -> None:
    line = "- [ ] x @due(2026-12-01T09:00Z)"
    result = append_task(document, line)
    assert result.startswith(document)
    assert result.endswith((f"\n{line}\n", f"\n{line}\r\n")) or result == f"{line}\n"


@given(DOCUMENTS)
def test_append_task_keeps_every_byte(document: str) -> None:
    line = task_line("appended", utc(2026, 12, 1, 9))
    result = append_task(document, line)
    assert result.startswith(document)
    tail = result[len(document) :]
    assert tail.rstrip("\r\n") in (line, "\n" + line, "\r\n" + line)
    assert result.endswith("\n")
    (last,) = [t for t in parse_tasks(result).tasks if t.text == "appended"]
    assert last.line == result.count("\n")
    assert (last.due, last.done) == (utc(2026, 12, 1, 9), False)


def test_appended_task_parses_back_to_the_same_task() -> None:
    before = parse_tasks(EXAMPLE)
    after = parse_tasks(append_task(EXAMPLE.rstrip("\n"), task_line("pay rent", utc(2027, 1, 1))))
    assert after.tasks[:-1] == before.tasks
    assert after.tasks[-1] == Task(
        line=8,
        text="pay rent",
        due=utc(2027, 1, 1),
        done=False,
        key=hashlib.sha256(b"pay rent\n2027-01-01T00:00:00Z").hexdigest()[:16],
    )

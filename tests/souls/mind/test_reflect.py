# ruff: noqa: RUF001  (full-width punctuation and the multiplication sign are the point)
from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from souls.mind.reflect import ExtractiveReflector, Observation, Reflector

REFLECTOR = ExtractiveReflector()
FAILURES, QUESTIONS, NOTABLE = "## Failures and alarms", "## Open questions", "## Notable"


def obs(
    id: int,
    text: str,
    salience: float = 0.5,
    surprise: float = 0.5,
    kind: str = "message",
    sender: str | None = None,
) -> Observation:
    return Observation(
        id=id, text=text, salience=salience, surprise=surprise, kind=kind, sender=sender, ts=id
    )


def section(summary: str, heading: str) -> list[str]:
    """The lines under ``heading`` (empty if the heading is absent)."""
    lines = summary.splitlines()
    if heading not in lines:
        return []
    body = lines[lines.index(heading) + 1 :]
    end = next((i for i, line in enumerate(body) if line.startswith("#")), len(body))
    return body[:end]


def letters(n: int) -> str:
    """A digit-free name per number: digits would make the texts near-duplicates."""
    return "".join("abcdefghij"[int(d)] for d in str(n))


def summarise(previous: str, observations: list[Observation], budget: int = 2000) -> str:
    return REFLECTOR.summarise(previous, observations, budget)


def test_is_a_reflector() -> None:
    reflector: Reflector = REFLECTOR
    assert reflector.name == "extractive"


async def test_reflect_is_summarise() -> None:
    batch = [obs(1, "the build failed"), obs(2, "why is it red?")]
    assert await REFLECTOR.reflect("", batch, 500) == summarise("", batch, 500)


def test_layout() -> None:
    summary = summarise(
        "",
        [
            obs(1, "deploy failed: database migration timeout", 0.8, 0.9),
            obs(2, "when do we migrate the billing db?", 0.9, 0.5),
            obs(3, "staging moved to eu-west-1", 0.5, 0.6),
        ],
    )
    assert summary == (
        "## Failures and alarms\n"
        "- deploy failed: database migration timeout [m1]\n"
        "## Open questions\n"
        "- when do we migrate the billing db? [m2]\n"
        "## Notable\n"
        "- staging moved to eu-west-1 [m3]\n"
    )


def test_deterministic() -> None:
    batch = [
        obs(i, f"note {letters(i)} about {letters(i * 7)}", i % 10 / 10, 0.3) for i in range(300)
    ]
    batch += [obs(1000 + i, f"job {letters(i)} failed?", 0.7, 0.2) for i in range(20)]
    first = summarise("", batch, 1500)
    assert first == summarise("", batch, 1500)
    assert first == ExtractiveReflector().summarise("", batch, 1500)
    assert summarise(first, batch[:50], 1500) == summarise(first, batch[:50], 1500)


def test_a_thousand_repeats_collapse_into_one_line() -> None:
    summary = summarise("", [obs(i, "deploy ok", 0.2, 0.1, "heartbeat") for i in range(1, 1001)])
    assert summary == "## Notable\n- deploy ok (×1000) [m1, m1000]\n"


def test_near_duplicates_collapse_and_show_the_latest_text() -> None:
    summary = summarise("", [obs(1, "Deploy OK"), obs(2, "deploy ok."), obs(3, "deploy ok, again")])
    assert section(summary, NOTABLE) == ["- deploy ok, again [m3]", "- deploy ok. (×2) [m1, m2]"]
    summary = summarise("", [obs(1, "backup 17 done"), obs(2, "backup 18 done")])
    assert section(summary, NOTABLE) == ["- backup 18 done (×2) [m1, m2]"]


def test_a_later_failure_is_listed_under_failures() -> None:
    routine = summarise("", [obs(i, "deploy ok", 0.2, 0.1, "heartbeat") for i in range(1, 1001)])
    summary = summarise(routine, [obs(1001, "deploy failed: database migration timeout", 0.8, 0.9)])
    assert section(summary, FAILURES) == ["- deploy failed: database migration timeout [m1001]"]
    assert section(summary, NOTABLE) == ["- deploy ok (×1000) [m1, m1000]"]
    assert summary.index(FAILURES) < summary.index(NOTABLE)


def test_previous_lines_persist_and_merge() -> None:
    first = summarise(
        "",
        [obs(1, "deploy ok", 0.2), obs(2, "the db is slow again"), obs(3, "who owns billing?")],
    )
    second = summarise(first, [obs(10, "deploy ok", 0.2), obs(11, "cache hit rate is 93%", 0.9)])
    assert section(second, QUESTIONS) == ["- who owns billing? [m3]"]
    assert section(second, FAILURES) == []
    assert "- deploy ok (×2) [m1, m10]" in section(second, NOTABLE)
    assert "- the db is slow again [m2]" in section(second, NOTABLE)
    assert section(second, NOTABLE)[0] == "- cache hit rate is 93% [m11]"


def test_own_output_reparses_to_itself() -> None:
    first = summarise(
        "",
        [
            obs(1, "disk error on sda", 0.8),
            obs(2, "disk error on sda", 0.8),
            obs(3, "are backups encrypted?", 0.9),
            obs(4, "x" * 5000, 0.7),
            *(obs(10 + i, f"note {letters(i)}", i / 20) for i in range(20)),
        ],
        900,
    )
    blank = [obs(99, "   ")]  # forces a full parse and re-render
    assert summarise(first, blank, 900) == first


def test_previous_lines_give_way_to_important_news_but_not_to_routine() -> None:
    first = summarise("", [obs(i, f"fact {letters(i)} is true", 0.5, 0.5) for i in range(1, 8)])
    old = section(first, NOTABLE)
    assert len(old) == 7
    budget = len(first)  # no room for anything new without dropping something

    routine = [obs(100 + i, f"tick {letters(i)}", 0.2, 0.1, "heartbeat") for i in range(50)]
    assert summarise(first, routine, budget) == first

    news = [obs(200 + i, f"news {letters(i)} matters", 0.9, 0.9, "dm") for i in range(3)]
    moved = section(summarise(first, news, budget), NOTABLE)
    assert moved[:3] == [f"- news {letters(i)} matters [m{200 + i}]" for i in (2, 1, 0)]
    kept = moved[3:]
    assert 0 < len(kept) < len(old)
    assert kept == old[: len(kept)]  # the best of the old lines stay, in their order


def test_failures_and_questions_survive_a_flood() -> None:
    budget = 1000
    important = [
        obs(1, "payment worker crashed with exit code 137", 0.8, 0.7),
        obs(2, "why does the nightly export skip Sundays?", 0.5, 0.4),
        obs(3, "数据库迁移超时", 0.8, 0.6),
    ]
    flood = [obs(10 + i, f"routine update {letters(i)} done", 0.9, 1.0) for i in range(2000)]
    summary = summarise("", [*important, *flood], budget)
    assert len(summary) <= budget
    assert section(summary, FAILURES) == [
        "- payment worker crashed with exit code 137 [m1]",
        "- 数据库迁移超时 [m3]",
    ]
    assert section(summary, QUESTIONS) == ["- why does the nightly export skip Sundays? [m2]"]
    assert section(summary, NOTABLE)  # the rest of the budget goes to the flood

    # And in the next reflect, where they are previous lines scored below the flood.
    again = summarise(
        summary,
        [obs(5000 + i, f"status {letters(i)} green", 1.0, 1.0) for i in range(2000)],
        budget,
    )
    assert section(again, FAILURES) == section(summary, FAILURES)
    assert section(again, QUESTIONS) == section(summary, QUESTIONS)


def test_chinese() -> None:
    summary = summarise(
        "",
        [
            obs(1, "部署失败：数据库迁移超时", 0.8, 0.9),
            obs(2, "我们什么时候迁移计费数据库？", 0.9, 0.6),
            obs(3, "今天部署成功", 0.5, 0.5),
            obs(4, "今天部署成功。", 0.5, 0.5),
            obs(5, "这个接口能用吗", 0.5, 0.5),
        ],
    )
    assert section(summary, FAILURES) == ["- 部署失败：数据库迁移超时 [m1]"]
    assert section(summary, QUESTIONS) == [
        "- 我们什么时候迁移计费数据库？ [m2]",
        "- 这个接口能用吗 [m5]",
    ]
    assert section(summary, NOTABLE) == ["- 今天部署成功。 (×2) [m3, m4]"]


def test_markdown_written_by_someone_else_is_merged() -> None:
    previous = (
        "# Memory\n\n"
        "The team runs Postgres 16 [m3]\n"
        "* Alice owns billing\n"
        "## Incidents\n"
        "1. the backup job misbehaved twice [m9][m12]\n"
        "## Misc\n"
        "- Bob asked: can we drop the v1 API? [m20, m21]\n"
    )
    summary = summarise(previous, [obs(30, "lunch menu posted", 0.3, 0.2)])
    assert section(summary, FAILURES) == ["- the backup job misbehaved twice [m9, m12]"]
    assert section(summary, QUESTIONS) == ["- Bob asked: can we drop the v1 API? [m20, m21]"]
    assert section(summary, NOTABLE) == [
        "- The team runs Postgres 16 [m3]",
        "- Alice owns billing",
        "- lunch menu posted [m30]",
    ]


def test_custom_alarm_keywords() -> None:
    reflector = ExtractiveReflector(alarm_keywords=["kaputt"])
    summary = reflector.summarise(
        "", [obs(1, "der Server ist kaputt"), obs(2, "the build failed")], 500
    )
    assert section(summary, FAILURES) == ["- der Server ist kaputt [m1]"]
    assert section(summary, NOTABLE) == ["- the build failed [m2]"]


def test_long_and_multiline_texts_become_one_short_line() -> None:
    summary = summarise("", [obs(1, "first line\n\nsecond\tline " + "y" * 8000)], 1000)
    (line,) = section(summary, NOTABLE)
    assert line.startswith("- first line second line yyy")
    assert line.endswith("… [m1]")
    assert len(line) < 260


def test_empty_input() -> None:
    assert summarise("", []) == ""
    assert summarise("", [obs(1, " \n ")]) == ""
    previous = "## Notable\n- something we knew [m4]\n"
    assert summarise(previous, []) == previous
    assert summarise(previous, [], 0) == ""
    # A previous summary over the budget is cut by priority, not passed through.
    long = "".join(f"- fact {letters(i)} [m{i}]\n" for i in range(100))
    cut = summarise(long, [], 300)
    assert 0 < len(cut) <= 300
    assert cut.startswith("## Notable\n- fact a [m0]\n")


def test_runs_on_a_thousand_observations() -> None:
    words = "deploy db cache error node why queue 数据库 失败 billing latency ok".split()
    batch = [
        obs(
            i,
            " ".join(words[(i * k) % len(words)] for k in range(1, 2 + i % 9)) + "?" * (i % 5 == 0),
            (i * 37 % 100) / 100,
            (i * 53 % 100) / 100,
        )
        for i in range(1000)
    ]
    started = time.perf_counter()
    summary = summarise("", batch, 4000)
    elapsed = time.perf_counter() - started
    print(f"extractive reflect over 1000 observations: {elapsed * 1000:.1f} ms")
    assert 0 < len(summary) <= 4000
    assert summary.startswith(FAILURES)


observations = st.lists(
    st.builds(
        Observation,
        id=st.integers(0, 10**9),
        text=st.one_of(
            st.text(max_size=300),
            st.sampled_from(["deploy ok", "deploy failed", "why?", "数据库超时", "(×3) [m1]"]),
        ),
        salience=st.floats(0, 1),
        surprise=st.floats(0, 1),
        kind=st.sampled_from(["message", "dm", "heartbeat"]),
        sender=st.none() | st.text(max_size=10),
        ts=st.floats(0, 2e9),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(observations, observations, st.text(max_size=2000), st.integers(0, 3000))
def test_budget_is_never_exceeded(
    first: list[Observation], second: list[Observation], foreign: str, budget: int
) -> None:
    previous = summarise("", first, max(budget, 200))
    for prior in (previous, foreign, ""):
        summary = summarise(prior, second, budget)
        assert len(summary) <= budget
        assert summary == summarise(prior, second, budget)
        assert summary in ("", prior) or summary.endswith("\n")

"""Goals and values out of conversation, end to end through the real daemon: six weeks
of messy English and Chinese chat (tests/e2e/goal_chat.py) give exactly the goals a
careful reader takes from it, in their states, held by the person behind each account;
a budget question calls up the money goal; the context shows goals in a channel of their
own; a soul without SOUL.md opens its context with the built-in identity; the memory map
joins the context when asked."""

from __future__ import annotations

import datetime as dt
import json

from .goal_chat import EXPECTED, START, TURNS
from .harness import Home, StartSoupd


def _ts(day: int, hour: int) -> str:
    start = dt.datetime.fromisoformat(START.replace("Z", "+00:00"))
    return (start + dt.timedelta(days=day, hours=hour)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_six_weeks_of_chat_give_the_goals_a_reader_would_take(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    linked = False
    for n, (day, hour, channel, sender, kind, text) in enumerate(TURNS):
        if day >= 7 and not linked:  # after the first week, mel is known to be Melanie
            link = soupd_home.cli("person", "link", "ada", "Melanie", "telegram:mel")
            assert link.returncode == 0, link.stderr
            linked = True
        fields = {"kind": kind, "channel": channel, "ts": _ts(day, hour), "ref": f"t{n}"}
        if kind != "assistant":
            fields["sender"] = sender
        daemon.push("ada", text, **fields)

    listed = json.loads(soupd_home.cli("--json", "goals", "ada").stdout)["goals"]
    got = {(g["speaker"], g["statement"], g["state"]) for g in listed}
    print(
        "\n".join(
            f"{g['speaker']:8} [{g['state']:9}] {g['domain']:9} {g['statement']}" for g in listed
        )
    )
    assert got == EXPECTED
    shown = soupd_home.cli("goals", "ada").stdout
    assert "[achieved] p2 health: run a half marathon (this year)  (held by Melanie)" in shown
    by_statement = {g["statement"]: g for g in listed}
    marathon = by_statement["run a half marathon (this year)"]
    notes = [n["text"] for n in marathon["progress"]]
    assert notes == [
        "My goal this year is to run a half marathon",
        "Honestly I've been training every morning for the half marathon",
        "I finally ran it!",  # each note is the sentence the change came from
    ]
    assert by_statement["明年买房"]["domain"] == "money"

    # The context: goals in their own channel, statement only; closed goals never.
    context = daemon.result("context", {"soul": "ada", "query": "what should Melanie do next"})
    (goals,) = [s for s in context["sections"] if s["name"] == "goals"]
    assert "Melanie: believe in respecting people's privacy" in goals["text"]
    assert "half marathon" not in goals["text"]
    assert "明年买房" not in goals["text"]
    assert "priority" not in goals["text"]
    assert "when:" not in goals["text"]
    recalled = [s for s in context["sections"] if s["name"] == "recalled"]
    assert all(not any(i.startswith("g") for i in s["items"]) for s in recalled)
    # No SOUL.md: the built-in identity opens it, the same bytes every time.
    assert context["text"].startswith("## IDENTITY\nYou have a long-term memory")
    again = daemon.result("context", {"soul": "ada", "query": "something else entirely"})
    assert again["prefix_hash"] == context["prefix_hash"]
    why = soupd_home.cli("why", "ada", context["hash"]).stdout
    assert "goal: goal channel" in why


def test_a_budget_question_calls_up_the_money_goal_and_mel_is_melanie(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada", "[context]\nmap = true\nmap_chars = 900\n")
    daemon = start_soupd()
    at = "2026-03-02T09:00:00Z"
    daemon.push("ada", "lol ok. I'm saving for a house", sender="mel", channel="telegram", ts=at)
    items = daemon.recall("ada", "How should I budget this month?")
    (goal,) = [i for i in items if i["kind"] == "goal"]
    assert goal["text"].endswith("saving for a house")
    assert goal["via"] == "goal:domain"

    # mel is Melanie: a link moves the goal to her, and her own words merge into it.
    linked = daemon.result(
        "person.link", {"soul": "ada", "person": "Melanie", "identity": "telegram:mel"}
    )
    assert linked["goals_moved"] == 1
    stated = daemon.result(
        "goal.update",
        {"soul": "ada", "action": "new", "statement": "save for a house", "speaker": "mel",
         "priority": 2},
    )  # fmt: skip
    assert (stated["outcome"], stated["goal"]["speaker"]) == ("merged", "Melanie")
    daemon.push("ada", "we gave up on the house, prices are insane", sender="Melanie",
                channel="slack", ts="2026-04-01T09:00:00Z")  # fmt: skip
    (only,) = daemon.result("goals", {"soul": "ada"})["goals"]
    assert (only["speaker"], only["state"]) == ("Melanie", "abandoned")

    # [context] map = true: the four axes within map_chars, topics that are words.
    context = daemon.result("context", {"soul": "ada", "query": "house"})
    (drawn,) = [s for s in context["sections"] if s["name"] == "memory_map"]
    assert drawn["chars"] <= 900
    assert "SITUATIONS" in drawn["text"]
    assert "GOALS" in drawn["text"]
    assert " lol" not in drawn["text"]

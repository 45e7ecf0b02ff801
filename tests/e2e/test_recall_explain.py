"""recall with ``explain``: over the real socket and from the CLI, each item says why it
ranked (DESIGN §3.5): BM25 terms in its text and its neighbouring turns, and the cues."""

from __future__ import annotations

from typing import Any

from e2e.harness import Daemon

TURNS = [
    ("Bo", "Hey Ada, what have you been researching lately?"),
    ("Ada", "Adoption agencies, mostly. I want a family of my own."),
    ("Bo", "That is wonderful news!"),
]


def push_conversation(soupd: Daemon) -> None:
    for n, (sender, text) in enumerate(TURNS, start=1):
        pushed = soupd.push(
            "alpha",
            text,
            sender=sender,
            session="chat-1",
            ref=f"D1:{n}",
            ts="2023-05-08T13:56:00",
        )
        assert pushed["status"] == "stored"


def test_explain_over_the_socket(soupd: Daemon) -> None:
    push_conversation(soupd)

    plain = soupd.recall("alpha", "What has Ada been researching?")
    items: list[dict[str, Any]] = soupd.recall(
        "alpha", "What has Ada been researching?", explain=True
    )

    # Unasked, no explanation is on the wire; asked, the same items come with one.
    assert all("explain" not in item for item in plain)
    assert [i["id"] for i in items] == [i["id"] for i in plain]
    # Ada's answer is found through the question before it, and she is named.
    (answer,) = [item for item in items if item["refs"] == ["D1:2"]]
    why = answer["explain"]
    (research,) = [t for t in why["terms"] if t["term"] == "research"]
    assert research["text"] == 0
    assert research["context"] == 1
    assert why["context"] > 0
    assert why["speaker"] > 1
    assert any("said by Ada" in reason for reason in why["reasons"])
    assert answer["score"] == round(why["bm25"] * why["speaker"] * why["time"], 6)


def test_explain_from_the_cli(soupd: Daemon) -> None:
    push_conversation(soupd)

    done = soupd.home.cli("recall", "alpha", "What has Ada been researching?", "--explain")

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    (answer,) = [n for n, line in enumerate(lines) if line.startswith("[m2]")]
    assert "refs: D1:2" in lines[answer]
    reasons = lines[answer + 1 : answer + 4]
    assert reasons[0].strip().startswith("relevance ")
    assert "x speaker 1.6" in reasons[0]  # the parts of the relevance
    assert reasons[1].strip().startswith("bm25 ")
    assert "(1x in neighbouring turns)" in reasons[1]
    assert "said by Ada" in reasons[2]

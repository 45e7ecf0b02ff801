"""Cards end to end: a reflect crystallises one; cards by hand, proteins, notes; the
cards/ folder checked against the database."""

from __future__ import annotations

import html
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest
from conversations import turns

from .harness import Daemon, Home, StartSoupd

QUESTION = "how often should we rotate the api keys?"


def ten_cards(daemon: Daemon, *, title: str = "", extra: str = "", question: bool = True) -> None:
    """Ten cards in soul ada (the pool's minimum): "vault N holds secrets" (plus ``extra``
    as a second conclusion), each asking QUESTION when ``question``."""
    for n in range(10):
        conclusions = [f"vault {n} holds secrets", *([extra] if extra else [])]
        card: dict[str, object] = {"soul": "ada", "conclusions": conclusions}
        if title:
            card["title"] = title.format(n=n)
        if question:
            card["questions"] = [QUESTION]
        daemon.result("card.add", card)


def test_reflects_crystallise_cards_and_the_folder_agrees(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    pushed = daemon.result(
        "event.push", {"soul": "ada", "text": "deploy failed: database migration timeout"}
    )
    assert pushed["reflected"]
    listed = daemon.result("cards", {"soul": "ada", "strict": True})
    assert listed["problems"] == []
    (card,) = listed["cards"]
    assert card["source"] == "reflect"
    assert card["conclusions"] == ["deploy failed: database migration timeout"]
    markdown = (soupd_home.soul_dir("ada") / "cards" / f"{card['number']:04d}.md").read_text()
    assert "deploy failed: database migration timeout" in markdown

    manual = daemon.result(
        "card.add",
        {
            "soul": "ada",
            "title": "rollbacks",
            "conclusions": ["roll back before debugging"],
            "questions": ["can rollbacks be automatic?"],
            "tags": ["deploy"],
        },
    )
    protein = daemon.result(
        "card.synthesize",
        {
            "soul": "ada",
            "title": "deploy safety",
            "conclusions": ["budget time, then roll back"],
            "members": [card["number"], manual["number"]],
        },
    )
    noted = daemon.result(
        "card.note", {"soul": "ada", "number": manual["number"], "text": "yes, since v2"}
    )
    assert protein["kind"] == "protein"
    assert protein["members"] == [card["number"], manual["number"]]
    assert noted["conclusions"] == manual["conclusions"]
    assert noted["notes"] == ["yes, since v2"]
    strict = soupd_home.cli("cards", "ada", "--strict")
    assert strict.returncode == 0, strict.stdout + strict.stderr
    assert "deploy safety" in strict.stdout

    (soupd_home.soul_dir("ada") / "cards" / f"{manual['number']:04d}.md").write_text("oops")
    broken = soupd_home.cli("cards", "ada", "--strict")
    assert broken.returncode == 3
    assert "differs from card" in broken.stdout
    bad = daemon.call("card.synthesize", {"soul": "ada", "conclusions": ["x"], "members": [1]})
    assert bad["error"]["code"] == "invalid_params"
    unknown = daemon.call("card.note", {"soul": "ada", "number": 999, "text": "hi"})
    assert unknown["error"]["code"] == "not_found"
    assert "999" in unknown["error"]["message"]
    restarts = {s["name"]: s["restarts"] for s in daemon.result("soul.list")["souls"]}
    assert restarts == {"ada": 0}  # bad input never crashed the soul


def test_lightning_the_gate_and_the_ledger(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    early = daemon.call("lightning", {"soul": "ada", "topic": "anything"})
    assert early["error"]["code"] == "not_enough_cards"
    ten_cards(daemon, title="keys {n}")

    silent = daemon.result("lightning", {"soul": "ada", "topic": "zebra crossing", "seed": 7})
    assert silent["presented"] is False
    assert silent["criterion"] is None
    assert len(silent["verdicts"]) == 4
    assert "SPARK" not in daemon.result("context", {"soul": "ada"})["text"]

    topic = "we rotate the api keys every month"
    spark = daemon.result("lightning", {"soul": "ada", "topic": topic, "seed": 7})
    assert spark["cards"] == silent["cards"]  # same seed, same pool: same draw
    assert len(spark["cards"]) == 3
    assert spark["wildcard"] == spark["cards"][-1]
    assert spark["presented"] is True
    assert spark["criterion"] == "answers_question"
    assert spark["reproduce"] == f"soupd lightning ada --as-of {spark['draw']}"
    first = daemon.result("context", {"soul": "ada"})
    again = daemon.result("context", {"soul": "ada"})
    assert "## SPARK\n(answers_question)" in first["text"]
    assert "SPARK" not in again["text"]  # shown once

    ledger = daemon.result("ledger", {"soul": "ada"})
    assert [d["presented"] for d in ledger["draws"]] == [True, False]  # newest first
    assert ledger["silence_rate"] == 0.5
    # The same collision again is no increment: silent. Its reproduction is as it was.
    repeated = daemon.result("lightning", {"soul": "ada", "topic": topic, "seed": 7})
    assert repeated["cards"] == spark["cards"]
    assert repeated["presented"] is False
    assert f"already presented in draw {spark['draw']}" in repeated["verdicts"][0]["reason"]
    cli = soupd_home.cli("lightning", "ada", "--as-of", str(spark["draw"]))
    assert cli.returncode == 0, cli.stderr
    assert "presented (answers_question)" in cli.stdout
    assert f"reproduces draw {spark['draw']}" in cli.stdout
    assert "reproduce: soupd lightning ada --as-of" in cli.stdout
    unknown = daemon.call("lightning", {"soul": "ada", "exclude": ["no such card"]})
    assert unknown["error"]["code"] == "unknown_exclusion"
    huge = daemon.call("lightning", {"soul": "ada", "seed": 2**64})
    assert huge["error"]["code"] == "invalid_params"
    unseeded = daemon.result("lightning", {"soul": "ada", "topic": "anything"})
    assert 0 <= unseeded["seed"] < 2**63  # recorded, so the draw can be reproduced


def test_verdicts_belong_to_the_user(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    ten_cards(daemon, extra="backups run nightly")
    silent = daemon.result("lightning", {"soul": "ada", "topic": "zebra", "seed": 3})
    shown = daemon.result(
        "lightning", {"soul": "ada", "topic": "we rotate the api keys monthly", "seed": 3}
    )
    card = shown["cards"][0]
    outsider = next(n for n in range(1, 11) if n not in shown["cards"])

    def refused(**params: object) -> str:
        reply = daemon.call("verdict", {"soul": "ada"} | params)
        assert reply.get("error", {}).get("code") == "invalid_params", reply
        return str(reply["error"]["message"])

    assert "silent" in refused(draw=silent["draw"], card=card, verdict="approve")
    missing = daemon.call(
        "verdict", {"soul": "ada", "draw": 99, "card": card, "verdict": "approve"}
    )
    assert missing["error"]["code"] == "not_found"
    assert "no draw 99" in missing["error"]["message"]
    assert "not in draw" in refused(draw=shown["draw"], card=outsider, verdict="approve")
    assert "--line" in refused(draw=shown["draw"], card=card, verdict="strong")
    assert "between 1 and 2" in refused(draw=shown["draw"], card=card, verdict="strong", line=5)
    assert "one of" in refused(draw=shown["draw"], card=card, verdict="love")
    ok = daemon.result(
        "verdict",
        {"soul": "ada", "draw": shown["draw"], "card": card, "verdict": "strong", "line": 2},
    )
    assert ok == {"draw": shown["draw"], "card": card, "verdict": "strong", "line": 2}
    assert "already has a verdict (strong)" in refused(
        draw=shown["draw"], card=card, verdict="oppose"
    )
    approvals = {
        c["number"]: c["strong_approvals"] for c in daemon.result("cards", {"soul": "ada"})["cards"]
    }
    assert approvals[card] == 1
    assert sum(approvals.values()) == 1
    cli = soupd_home.cli("verdict", "ada", str(shown["draw"]), str(shown["cards"][1]), "approve")
    assert cli.returncode == 0, cli.stderr


def test_a_week_of_draws_verdicts_and_the_tide(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    ten_cards(daemon, extra="backups run nightly")
    # Two increments on the same cards: an open question answered, then a conclusion
    # changed (the same one twice would be shown once).
    first = daemon.result(
        "lightning", {"soul": "ada", "topic": "we rotate the api keys monthly", "seed": 11}
    )
    second = daemon.result(
        "lightning", {"soul": "ada", "topic": "backups no longer run nightly", "seed": 11}
    )
    assert (first["criterion"], second["criterion"]) == ("answers_question", "changes_conclusion")
    daemon.result("event.push", {"soul": "ada", "text": "we now rotate the api keys every week"})

    incomplete = soupd_home.cli("tide", "ada")
    assert incomplete.returncode == 3
    assert "Reconciliation incomplete" in incomplete.stdout
    pair = " + ".join(f"{n:04d}" for n in sorted(first["cards"])[:2])
    assert pair in incomplete.stdout  # drawn together twice: a protein proposal
    assert "Closure proposals" in incomplete.stdout
    report = daemon.result("tide", {"soul": "ada"})
    assert len(report["closure_proposals"]) == 10  # every card's question was answered
    assert report["silence_rate"] == 0.0

    for draw in (first, second):
        for card in draw["cards"]:
            daemon.result(
                "verdict",
                {"soul": "ada", "draw": draw["draw"], "card": card, "verdict": "approve"},
            )
    complete = soupd_home.cli("tide", "ada")
    assert complete.returncode == 0, complete.stdout
    files = sorted(p.name for p in (soupd_home.soul_dir("ada") / "tide").iterdir())
    assert [f.rsplit(".", 1)[1] for f in files] == ["html", "md"]


def test_a_session_start_draws_by_itself_when_asked(
    soupd_home: Home, start_soupd: StartSoupd
) -> None:
    soupd_home.add_soul("ada", "[lightning]\non_session_start = true\n")
    soupd_home.add_soul("bob")
    daemon = start_soupd()
    for soul in ("ada", "bob"):
        for n in range(10):
            daemon.result("card.add", {"soul": soul, "conclusions": [f"fact {n}"]})
        daemon.result(
            "event.push", {"soul": soul, "text": "planning the q3 roadmap", "kind": "session_start"}
        )
    (drawn,) = daemon.result("ledger", {"soul": "ada"})["draws"]
    assert drawn["topic"] == "planning the q3 roadmap"
    assert daemon.result("ledger", {"soul": "bob"})["draws"] == []  # bob did not ask


def test_the_status_page_is_one_self_contained_file(
    soupd_home: Home, start_soupd: StartSoupd, tmp_path: Path
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    ten_cards(daemon, title="vault <{n}>")
    # (an answer, not the question restated: "how often" is answered by "every month")
    topic = "we rotate the api keys every month"
    daemon.result("lightning", {"soul": "ada", "topic": topic, "seed": 5})
    daemon.result("lightning", {"soul": "ada", "topic": "zebra", "seed": 6})
    out = tmp_path / "ada.html"
    result = soupd_home.cli("status-page", "ada", "--out", out, "--stamp", "test build")
    assert result.returncode == 0, result.stderr
    page = out.read_text()
    assert page.startswith("<!doctype html>")
    assert page.count("<svg") == 2  # weights, silence by week
    assert "No verdicts yet" in page  # no verdict mix before the user gave one
    assert "vault &lt;3&gt;" in page  # escaped
    assert "answers_question" in page
    assert ">strong<" in page
    assert ">oppose<" in page
    assert "silent" in page
    assert "test build" in page
    for external in ("http://", "https://", "<script", "<link"):
        assert external not in page.replace("http://www.w3.org/2000/svg", "")


# Appended to a copy of the page (which itself runs no script): measures what Chromium
# laid out and writes it into the page as JSON, which --dump-dom then prints.
_MEASURE = """<script>
const box = (e) => e.getBoundingClientRect();
const bars = [...document.querySelectorAll("table.cards .bar")];
const rows = [...document.querySelectorAll("table.cards tr")].slice(1);
const out = {
  bars: bars.length,
  barWidths: bars.map((b) => box(b).width),
  minBarHeight: Math.min(...bars.map((b) => box(b).height)),
  minRowHeight: Math.min(...rows.map((r) => box(r).height)),
  weights: rows.map((r) => r.cells[3].innerText.trim()),
  verdictFills: [...document.querySelectorAll("rect.verdict")].map(
    (r) => [r.dataset.label, getComputedStyle(r).fill]),
  items: document.querySelectorAll("li").length,
  looseItems: [...document.querySelectorAll("li")].filter(
    (li) => !["UL", "OL"].includes(li.parentElement.tagName)).length,
  strong: [...document.querySelectorAll(".tide strong")].map((e) => e.innerText),
  text: document.body.innerText,
  pwned: document.documentElement.dataset.pwned || null,
};
const pre = document.createElement("pre");
pre.id = "measured";
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


def _chromium_measures(page: Path, tmp_path: Path) -> dict[str, Any]:
    """What headless Chromium laid out for ``page`` (see _MEASURE), and a screenshot."""
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", _MEASURE + "</body>"))
    flags = [
        "chromium",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1000,800",
    ]
    dumped = subprocess.run(
        [*flags, "--dump-dom", probe.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    found = re.search(r'<pre id="measured">(.*?)</pre>', dumped, re.DOTALL)
    assert found, dumped[-2000:]
    shot = tmp_path / "page.png"
    subprocess.run(
        [*flags, f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.stat().st_size > 10_000  # a rendered page, not a blank one
    measured: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return measured


# CI installs Chromium (.ci/run), so there the test runs or fails, never skips.
@pytest.mark.skipif(
    shutil.which("chromium") is None and not os.environ.get("CI"),
    reason="headless Chromium is not installed (apt-get install chromium)",
)
def test_the_status_page_renders_in_chromium(
    soupd_home: Home, start_soupd: StartSoupd, tmp_path: Path
) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    pwn = "<script>document.documentElement.dataset.pwned = 'title'</script>"
    for n in range(300):
        card: dict[str, object] = {
            "soul": "ada",
            "conclusions": [f"vault {n} holds secrets"],
            "questions": [QUESTION],
            "title": pwn if n == 0 else f"vault {n}",
        }
        daemon.result("card.add", card)
    topic = (
        "we rotate the api keys every month "
        "<img src=x onerror=\"document.documentElement.dataset.pwned = 'topic'\">"
    )
    shown = [daemon.result("lightning", {"soul": "ada", "topic": topic, "seed": s}) for s in (1, 2)]
    assert all(draw["presented"] for draw in shown)
    judged = [(d["draw"], c) for d in shown for c in d["cards"][:2]]
    for (draw, card), verdict in zip(
        judged, ("strong", "approve", "neutral", "oppose"), strict=True
    ):
        params = {"soul": "ada", "draw": draw, "card": card, "verdict": verdict}
        daemon.result("verdict", params | ({"line": 1} if verdict == "strong" else {}))
    page = tmp_path / "page.html"
    assert soupd_home.cli("status-page", "ada", "--out", page).returncode == 0
    measured = _chromium_measures(page, tmp_path)

    assert measured["pwned"] is None  # user text is text, never markup
    assert "<script>document.documentElement" in measured["text"]  # shown as written
    # Every card has its own readable bar, on one absolute scale.
    assert measured["bars"] == 300
    assert min(measured["barWidths"]) >= 6
    assert measured["minBarHeight"] >= 10
    assert measured["minRowHeight"] >= 16
    by_weight: dict[str, set[float]] = {}
    for weight, width in zip(measured["weights"], measured["barWidths"], strict=True):
        by_weight.setdefault(weight, set()).add(width)
    assert all(len(widths) == 1 for widths in by_weight.values())  # same weight, same bar
    assert max(by_weight["2.00"]) > max(by_weight["1.00"])  # the strong approval shows
    # The verdicts in four colours, the tide's Markdown rendered, lists in lists.
    fills = dict(measured["verdictFills"])
    assert set(fills) == {"strong", "approve", "neutral", "oppose"}
    assert len(set(fills.values())) == 4
    assert measured["looseItems"] == 0
    assert measured["items"] > 5
    assert "**" not in measured["text"]
    assert "Reconciliation incomplete:" in measured["strong"]
    assert "How to read this page" in measured["text"]


class _Judge(http.server.BaseHTTPRequestHandler):
    """A chat model on loopback that judges every draw: a counterexample on its cards."""

    prompts: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][1]["content"]
        self.prompts.append(prompt)
        drawn = [int(n) for n in re.findall(r"^Card (\d+):", prompt, re.MULTILINE)]
        verdicts = [
            {
                "criterion": criterion,
                "passed": criterion == "counterexample",
                "reason": f"card {drawn[0]} line 1 contradicts card {drawn[1]} line 1",
                "evidence": drawn[:2] if criterion == "counterexample" else [],
                "lines": [{"card": n, "line": 1} for n in drawn[:2]]
                if criterion == "counterexample"
                else [],
            }
            for criterion in (
                "answers_question",
                "counterexample",
                "changes_conclusion",
                "new_direction",
            )
        ]
        content = json.dumps({"verdicts": verdicts})
        answer = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_soul_with_an_llm_lets_the_model_judge(soupd_home: Home, start_soupd: StartSoupd) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Judge)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        soupd_home.add_soul(
            "ada",
            f'[llm]\nbase_url = "http://127.0.0.1:{server.server_address[1]}/v1"\n'
            'model = "judge"\n[reflect]\nreflector = "extractive"\n[gate]\njudge = "llm"\n',
        )
        daemon = start_soupd()
        ten_cards(daemon)
        collision = daemon.result("lightning", {"soul": "ada", "topic": "zebra crossing"})
        assert collision["judge"] == "llm"
        assert collision["presented"] is True  # the built-in judge would have kept silent
        assert collision["criterion"] == "counterexample"
        passed = [v for v in collision["verdicts"] if v["passed"]]
        assert passed[0]["reason"].startswith("passes (llm): card ")
        assert "Topic: zebra crossing" in _Judge.prompts[-1]
        assert (
            "## SPARK\n(counterexample) passes (llm)"
            in daemon.result("context", {"soul": "ada"})["text"]
        )
        ledger = daemon.result("ledger", {"soul": "ada"})
        assert ledger["draws"][0]["judge"] == "llm"
        cli = soupd_home.cli("ledger", "ada")
        assert "judged by llm" in cli.stdout
    finally:
        server.shutdown()
        server.server_close()


# Topics a friend might open a session with, weeks after the conversation.
LATER = [
    "I'm flying to Berlin for the planning week on Monday",
    "what should I cook for dinner",
    "the movers want 700 euros for the next move",
    "Pepper chewed my shoes again lol",
    "hey!! how have you been?",
    "I'm not sure, could you remind me?",
]


def test_a_conversation_played_turn_by_turn(soupd_home: Home, start_soupd: StartSoupd) -> None:
    """Two friends over four sessions, pushed turn by turn, a draw at each session start
    against its first turn: cards hold each reflect's own conclusions; the gate is
    selective and names its lines; the ledger reproduces a draw after a strong verdict;
    a closure proposal is applied with ``soupd tide --close``."""
    soupd_home.add_soul("lena", "[lightning]\nmin_rows = 6\n")
    daemon = start_soupd()
    # Lena's own card, the day the offer came: an open question a later card answers.
    offer = {
        "soul": "lena",
        "title": "Tomas and Berlin",
        "conclusions": ["Tomas got a job offer from a climate data startup in Berlin"],
        "questions": ["should Tomas really move to Berlin for that job?"],
        "tags": ["Berlin"],
    }
    asked = daemon.result("card.add", offer)
    opened: set[str] = set()
    for session, when, speaker, text in turns():
        if session not in opened:
            opened.add(session)
            daemon.call("lightning", {"soul": "lena", "topic": text})  # too few cards at first
        push = {"soul": "lena", "text": text, "sender": speaker, "ts": when, "session": session}
        daemon.result("event.push", push)
    listed = daemon.result("cards", {"soul": "lena", "strict": True})
    assert listed["problems"] == []
    cards = listed["cards"]
    assert len(cards) >= 6
    lines = Counter(line for c in cards for line in c["conclusions"] + c["questions"])
    assert [line for line, n in lines.items() if n > 1] == []  # no card repeats another's
    assert max(len(c["conclusions"]) + len(c["questions"]) + len(c["tags"]) for c in cards) <= 12
    assert not {"im", "lol", "sure", "lena", "tomas"} & {
        t.lower() for c in cards for t in c["tags"]
    }

    draws = [
        daemon.result("lightning", {"soul": "lena", "topic": topic, "seed": seed})
        for topic in LATER
        for seed in range(6)
    ]
    shown = [d for d in draws if d["presented"]]
    assert 0 < len(shown) < len(draws) / 2, [d["criterion"] for d in draws]
    # A filler topic brings nothing: what shows then is two old cards in tension.
    for collision in (d for d in draws if d["topic"] == LATER[-1]):
        assert all("the topic" not in v["reason"] for v in collision["verdicts"] if v["passed"])
    for collision in shown:  # it names its criterion and the lines that meet it
        (passed,) = [v for v in collision["verdicts"] if v["criterion"] == collision["criterion"]]
        assert passed["lines"], passed
        assert all(line["text"] in collision["spark"] for line in passed["lines"])

    # A strong verdict moves the weights; the ledger row still draws the same cards.
    chosen = next(
        d for d in shown if any(c["kind"] == "line" for v in d["verdicts"] for c in v["lines"])
    )
    cited = next(c for v in chosen["verdicts"] for c in v["lines"] if c["kind"] == "line")
    daemon.result(
        "verdict",
        {
            "soul": "lena",
            "draw": chosen["draw"],
            "card": cited["card"],
            "verdict": "strong",
            "line": cited["number"],
        },
    )
    again = soupd_home.cli("--json", "lightning", "lena", "--as-of", str(chosen["draw"]))
    assert again.returncode == 0, again.stderr
    replayed = json.loads(again.stdout)
    assert replayed["cards"] == chosen["cards"]
    assert replayed["replay_of"] == chosen["draw"]
    assert replayed["weights"] == chosen["weights"]
    assert chosen["reproduce"] == f"soupd lightning lena --as-of {chosen['draw']}"

    report = daemon.result("tide", {"soul": "lena"})
    assert all(len(p["cards"]) <= 4 for p in report["protein_proposals"])
    (proposal,) = [p for p in report["closure_proposals"] if p["card"] == asked["number"]]
    assert "Berlin" in proposal["answer"]
    closed = soupd_home.cli("tide", "lena", "--close", str(proposal["card"]))
    assert "- closures made: 1" in closed.stdout, closed.stdout + closed.stderr
    card = next(
        c
        for c in daemon.result("cards", {"soul": "lena"})["cards"]
        if c["number"] == proposal["card"]
    )
    assert proposal["question"] in card["closed"]
    assert any(note.startswith(f"closed question {proposal['question']}") for note in card["notes"])
    assert daemon.result("cards", {"soul": "lena", "strict": True})["problems"] == []
    refused = daemon.call("tide", {"soul": "lena", "close": [proposal["card"]]})
    assert refused["error"]["code"] == "invalid_params"
    assert "no closure proposal" in refused["error"]["message"]

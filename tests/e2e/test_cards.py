"""Cards end to end: a reflect crystallises one; cards by hand, proteins, notes; the
cards/ folder checked against the database."""

from __future__ import annotations

from .harness import Home, StartSoupd


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
    assert unknown["error"]["code"] == "invalid_params"
    assert "999" in unknown["error"]["message"]
    restarts = {s["name"]: s["restarts"] for s in daemon.result("soul.list")["souls"]}
    assert restarts == {"ada": 0}  # bad input never crashed the soul

"""A request naming an item the soul has none of (a claim, goal, card, draw or label) is
``not_found`` (exit 6), as ``memory get`` of a missing memory is; never invalid_params."""

from __future__ import annotations

from .harness import Home, StartSoupd

NOT_FOUND = 6


def test_a_missing_item_is_not_found(soupd_home: Home, start_soupd: StartSoupd) -> None:
    soupd_home.add_soul("ada")
    daemon = start_soupd()
    daemon.push("ada", "My cat is Tuanzi.", sender="ann")
    for args, said in [
        (("claim", "retract", "ada", "999"), "no entry c999"),
        (("claim", "update", "ada", "c999", "Mochi"), "no entry c999"),
        (("claim", "correct", "ada", "c999", "Mochi"), "no entry c999"),
        (("goal", "ada", "progress", "--id", "g999", "--note", "half"), "no goal g999"),
        (("goal", "ada", "achieve", "--id", "g999"), "no goal g999"),
        (("read", "ada", "c999"), "no c999"),
    ]:
        result = soupd_home.cli(*args)

        assert result.returncode == NOT_FOUND, (args, result.stderr)
        assert result.stderr.startswith("soupd: not_found: "), (args, result.stderr)
        assert said in result.stderr, (args, result.stderr)

    for method, params, said in [
        ("card.note", {"number": 999, "text": "hi"}, "no card numbered 999"),
        ("verdict", {"draw": 99, "card": 1, "verdict": "approve"}, "no draw 99"),
    ]:
        reply = daemon.call(method, {"soul": "ada"} | params)
        assert reply["error"]["code"] == "not_found", reply
        assert said in reply["error"]["message"]
    # What is wrong with a request about an item there is stays invalid_params (exit 5).
    daemon.result(
        "goal.update", {"soul": "ada", "action": "new", "statement": "ship v2", "priority": 2}
    )
    refused = soupd_home.cli("goal", "ada", "progress", "--id", "g1")
    assert refused.returncode == 5, refused.stderr
    assert refused.stderr.startswith("soupd: invalid_params: ")

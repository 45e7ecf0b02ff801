"""recall narrowed by sender (or linked person), session, kind and time (#18.5), over
the real socket: bad filters are refused with an error that says what to send."""

from __future__ import annotations

from e2e.harness import Daemon

MAY_1 = 1_777_593_600  # 2026-05-01T00:00:00Z


def test_bad_filters_are_refused_with_what_to_send(soupd: Daemon) -> None:
    soupd.push("alpha", "the kiwi harvest starts in May")
    cases = [
        ({"since": "last tuesday"}, "since 'last tuesday' is not an ISO 8601 date-time"),
        ({"until": -5}, "until -5.0 is not a plausible Unix time"),
        ({"since": "2026-06-01", "until": "2026-05-01"}, "must be before until"),
        ({"sender": "  "}, "sender must not be empty"),
        ({"session": ""}, "session must not be empty"),
    ]
    for given, said in cases:
        reply = soupd.call("recall", {"soul": "alpha", "query": "kiwi", **given})
        assert reply["error"]["code"] == "invalid_params", given
        assert said in reply["error"]["message"], reply
    wrong_type = soupd.call("recall", {"soul": "alpha", "query": "kiwi", "kind": 3})
    assert wrong_type["error"]["code"] == "invalid_params"


def test_filters_narrow_what_is_recalled(soupd: Daemon) -> None:
    said = [
        ("kiwi jam recipe from grandma", "ada", "s1", "dm", MAY_1),
        ("kiwi prices went up again", "bo", "s1", "message", MAY_1 + 86_400),
        ("kiwi harvest report", "ci-bot", "s2", "webhook", MAY_1 + 40 * 86_400),
    ]
    for text, sender, session, kind, ts in said:
        soupd.push("alpha", text, sender=sender, session=session, kind=kind, ts=ts)

    def texts(**given: object) -> list[str]:
        return sorted(item["text"] for item in soupd.recall("alpha", "kiwi", **given))

    assert len(texts()) == 3
    assert texts(sender="ada") == ["kiwi jam recipe from grandma"]
    assert texts(session="s1") == ["kiwi jam recipe from grandma", "kiwi prices went up again"]
    assert texts(kind="webhook") == ["kiwi harvest report"]
    assert texts(since="2026-05-02T00:00:00Z") == [
        "kiwi harvest report",
        "kiwi prices went up again",
    ]
    assert texts(until=MAY_1 + 86_400) == ["kiwi jam recipe from grandma"]
    assert texts(sender="ada", kind="webhook") == []

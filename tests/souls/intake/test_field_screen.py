"""The field screen: the credential rule over every text of a request but an event's text."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import msgspec
import pytest
from credential_corpus import ORDINARY, SECRETS

from souls.events import EventIn
from souls.intake.field_screen import WITHHELD, screen, shown
from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from souls.messages import CardAdd, ClaimAdd, Context, GoalSet, GoalUpdate, Import, PersonLink
from supervisor.errors import RejectedInput

A = "a1B2c3D4e5F6g7H8i9J0"
TOKEN = "ghp_" + A + A[:16]
GATE = HygieneGate(HygieneConfig())


def refused(request: object, **kwargs: object) -> RejectedInput:
    with pytest.raises(RejectedInput) as caught:
        screen(GATE, request, **kwargs)  # type: ignore[arg-type]
    assert caught.value.code == "hygiene.credential"
    assert A not in caught.value.message
    return caught.value


def test_ordinary_fields_pass_ids_hashes_and_names_included() -> None:
    screen(
        GATE,
        EventIn(
            text="deploy done",
            sender="王小明",
            ref=str(uuid.uuid4()),
            session="9fceb02d0ae598e95dc970b74767f19372d61af8",
            group="ops-團隊",
            channel="telegram",
            kind="message",
        ),
    )
    screen(GATE, CardAdd(conclusions=["tea beats coffee"], tags=["tea", "morning"]))
    screen(GATE, Context(query="what did we decide about the flat?"))


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (EventIn(text="hi", sender=TOKEN), "sender"),
        (EventIn(text="hi", session="s", ref=TOKEN), "ref"),
        (ClaimAdd(value="tea", subject=TOKEN), "subject"),
        (PersonLink(person=TOKEN, channel="telegram", external="42"), "person"),
        (CardAdd(conclusions=["ok"], tags=["tea", TOKEN]), "tags[1]"),
        (
            GoalSet(GoalUpdate(action="new", statement="x", speaker="u", triggers=("a", TOKEN))),
            "triggers[1]",
        ),
        (Import(events=[EventIn(text="a"), EventIn(text="b", group=TOKEN)]), "events[1].group"),
    ],
)
def test_a_secret_is_refused_naming_its_field(request_: object, field: str) -> None:
    error = refused(request_)
    assert error.field == field
    assert error.message.startswith(f"{field} looks like it contains a credential (a GitHub")


def test_an_events_text_is_left_to_the_whole_gate_when_skipped() -> None:
    screen(GATE, EventIn(text=TOKEN), skip=("text",))
    assert refused(EventIn(text=TOKEN)).field == "text"


def test_fields_are_not_read_as_one_text() -> None:
    # On one line "password: Hunt3r2xyz" is an assignment; as two fields it is not.
    assert GATE.find_secret("password: Hunt3r2xyz") is not None
    screen(GATE, EventIn(text="x", sender="password:", ref="Hunt3r2xyz"))


def test_extra_patterns_apply_to_every_field() -> None:
    gate = HygieneGate(HygieneConfig(extra_patterns=[r"ACME-[0-9]{6}"]))
    with pytest.raises(RejectedInput) as caught:
        screen(gate, EventIn(text="hi", session="ACME-123456"))
    assert caught.value.field == "session"
    assert "extra_patterns[0]" in caught.value.message


def test_many_candidates_joined_do_not_refuse_fields_that_each_pass() -> None:
    # Each tag offers a place where a secret could be; joined they exceed the cap.
    tags = [f"key=v{i}" for i in range(300)]
    assert GATE.find_secret("\n".join(tags)) is not None
    screen(GATE, CardAdd(conclusions=["ok"], tags=tags))


def test_shown_withholds_a_secret_and_keeps_the_rest() -> None:
    assert shown("ci-9") == "ci-9"
    assert shown(None) is None
    assert shown(TOKEN) == WITHHELD
    gate = HygieneGate(HygieneConfig(extra_patterns=["ACME-[0-9]+"]))
    assert shown("ACME-1", gate) == WITHHELD
    assert shown("ACME-1") == "ACME-1"


HELLO = EventIn(text="hello")
EVENT_FIELDS = ("sender", "ref", "session", "group", "channel", "kind")


@pytest.mark.parametrize("field", EVENT_FIELDS)
def test_the_secret_corpus_is_caught_in_every_event_field(field: str) -> None:
    caught = []
    for family, secret in SECRETS.items():
        try:
            screen(GATE, msgspec.structs.replace(HELLO, **{field: secret}), skip=("text",))
        except RejectedInput as error:
            caught.append((family, error.field))
    assert len(caught) >= 55, sorted(set(SECRETS) - {family for family, _ in caught})
    assert {named for _, named in caught} == {field}


@pytest.mark.parametrize(
    "build",
    [
        lambda secret: CardAdd(conclusions=["ok", secret]),
        lambda secret: CardAdd(conclusions=["ok"], tags=[secret]),
        lambda secret: ClaimAdd(value="tea", subject=secret),
        lambda secret: GoalSet(GoalUpdate(action="new", statement=secret, speaker="u")),
        lambda secret: Context(query=secret),
    ],
    ids=["card line", "card tag", "claim subject", "goal statement", "context query"],
)
def test_the_secret_corpus_is_caught_in_other_requests(
    build: Callable[[str], msgspec.Struct],
) -> None:
    missed = []
    for family, secret in SECRETS.items():
        try:
            screen(GATE, build(secret))
            missed.append(family)
        except RejectedInput:
            pass
    assert len(missed) <= 5, missed


@pytest.mark.parametrize("field", EVENT_FIELDS)
def test_no_ordinary_text_is_refused_in_any_event_field(field: str) -> None:
    refused = []
    for text in ORDINARY:
        try:
            screen(GATE, msgspec.structs.replace(HELLO, **{field: text}), skip=("text",))
        except RejectedInput:
            refused.append(text[:60])
    assert refused == []

"""Told events and their time (claim_events, claim_when): grammar, English and Chinese."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from souls.knowledge.claim_events import find_events, parts
from souls.knowledge.claim_rules import find_claims
from souls.knowledge.claim_when import find_when, shown

SAID = datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp()  # a Monday


def values(sentence: str) -> list[str]:
    """The told events of ``sentence`` (an arrangement in the progressive is a plan)."""
    return [e.value for e in find_events(sentence, SAID) if not e.planned]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I painted a sunrise last year", ["painted a sunrise"]),
        ("Last week I went to an LGBTQ+ pride parade", ["went to an LGBTQ+ pride parade"]),
        ("We've been to Paris twice", ["been to Paris twice"]),
        ("I'm taking a pottery class", ["taking a pottery class"]),
        ("I used to ride horses with my dad", ["ride horses with my dad"]),
        ("My husband and I adopted a puppy", ["adopted a puppy"]),
        ("We had a blast at the lake", ["had a blast at the lake"]),
        ("i finally finished my thesis", ["finished my thesis"]),
        ("我们上周去了成都", ["去了成都"]),
        ("我去过日本", ["去过日本"]),
        ("我昨天买了一辆自行车", ["买了一辆自行车"]),
        # A state's past, or a change of state, happened: an event.
        ("I used to live in Lisbon", ["live in Lisbon"]),
        ("I moved to Porto last year", ["moved to Porto"]),
        ("I'm working on a novel", ["working on a novel"]),
        ("I work out every morning", ["work out every morning"]),
        # Irregular pasts an -ed test misses are past, also after "when".
        ("I remember the night when we saw the northern lights", ["saw the northern lights"]),
        ("Back then I overcame my fear of heights", ["overcame my fear of heights"]),
    ],
)
def test_first_person_statements_of_what_happened(sentence: str, expected: list[str]) -> None:
    assert values(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "I didn't go to the party",  # negated
        "I never finished it",
        "I thought it was great",  # thinking, not doing
        "I saw your post yesterday",  # the listener's things
        "I did it",  # a generic object
        "The impact we made was huge",  # a relative clause
        "since we last spoke",  # a formula
        "I'm putting on a show next month",  # a plan
        "我没去成都",
        "我觉得了不起",
        # States in the present: what is so, for the slot rules, not what happened.
        "I live in Lisbon",
        "We still live in Porto",
        "I'm living in a tiny flat",
        "I've been living in Berlin for years",
        "We have a dog",
        "I own a bakery",
        "I work as a nurse",
        "I work at Acme Corp",
        # A case in general, opened by when or if, in the simple present.
        "When I lose a match, I go for a long walk",
        "My coach is patient with me even when I mess up",
        "If I get stressed I bake",
    ],
)
def test_what_tells_no_event(sentence: str) -> None:
    assert values(sentence) == []


@pytest.mark.parametrize(
    ("text", "phrase", "at"),
    [
        ("yesterday", "yesterday", "2023-05-07"),
        ("last Saturday", "last Saturday", "2023-05-06"),
        ("two weeks ago", "two weeks ago", "week of 2023-04-24"),
        ("last month", "last month", "2023-04"),
        ("last year", "last year", "2022"),
        ("in 2019", "in 2019", "2019"),
        ("in March", "in March", "2023-03"),
        ("上周", "上周", "week of 2023-05-01"),
        ("三天前", "三天前", "2023-05-05"),
        ("去年", "去年", "2022"),
    ],
)
def test_past_times_resolve_against_the_day_said(text: str, phrase: str, at: str) -> None:
    when = find_when(f"we did it {text} and more", SAID)
    assert when is not None
    assert f"we did it {text} and more"[when.start : when.end] == phrase
    assert shown(when.at, when.precision) == at


def test_future_times_are_not_read_as_past() -> None:
    assert find_when("next week we fly", SAID) is None
    assert find_when("明天见", SAID) is None
    assert find_when("in 2030 I retire", SAID) is None


def test_parts_are_linghuns_fields() -> None:
    (event,) = find_events('Last week I watched "Little Women" with Anna', SAID)
    assert event.when is not None
    fields = parts("mel", event.value, 'Last week I watched "Little Women" with Anna',
                   event.when.at, SAID)  # fmt: skip
    assert fields.subject == "mel"
    assert fields.action == "watched"
    assert fields.object == '"Little Women" with Anna'
    assert fields.entities == ("Little Women", "Anna")
    assert fields.detail == "Last week (week of 2023-05-01)"


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # What a slot rule reads in the present is the slot's, never also an event.
        ("I live in Lisbon.", [("location", "Lisbon")]),
        ("I work as a nurse.", [("job", "nurse")]),
        ("I really detest olives.", [("dislikes", "olives")]),
        # A change of state told in the past is the slot's new value and an event.
        ("I moved to Porto last year.", [("location", "Porto"), ("event", "moved to Porto")]),
    ],
)
def test_a_state_a_slot_rule_reads_is_no_event(
    sentence: str, expected: list[tuple[str, str]]
) -> None:
    assert [(m.slot, m.value) for m in find_claims(sentence, SAID)] == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # a demonstrative with its noun is a specific thing, not a generic "that"
        ("Yeah, I made this bowl in my class.", ["made this bowl in my class"]),
        ("I painted that lake sunrise last year!", ["painted that lake sunrise"]),
        # what happened to the speaker's own people and things
        ("We were all freaked when my son got into an accident", ["my son got into an accident"]),
        ("Last week, my grandma passed away", ["my grandma passed away"]),
        # a wh-word opening a statement does not make it a question
        ("When I was younger, my family and I went on a road trip to Oregon.",
         ["went on a road trip to Oregon"]),
        # a habit of "we" said with how often it happens
        ("We roast marshmallows every summer", ["roast marshmallows every summer"]),
    ],
)  # fmt: skip
def test_more_grammar_of_what_happened(sentence: str, expected: list[str]) -> None:
    assert [m.value for m in find_claims(sentence, SAID) if m.slot == "event"] == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "We make a great team.",  # a "we" of speaker and listener, in the simple present
        "we all have our different paths",
        "We've got a pup and a kitty.",  # have got: having, a state
        "I did that too.",  # a demonstrative alone is generic
        "my bad, I forgot",
        "the day my youngest took her first steps",  # a relative clause
        "When did you go to Oregon",
    ],
)
def test_more_of_what_tells_no_event(sentence: str) -> None:
    assert [m for m in find_claims(sentence, SAID) if m.slot == "event"] == []


@pytest.mark.parametrize(
    ("sentence", "plan"),
    [
        ("I'm putting on a show next month", "putting on a show"),
        ("I'm putting together an LGBTQ art show next month and I'm gonna show my paintings.",
         "putting together an LGBTQ art show"),
        ("I'm going to a transgender conference this month.", "going to a transgender conference"),
        ("I'm flying to Tokyo on Friday", "flying to Tokyo"),
    ],
)  # fmt: skip
def test_an_arrangement_in_the_progressive_is_a_plan(sentence: str, plan: str) -> None:
    found = [(m.slot, m.value) for m in find_claims(sentence, SAID)]
    assert ("plan", plan) in found
    assert not any(slot == "event" for slot, _ in found)


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        # A taste said in passing of a noun before it is that noun's, not a taste.
        ("I'm lucky to have a boss I respect and a team I enjoy working with.", []),
        ("It's a city I like visiting in the winter.", []),
        # ... but "why", "how much", "the reasons" still say it.
        ("That's why I love sailing.", ["sailing"]),
        ("You have no idea how much I love opera.", ["opera"]),
        ("One of the reasons I love hiking is the quiet.", ["hiking"]),
        # What is liked is named elsewhere, or cut off: no value to keep.
        ("They're so soft, I like cuddling them.", []),
        ("I love escaping to that place.", []),
        ("I really like talking about it.", []),
        # An "I" after anything but a noun phrase opens what is said.
        ("Nowadays I enjoy gardening.", ["gardening"]),
        ("These days I enjoy baking.", ["baking"]),
        ("After work I like swimming.", ["swimming"]),
        ("Man I love pizza.", ["pizza"]),
        ("I mean I love tea.", ["tea"]),
        ("In the morning I like coffee.", ["coffee"]),
        # The object ends where another clause begins, a title's words do not end it.
        ("I love cooking and my husband is a great cook.", ["cooking"]),
        ("I like jazz and my dad was a drummer.", ["jazz"]),
        ("My favourite film is Life Is Beautiful.", ["Life Is Beautiful"]),
    ],
)
def test_a_taste_needs_its_own_clause_and_its_object(sentence: str, expected: list[str]) -> None:
    assert [c.value for c in find_claims(sentence, SAID) if c.slot == "likes"] == expected

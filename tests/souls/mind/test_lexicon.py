"""The valence lexicon (souls.mind.lexicon): entries compiled for whole-word and CJK matching,
longest entry first, with a cheap prefilter that never hides a match."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import souls.mind.lexicon
from souls.mind.lexicon import Lexicon, build_lexicon, entry_key
from souls.mind.topics import normalise
from souls.text.tokenize import tokens

LEXICON = build_lexicon(("not working", "failed", "doesn't work", "不太好"), ("working", "太好"))


def found(text: str) -> list[str]:
    assert LEXICON.regex is not None
    return [m.group() for m in LEXICON.regex.finditer(normalise(text))]


def test_public_surface() -> None:
    assert sorted(souls.mind.lexicon.__all__) == [
        "Lexicon",
        "Valence",
        "build_lexicon",
        "entry_key",
    ]


def test_entry_key_drops_case_apostrophes_and_extra_space() -> None:
    assert entry_key("Doesn\u2019t  Work") == entry_key("doesnt work") == "doesnt work"


def test_entries_match_whole_words_longest_first() -> None:
    assert found("it is NOT   working, it failed") == ["not   working", "failed"]
    assert found("it doesnt work; unfailed x'failed") == ["doesnt work"]
    assert found("结果不太好") == ["不太好"]
    valence = [LEXICON.valence[entry_key(hit)] for hit in found("working, not working")]
    assert valence == ["positive", "negative"]


def test_no_entries_no_regex() -> None:
    empty = Lexicon((), ())
    assert empty.regex is None
    assert empty.terms == frozenset()
    assert build_lexicon((), ()) is build_lexicon((), ())


@given(st.lists(st.sampled_from(["not ", "working", "failed", "x", "'", " ", "不太好"])))
def test_the_prefilter_never_hides_a_match(pieces: list[str]) -> None:
    low = normalise("".join(pieces))
    assert LEXICON.regex is not None
    if LEXICON.regex.search(low):
        assert LEXICON.may_match(low, None)
        assert LEXICON.may_match(low, tokens(low))

"""Content words: which tokens of a text say something about the world.

A token (of :mod:`souls.text.tokenize`) is *content* unless it is a function word (an
article, pronoun, preposition, auxiliary, conjunction; a degree, time or frequency
adverb such as "still", "again", "much"; a light verb such as "get", "make", "feel"; a
generic noun such as "thing", "time", "way", "lot"), a filler (an interjection, laughter,
a contraction remnant written without its apostrophe: "wow", "hahaha", "im", "dont"), a
number (any token that starts with a digit: "31", "2pm", "18th") or a Chinese function
character (的, 了, 又...). What is left are the nouns, names, verbs and adjectives that
a world model could know or not know, and that a feeling could be about.

Two mechanisms read text this way: surprise (:mod:`souls.intake.surprise`: a number or
a "the" is never a prediction error) and the topics of a feeling
(:mod:`souls.mind.topics`). Recall does not: BM25 weighs frequent terms down by itself
and keeps its own small stop list in the tokenizer.

Invariants a caller may rely on:

- Pure and deterministic; the word lists are compared as the tokenizer's stems, so
  "getting", "gets" and "got" are all function words, and so is every word that stems
  like one ("kinds" as "kind"). Drawn-out spellings count as their word: a letter three
  times or more collapses ("sooo", "stilll"), and for fillers a doubled one too ("awww",
  "cooool", "yeahhh"), so "ann" and "bee" stay words.
- ``content_tokens`` keeps order and repeats.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from souls.text.tokenize import tokens

__all__ = ["content_tokens", "is_content", "is_filler", "is_function_word", "is_number"]

# English function words, by kind. Surface forms: each is stemmed as the tokenizer does.
_FUNCTION_WORDS = """
a an the this that these those some any all both each every either neither no none
another other others such same own much many more most less least few fewer several
enough lot lots plenty whole half bit bunch
i me my mine myself you your yours yourself yourselves he him his himself she her hers
herself it its itself we us our ours ourselves they them their theirs themselves one
ones someone somebody something somewhere anyone anybody anything anywhere everyone
everybody everything everywhere nobody nothing nowhere who whom whose what which whoever
whatever whichever whenever wherever
about above across after against along amid among around as at before behind below
beneath beside besides between beyond by despite down during except for from in inside
into like near of off on onto out outside over past per since than through throughout
till to toward towards under underneath unlike until up upon via with within without
and or but nor so yet because although though while whereas unless whether if then else
also too
am is are was were be been being have has had having do does did doing done will would
shall should can could may might must ought
not never ever always often sometimes usually rarely seldom again still already just
only even really very quite rather pretty almost nearly maybe perhaps probably possibly
definitely certainly surely totally absolutely actually basically literally honestly
seriously simply especially particularly exactly mostly mainly generally anyway anyways
truly super extremely incredibly highly fully hardly barely fairly slightly
however therefore thus hence otherwise instead indeed sure here there now then soon
later today tonight tomorrow yesterday ago lately recently once twice away back
together alone else yes yeah yep sorry please
get gets got gotten getting make makes made making go goes went gone going come comes
came coming take takes took taken taking give gives gave given giving put puts putting
let lets letting say says said saying tell tells told telling know knows knew known
knowing think thinks thought thinking believe believes believed suppose reckon wonder
wondering feel feels felt feeling seem seems seemed seeming
look looks looked looking see sees saw seen seeing want wants wanted wanting need needs
needed needing try tries tried trying keep keeps kept keeping mean means meant guess
guessed hope hoped hoping sound sounds sounded sounding use used using find found
finding start started starting begin began begun hear heard wait bet
thing things stuff way ways kind kinds sort sorts type types time times day days week
weeks month months year years moment moments while part lot
new old big little small large different next last first second third able real true
fine okay ok ready glad sure whole certain various good great nice bad well better best
thank thanks
zero two three four five six seven eight nine ten eleven twelve twenty thirty forty
fifty sixty seventy eighty ninety hundred hundreds thousand thousands million millions
billion
"""

# Fillers: interjections (a "wow" or a "haha" says how a turn felt, not what it was
# about), chat abbreviations, and contraction remnants written without their apostrophe
# ("im", "dont"; the tokenizer makes the same "im" of "I'm"). "cool" goes with them
# although it also stems "cooling": in conversation it is nearly always the interjection.
# Left out because they are words as well: id, ill, well, wed, shed, hell, oops ("oop").
_FILLERS = """
ah aha alright aw bye cool eh gee geez gosh ha hah haha hehe hello hey hi hm hmm huh
jeez lmao lol meh mhm nah nope oh ok okay omg ooh ouch phew really rofl ugh uh um umm
whoa woah wow ya yay yeah yep yes yo yup btw tbh imo imho idk lmk fyi pls plz ikr np
aint arent cant couldnt didnt doesnt dont hadnt hasnt havent hes im isnt ive shes
shouldnt theyd theyll theyre theyve wasnt werent weve whos wont wouldnt youd youll
youre youve dunno gonna gotta kinda sorta wanna yall
"""

# Chinese characters that are grammar (particles, pronouns, prepositions, conjunctions,
# aspect and degree words, light verbs), as single-character tokens.
_CJK_FUNCTION = frozenset(
    "的了是在我你他她它们这那哪就都也还很吗呢吧啊哦嗯呀啦嘛和与及或但而着过被把给让对又"
    "再才已没不有会要能可以去来到说得地个些一么之其所为从向将并更最太挺真好"
)

_REPEATED = re.compile(r"(.)\1+")
# Drawn out: a letter three times or more ("sooo", "stilll"); twice is spelling ("ann"
# is no "an", "bee" no "be").
_DRAWN_OUT = re.compile(r"(.)\1{2,}")
_LAUGHTER = re.compile(r"a*(?:h+[aeiou]+){2,}h*|(?:l+o+)+l+")


@functools.cache
def _stems(words: str) -> frozenset[str]:
    return frozenset(t for word in words.split() for t in tokens(word))


@functools.cache
def _collapsed(words: str) -> frozenset[str]:
    return frozenset(_REPEATED.sub(r"\1", t) for t in _stems(words))


def is_filler(token: str) -> bool:
    """Whether ``token`` is an interjection, laughter or a contraction remnant."""
    if token in _stems(_FILLERS) or _LAUGHTER.fullmatch(token) is not None:
        return True
    # Interjections are drawn out in every way ("awww", "cooool", "yeahhh").
    return _REPEATED.sub(r"\1", token) in _collapsed(_FILLERS)


def is_function_word(token: str) -> bool:
    """Whether ``token`` is a function word, a light verb or a generic noun or adjective
    (English, compared as stems) or a Chinese function character."""
    if len(token) == 1 and token in _CJK_FUNCTION:
        return True
    words = _stems(_FUNCTION_WORDS)
    return token in words or _DRAWN_OUT.sub(r"\1", token) in words


def is_number(token: str) -> bool:
    """Whether ``token`` is a number, an ordinal, a time or a measure: it starts with a
    digit ("31", "18th", "2pm", "5k")."""
    return token[:1].isdigit()


def is_content(token: str) -> bool:
    """Whether ``token`` is a content word (see the module docstring)."""
    known = _VERDICTS.get(token)
    if known is None:
        known = bool(token) and not (
            is_number(token) or is_function_word(token) or is_filler(token)
        )
        if len(_VERDICTS) >= _MEMO_TOKENS:
            _VERDICTS.clear()
        _VERDICTS[token] = known
    return known


def content_tokens(words: Iterable[str]) -> list[str]:
    """The content words among the tokens ``words``, in order, repeats kept."""
    known = _VERDICTS.get
    # The memo first: one dict lookup per token once the vocabulary is known.
    return [
        word for word in words if (verdict := known(word)) or (verdict is None and is_content(word))
    ]


# Token -> is_content, shared by every thread (each dict operation is atomic under the
# GIL): surprise asks for every token of every event, and texts repeat a small
# vocabulary. Emptied when it reaches _MEMO_TOKENS entries: bounded memory.
_VERDICTS: dict[str, bool] = {}
_MEMO_TOKENS = 50_000

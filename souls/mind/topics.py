"""Topics of a feeling (DESIGN §3.7): which terms of a text a feeling attaches to, and
the word shown for each.

A topic is a content word or a name (:mod:`souls.text.content`): never a stop word, a
light verb or a generic word ("again", "still", "new", "much", "thing"), a filler
("wow", "haha", "im", "dont") or a number ("31"). It is a stem ("carolin"), which is how
it touches a turn; it is *shown* by its label, the word a person wrote for it (see
``topic_labels``): "Caroline". A Chinese topic is a real word: a bigram of the tokenizer
that is a word of :mod:`souls.mind.chinese_words` (排练 in 今天排练, never 天排).

Invariants a caller may rely on:

- Everything is pure and deterministic: no clock, no I/O; same inputs, same output.
- Topics are terms of the shared tokenizer (``souls.text.tokenize``), so a topic touches a
  turn exactly when recall would match the word: ``deploys`` and ``deployment`` share
  the topic ``deploy``. A person's topic is made the same way (``person_topic``).
- Recall's tokens are untouched: what is left out here is left out of topics only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence

from souls.mind.chinese_words import is_word
from souls.text.content import is_content
from souls.text.content import is_filler as is_filler
from souls.text.tokenize import query_terms, tokens

__all__ = [
    "has_cjk",
    "is_filler",
    "is_topic",
    "iter_topic_terms",
    "label_takes_over",
    "normalise",
    "person_topic",
    "topic_labels",
    "topic_terms",
]

# Han, kana and Hangul: lexicon entries with one of these are matched as substrings (no
# spaces between words), and their single-character tokens are too vague to be topics.
_CJK_RANGES = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff"
_CJK_CHAR = re.compile(f"[{_CJK_RANGES}]")
# Han characters: a bigram of two of them is a topic only when it is a Chinese word.
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003ffff]{2}")
# A word written as a contraction ("I'll", "we'd", "don't", "let's"): what the tokenizer
# leaves of it ("ill", "wed") is no topic in that text, even where it is a word elsewhere.
_CONTRACTION = re.compile(r"(?<![\w'])(?:[^\W_]+'(?:m|re|ve|ll|d|t)|let's)(?![\w'])")
# A word as written, apostrophes inside it, CJK runs left out (their topics are bigrams,
# shown as they are): the tokenizer's words, with their case.
_SURFACE = re.compile(rf"[^\W_{_CJK_RANGES}]+(?:'[^\W_{_CJK_RANGES}]+)*")
# What ends a sentence: a capital after one of these is grammar, not a name.
_SENTENCE_END = frozenset(".!?\u2026\n")


def normalise(text: str) -> str:
    """Text as the lexicon and topic choice see it: NFKC, lowercase, straight
    apostrophes."""
    if text.isascii():  # NFKC and the curly apostrophe are no-ops there
        return text.lower()
    return unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")


def has_cjk(text: str) -> bool:
    """Whether ``text`` has a Han, kana or Hangul character."""
    return _CJK_CHAR.search(text) is not None


def is_topic(term: str) -> bool:
    """Whether ``term`` (a token) may be a topic: a content word (not a function word,
    filler or number), and for CJK a bigram, which for Han must be a Chinese word."""
    if _CJK_CHAR.match(term) is not None:
        return len(term) == 2 and (is_word(term) if _HAN.fullmatch(term) else True)
    return is_content(term)


def _contracted(text: str) -> frozenset[str]:
    """The tokens of the words ``text`` writes as contractions ("I'll" → ill)."""
    if "'" not in text and "\u2019" not in text:
        return frozenset()
    return frozenset(t for word in _CONTRACTION.findall(normalise(text)) for t in tokens(word))


def topic_terms(text: str, words: Sequence[str] | None = None) -> list[str]:
    """The terms of ``text`` a feeling can attach to: the ``query_terms`` that are
    topics (``is_topic``), without any word the text writes as a contraction, first seen
    first. ``words``: ``tokens(text)`` when the caller has it already.

    A lone Han character is too vague to carry a feeling (数 would touch every text about
    数据, 数学 or 数字, and particles such as 的 or 了 every Chinese text at all), so CJK
    topics are bigrams, and of the bigrams only the words: 数据库 gives 数据 (据库 is no
    word), 今天排练 gives 排练 (今天 is a time word, 天排 no word). A one-character word
    (猫) is lost.
    """
    return list(iter_topic_terms(text, words))


def iter_topic_terms(text: str, words: Sequence[str] | None = None) -> Iterator[str]:
    """``topic_terms`` one by one, for a caller that needs only the first few."""
    contracted = _contracted(text)
    for term in query_terms(text, words):
        if term not in contracted and is_topic(term):
            yield term


def person_topic(name: str) -> str:
    """The topic of a feeling about the person called ``name``: the first content word of
    the name ("Melanie" → melani, "Ann Lee" → ann), so it touches a turn that
    calls the person by their first name as any other word would; the first token when
    the name has no topic term (a name such as "Ok"), else the name casefolded.

    One topic per person, not one per word of the name: a person is called by their
    first name in conversation, and one marker keeps GUT FEELINGS from showing them
    twice ("Ann Lee" on "ann" and on "lee"). A turn naming only a later word ("Ms
    Lee") does not touch it. A name is no dictionary word: any CJK bigram will do
    ("王小明" → 王小).
    """
    for term in query_terms(name):
        if len(term) == 2 if _CJK_CHAR.match(term) is not None else is_content(term):
            return term
    return next(iter(tokens(name)), name.casefold())


def _sentence_start(text: str, at: int) -> bool:
    """Whether the word at ``at`` opens a sentence: nothing but spaces, quotes, brackets
    or symbols (an emoji) since the start of ``text`` or a sentence end."""
    # Each scan stops at the previous word at the latest: linear in the text overall.
    for index in range(at - 1, -1, -1):
        char = text[index]
        if char in _SENTENCE_END:
            return True
        if char.isalnum() or char in ",;:":
            return False
    return True


def _as_shown(word: str, text: str, at: int) -> str:
    """``word`` (found at ``at`` in ``text``) as a label: as written when a capital in it
    is meant (inside the word: "API", "iOS"; or first, mid-sentence: a name), otherwise
    lowercase; without a possessive 's, which the tokenizer drops too."""
    if word.endswith(("'s", "'S")):
        word = word[:-2]
    rest = word[1:]
    if rest != rest.lower() or (word[0].isupper() and not _sentence_start(text, at)):
        return word
    return word.lower()


def label_takes_over(label: str, current: str | None) -> bool:
    """Whether ``label`` replaces a topic's ``current`` label: there is none yet, or
    ``current`` is lowercase and ``label`` is the same word with a capital (a name first
    met at the start of a sentence) or a name whose first word that is ("Ann Lee" over
    "ann")."""
    if current is None:
        return True
    low = label.lower()
    named = low == current or low.split()[:1] == [current]
    return current == current.lower() and label != current and named


def topic_labels(
    text: str, topics: Sequence[str], words: Sequence[str] | None = None
) -> tuple[str, ...]:
    """The label of each of ``topics`` (tokens of ``text``, which are ``words`` when
    given): its first word in ``text``, lowercase ("Deploys" opening a sentence:
    "deploys") unless a capital in it is meant: one inside the word ("API", "iOS"), or a
    first capital mid-sentence, a name ("thanks, Caroline": "Caroline"). A later word
    that is the same one with a capital mid-sentence takes over from a lowercased label
    (``label_takes_over``). A possessive 's is dropped; a topic no single word makes (a
    CJK bigram) is its own label."""
    if not topics:
        return ()
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).replace("\u2019", "'")
    matches = list(_SURFACE.finditer(text))
    if text.isascii():
        # The tokenizer's words of ASCII text are exactly these, one token each, in order.
        stems = list(words) if words is not None else tokens(text)
    else:
        stems = [" ".join(tokens(match.group())) for match in matches]  # one token each?
    if len(stems) != len(matches):  # cannot happen; then no labels rather than wrong ones
        return tuple(topics)
    wanted = set(topics)
    found: dict[str, str] = {}
    for match, stem in zip(matches, stems, strict=True):
        if stem in wanted:
            label = _as_shown(match.group(), text, match.start())
            if label_takes_over(label, found.get(stem)):
                found[stem] = label
    return tuple(found.get(topic, topic) for topic in topics)

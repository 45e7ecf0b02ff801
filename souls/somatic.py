"""Somatic markers (DESIGN §3.7): weighted gut feelings per (topic, valence).

An event's text is *appraised*: lexicon hits give it a valence, its other content terms
are the topics the feeling attaches to, and its salience is the weight. ``Markers``
accumulates those weights per (topic, valence), decays them nightly and prunes the
faint ones; a turn whose terms touch a topic gets its markers as ``GUT FEELINGS``.

A topic is a stem ("carolin"), which is how it touches a turn; it is *shown* by its
label, the word a person wrote for it (see ``appraise`` for the rule): "Caroline".
Interjections and contraction remnants ("wow", "haha", "im", "dont") are never topics.

Invariants a caller may rely on:

- Everything is pure and deterministic: no clock, no I/O; same inputs, same output.
- Topics are terms of the shared tokenizer (``souls.tokenize``), so a marker touches a
  turn exactly when recall would match the word: ``deploys`` and ``deployment`` share
  the topic ``deploy``.
- A weight is never negative; a marker whose weight falls below ``prune_below`` on
  decay is gone, and with the last marker of a topic its label.
- A topic has one label whatever its valence; replaying the same events in the same
  order gives the same labels.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Literal, get_args

import msgspec

from souls.tokenize import query_terms, tokens

__all__ = [
    "Appraisal",
    "Marker",
    "Markers",
    "SomaticConfig",
    "Valence",
    "appraise",
    "gut_feelings",
    "is_filler",
    "topic_terms",
    "with_person",
]

Valence = Literal["positive", "negative"]
_VALENCES: tuple[str, ...] = get_args(Valence)

# Han, kana and Hangul: entries with one of these are matched as substrings (no spaces
# between words), and their single-character tokens are too vague to be topics.
_CJK_RANGES = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff"
_CJK_CHAR = re.compile(f"[{_CJK_RANGES}]")
# A Latin letter, digit or apostrophe: what may not touch an English entry for it to be a
# whole word (the tokenizer keeps apostrophes inside words too: "x'failed" is one word).
_WORD_EDGE = "a-z0-9\u00c0-\u024f'"
_WORDS = re.compile("[a-z0-9\u00c0-\u024f]+")

# Words that are never a topic, however often a feeling comes with them: interjections
# (a "wow" or a "haha" says how a turn felt, not what it was about) and contraction
# remnants written without their apostrophe ("im", "dont"; the tokenizer makes the same
# "im" of "I'm"). Compared as the tokenizer's stems, so "really" is "realli"; drawn-out
# spellings count too ("awww", "yeahhh", "hmmm": repeated letters collapse) and so does
# laughter ("hahaha", "hehe", "lolol"). "cool" goes with them although it also stems
# "cooling": in conversation it is nearly always the interjection. Left out because they
# are words as well: id, ill, well, wed, shed, hell, lets (stems to "let"), oops ("oop");
# a contraction that makes one of them is caught where it is written with its
# apostrophe (_CONTRACTION). Recall's tokens are untouched: this is about topics only.
_NOT_TOPICS = """
ah aha alright aw bye cool eh gee geez gosh ha hah haha hehe hello hey hi hm hmm huh
jeez lmao lol meh mhm nah nope oh ok okay omg ooh ouch phew really rofl ugh uh um umm
whoa woah wow ya yay yeah yep yes yo yup
aint arent cant couldnt didnt doesnt dont hadnt hasnt havent hes im isnt ive shes
shouldnt theyd theyll theyre theyve wasnt werent weve whos wont wouldnt youd youll
youre youve dunno gonna gotta kinda sorta wanna yall
""".split()
_REPEATED = re.compile(r"(.)\1+")
_LAUGHTER = re.compile(r"a*(?:h+[aeiou]+){2,}h*|(?:l+o+)+l+")
# A word written as a contraction ("I'll", "we'd", "don't", "let's"): what the tokenizer
# leaves of it ("ill", "wed") is no topic in that text, even where it is a word elsewhere.
_CONTRACTION = re.compile(r"(?<![\w'])(?:[^\W_]+'(?:m|re|ve|ll|d|t)|let's)(?![\w'])")
# A word as written, apostrophes inside it, CJK runs left out (their topics are bigrams,
# shown as they are): the tokenizer's words, with their case.
_SURFACE = re.compile(rf"[^\W_{_CJK_RANGES}]+(?:'[^\W_{_CJK_RANGES}]+)*")
# What ends a sentence: a capital after one of these is grammar, not a name.
_SENTENCE_END = frozenset(".!?\u2026\n")


class SomaticConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Words and phrases that make an event feel bad: English whole words (a space matches
    # any whitespace, an apostrophe is optional; inflections are listed because matching
    # is exact) or CJK substrings. Where two entries overlap the longer one counts, so
    # "not working" is negative although "working now" is positive.
    negative_words: list[str] = msgspec.field(
        default_factory=lambda: [
            *("error", "errors", "fail", "fails", "failed", "failing", "failure", "failures"),
            *("refuse", "refuses", "refused", "refusing", "refusal", "refusals", "denied"),
            *("reject", "rejects", "rejected", "rejecting", "rejection", "rejections"),
            *("complain", "complains", "complained", "complaint", "complaints"),
            *("bug", "bugs", "buggy", "regression", "regressions", "outage", "outages"),
            *("crash", "crashes", "crashed", "crashing", "broken", "unsuccessful"),
            *("wrong", "bad", "worse", "worst", "terrible", "awful", "horrible", "useless"),
            *("frustrated", "frustrating", "annoyed", "annoying", "disappointed"),
            *("disappointing", "hate", "hated", "not good", "not great", "no good"),
            *("doesn't work", "does not work", "didn't work", "did not work", "won't work"),
            *("not working", "isn't working", "stopped working", "no longer works"),
            *("错误", "失败", "拒绝", "不行", "糟糕", "崩溃", "故障", "报错", "出错", "异常"),
            *("宕机", "投诉", "抱怨", "不好", "不太好", "不对", "太差", "很差", "差劲"),
            *("讨厌", "失望", "没用", "用不了", "坏了", "不成功", "没成功"),
        ]
    )
    # Words and phrases that make an event feel good, matched the same way.
    positive_words: list[str] = msgspec.field(
        default_factory=lambda: [
            *("thanks", "thank you", "thx", "praise", "praised", "appreciate", "appreciated"),
            *("success", "successes", "successful", "successfully", "succeed", "succeeded"),
            *("fixed", "solved", "resolved", "works", "worked", "working now", "works now"),
            *("great", "excellent", "awesome", "perfect", "perfectly", "wonderful"),
            *("fantastic", "amazing", "brilliant", "impressive", "helpful", "nice"),
            *("love", "loved", "good job", "good work", "well done", "looks good"),
            *("谢谢", "感谢", "多谢", "成功", "很好", "真好", "太好了", "好极了", "棒"),
            *("完美", "优秀", "厉害", "满意", "不错", "修好", "解决了", "搞定", "给力"),
        ]
    )
    # Most topics one event attaches its feeling to.
    max_topics_per_event: int = 3
    # Every weight is multiplied by this once a night.
    nightly_decay: float = 0.9
    # A marker whose weight falls below this on decay is dropped.
    prune_below: float = 0.05
    # Most markers shown in GUT FEELINGS.
    inject_limit: int = 5
    # Markers lighter than this are not shown.
    min_weight_to_show: float = 0.5

    def __post_init__(self) -> None:
        for name, words in (("negative", self.negative_words), ("positive", self.positive_words)):
            if any(not word.strip() for word in words):
                raise ValueError(f"{name}_words must not contain blank entries")
        both = {_key(w) for w in self.negative_words} & {_key(w) for w in self.positive_words}
        if both:
            raise ValueError(f"words in both lexicons: {', '.join(sorted(both))}")
        if self.max_topics_per_event < 1:
            raise ValueError("max_topics_per_event must be at least 1")
        if not 0 < self.nightly_decay <= 1:
            raise ValueError("nightly_decay must be within (0, 1]")
        if self.prune_below < 0 or self.min_weight_to_show < 0 or self.inject_limit < 0:
            raise ValueError("prune_below, min_weight_to_show and inject_limit must be >= 0")


class Appraisal(msgspec.Struct, frozen=True, kw_only=True):
    """How an event felt: its valence, what it was about, and how much it mattered.

    ``labels``: the word shown for each topic, in the order of ``topics``; empty when
    unknown."""

    valence: Valence
    topics: tuple[str, ...]
    weight: float
    labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.labels and len(self.labels) != len(self.topics):
            raise ValueError("labels must be empty or one per topic")


class Marker(msgspec.Struct, frozen=True):
    """One (topic, valence) feeling, its accumulated weight, and its topic's label (the
    word to show; None when unknown, as for rows stored before labels)."""

    topic: str
    valence: Valence
    weight: float
    label: str | None = None


def _normal(text: str) -> str:
    """Text as the lexicon sees it: NFKC, lowercase, straight apostrophes."""
    if text.isascii():  # NFKC and the curly apostrophe are no-ops there
        return text.lower()
    return unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")


def _is_cjk_unigram(term: str) -> bool:
    return len(term) == 1 and _CJK_CHAR.match(term) is not None


@functools.cache
def _fillers() -> frozenset[str]:
    stems = {t for word in _NOT_TOPICS for t in tokens(word)}
    return frozenset(stems | {_REPEATED.sub(r"\1", t) for t in stems})


def is_filler(term: str) -> bool:
    """Whether ``term`` (a token) is an interjection or a contraction remnant: never a
    topic (see ``_NOT_TOPICS``)."""
    fillers = _fillers()
    return (
        term in fillers
        or _REPEATED.sub(r"\1", term) in fillers
        or _LAUGHTER.fullmatch(term) is not None
    )


def _contracted(text: str) -> frozenset[str]:
    """The tokens of the words ``text`` writes as contractions ("I'll" → ill)."""
    if "'" not in text and "\u2019" not in text:
        return frozenset()
    return frozenset(t for word in _CONTRACTION.findall(_normal(text)) for t in tokens(word))


def topic_terms(text: str, words: Sequence[str] | None = None) -> list[str]:
    """The terms of ``text`` a feeling can attach to: ``query_terms`` without single CJK
    characters, interjections and contraction remnants (``is_filler``, and any word the
    text writes as a contraction), first seen first.

    A lone Han character is too vague to carry a feeling (数 would touch every text about
    数据, 数学 or 数字, and particles such as 的 or 了 every Chinese text at all), so CJK
    topics are bigrams: 数据库 gives 数据 and 据库. A one-character word (猫) is lost.
    """
    return list(_topic_terms(text, words))


def _topic_terms(text: str, words: Sequence[str] | None) -> Iterator[str]:
    """``topic_terms`` one by one: appraise needs only the first few."""
    contracted = _contracted(text)
    for term in query_terms(text, words):
        if not _is_cjk_unigram(term) and term not in contracted and not is_filler(term):
            yield term


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


def _takes_over(label: str, current: str | None) -> bool:
    """Whether ``label`` replaces a topic's ``current`` label: there is none yet, or it
    is the same word with a capital where ``current`` was lowercased (a name first met
    at the start of a sentence)."""
    if current is None:
        return True
    return current == current.lower() and label != current and label.lower() == current


def _labels(text: str, topics: Sequence[str], words: Sequence[str] | None) -> tuple[str, ...]:
    """The label of each of ``topics`` (tokens of ``text``, which are ``words`` when
    given): its first word in ``text`` as shown (``_as_shown``), or a later one that
    takes over (``_takes_over``); the topic itself when no single word makes it (CJK
    bigrams)."""
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
            if _takes_over(label, found.get(stem)):
                found[stem] = label
    return tuple(found.get(topic, topic) for topic in topics)


def with_person(appraisal: Appraisal, person: str | None) -> Appraisal:
    """The appraisal of an event attributed to ``person``: the feeling is about the
    person too, whichever account they wrote from (topic: the name casefolded; label:
    the name as given)."""
    if person is None:
        return appraisal
    labels = (*appraisal.labels, person) if appraisal.labels or not appraisal.topics else ()
    return msgspec.structs.replace(
        appraisal, topics=(*appraisal.topics, person.casefold()), labels=labels
    )


def _key(text: str) -> str:
    """A normalised entry or match, apostrophes dropped: how hits find their entry."""
    return " ".join(_normal(text).replace("'", "").split())


class _Lexicon:
    def __init__(self, negative: tuple[str, ...], positive: tuple[str, ...]) -> None:
        self.valence: dict[str, Valence] = {}
        patterns: dict[str, str] = {}
        lexicons: tuple[tuple[tuple[str, ...], Valence], ...] = (
            (negative, "negative"),
            (positive, "positive"),
        )
        for words, valence in lexicons:
            for word in words:
                self.valence[_key(word)] = valence
                patterns[_key(word)] = _pattern(_normal(word))
        # Longest first, so that at any position the longest entry wins ("not working"
        # over "working", 不太好 over 太好); ties sorted for determinism.
        entries = sorted(self.valence, key=lambda w: (-len(w), w))
        # No entries, no regex: an empty pattern would match everywhere. The whole-word
        # guards wrap the English alternation once rather than every entry: the same
        # matches, several times faster.
        english = [patterns[w] for w in entries if not _CJK_CHAR.search(w)]
        chinese = [patterns[w] for w in entries if _CJK_CHAR.search(w)]
        parts = []
        if english:
            parts.append(rf"(?<![{_WORD_EDGE}])(?:{'|'.join(english)})(?![{_WORD_EDGE}])")
        parts += chinese
        self.regex = re.compile("|".join(parts)) if parts else None
        # Every term of every entry: none of them is a topic.
        self.terms = frozenset(t for word in entries for t in tokens(word))
        # A cheap test first, since most texts carry no valence and the full regex
        # tries every entry at every position: the first word of each English entry
        # (apostrophes dropped), and each CJK entry as a substring.
        self.first_words = frozenset(w.split()[0] for w in entries if not _CJK_CHAR.search(w))
        # The same, as the shared tokenizer would emit them: checked against a text's
        # tokens when the caller has them (the soul always does).
        self.first_tokens = frozenset(t for w in self.first_words for t in tokens(w))
        cjk = [re.escape(w) for w in entries if _CJK_CHAR.search(w)]
        self.cjk = re.compile("|".join(cjk)) if cjk else None

    def may_match(self, low: str, words: Sequence[str] | None) -> bool:
        if not low.isascii() and self.cjk is not None and self.cjk.search(low):
            return True
        if words is not None:
            return not self.first_tokens.isdisjoint(words)
        return not self.first_words.isdisjoint(_WORDS.findall(low.replace("'", "")))


def _pattern(word: str) -> str:
    if _CJK_CHAR.search(word):
        return re.escape(word)
    # Any whitespace between words; an entry's apostrophe may be left out. (Whole-word
    # guards are added around all English entries at once.)
    return r"\s+".join(re.escape(part).replace("'", "'?") for part in word.split())


@functools.lru_cache(maxsize=8)
def _build(negative: tuple[str, ...], positive: tuple[str, ...]) -> _Lexicon:
    return _Lexicon(negative, positive)


# The lexicon of the config in use, found by identity: building the key tuples for the
# lru_cache costs more than an appraisal itself.
_current: tuple[SomaticConfig, _Lexicon] | None = None


def _lexicon(config: SomaticConfig) -> _Lexicon:
    global _current
    if _current is None or _current[0] is not config:
        _current = (config, _build(tuple(config.negative_words), tuple(config.positive_words)))
    return _current[1]


def appraise(
    text: str, salience: float, config: SomaticConfig, words: Sequence[str] | None = None
) -> Appraisal | None:
    """The feeling ``text`` carries, or None when it carries none.

    The valence with more lexicon hits wins; a tie (including none) is None. Topics are
    up to ``max_topics_per_event`` terms of ``topic_terms`` in order of first
    appearance, leaving out the valence words and any term that is part of a lexicon
    entry. They may be empty ("thanks!"): such an appraisal adds no marker. The weight
    is the salience (>= 0).

    Each topic's label is its first word in the text, lowercase ("Deploys" opening a
    sentence: "deploys") unless a capital in it is meant: one inside the word ("API",
    "iOS"), or a first capital mid-sentence, a name ("thanks, Caroline": "Caroline").
    A later word in the text that is the same one with a capital mid-sentence takes
    over from a lowercased label ("Caroline, hi! ... Caroline" gives "Caroline"). A
    possessive 's is dropped; a CJK topic is its own label.
    """
    if not salience >= 0 or math.isinf(salience):
        raise ValueError("salience must be a finite number >= 0")
    lexicon = _lexicon(config)
    if lexicon.regex is None:
        return None
    low = _normal(text)
    if not lexicon.may_match(low, words):
        return None
    hits = {"positive": 0, "negative": 0}
    pieces: list[str] = []
    start = 0
    valence_of = lexicon.valence
    for match in lexicon.regex.finditer(low):
        found = match.group()
        hits[valence_of.get(found) or valence_of[_key(found)]] += 1
        pieces.append(low[start : match.start()])
        start = match.end()
    if hits["positive"] == hits["negative"]:
        return None
    valence: Valence = "positive" if hits["positive"] > hits["negative"] else "negative"
    topics = (t for t in _topic_terms(low, words) if t not in lexicon.terms)
    if not low.isascii():
        # Cutting the hits out keeps CJK bigrams that straddle them (库崩 in 数据库崩溃)
        # out. (In ASCII text a hit is whole words, all of them in lexicon.terms.)
        pieces.append(low[start:])
        remaining = set(tokens("\n".join(pieces)))
        topics = (t for t in topics if t in remaining)
    chosen = tuple(itertools.islice(topics, config.max_topics_per_event))
    labels = _labels(text, chosen, words)
    return Appraisal(valence=valence, topics=chosen, weight=salience, labels=labels)


def _strongest_first(marker: Marker) -> tuple[float, str, str]:
    return (-marker.weight, marker.topic, marker.valence)


class Markers:
    """A soul's somatic markers in memory: (topic, valence) → weight, and a label per
    topic.

    The soul actor loads them with ``from_rows``, persists ``rows()`` with ``label``
    (or the markers ``add`` returns), and calls ``decay`` once a night.
    """

    def __init__(self) -> None:
        self._weights: dict[tuple[str, Valence], float] = {}
        # Only topics with a marker have a label; a topic without one shows as itself.
        self._labels: dict[str, str] = {}

    @classmethod
    def from_rows(
        cls, rows: Iterable[tuple[str, str, float]], labels: Mapping[str, str] | None = None
    ) -> Markers:
        """Markers from stored ``(topic, valence, weight)`` rows (duplicate keys add up)
        and the stored ``labels`` by topic (those of topics without a row are dropped)."""
        markers = cls()
        for topic, valence, weight in rows:
            if valence not in _VALENCES:
                raise ValueError(f"valence must be positive or negative, not {valence!r}")
            if not weight >= 0 or math.isinf(weight):
                raise ValueError(f"weight of {topic!r} must be a finite number >= 0")
            checked: Valence = "positive" if valence == "positive" else "negative"
            key = (topic, checked)
            markers._weights[key] = markers._weights.get(key, 0.0) + weight
        topics = {topic for topic, _ in markers._weights}
        markers._labels = {t: label for t, label in (labels or {}).items() if t in topics}
        return markers

    def rows(self) -> list[tuple[str, Valence, float]]:
        """Every marker as ``(topic, valence, weight)``, sorted by topic then valence."""
        return [(t, v, w) for (t, v), w in sorted(self._weights.items())]

    def label(self, topic: str) -> str | None:
        """The word shown for ``topic``; None when unknown."""
        return self._labels.get(topic)

    def __len__(self) -> int:
        return len(self._weights)

    def add(self, appraisal: Appraisal) -> list[Marker]:
        """Add the appraisal's weight to each of its topics and take its labels (see
        ``appraise`` for when a label replaces one); return the changed markers, each
        with its topic's label."""
        changed: list[Marker] = []
        labels = appraisal.labels or (None,) * len(appraisal.topics)
        seen: set[str] = set()
        for topic, label in zip(appraisal.topics, labels, strict=True):
            if topic in seen:
                continue
            seen.add(topic)
            if label is not None and _takes_over(label, self._labels.get(topic)):
                self._labels[topic] = label
            key = (topic, appraisal.valence)
            weight = self._weights[key] = self._weights.get(key, 0.0) + appraisal.weight
            changed.append(Marker(topic, appraisal.valence, weight, self._labels.get(topic)))
        return changed

    def decay(self, config: SomaticConfig, *, nights: int = 1) -> int:
        """Apply ``nights`` nightly decays (catching up after downtime); return how many
        markers fell below ``prune_below`` and were dropped (a topic's label goes with
        its last marker)."""
        if nights < 0:
            raise ValueError("nights must be >= 0")
        factor = config.nightly_decay**nights
        kept = {k: w * factor for k, w in self._weights.items() if w * factor >= config.prune_below}
        pruned = len(self._weights) - len(kept)
        self._weights = kept
        topics = {topic for topic, _ in kept}
        self._labels = {t: label for t, label in self._labels.items() if t in topics}
        return pruned

    def _marker(self, key: tuple[str, Valence], weight: float) -> Marker:
        return Marker(key[0], key[1], weight, self._labels.get(key[0]))

    def touching(self, terms: Iterable[str]) -> list[Marker]:
        """The markers whose topic is one of ``terms``, strongest first (ties by topic,
        then valence)."""
        wanted = set(terms)
        found = [self._marker(k, w) for k, w in self._weights.items() if k[0] in wanted]
        return sorted(found, key=_strongest_first)

    def items(self) -> list[Marker]:
        """Every marker, strongest first (ties by topic, then valence)."""
        return sorted((self._marker(k, w) for k, w in self._weights.items()), key=_strongest_first)

    def totals(self) -> tuple[float, float]:
        """The summed weights ``(positive, negative)``, independent of insertion order."""
        positive = math.fsum(w for (_, v), w in self._weights.items() if v == "positive")
        negative = math.fsum(w for (_, v), w in self._weights.items() if v == "negative")
        return positive, negative


_FELT = {"negative": "uneasy", "positive": "good"}
_GUT_LEAD = "Felt from past experience, not rules; let these weigh on your judgement:"


def gut_feelings(markers: Sequence[Marker], config: SomaticConfig) -> str:
    """The body of the ``GUT FEELINGS`` section: a lead line, then up to ``inject_limit``
    markers of weight >= ``min_weight_to_show``, strongest first, as
    ``- deploy: uneasy (negative, 3.2)`` with the topic's label (the topic itself when
    it has none). Empty when none qualifies. Filler topics (``is_filler``) stored before
    they were kept out are never shown."""
    shown = sorted(
        (m for m in markers if m.weight >= config.min_weight_to_show and not is_filler(m.topic)),
        key=_strongest_first,
    )
    lines = [
        f"- {' '.join((m.label or m.topic).split())}: {_FELT[m.valence]}"
        f" ({m.valence}, {m.weight:.1f})"
        for m in shown[: config.inject_limit]
    ]
    return "\n".join([_GUT_LEAD, *lines]) if lines else ""

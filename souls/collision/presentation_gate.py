"""Presentation gate (DESIGN §3.8): a collision of old cards is shown only if it passes one
of four increments, otherwise silenced. Every verdict, passed or not, names the cards, lines
and terms behind it (its closest near miss when failed), since silenced draws are recorded.

- Pure and deterministic; cards are judged sorted by number, so any permutation of a draw
  gives an equal ``GateResult``. Always four verdicts, in ``ORDER``.
- Terms are compared only through ``souls.text.tokenize``. Content terms exclude stopwords, bare
  numbers, negation cues, CJK unigrams already in a bigram, and CJK bigrams holding a
  function character (mostly noise that spans a word boundary).
- Negated means holding a cue: English not, never, without, fails, n't forms...; Chinese
  不 没 无 未 别 非 勿 outside compounds such as 非常 or 未来.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import msgspec

from souls.text.tokenize import query_terms, tokens

__all__ = ["ORDER", "Criterion", "GateCard", "GateConfig", "GateResult", "Verdict", "judge"]

Criterion = Literal["answers_question", "counterexample", "changes_conclusion", "new_direction"]
ORDER: tuple[Criterion, ...] = get_args(Criterion)  # the order of GateResult.verdicts

_NEGATION_WORDS = """not no nor never neither none nothing nobody nowhere without cannot fail
fails failed failing can't won't don't doesn't didn't isn't aren't wasn't weren't couldn't
wouldn't shouldn't hasn't haven't hadn't mustn't needn't ain't"""
_EN_NEGATIONS = frozenset(tokens(_NEGATION_WORDS))  # stemmed, like the texts they meet
_ZH_NEGATIONS = frozenset("不没无未别非勿")
_ZH_NOT_NEGATIONS = frozenset("非常 未来 别人 别的 无论 不仅 不但 不过 不断 除非".split())
_ZH_FUNCTION = frozenset("的了吗呢吧啊么是在和与也就都这那个我你他她它们什怎哪把被着")


class GateConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Who judges: "builtin" (this module), "llm" (the soul's [llm]; the built-in judge
    # decides whenever the model fails), "auto" (llm when [llm] base_url is set).
    judge: Literal["auto", "builtin", "llm"] = "auto"
    # Share of an open question's content terms a topic or another card's line must cover.
    answer_overlap: float = 0.5
    # Content terms two conclusions must share for a negation between them to be tension.
    tension_overlap: int = 2
    # Share of a card conclusion's content terms the topic must cover to be able to change it.
    change_overlap: float = 0.5
    # Cards created at least this many days apart are distant.
    distant_days: float = 30.0
    # Shared tags (connection points) distant cards need to open a new direction.
    min_shared_tags: int = 1

    def __post_init__(self) -> None:
        if not (0 < self.answer_overlap <= 1 and 0 < self.change_overlap <= 1):
            raise ValueError("answer_overlap and change_overlap must be in (0, 1]")
        if self.tension_overlap < 1 or self.min_shared_tags < 1 or not self.distant_days >= 0:
            raise ValueError("tension_overlap, min_shared_tags must be >= 1; distant_days >= 0")


@dataclass(frozen=True, slots=True)
class GateCard:
    number: int
    conclusions: tuple[str, ...]  # one strong conclusion per line
    questions: tuple[str, ...]  # open questions
    tags: tuple[str, ...]  # connection points, e.g. ("deploy", "database")
    created: float  # unix seconds


@dataclass(frozen=True, slots=True)
class Verdict:
    criterion: Criterion
    passed: bool
    reason: str  # one sentence: which cards, lines and terms made it pass or fail
    evidence: tuple[int, ...]  # card numbers the reason names


@dataclass(frozen=True, slots=True)
class GateResult:
    passed: bool
    criterion: Criterion | None  # first passing criterion in ORDER; None means silence
    verdicts: list[Verdict]  # all four, in ORDER


@dataclass(frozen=True, slots=True)
class _Text:
    raw: str
    terms: frozenset[str]  # content terms
    cue: str  # a negation cue; "" when the text is not negated
    numbers: frozenset[str]  # digit sequences, leading zeros stripped


@dataclass(frozen=True, slots=True)
class _Card:
    number: int
    created: float
    tags: frozenset[str]  # each tag's content terms joined by spaces: "Deploys" is "deploy"
    conclusions: tuple[_Text, ...]
    questions: tuple[_Text, ...]
    terms: frozenset[str]  # content terms of all conclusions


_Candidate = tuple[bool, tuple[float, ...], str, tuple[int, ...]]  # passed, score, body, evidence


def _negation_cue(words: list[str]) -> str:
    # A Chinese cue counts only if one occurrence lies outside compounds such as 非常.
    counts, spared = Counter(words), Counter(c for w in words if w in _ZH_NOT_NEGATIONS for c in w)
    cues = (w for w in words if w in _ZH_NEGATIONS and counts[w] > spared[w])
    return next((w for w in words if w in _EN_NEGATIONS), "") or next(cues, "")


def _analyse(text: str) -> _Text:
    words = tokens(text)
    # "" (no token, no stopword) keeps query_terms from falling back to a text's stopwords.
    terms = [t for t in query_terms(text, [*words, ""]) if t and not t.isdigit()]
    in_bigrams = {c for t in terms if len(t) == 2 and not t.isascii() for c in t}
    content = frozenset(
        t
        for t in terms
        if t not in _EN_NEGATIONS
        and (t in _ZH_NOT_NEGATIONS or _ZH_NEGATIONS.isdisjoint(t))
        and _ZH_FUNCTION.isdisjoint(t)
        and not (len(t) == 1 and not t.isascii() and t in in_bigrams)
    )
    numbers = frozenset(n.lstrip("0") or "0" for w in words for n in re.findall("[0-9]+", w))
    return _Text(text, content, _negation_cue(words), numbers)


def _card(card: GateCard) -> _Card:
    tags = frozenset(t for t in (" ".join(sorted(_analyse(tag).terms)) for tag in card.tags) if t)
    lines, questions = tuple(map(_analyse, card.conclusions)), tuple(map(_analyse, card.questions))
    terms = frozenset().union(*(line.terms for line in lines))
    return _Card(card.number, card.created, tags, lines, questions, terms)


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= 60 else text[:59] + "…")  # reasons stay one line


def _terms(terms: frozenset[str] | set[str]) -> str:
    return ", ".join(sorted(terms)) or "none"


def _line(card: _Card, index: int) -> str:
    return f"card {card.number} line {index + 1} {_quote(card.conclusions[index].raw)}"


def _polarity(a: str, x: _Text, b: str, y: _Text) -> str:
    if bool(x.cue) != bool(y.cue):
        return f"only {a} is negated ({x.cue!r})" if x.cue else f"only {b} is negated ({y.cue!r})"
    return "both are negated" if x.cue else "neither is negated"


def _answers(topic: _Text, cards: list[_Card], cfg: GateConfig) -> Iterator[_Candidate]:
    for card in cards:
        sources = [("the topic", (card.number,), topic)] + [
            (_line(other, i), (card.number, other.number), line)
            for other in cards
            if other is not card
            for i, line in enumerate(other.conclusions)
        ]
        for question, (name, evidence, source) in itertools.product(card.questions, sources):
            size, shared = len(question.terms), question.terms & source.terms
            share = len(shared) / max(size, 1)
            enough = len(shared) >= 2 and share >= cfg.answer_overlap
            ok = size > 0 and (len(shared) == size if size <= 2 else enough)
            body = (
                f"card {card.number}'s open question {_quote(question.raw)} has "
                f"{len(shared)} of {size} terms ({_terms(shared)}) in {name}"
            )
            yield ok, (share, len(shared)), body, evidence


def _counterexample(cards: list[_Card], cfg: GateConfig) -> Iterator[_Candidate]:
    for a, b in itertools.combinations(cards, 2):
        for (i, x), (j, y) in itertools.product(enumerate(a.conclusions), enumerate(b.conclusions)):
            shared, flipped = x.terms & y.terms, bool(x.cue) != bool(y.cue)
            body = (
                f"{_line(a, i)} and {_line(b, j)} share {len(shared)} terms ({_terms(shared)}; "
                f"needs {cfg.tension_overlap}) and "
                f"{_polarity(f'card {a.number}', x, f'card {b.number}', y)}"
            )
            ok = len(shared) >= cfg.tension_overlap and flipped
            yield ok, (len(shared), flipped), body, (a.number, b.number)


def _changes(topic: _Text, cards: list[_Card], cfg: GateConfig) -> Iterator[_Candidate]:
    for card in cards:
        for i, line in enumerate(card.conclusions):
            size, shared = len(line.terms), line.terms & topic.terms
            share = len(shared) / max(size, 1)
            covered = size > 0 and share >= cfg.change_overlap and len(shared) >= min(2, size)
            # Each side holds a number the other lacks: a date beside the same number is no change.
            renumbered = bool(line.numbers - topic.numbers and topic.numbers - line.numbers)
            differs = renumbered or bool(line.cue) != bool(topic.cue)
            diff = _polarity(f"card {card.number}", line, "the topic", topic)
            if renumbered:
                diff += f", and numbers differ ({_terms(line.numbers)} vs {_terms(topic.numbers)})"
            body = (
                f"the topic covers {len(shared)} of {size} terms ({_terms(shared)}; needs "
                f"{cfg.change_overlap:.0%}) of {_line(card, i)}, and {diff}"
            )
            yield covered and differs, (share, differs), body, (card.number,)


def _new_direction(cards: list[_Card], cfg: GateConfig) -> Iterator[_Candidate]:
    for a, b in itertools.combinations(cards, 2):
        days, shared = abs(a.created - b.created) / 86400, a.terms & b.terms
        if a.tags and b.tags:
            tags = a.tags & b.tags
            linked = len(tags) >= cfg.min_shared_tags
            link_terms = {t for g in tags for t in g.split()}
            link = f"{len(tags)} shared tags ({_terms(tags)}; needs {cfg.min_shared_tags})"
        else:  # untagged cards may still be linked by one term of their conclusions
            link_terms = set(sorted(shared)[:1])
            linked, link = bool(link_terms), f"the conclusion term {_terms(link_terms)}"
        other, far = shared - link_terms, days >= cfg.distant_days
        body = (
            f"cards {a.number} and {b.number} were created {days:.1f} days apart (needs "
            f"{cfg.distant_days:g}), are linked by {link} and otherwise share {len(other)} "
            f"conclusion terms ({_terms(other)}; needs fewer than 2)"
        )
        met = far + linked + (len(other) < 2)
        yield met == 3, (met, days), body, (a.number, b.number)


def _verdict(criterion: Criterion, candidates: Iterator[_Candidate], cards: list[_Card]) -> Verdict:
    # Candidates come in canonical card order and max keeps the first best: a stable choice.
    best = max(candidates, key=lambda c: (c[0], c[1]), default=None)
    if best is None:
        numbers = tuple(c.number for c in cards)
        return Verdict(criterion, False, f"nothing to compare in cards {list(numbers)}", numbers)
    ok, _, body, evidence = best
    return Verdict(criterion, ok, ("passes: " if ok else "fails; closest: ") + body, evidence)


def judge(topic: str, cards: Sequence[GateCard], config: GateConfig) -> GateResult:
    """All four verdicts on ``cards`` thrown at ``topic``, in ``ORDER``; when none passed the
    draw is silenced, but the verdicts and their reasons are still returned for the ledger."""
    ordered = sorted(cards, key=lambda c: (c.number, c.created, c.conclusions, c.questions, c.tags))
    drawn, text = [_card(c) for c in ordered], _analyse(topic)
    verdicts = [
        _verdict("answers_question", _answers(text, drawn, config), drawn),
        _verdict("counterexample", _counterexample(drawn, config), drawn),
        _verdict("changes_conclusion", _changes(text, drawn, config), drawn),
        _verdict("new_direction", _new_direction(drawn, config), drawn),
    ]
    criterion = next((v.criterion for v in verdicts if v.passed), None)
    return GateResult(criterion is not None, criterion, verdicts)

"""Presentation gate (DESIGN §3.8): a collision of old cards is shown only if it passes one
of four increments, otherwise silenced. Silence is the normal outcome.

Each increment rests on what the cards say, read through :mod:`souls.collision.lines`
(content terms, clause-bound negations, questions):

- ``answers_question``: an open question of a card is answered by a statement (the
  topic, or another card's conclusion) holding at least two of its content terms and
  ``answer_overlap`` of them, and saying more than the question did. A question never
  answers one ("could you remind me?").
- ``counterexample``: two cards' conclusions on one subject (``tension_overlap`` shared
  content terms, ``tension_share`` of the shorter one's) where exactly one of them
  negates that subject in the clause that names it.
- ``changes_conclusion``: a topic that states something covers ``change_overlap`` of a
  card's conclusion (two terms at least) and says otherwise: the other polarity on
  those terms, or other numbers.
- ``new_direction``: today's topic names a card's connection point (a tag its line
  names) while that line comes from elsewhere (two content terms the topic lacks); or
  the topic names a connection point that cards reached at least ``distant_days`` apart
  share while they otherwise say different things. A link the topic does not reach is
  no collision with today's topic.

Invariants a caller may rely on:

- Pure and deterministic; cards are judged sorted by number, so any permutation of a draw
  gives an equal ``GateResult``. Always four verdicts, in ``ORDER``.
- Every verdict names the cards and lines behind it (its closest near miss when it
  failed): ``Verdict.lines`` holds the card lines that meet the criterion when it passed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import msgspec

from souls.collision.lines import Line, covers, read

__all__ = [
    "ORDER",
    "Cited",
    "Criterion",
    "GateCard",
    "GateConfig",
    "GateResult",
    "Verdict",
    "judge",
]

Criterion = Literal["answers_question", "counterexample", "changes_conclusion", "new_direction"]
ORDER: tuple[Criterion, ...] = get_args(Criterion)  # the order of GateResult.verdicts


class GateConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Who judges: "builtin" (this module), "llm" (the soul's [llm]; the built-in judge
    # decides whenever the model fails), "auto" (llm when [llm] base_url is set).
    judge: Literal["auto", "builtin", "llm"] = "auto"
    # Share of an open question's content terms a topic or another card's line must hold.
    answer_overlap: float = 0.5
    # Content terms two conclusions must share to be on one subject...
    tension_overlap: int = 2
    # ...and the share of the shorter one's content terms that is.
    tension_share: float = 0.5
    # Share of a card conclusion's content terms the topic must cover to be able to change it.
    change_overlap: float = 0.5
    # Cards whose conclusions were reached at least this many days apart are distant.
    distant_days: float = 30.0
    # Shared tags (connection points) distant cards need to open a new direction.
    min_shared_tags: int = 1

    def __post_init__(self) -> None:
        shares = (self.answer_overlap, self.change_overlap, self.tension_share)
        if not all(0 < share <= 1 for share in shares):
            raise ValueError("answer_overlap, change_overlap and tension_share must be in (0, 1]")
        if self.tension_overlap < 1 or self.min_shared_tags < 1 or not self.distant_days >= 0:
            raise ValueError("tension_overlap, min_shared_tags must be >= 1; distant_days >= 0")


@dataclass(frozen=True, slots=True)
class GateCard:
    number: int
    conclusions: tuple[str, ...]  # one strong conclusion per line
    questions: tuple[str, ...]  # open questions
    # Connection points, e.g. ("deploy", "database"): the card's tags, and the collider
    # adds the deck's other tags that one of its conclusions names.
    tags: tuple[str, ...]
    created: float  # unix seconds: when its conclusions were reached
    # The card's numbers of its open questions (closed ones are not drawn); 1, 2...
    # when empty.
    asked: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Cited:
    """A card line a verdict rests on."""

    card: int
    kind: Literal["line", "question"]  # a conclusion, or an open question
    number: int  # from 1: the conclusion's number, or the question's on its card
    text: str


@dataclass(frozen=True, slots=True)
class Verdict:
    criterion: Criterion
    passed: bool
    reason: str  # one sentence: which cards, lines and terms made it pass or fail
    evidence: tuple[int, ...]  # card numbers the reason names
    lines: tuple[Cited, ...] = ()  # the card lines that meet the criterion (when passed)


@dataclass(frozen=True, slots=True)
class GateResult:
    passed: bool
    criterion: Criterion | None  # first passing criterion in ORDER; None means silence
    verdicts: list[Verdict]  # all four, in ORDER


@dataclass(frozen=True, slots=True)
class _Card:
    number: int
    created: float
    tags: tuple[frozenset[str], ...]  # each tag's content terms ("Deploys" is {"deploy"})
    labels: dict[frozenset[str], str]  # each tag as the card writes it
    conclusions: tuple[Line, ...]
    questions: tuple[Line, ...]
    asked: tuple[int, ...]  # the card's number of each of ``questions``
    terms: frozenset[str]  # content terms of all conclusions


# passed, score (higher is closer), body, evidence, lines
_Candidate = tuple[bool, tuple[float, ...], str, tuple[int, ...], tuple[Cited, ...]]


def _card(card: GateCard, people: frozenset[str]) -> _Card:
    labels = {read(tag).terms - people: " ".join(tag.split()) for tag in reversed(card.tags)}
    labels.pop(frozenset(), None)
    tags = tuple(t for t in (read(tag).terms - people for tag in card.tags) if t)
    lines = tuple(read(text).without(people) for text in card.conclusions)
    questions = tuple(read(text).without(people) for text in card.questions)
    terms = frozenset().union(*(line.terms for line in lines))
    asked = card.asked if len(card.asked) == len(questions) else tuple(range(1, len(questions) + 1))
    return _Card(card.number, card.created, tags, labels, lines, questions, asked, terms)


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= 60 else text[:59] + "…")  # reasons stay one line


def _terms(terms: frozenset[str] | set[str]) -> str:
    return ", ".join(sorted(terms)) or "none"


def _cite(card: _Card, index: int, kind: Literal["line", "question"] = "line") -> Cited:
    if kind == "question":
        return Cited(card.number, kind, card.asked[index], card.questions[index].raw)
    return Cited(card.number, kind, index + 1, card.conclusions[index].raw)


def _name(cited: Cited) -> str:
    return f"card {cited.card} {cited.kind} {cited.number} {_quote(cited.text)}"


def _polarity(a: str, x: Line, b: str, y: Line, on: frozenset[str]) -> str:
    """Which side negates the shared terms ``on`` in the clause that names them."""
    nx, ny = x.negates(on), y.negates(on)
    if nx != ny:
        return f"only {a} is negated ({x.cue!r})" if nx else f"only {b} is negated ({y.cue!r})"
    return "both are negated" if nx else "neither is negated"


def _answers(topic: Line, cards: list[_Card], cfg: GateConfig) -> Iterator[_Candidate]:
    for card in cards:
        sources: list[tuple[str, tuple[int, ...], Line, tuple[Cited, ...]]] = [
            ("the topic", (card.number,), topic, ())
        ]
        sources += [
            (_name(_cite(other, i)), (card.number, other.number), line, (_cite(other, i),))
            for other in cards
            if other is not card
            for i, line in enumerate(other.conclusions)
        ]
        for q, (name, evidence, source, cited) in itertools.product(
            range(len(card.questions)), sources
        ):
            question = card.questions[q]
            answered = covers(question, source, cfg.answer_overlap)
            shared = answered or (question.terms & source.terms)
            size = len(question.terms)
            how = "asks instead of stating" if source.asks else f"holds {len(shared)} of {size}"
            body = (
                f"{_name(_cite(card, q, 'question'))} against {name}, which {how} of its "
                f"terms ({_terms(shared)}; needs 2 and {cfg.answer_overlap:.0%})"
            )
            share = len(shared) / max(size, 1)
            lines = (_cite(card, q, "question"), *cited)
            yield bool(answered), (share, len(shared), not source.asks), body, evidence, lines


def _counterexample(cards: list[_Card], cfg: GateConfig) -> Iterator[_Candidate]:
    for a, b in itertools.combinations(cards, 2):
        for (i, x), (j, y) in itertools.product(enumerate(a.conclusions), enumerate(b.conclusions)):
            shared = x.terms & y.terms
            shorter = max(1, min(len(x.terms), len(y.terms)))
            subject = len(shared) >= cfg.tension_overlap and len(shared) / shorter >= (
                cfg.tension_share
            )
            flipped = x.negates(shared) != y.negates(shared)
            body = (
                f"{_name(_cite(a, i))} and {_name(_cite(b, j))} share {len(shared)} terms "
                f"({_terms(shared)}; needs {cfg.tension_overlap} and "
                f"{cfg.tension_share:.0%} of the shorter) and "
                f"{_polarity(f'card {a.number}', x, f'card {b.number}', y, shared)}"
            )
            ok = subject and flipped and not (x.asks or y.asks)
            score = (float(subject), float(flipped), len(shared) / shorter)
            yield ok, score, body, (a.number, b.number), (_cite(a, i), _cite(b, j))


def _changes(topic: Line, cards: list[_Card], cfg: GateConfig) -> Iterator[_Candidate]:
    for card in cards:
        for i, line in enumerate(card.conclusions):
            size, shared = len(line.terms), line.terms & topic.terms
            share = len(shared) / max(size, 1)
            covered = size > 0 and share >= cfg.change_overlap and len(shared) >= 2
            # Each side holds a number the other lacks: a date beside the same number is no change.
            renumbered = bool(line.numbers - topic.numbers and topic.numbers - line.numbers)
            differs = renumbered or line.negates(shared) != topic.negates(shared)
            diff = _polarity(f"card {card.number}", line, "the topic", topic, shared)
            if renumbered:
                diff += f", and numbers differ ({_terms(line.numbers)} vs {_terms(topic.numbers)})"
            if topic.asks:
                diff += ", but the topic asks instead of stating"
            body = (
                f"the topic covers {len(shared)} of {size} terms ({_terms(shared)}; needs 2 "
                f"and {cfg.change_overlap:.0%}) of {_name(_cite(card, i))}, and {diff}"
            )
            ok = covered and differs and not topic.asks
            yield ok, (share, float(differs)), body, (card.number,), (_cite(card, i),)


def _linking(card: _Card, link: frozenset[str]) -> int:
    """The first conclusion of ``card`` that names one of the ``link`` terms (its first
    conclusion when none does: a tag given by hand need not be in a line)."""
    return next((i for i, line in enumerate(card.conclusions) if line.terms & link), 0)


def _new_direction(topic: Line, cards: list[_Card], cfg: GateConfig) -> Iterator[_Candidate]:
    yield from _topic_direction(topic, cards, cfg)
    for a, b in itertools.combinations(cards, 2):
        days, shared = abs(a.created - b.created) / 86400, a.terms & b.terms
        if a.tags or b.tags:
            tags = {t for t in a.tags if t in b.tags}
            named = {t for t in tags if t <= topic.terms}
            link_terms = frozenset(term for tag in tags for term in tag)
            shown = {" = ".join(dict.fromkeys((a.labels[t], b.labels[t]))) for t in tags}
            link = f"{len(tags)} shared tags ({_terms(shown)}; needs {cfg.min_shared_tags})"
            linked = len(tags) >= cfg.min_shared_tags
        else:  # untagged cards (by hand) may be linked by a term of their conclusions
            link_terms = frozenset(sorted(shared & topic.terms)[:1])
            named = {link_terms} if link_terms else set()
            linked, link = bool(link_terms), f"the conclusion term {_terms(link_terms)}"
        other, far = shared - link_terms, days >= cfg.distant_days
        body = (
            f"cards {a.number} and {b.number} were reached {days:.1f} days apart (needs "
            f"{cfg.distant_days:g}), are linked by {link}, "
            f"{'named' if named else 'not named'} by the topic, and otherwise share "
            f"{len(other)} conclusion terms ({_terms(other)}; needs fewer than 2)"
        )
        lines: tuple[Cited, ...] = ()
        if a.conclusions and b.conclusions:
            lines = (_cite(a, _linking(a, link_terms)), _cite(b, _linking(b, link_terms)))
            body += f": {_name(lines[0])} and {_name(lines[1])}"
        met = far + linked + bool(named) + (len(other) < 2) + bool(lines)
        yield met == 5, (met, days), body, (a.number, b.number), lines


def _topic_direction(topic: Line, cards: list[_Card], cfg: GateConfig) -> Iterator[_Candidate]:
    """Today's topic names a card's connection point, and the card's line on it comes
    from elsewhere: it brings two content terms or more the topic lacks."""
    for card in cards:
        for tag in card.tags:
            at = next((i for i, line in enumerate(card.conclusions) if tag <= line.terms), None)
            if at is None:
                continue
            named = tag <= topic.terms
            elsewhere = card.conclusions[at].terms - topic.terms
            cited = _cite(card, at)
            body = (
                f"the topic {'names' if named else 'does not name'} card {card.number}'s "
                f"connection point {card.labels[tag]!r} of {_name(cited)}, which brings "
                f"{len(elsewhere)} terms the topic lacks ({_terms(elsewhere)}; needs 2)"
            )
            met = named + (len(elsewhere) >= 2)
            yield met == 2, (met, len(elsewhere)), body, (card.number,), (cited,)


def _verdict(criterion: Criterion, candidates: Iterator[_Candidate], cards: list[_Card]) -> Verdict:
    # Candidates come in canonical card order and max keeps the first best: a stable choice.
    best = max(candidates, key=lambda c: (c[0], c[1]), default=None)
    if best is None:
        numbers = tuple(c.number for c in cards)
        return Verdict(criterion, False, f"nothing to compare in cards {list(numbers)}", numbers)
    ok, _, body, evidence, lines = best
    reason = ("passes: " if ok else "fails; closest: ") + body
    return Verdict(criterion, ok, reason, evidence, lines if ok else ())


def judge(
    topic: str,
    cards: Sequence[GateCard],
    config: GateConfig,
    participants: frozenset[str] = frozenset(),
) -> GateResult:
    """All four verdicts on ``cards`` thrown at ``topic``, in ``ORDER``; when none passed the
    draw is silenced, but the verdicts and their reasons are still returned for the ledger.
    ``participants``: the terms of the names of the people talking ("Hey Maria"), which
    say nothing about a subject and are left out of every comparison."""
    ordered = sorted(cards, key=lambda c: (c.number, c.created, c.conclusions, c.questions, c.tags))
    drawn = [_card(c, participants) for c in ordered]
    text = read(topic).without(participants)
    verdicts = [
        _verdict("answers_question", _answers(text, drawn, config), drawn),
        _verdict("counterexample", _counterexample(drawn, config), drawn),
        _verdict("changes_conclusion", _changes(text, drawn, config), drawn),
        _verdict("new_direction", _new_direction(text, drawn, config), drawn),
    ]
    criterion = next((v.criterion for v in verdicts if v.passed), None)
    return GateResult(criterion is not None, criterion, verdicts)

# ruff: noqa: RUF001  (full-width punctuation and curly quotes are what the patterns match)
"""Rule extraction of claims (DESIGN §3.10): zero-cost English and Chinese patterns.

``find_claims(text, ts)`` is the whole job; ``souls.knowledge.claims.extract_rules`` turns its
matches into Candidates. Pure and deterministic. What a caller may rely on:

- Precision over recall. A pattern fires only on a first-person statement (I, my, we,
  our, 我, 我们). Questions, conditionals ("if I move to..."), speech inside quotation
  marks and generic objects ("it", "that idea", 这个) never yield a claim.
- ``text[start:end]`` (the quote) is one stretch of one sentence holding the trigger, the
  value and the date phrase the due time came from. Values are verbatim pieces of the
  quote, trimmed of whitespace and trailing punctuation; names and places lose a leading
  "the", likes and dislikes a leading article.
- Confidence is "low" when the sentence carries hearsay (apparently, I heard, 听说...),
  else "medium" when it is hedged (maybe, I think, 可能...), else "high".
- A plan whose action addresses the listener ("I'll send you...", 给你打电话) is a
  commitment: a commitment is a promise owed to someone, a plan is one's own intent.
- Due times are midnight UTC of a date resolved against ``ts`` in UTC, as a bare date in
  TASKS.md is read (DESIGN §3.9). "next Monday" and 下周一 are the Monday of next week,
  "this Monday" and 这周一 the Monday of this week, and a bare weekday ("on Friday",
  周五) its next occurrence after today. Chinese numerals in dates are not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal, NamedTuple

from souls.knowledge.claim_cancel import find_cancelled
from souls.knowledge.claim_dates import find_due
from souls.knowledge.claim_events import find_events, opens_clause
from souls.knowledge.claim_fragments import AP
from souls.knowledge.claim_patterns import RULES, WORDS, Rule, Trigger
from souls.knowledge.claim_scan import Claimed, Cue, Quotes, ends_at
from souls.knowledge.claim_validators import NAMED, VALIDATORS

__all__ = ["Confidence", "RuleMatch", "find_claims", "find_due"]

Confidence = Literal["high", "medium", "low"]


class RuleMatch(NamedTuple):
    slot: str
    value: str
    start: int  # text[start:end] is the quote
    end: int
    confidence: Confidence
    due: float | None  # epoch seconds, plans and commitments only
    when: float | None = None  # when a told event happened (its valid time), if it says
    about: str | None = None  # the named person it is about, when not the speaker
    renames: bool = False  # a rename or correction: it replaces the value it names anew
    cancels: bool = False  # a plan called off: the value names the plan it closes


# The rules by trigger, in order (consecutive rules share their group's trigger).
_GROUPS: tuple[tuple[Trigger, tuple[Rule, ...]], ...] = tuple(
    (group[0].trigger, tuple(group))
    for group in (
        [rule for rule in RULES if rule.trigger is trigger]
        for trigger in {id(rule.trigger): rule.trigger for rule in RULES}.values()
    )
)
_ACTION_SLOTS = frozenset({"plan", "commitment"})

# Sentences end at CJK or English terminators; a "." ends one only before a space or
# the end, and not after a title such as "Dr" or "St" ("St. Louis" stays one place).
# The terminator comes first and the title is looked behind it, so the scan skips to
# the next terminator at C speed.
_SENTENCE_END = re.compile(
    r"[。！？!?\n…]+|\.(?<!\bMr\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bMt\.)(?<!\bMrs\.)"
    r"(?<!\bJr\.)(?<!\bSr\.)\.*(?=\s|$)"
)
# A wh-word opens a question when a verb or "you" follows it ("what do you...", "how is
# it"); "When I was younger, we went to Oregon." and "What I love is art" are statements.
_AUX = r"do|does|did|am|are|is|was|were|can|could|would|will|shall|should|have|has"
_QUESTION_OPENING = re.compile(
    rf"\s*(?i:(?:{_AUX})\b|(?:what|why|how|where|when|who|which)(?:{AP}s|{AP}re|{AP}d|\b"
    rf"(?!\s+(?:i|we|my|our|me)\b)))"
)
_QUESTION_ZH = re.compile(r"[吗么呢]\s*$|是不是|有没有|要不要|会不会|什么")
# Looked for only just before a match (``claim_scan.ends_at``), never in the whole prefix.
_CONDITIONAL = re.compile(
    r"(?:(?i:\b(?:if|unless|whether|once|in\s+case)\s+)|如果|要是|假如|万一)$"
)
# Someone else's words, introduced just before a match ("my friend was like, I quit my
# job", "she said I should..."): the speaker's own "I was like" and "I said" stay theirs.
_REPORTED = re.compile(
    r"(?<![Ii]\s)(?<![Ww]e\s)(?i:\b(?:(?:was|is|were|are)\s+like|said|says|told\s+(?:me|us)"
    r"|goes|went))\s*[,:]\s*$|(?<![我])(?:说|问)[，,：:]\s*$"
)
# Each with what every alternative of it needs (claim_scan.Cue).
_HEARSAY_CUE = Cue("apparently|supposedly|reportedly|allegedly|heard|say|said|told", "说")
_HEDGE_CUE = Cue(
    "maybe|perhaps|probably|possibly|might|think|guess|suppose|sure|believe|kind|sort",
    "可能|也许|大概|或许|好像|估计|应该|说不定|我觉得",
)
_HEARSAY = re.compile(
    rf"(?i:\b(?:apparently|supposedly|reportedly|allegedly|i\s+heard|i{AP}ve\s+heard"
    r"|they\s+say|people\s+say|(?:he|she|they|someone|somebody)\s+(?:said|says|told\s+me))\b)"
    r"|听说|据说|听人说|别人说|他们说|他说|她说"
)
_HEDGE = re.compile(
    rf"(?i:\b(?:maybe|perhaps|probably|possibly|might|i\s+think|i\s+guess|i\s+suppose"
    rf"|not\s+sure|i\s+believe|kind\s+of|sort\s+of|i{AP}m\s+not\s+sure)\b)"
    r"|可能|也许|大概|或许|好像|估计|应该|说不定|我觉得"
)
# Every rule needs a first-person word, or a request for a language ("please reply in",
# "reply in", 请用, 用...回答).
_FIRST_PERSON = frozenset("i my we our me please reply respond answer talk speak write".split())


def _any_word(words: frozenset[str]) -> re.Pattern[str]:
    """A regex that finds, in lowered text, any of ``words`` as a whole WORDS word (no
    a-z on either side). Grouped by first letter, with the boundary before a word checked
    after that letter: every alternative starts with a literal, so the regex engine
    skips ahead to where one could start. Cheaper than splitting the text into words."""
    rests: dict[str, list[str]] = {}
    for word in sorted(words):
        rests.setdefault(word[0], []).append(word[1:])
    return re.compile(
        "|".join(f"{f}(?<![a-z]{f})(?:{'|'.join(r)})(?![a-z])" for f, r in rests.items())
    )


_FIRST_PERSON_WORD = _any_word(_FIRST_PERSON)
_FIRST_PERSON_HAN = ("我", "说好", "请", "用", "说")
_YOU = re.compile(r"(?i:\byou\b)|你|您")


def find_claims(text: str, ts: float) -> list[RuleMatch]:
    """Claims of the speaker of ``text``, in text order, one per (slot, casefolded value)."""
    low = text.lower()
    if (
        _FIRST_PERSON_WORD.search(low) is None
        and (text.isascii() or not any(h in text for h in _FIRST_PERSON_HAN))
        and "allergic" not in low
        and "过敏" not in text
    ):
        return []  # the rules need the speaker to speak of themself (or of an allergy)
    found: list[RuleMatch] = []
    seen: set[tuple[str, str]] = set()
    for start, end, asked in _sentences(text):
        sentence = text[start:end]
        if asked or _asks(sentence):
            continue
        words = set(WORDS.findall(sentence.lower()))
        rules = [
            rule for trigger, group in _GROUPS if trigger.hit(words, sentence) for rule in group
        ]
        said = _Said(sentence, ts)
        claims = list(_sentence_claims(said, rules))
        for match in [*claims, *_told(said, claims)]:
            key = (match.slot, match.value.casefold())
            if key not in seen:
                seen.add(key)
                found.append(match._replace(start=match.start + start, end=match.end + start))
    return found


def _asks(sentence: str) -> bool:
    """Whether a sentence without a question mark is a question all the same."""
    if _QUESTION_OPENING.match(sentence):
        return True
    return not sentence.isascii() and _QUESTION_ZH.search(sentence) is not None


def _sentences(text: str) -> Iterator[tuple[int, int, bool]]:
    """(start, end, is a question) of each sentence, its terminator excluded."""
    start = 0
    for end in _SENTENCE_END.finditer(text):
        yield start, end.start(), "?" in end.group() or "？" in end.group()
        start = end.end()
    if start < len(text):
        yield start, len(text), False


class _Said:
    """One sentence and what its matches ask of it, each found at most once: its
    confidence, its quotation marks, whether it renames, its due date. Every match of a
    sentence asks the same, so nothing here is read again per match (a sentence of many
    matches would cost its length times theirs)."""

    def __init__(self, sentence: str, ts: float) -> None:
        self.text, self.ts = sentence, ts
        self.confidence = _confidence(sentence)
        self._quotes: Quotes | None = None
        self._renames: bool | None = None
        self._due: tuple[tuple[int, int, float] | None] | None = None

    def qualified(self, at: int) -> bool:
        """Whether what starts at ``at`` is quoted or reported speech ("she was like, I...")
        or under a condition ("if I")."""
        if self._quotes is None:
            self._quotes = Quotes(self.text)
        return (
            self._quotes.inside(at)
            or ends_at(_CONDITIONAL, self.text, at)
            or ends_at(_REPORTED, self.text, at)
        )

    @property
    def renames(self) -> bool:
        if self._renames is None:
            self._renames = _RENAMES.search(self.text) is not None
        return self._renames

    @property
    def due(self) -> tuple[int, int, float] | None:
        if self._due is None:
            self._due = (find_due(self.text, self.ts),)
        return self._due[0]


# How much of the rest of a sentence a validator is shown: enough for what it reads
# there (的时候), never the whole rest once per match.
_AFTER = 16


def _sentence_claims(said: _Said, rules: list[Rule]) -> Iterator[RuleMatch]:
    sentence, confidence = said.text, said.confidence
    actions = Claimed(len(sentence))  # spans already claimed by a plan or commitment
    for rule in rules:
        for m in rule.pattern.finditer(sentence):
            if said.qualified(m.start()):
                continue
            if m.group(0)[:1] in "IiWw" and ends_at(_RELATIVE, sentence, m.start()):
                continue  # "what I love is...", "the things I like": not a statement of it
            if _inside_noun_phrase(sentence, m):
                continue  # "a job I enjoy every day": the taste is the job's, said in passing
            facts: list[RuleMatch] = []
            about = m.groupdict().get("about")
            for slot, raw in m.groupdict().items():
                if raw is None or slot == "about":
                    continue
                if slot in _ACTION_SLOTS:
                    span = m.span(slot)
                    if not actions.overlaps(*span):
                        actions.take(*span)
                        action = _action(slot, sentence, m, said.due, rule.dated, confidence)
                        if action is not None:
                            yield action
                    continue
                value = _clean(slot, raw)
                after = sentence[m.end(slot) : m.end(slot) + _AFTER]
                valid = NAMED.get(slot, VALIDATORS[slot]) if rule.named else VALIDATORS[slot]
                if not (value and valid(value, after)):
                    break  # one implausible value discredits the whole match
                facts.append(
                    RuleMatch(
                        slot, value, m.start(), m.end(), confidence, None,
                        about=_clean("name", about) if about else None, renames=said.renames,
                    )
                )  # fmt: skip
            else:
                yield from facts


def _told(said: _Said, claims: list[RuleMatch]) -> Iterator[RuleMatch]:
    """The events the sentence tells (``souls.knowledge.claim_events``) and the plans it
    calls off (``souls.knowledge.claim_cancel``). What a slot rule read of the sentence
    (``claims``) in the present is a state, not a told event: "I work as a nurse" is the
    job, "I go by Sam" the name; "I moved to Porto" is the location and an event."""
    sentence, confidence = said.text, said.confidence
    states: Claimed | None = None
    actions: Claimed | None = None  # what the plan rules read: marked once, when asked
    for event in find_events(sentence, said.ts):
        if said.qualified(event.start):
            continue
        if event.planned:
            # An arrangement told in the progressive ("I'm putting on a show next month");
            # a plan rule that read the same words comes first.
            if actions is None:
                actions = Claimed(len(sentence))
                for claim in claims:
                    if claim.slot in _ACTION_SLOTS:
                        actions.take(claim.start, claim.end)
            if not actions.overlaps(event.start, event.end):
                due, value = said.due, event.value
                at = sentence.find(value, event.start)
                if due is not None and at <= due[0] < at + len(value):
                    value = _DATE_CONNECTOR.sub("", value[: due[0] - at].rstrip())
                end = max(event.end, due[1]) if due is not None else event.end
                if len(value.split()) >= 2:
                    yield RuleMatch("plan", value, event.start, end, confidence,
                                    due[2] if due else None)  # fmt: skip
            continue
        if event.ongoing:
            if states is None:
                states = Claimed(len(sentence))
                for claim in claims:
                    if claim.slot not in _ACTION_SLOTS:
                        states.take(claim.start, claim.end)
            if states.holds(sentence.find(event.value, event.start)):
                continue
        when = event.when.at if event.when is not None else None
        yield RuleMatch("event", event.value, event.start, event.end, confidence, None, when)
    for start, end, value in find_cancelled(sentence):
        yield RuleMatch("plan", value, start, end, confidence, None, cancels=True)


# The words that make what follows a relative clause ("what I love is art").
_RELATIVE = re.compile(
    r"(?i:\b(?:what|which|that|whatever|things?|stuff|ones?|everything|something|anything|all"
    r"|everyone|everybody|anyone|anybody|someone|somebody|people|those|whoever)"
    r"\s*$)"
)


# A noun phrase right before a taste's "I"/"we" makes it a relative clause's subject ("a
# job I enjoy", "the stories we like"): a determiner and up to three words, no
# punctuation between. Not after a preposition ("in the end I love it": an adverbial),
# nor when its last word is a time ("these days I enjoy baking") or still says the taste
# ("one of the reasons I love hiking"; "how much I love opera" has no determiner).
_NOUN_BEFORE = re.compile(
    r"(?i:(?:\b(?P<prep>in|on|at|after|before|during|for|by|with|over|since|from|until"
    r"|through|around|of)\s+)?\b(?:a|an|the|this|that|these|those|my|your|his|her|our"
    r"|their)\s+(?:[a-z'’-]+\s+){0,2}(?P<last>[a-z'’-]+)\s+)$"
)
_TASTE_OPENERS = frozenset(
    """why how much reason reasons day days week weeks weekend weekends month months year
    years night nights morning mornings evening evenings time times summer winter spring
    fall autumn moment""".split()
)
_TASTES = ("likes", "dislikes")


def _inside_noun_phrase(sentence: str, m: re.Match[str]) -> bool:
    """Whether a taste rule's "I"/"we" (at ``m.start()``) is a relative clause's subject,
    after a noun phrase ("a job I enjoy", "the stories we like"), rather than opening a
    clause ("these days I enjoy baking", "man I love pizza")."""
    if m.group(0)[:1] not in "IiWw" or not any(m.group(t) for t in _TASTES if t in m.re.groupindex):
        return False
    if opens_clause(sentence, m.start()):
        return False
    noun = _NOUN_BEFORE.search(sentence, max(0, m.start() - 60), m.start())
    return (
        noun is not None
        and noun.group("prep") is None
        and noun.group("last").lower() not in _TASTE_OPENERS
    )


def _confidence(sentence: str) -> Confidence:
    low = sentence.lower()
    if not _HEARSAY_CUE.absent(sentence, low) and _HEARSAY.search(sentence):
        return "low"
    if not _HEDGE_CUE.absent(sentence, low) and _HEDGE.search(sentence):
        return "medium"
    return "high"


# A rename or correction names the value anew: it replaces the one it corrects, even in
# a slot that holds several values (a second daughter is no rename; "she's called Mochi
# now" is).
_RENAMES = re.compile(
    r"(?i:\brenamed\b|\bnew\s+name\b|\b(?:called|named)\s+\S{1,40}\s+now\b|\bnow\s+(?:called|named)\b"
    r"|\bactually\b|\bi\s+mean\b|\bsorry\b|\bcorrection\b|\bnot\s+\S{1,40}?\s*,\s*but\b)"
    r"|改名|改叫|改成|其实|说错了|不是.{1,6}[是叫]|现在叫"
)


# A taste's last word when what is liked is not in the value.
_UNFINISHED = frozenset(
    """to of in on at for with from by about into onto through them it him her this that
    these those one ones there""".split()
)
_TRAILING = re.compile(r"[\s.,;:!?。，；：！？、'\"“”’)）]+$")
_FILLER_TAIL = re.compile(r"(?:\s+(?i:lol|lmao|haha+|tbh|xd))+$")
_LEADING_ARTICLE = re.compile(r"^(?i:the|an?)\s+")
_DEFINITE = re.compile(r"(?i:the)\s")
_DEICTIC = re.compile(r"(?i:that|this|those|these)\s")
# What a thing shown or told has, said with "the": the photo's, not a taste in general.
_SHOWN = re.compile(
    r"(?i:the\s+(?:colou?rs?|vibes?|name|details?|design|look|style|pic(?:ture)?s?|photos?"
    r"|shot|view|sound|energy|feel|texture|shape|pattern|message|lighting|composition|outfit"
    r"|idea|concept|mood|atmosphere|setting|scenery|background|artwork|result|ending"
    r"|story|writing|work|way\s+\S+))"
)
# "the" before one singular noun points at the one just talked about ("I love the movie",
# "the game"), but for what is "the" in general: places and times of the world around.
_THE_ONE = re.compile(r"(?i:the)\s+([a-z]+)")
_GENERIC_THE = frozenset(
    """beach ocean sea sun sunshine rain snow outdoors countryside city mountains forest woods
    lake water park gym summer winter spring fall autumn night morning evening weekend
    holidays theater theatre cinema radio internet""".split()
)


def _anaphoric(value: str) -> bool:
    one = _THE_ONE.fullmatch(value)
    if one is None:
        return False
    noun = one.group(1)
    return not noun.endswith("s") and noun not in _GENERIC_THE


# The courtesies that close a turn ("I'll let you know", "see you soon", "I'll do my
# best", 回头聊), and sending what the chat is about ("I'll send you a pic"): said to be
# polite or to go on talking, not promises anyone keeps track of.
_COURTESY = re.compile(
    r"(?i:\b(?:let\s+(?:you|u)\s+know|keep\s+(?:you|u)\s+(?:posted|updated|informed|in\s+the"
    r"\s+loop)|see\s+(?:you|u|ya)|talk\s+(?:to\s+(?:you|u)\s*)?(?:soon|later)|catch\s+(?:you|u)"
    r"|get\s+back\s+to\s+(?:you|u)|be\s+in\s+touch|(?:do|try)\s+my\s+(?:very\s+)?best"
    r"|keep\s+(?:my\s+)?fingers\s+crossed|keep\s+(?:it|that|this)\s+in\s+mind"
    r"|think\s+about\s+it|(?:send|show|get)\s+(?:(?:you|u)\s+)?(?:(?:a|the|some|my|that|this)\s+)?"
    r"(?:pics?|photos?|pictures?|vids?|videos?|links?|snaps?|it)(?:\s+(?:over\s+)?to\s+(?:you|u))?"
    r"\s*(?:soon|later|asap)?$)\b)|回头聊|再聊|再联系|有空聊"
    r"|^(?:想你|爱你|加油|努力)的?$|^(?:给你)?发(?:给你|你)?(?:照片|图片?|视频|链接)的?$"
)
_DATE_CONNECTOR = re.compile(
    r"(?:\s+(?i:by|on|before|until|till|at|this|next|the|in|coming))+$|[\s,]+$"
)
_ACTION_ADVERB = re.compile(
    r"^(?i:probably|maybe|definitely|surely|certainly|also|just|really|actually|still)\s+"
)
_WEAK_ACTIONS = frozenset("go do see try be think wait come leave stay know check".split())


def _clean(slot: str, raw: str) -> str:
    value = _TRAILING.sub("", _FILLER_TAIL.sub("", _TRAILING.sub("", raw.strip())))
    if slot in ("likes", "dislikes"):
        if (
            (_DEFINITE.match(value) and len(value.split()) > 2)
            or _DEICTIC.match(value)
            or _SHOWN.fullmatch(value)
            or _anaphoric(value)
        ):
            # A taste is said of things in general ("I love camping", "I like the rain");
            # "I love the colour and texture", "the vibe", "this one" are about the thing
            # just shown, not a preference.
            return ""
        value = _LEADING_ARTICLE.sub("", value)
        last = value.rsplit(None, 1)[-1].lower() if value else ""
        if last in _UNFINISHED:
            # "I love escaping to (that world)", "I like holding them": what is liked is
            # named elsewhere, or was cut off.
            return ""
    return value


def _action(
    slot: str,
    sentence: str,
    m: re.Match[str],
    due: tuple[int, int, float] | None,
    dated: bool,
    confidence: Confidence,
) -> RuleMatch | None:
    """The plan or commitment in group ``slot`` of ``m``, or None to drop it.

    The date phrase is cut out of the value ("call you tomorrow" → "call you") and kept in
    the quote; an action that addresses the listener is a commitment.
    """
    start, end = m.span(slot)
    quote_start, quote_end, when = m.start(), m.end(), None
    if due is not None:
        d_start, d_end, when = due
        quote_start, quote_end = min(quote_start, d_start), max(quote_end, d_end)
        if start < d_start < end:
            end = d_start
        elif d_start <= start < d_end:
            start = d_end
    value = _DATE_CONNECTOR.sub("", _TRAILING.sub("", sentence[start:end].strip()))
    value = _ACTION_ADVERB.sub("", value)
    if slot == "plan" and _YOU.search(value):
        slot, dated = "commitment", False
    words = value.split()
    if (
        len(value) < 2
        or (dated and when is None)
        or len(words) > 15
        or (len(words) == 1 and words[0].lower() in _WEAK_ACTIONS)
        or re.match(r"(?i:not|never|be|have)\b", value)
        or (when is None and _COURTESY.search(value))
    ):
        return None
    return RuleMatch(slot, value, quote_start, quote_end, confidence, when)

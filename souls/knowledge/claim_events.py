# ruff: noqa: RUF001  (full-width punctuation is what the Chinese patterns match)
"""Event entries from first-person statements of what happened (DESIGN §3.10).

``find_events(sentence, ts)`` reads, in one sentence that is no question, what the
speaker says they did, do or have been doing: "I painted a sunrise last year", "we've
been to Paris", "I'm taking a pottery class", "I used to ride horses", "my husband and I
went camping", 我们上周去了成都, 我去过日本. ``parts`` splits a stored event into linghun's
fields (subject | action | object | entities | detail). What a caller may rely on:

- Grammar, not wording: a first-person subject (I, we, "my sister and I", 我, 我们),
  then a verb in the past, the perfect, the progressive or "used to" (English), or a
  verb marked done with 了 or 过 (Chinese), then what it was done to, up to the end of
  the clause. No list of topics; the verb lists only say which forms are verbs.
- Nothing is read from a negated clause (I didn't, never, 没), from thinking and saying
  verbs (I thought, I said, I guess), from a clause about the listener's things ("I saw
  your post") or with only a generic object ("I did it", "we made that").
- ``value`` is a verbatim stretch of the sentence (the verb and its object, the time
  phrase cut off either end), ``start:end`` the stretch that holds it and its time
  phrase: the quote. ``when`` is the time phrase resolved against ``ts``
  (``souls.knowledge.claim_when``), None when the sentence names no past time.
- A progressive with a future time ("I'm putting on a show next month") is a plan, not
  an event: it is left to the plan rules.
- A state is no event. In the present (simple or progressive, and "have been -ing") a
  verb of state says what is so, not what happened: "I live in Lisbon", "we have a dog",
  "I'm living in Porto", "I work as a nurse", "I go by Sam" give none (nor do be, like
  and love, never event verbs). ``ongoing`` marks a match in the present, so that a
  caller can also leave to a slot rule what that rule reads
  (``souls.knowledge.claim_rules``). The past tells what happened: "I moved to Porto",
  "I used to live in Lisbon", "we had a dog" are events.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from souls.knowledge.claim_dates import find_due
from souls.knowledge.claim_fragments import AP, HAN
from souls.knowledge.claim_scan import REACH
from souls.knowledge.claim_substance import LIGHT_VERBS, bleached, to_listener, zh_bleached
from souls.knowledge.claim_when import When, find_when, shown

__all__ = ["EventMatch", "EventParts", "find_events", "opens_clause", "parts"]


class EventMatch(NamedTuple):
    value: str  # the verb and its object, verbatim
    start: int  # sentence[start:end] is the quote
    end: int
    when: When | None
    ongoing: bool = False  # told in the present: a habit or what one is doing now
    # A progressive with a future time: an arrangement ("I'm putting on a show next
    # month"), a plan rather than an event; ``value`` has the time phrase cut off.
    planned: bool = False


class EventParts(NamedTuple):
    subject: str
    action: str
    object: str
    entities: tuple[str, ...]
    detail: str


# Irregular past tenses and participles: the forms an -ed test misses.
_IRREGULAR = frozenset(
    """ate awoke became began bent bet bit bled blew broke brought built burnt bought caught
    chose came cost crept cut dealt did dug drew dreamt drank drove fell fed felt fought found
    fled flew forgave froze got gave went grew hung had heard hid hit held hurt kept knelt
    laid led leant leapt learnt left lent let lit lost made met paid put quit read rode rang
    rose ran saw sold sent set shook shone shot showed shut sang sank sat slept slid spoke spent
    spun split spread sprang stood stole stuck stung struck swore swept swam swung took
    taught tore threw understood woke wore won wound wrote dove snuck overcame""".split()
)
_PARTICIPLES = frozenset(
    """been begun bitten blown broken chosen done drawn driven drunk eaten fallen flown
    forgotten frozen given gone gotten grown hidden known ridden risen seen shaken shown
    spoken stolen sworn taken thrown torn woken worn written run come become""".split()
)
# Forms that end in -ed without being past verbs, and verbs of thinking, saying and
# reacting: what they take is an opinion or a reply, not something that happened.
_NOT_EVENTS = frozenset(
    """need needed feed seed speed bed red shed indeed proceed succeed exceed agreed guess
    guessed figured wondered meant thought knew said told heard hoped wished supposed
    assumed imagined bet reckoned noticed appreciated missed forgot remembered understood
    mentioned asked replied answered promised believed expected realized realised
    let thinking wondering wishing""".split()
)
# A clause opened by these, in the simple present, is a case in general ("when I face
# challenges", "if I get stressed"): no told event.
_CONDITIONAL_OPENERS = frozenset("when whenever if unless".split())
_ADVERBS = (
    r"just|recently|finally|also|actually|even|really|totally|already|once|first|then|both"
    r"|all|always|still|literally|officially|eventually|luckily|lately|somehow|usually"
    r"|often|sometimes|currently|now|definitely|kinda|kind\s+of|sort\s+of"
)
_SUBJECT = (
    r"(?:\b(?:[Mm]y|[Oo]ur)\s+[a-z]+(?:\s+[a-z]+)?\s+and\s+I|\b[A-Z][a-z]+\s+and\s+I"
    r"|\b[Mm]e\s+and\s+(?:my\s+)?[A-Za-z]+|\b[Ii]|\b[Ww]e)"
)
_EN = re.compile(
    rf"{_SUBJECT}(?P<aux>{AP}ve|{AP}d|{AP}m|{AP}re|\s+have|\s+has|\s+had|\s+am|\s+are|\s+was"
    rf"|\s+were|\s+used\s+to)?(?:\s+(?:{_ADVERBS})){{0,6}}\s+(?P<been>been\s+)?"
    r"(?P<verb>[A-Za-z]+)\b(?![’'])"
)
# The subject opens a clause: it follows the start, punctuation, a conjunction, an
# interjection or a time word, never a noun ("the impact we made", "what we do").
_OPENERS = frozenset(
    """and but so then when after before because cause since until till while once also
    actually finally recently just yesterday today tonight ago week weekend month year
    night morning yeah yes yep oh wow well hey hi ok okay haha lol plus like now sometimes
    honestly anyway anyways basically seriously luckily sadly guess lately maybe perhaps
    apparently probably later soon tomorrow monday tuesday wednesday thursday friday
    saturday sunday january february march april june july august september october
    november december summer winter spring fall autumn ago earlier""".split()
)
_WORD_BEFORE = re.compile(r"(?<![A-Za-z])([A-Za-z]{1,16})\W*$")


def opens_clause(sentence: str, at: int) -> bool:
    """Whether a subject at ``sentence[at]`` opens a clause (after the start, punctuation,
    a conjunction, an interjection or a time word). Only the ``REACH`` characters before
    ``at`` are read: blanks longer than that open a clause, as the start does."""
    lo = max(0, at - REACH)
    end = lo + len(sentence[lo:at].rstrip())
    if end == lo or not sentence[end - 1].isalnum():
        return True
    word = _WORD_BEFORE.search(sentence, max(0, end - REACH), end)
    return word is not None and word.group(1).lower() in _OPENERS


_HAVE = re.compile(r"\s+(?:have|has|had)")
_FREQUENCY = re.compile(
    r"(?i:\b(?:(?:every|each|most)\s+(?:day|week|month|year|morning|evening|night|summer|winter"
    r"|spring|fall|autumn|weekend|time|monday|tuesday|wednesday|thursday|friday|saturday"
    r"|sunday)s?|usually|often|always|sometimes|regularly|weekly|daily|monthly|twice|once\s+a"
    r"|on\s+(?:weekends|sundays|saturdays|fridays)))\b"
)
# "don't feel like I'm ...", "I don't think we ...": the clause after is negated too.
_NEGATED_MATRIX = re.compile(
    rf"(?i:\b(?:don{AP}?t|do\s+not|didn{AP}?t|never)\s+(?:feel|think|believe|feel\s+like|"
    r"think\s+that)(?:\s+like|\s+that)?\s*$)"
)
_HAVE_GOT = re.compile(rf"{AP}ve|\s+have|\s+has|{AP}s")
_NEGATION = re.compile(rf"(?i:n{AP}?t\b|\bnot\b|\bnever\b|\bno\s+longer\b)")
_COUNTERFACTUAL = re.compile(r"(?i:\b(?:almost|nearly)\b)")
# Where a clause ends: punctuation, or a conjunction that starts another clause.
_CLAUSE_END = re.compile(
    r"\s*[,;:!?.()—–\[]|\s+(?i:but|because|cause|since|although|though|so|while|when"
    r"|whenever|where|which|who|if|and\s+(?:i|we|it|that|then|now|my|he|she|they)"
    r"|or|as\s+well\s+as|plus)\b|\s+-\s"
)
_GENERIC = frozenset(
    """it its it's that this these those them they so too such you your yours what how why
    there here well good great fine okay ok alright nothing something anything everything
    one ones me us him her any no""".split()
)
_MAX_WORDS = 12
# How far after its verb a clause's end is looked for: past _MAX_WORDS words of real text.
_CLAUSE_REACH = 240


# Verbs of state: in the present they say what is so ("I live in Lisbon", "we own a
# boat", "I'm living in Porto"), which the slot rules read, not something that happened.
_STATES = frozenset("live lives living reside resides residing own owns belong belongs".split())
# ... and verbs that are of state before these words only: "I work as a nurse", "I work
# at Acme" (job and employer), "I go by Sam" (a name); "I work out", "I go hiking" are
# habits.
_STATES_BEFORE = {
    "work": ("as", "at", "for"),
    "works": ("as", "at", "for"),
    "working": ("as", "at", "for"),
    "go": ("by",),
    "goes": ("by",),
}
_NEXT_WORD = re.compile(r"\s+([A-Za-z]+)")


def _state(verb: str, sentence: str, verb_end: int) -> bool:
    """Whether ``verb`` (ending at ``verb_end``), told in the present, says a state."""
    low = verb.lower()
    if low in _STATES:
        return True
    before = _STATES_BEFORE.get(low)
    if before is None:
        return False
    following = _NEXT_WORD.match(sentence, verb_end)
    return following is not None and following.group(1).lower() in before


def _ongoing(verb: str, aux: str, been: bool) -> bool:
    """Whether a told event's verb (after ``aux``, and "been") is in the present: the
    simple present of a habit, the progressive, "have been -ing"."""
    aux = aux.strip().lower().lstrip("'’")
    if aux in ("m", "am", "re", "are"):
        return True
    if been:
        return aux in ("ve", "have", "has") and verb.lower() != "to"
    return aux == "" and _habit(verb.lower()) and verb.lower() not in _IRREGULAR


def _verb_ok(verb: str, aux: str, been: bool) -> bool:
    """Whether ``verb`` after ``aux`` (and "been") makes a told event."""
    low = verb.lower()
    if low in _NOT_EVENTS or low in ("going", "gonna"):
        return False
    aux = aux.strip().lower().lstrip("'’")
    if aux in ("m", "am", "re", "are", "was", "were") or been:
        return low.endswith("ing") and len(low) > 4
    if aux in ("ve", "have", "has", "had", "d"):
        if low == "been":
            return False  # "I've been so busy": been needs -ing or "to"; see _EN's ``been``
        return low in _PARTICIPLES or low in _IRREGULAR or _regular_past(low)
    if aux == "used to":
        return low.isalpha() and low not in _GENERIC
    return low in _IRREGULAR or _regular_past(low) or _habit(low)


def _habit(word: str) -> bool:
    """A present tense that tells what one does ("we roast marshmallows", "I volunteer
    at a shelter"), not what one thinks, feels about the listener or is able to do."""
    return (
        word.isalpha()
        and len(word) > 2
        and not word.endswith(("ing", "ed", "ly"))
        and (word not in _NOT_HABITS)
    )


_NOT_HABITS = frozenset(
    """can could would should will shall may might must do does did am are is was were
    have has had get gets got think know mean guess hope feel wish believe love like
    agree understand see appreciate need want remember bet suppose imagine wonder admire
    miss say tell ask thank thanks hear find totally really just also too always never
    always definitely gotta gonna wanna hate enjoy adore prefer dislike promise plan
    recommend bet doubt swear reckon care look sound seem cant dont wont didnt
    ain aint cannot lemme let last myself too only either personally when what where why
    who which that this then than and but because since though also""".split()
)


def _in_general(sentence: str, verb: str, aux: str, been: bool, subject_at: int) -> bool:
    """Whether a clause in the simple present is a case in general, opened by "when" or
    "if" ("when I face challenges", "if I get stressed"): no told event."""
    low = verb.lower()
    if aux.strip() or been or low in _IRREGULAR or _regular_past(low):
        return False
    before = _WORD_BEFORE.search(sentence, max(0, subject_at - REACH), subject_at)
    return before is not None and before.group(1).lower() in _CONDITIONAL_OPENERS


def _regular_past(word: str) -> bool:
    return len(word) >= 5 and word.endswith("ed") and word.isalpha()


def find_events(sentence: str, ts: float) -> Iterator[EventMatch]:
    """The events a sentence (a statement, not a question) tells, in order."""
    if sentence.isascii():
        yield from _english(sentence, ts)
    else:
        yield from _chinese(sentence, ts)


def _english(sentence: str, ts: float) -> Iterator[EventMatch]:
    when = find_when(sentence, ts)
    future: list[bool] = []  # whether the sentence names a future time, read once
    # Whether it says how often, or "this month": each read once, when first asked.
    often: list[bool] = []
    this_period: list[bool] = []
    for m in _EN.finditer(sentence):
        aux, been = m.group("aux") or "", m.group("been") is not None
        verb = m.group("verb")
        verb_start, verb_end = m.start("verb"), m.end("verb")
        # "I'm going to a conference this month": going somewhere, a plan when dated.
        going = verb.lower() == "going" and _GOING_TO.match(sentence, verb_end) is not None
        if been and verb.lower() == "to":
            verb_start = m.start("been")  # "I've been to Paris"
        elif going and aux.strip().lower().lstrip("'’") in ("m", "am", "re", "are"):
            pass
        elif not _verb_ok(verb, aux, been):
            if not _HAVE.fullmatch(aux) or been:
                continue
            if aux.strip().lower() != "had":
                continue  # "we have a dog": have as the verb, in the present, is a state
            # "I had a blast": the have was the verb, not an auxiliary.
            verb_start, verb_end = m.start("aux") + len(aux) - len(aux.lstrip()), m.start("verb")
            verb_end = m.end("aux")
            verb, aux = "had", ""
        ongoing = _ongoing(verb, aux, been)
        if ongoing and _state(verb, sentence, verb_end):
            continue  # "I live in Lisbon": what is so, not what happened
        if _HAVE_GOT.fullmatch(aux) and verb.lower() == "got":
            continue  # "I've got a dog", "we've got this": have got is having, a state
        # "we make a great team", "we all have our paths": a "we" in the simple present
        # speaks of people in general or of speaker and listener together; with how often
        # it happens it is a habit ("we roast marshmallows every summer").
        we = m.group(0).lstrip()[:2] in ("we", "We")
        if ongoing and not aux and we:
            if not often:
                often.append(_FREQUENCY.search(sentence) is not None)
            if not often[0]:
                continue
        if not opens_clause(sentence, m.start()):
            continue
        if _in_general(sentence, verb, aux, been, m.start()):
            continue
        head = sentence[m.start() : m.start("verb")]
        if _NEGATION.search(head) or _NEGATION.match(sentence, verb_end):
            continue
        if _COUNTERFACTUAL.search(sentence, m.start(), verb_end):
            continue  # "I almost bought a car": it did not happen
        planned = False
        if aux.strip().lower().lstrip("'’") in ("m", "am", "re", "are"):
            if not future:
                future.append(_future(sentence, ts))
            if future[0]:
                planned = True  # a progressive with a future time is a plan
        if going and not planned:
            # Going somewhere "this month" is ahead too; without a time it is no event.
            if not this_period:
                this_period.append(_THIS_PERIOD.search(sentence) is not None)
            if not this_period[0]:
                continue
            planned = True
        if _NEGATED_MATRIX.search(sentence, max(0, m.start() - 30), m.start()):
            continue
        # The clause ends within _CLAUSE_REACH: its value is _MAX_WORDS words at most.
        reach = min(len(sentence), verb_end + _CLAUSE_REACH)
        stop = _CLAUSE_END.search(sentence, verb_end, reach)
        end = stop.start() if stop else reach
        value = sentence[verb_start:end]
        words = value.split()
        if len(words) > _MAX_WORDS:
            value = " ".join(words[:_MAX_WORDS])
            end = verb_start + len(value)
        clause_end = end
        value, _start, end, cut = _cut_when(sentence, verb_start, end, when)
        skip = 2 if been and verb.lower() == "to" else 1
        object_words = value.split()[skip:]
        if cut is not None and verb_start < cut.start < clause_end and bleached(object_words):
            # "we had a blast last year at the Pride fest": what it was comes after the
            # time phrase, so the value keeps the whole clause.
            rest = sentence[cut.end : clause_end].split()
            if rest and not bleached(rest):
                value = _TRAILING_WORDS.sub("", _TRAILING.sub("", sentence[verb_start:clause_end]))
                end, object_words = verb_start + len(value), value.split()[skip:]
        if object_words and (_generic(object_words) or bleached(object_words)):
            continue  # "I did it", "I had a great time": nothing to remember
        if to_listener(" ".join(object_words)):
            continue  # about the listener's things, not the speaker's life
        if not object_words and (cut is None or verb.lower() in LIGHT_VERBS):
            continue  # "I finished." tells too little without a time, "I got today" even with
        if [w.lower().strip(".,!") for w in object_words] in (["last"], ["last", "time"]):
            continue  # "since we spoke last": a formula
        quote_start = min(m.start(), cut.start if cut else m.start())
        quote_end = max(end, cut.end if cut else end)
        if planned:
            value = _FUTURE_TAIL.sub("", value)
            if len(value.split()) < 2:
                continue  # "I'm leaving tomorrow": too little to keep as a plan
            yield EventMatch(value, m.start(), end, None, ongoing, planned=True)
            continue
        yield EventMatch(value, quote_start, quote_end, cut, ongoing)
    yield from _mine(sentence, when)


# "my son got into an accident", "our car broke down last Friday": what happened to the
# speaker's own people and things, in the past. The subject is kept in the value.
_EN_MINE = re.compile(
    rf"\b(?:[Mm]y|[Oo]ur)\s+(?P<noun>[a-z]+(?:\s+[a-z]+){{0,2}}?)(?:\s+(?:{_ADVERBS}))?"
    r"\s+(?P<verb>[a-z]+)\b(?![’'])"
)
# Words after "my" that make no subject of a past event ("my bad", "my god", "my turn").
_NOT_MINE = frozenset("bad god gosh goodness turn pleasure guess point own way".split())


def _mine(sentence: str, when: When | None) -> Iterator[EventMatch]:
    if "y " not in sentence and "ur " not in sentence:
        return  # _EN_MINE needs "my " or "our "
    for m in _EN_MINE.finditer(sentence):
        verb, noun = m.group("verb"), m.group("noun")
        low = verb.lower()
        if low in _NOT_EVENTS or not (low in _IRREGULAR or _regular_past(low)):
            continue
        if noun.split()[0] in _NOT_MINE or any(w in _GENERIC for w in noun.split()):
            continue
        if not opens_clause(sentence, m.start()):
            continue
        if _NEGATION.match(sentence, m.end("verb")):
            continue
        reach = min(len(sentence), m.end("verb") + _CLAUSE_REACH)
        stop = _CLAUSE_END.search(sentence, m.end("verb"), reach)
        end = stop.start() if stop else reach
        value, _start, end, cut = _cut_when(sentence, m.start(), end, when)
        words = value.split()
        object_words = words[len(noun.split()) + 2 :]
        if len(words) > _MAX_WORDS or (not object_words and cut is None):
            continue
        if object_words and (_generic(object_words) or bleached(object_words)):
            continue
        if to_listener(" ".join(object_words)):
            continue
        quote_start = min(m.start(), cut.start if cut else m.start())
        quote_end = max(end, cut.end if cut else end)
        yield EventMatch(value, quote_start, quote_end, cut)


_THIS_PERIOD = re.compile(
    r"(?i:\bthis\s+(?:coming\s+)?(?:week|weekend|month|year|summer|winter|spring|fall|autumn"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)"
)
_GOING_TO = re.compile(r"\s+to\s+(?:(?i:the|a|an|my|our|this|that)\s|[A-Z])")
_DEMONSTRATIVES = frozenset("this that these those".split())
# After a demonstrative, words that make no noun of it ("I did that too", "made that happen").
_NOT_NOUNS = frozenset(
    """too again already before now then once twice happen happened work out up way time much
    many far long is was are were to for with and or but so in on at of by as a an the""".split()
)
_FUTURE_TAIL = re.compile(
    r"(?:\s+(?i:next|this|this\s+coming|coming|in\s+the\s+next\s+few|in\s+a\s+few)\s+(?i:weeks?|months?|years?"
    r"|weekend|summer|winter|spring|fall|autumn|monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday)|\s+(?i:tomorrow|tonight|soon|later))+$"
)


def _generic(object_words: list[str]) -> bool:
    """Whether a told event's object is generic ("it", "that"): a demonstrative with its
    noun is not ("I made this bowl", "I painted that lake sunrise")."""
    first = object_words[0].lower().strip(f"'{AP}")
    if first not in _GENERIC:
        return False
    if first not in _DEMONSTRATIVES or len(object_words) < 2:
        return True
    noun = object_words[1].strip(".,!'’")
    return not (noun.isalpha() and noun.islower() and noun not in _GENERIC | _NOT_NOUNS)


def _future(sentence: str, ts: float) -> bool:
    return (
        find_due(sentence, ts) is not None
        or re.search(r"(?i:\b(?:next|tomorrow|tonight|coming|soon|later)\b)", sentence) is not None
    )


def _cut_when(
    sentence: str, start: int, end: int, when: When | None
) -> tuple[str, int, int, When | None]:
    """The value in ``sentence[start:end]`` with the time phrase cut off either end; the
    time phrase kept only when it belongs to this clause's sentence."""
    if when is not None:
        if start <= when.start < end:
            end = when.start
        elif when.start <= start < when.end:
            start = when.end
    value = _TRAILING.sub("", sentence[start:end].strip())
    value = _TRAILING_WORDS.sub("", value)
    return value, start, start + len(value), when


_TRAILING = re.compile(r"[\s.,;:!?。，；：！？、'\"“”’)）~～]+$")
_TRAILING_WORDS = re.compile(
    r"(?:\s+(?i:and|or|the|a|an|with|at|in|on|for|to|of|from|by|too|lol|lmao|haha+|tbh|xd))+$"
)

# Chinese: 我(们) [和/跟 X (一起)] [time] [adverbs] verb 了/过 object.
_ZH_TIME = (
    r"前天|昨天|昨晚|今天|今早|今晚|刚才|早上|上午|下午|上(?:个)?(?:周末|周|星期|礼拜|月)|去年|前年"
    r"|[零一二两三四五六七八九十百\d]{1,3}(?:个)?(?:天|周|星期|礼拜|月|年)(?:前|以前|之前)|最近"
)
_ZH = re.compile(
    rf"我(?:们)?(?:(?:和|跟)[{HAN}A-Za-z]{{1,6}}?(?:一起)?)?(?:{_ZH_TIME})?"
    rf"(?P<adv>(?:刚刚|刚|已经|终于|也|还|又|都|一起|总算|第一次|专门)*)"
    rf"(?P<verb>[{HAN}]{{1,2}}?)(?P<mark>了|过)(?P<obj>[^\s，。！？、,.!?；;：:~～…）)」』]{{0,24}})"
)
# ... and a move with its direction, 了 closing the sentence: 我们从北京搬到上海了,
# 我终于回到家了. The value runs from the 从 phrase, when there is one, to the place.
_ZH_MOVE = re.compile(
    rf"我(?:们)?(?:(?:和|跟)[{HAN}A-Za-z]{{1,6}}?(?:一起)?)?(?:{_ZH_TIME})?"
    rf"(?:刚刚|刚|已经|终于|也|还|又|都|一起|总算)*(?P<from>从[{HAN}A-Za-z]{{1,8}}?)?"
    rf"(?P<verb>搬|搬家|迁|回|飞|开|走|转学|调)(?P<dir>到|进|回|去|来)了?"
    rf"(?P<obj>[{HAN}A-Za-z]{{2,10}}?)了?(?=$|[\s，。！？、,.!?；;：:~～…）)」』]|啊|呀|啦|哦)"
)
_ZH_NOT_VERBS = frozenset(
    """是 有 觉得 知道 说 想 累 困 饿 忙 好 对 错 懂 明白 开心 高兴 难过 疯 死 怕 算 够 行 完
    忘 受 不 没 别 太 很 真 最 可 能 会 要 就 该""".split()
)
_ZH_NEGATION = re.compile("没|不|别|未")


def _chinese(sentence: str, ts: float) -> Iterator[EventMatch]:
    if "我" not in sentence:
        return  # _ZH needs it
    when = find_when(sentence, ts)
    for m in _ZH.finditer(sentence):
        verb, obj = m.group("verb"), m.group("obj")
        if (
            verb in _ZH_NOT_VERBS
            or verb[-1] in _ZH_NOT_VERBS
            or _ZH_NEGATION.search(sentence[m.start() : m.start("verb")])
        ):
            continue
        obj = re.sub(r"(?:啊|呀|啦|吧|哦|呢|哈|的)+$", "", obj)
        if obj.startswith(("你", "您", "这", "那", "它")) or (len(obj) < 2 and when is None):
            continue
        if zh_bleached(obj) or to_listener(sentence[m.start() : m.start("verb")] + obj):
            continue  # 我试了一下, 我和你聊了: a measure only, or about the listener
        start, end = m.start("verb"), m.start("obj") + len(obj)
        quote_start = min(m.start(), when.start if when else m.start())
        quote_end = max(end, when.end if when else end)
        yield EventMatch(sentence[start:end], quote_start, quote_end, when)
    for m in _ZH_MOVE.finditer(sentence):
        if _ZH_NEGATION.search(sentence[m.start() : m.start("verb")]):
            continue
        obj = m.group("obj").removesuffix("了")
        if obj.startswith(("你", "您", "这", "那", "哪")) or (len(obj) < 2 and when is None):
            continue
        start = m.start("from") if m.group("from") else m.start("verb")
        end = m.start("obj") + len(obj)
        quote_start = min(m.start(), when.start if when else m.start())
        quote_end = max(end, when.end if when else end)
        yield EventMatch(sentence[start:end], quote_start, quote_end, when)


_ENTITY = re.compile(
    r"[\"“《「]([^\"”》」]{2,40})[\"”》」]|\b[A-Z][a-zA-Z'’\-]+(?:\s+[A-Z][a-zA-Z'’\-]+)*"
)
_PARTICLES = frozenset("up out into on off over back down away around about to".split())


def parts(subject: str, value: str, quote: str, at: float, ts: float) -> EventParts:
    """linghun's fields of the event ``value`` (stored from ``quote``) about ``subject``:
    the action is its verb (with a particle), the object the rest, the entities its
    names and titles, the detail its time phrase with the moment ``at`` it resolved to
    (or the day ``at`` when it named none). ``ts`` is any moment: only the phrase's
    precision is read from it."""
    if value.isascii():
        words = value.split()
        particle = len(words) > 1 and words[1].lower() in _PARTICLES
        n = 2 if particle or (len(words) > 1 and words[0].lower() == "been") else 1
        action, obj = " ".join(words[:n]), " ".join(words[n:])
    else:
        mark = max(value.find("了"), value.find("过"))
        action, obj = (value[: mark + 1], value[mark + 1 :]) if mark > 0 else (value, "")
    entities = tuple(
        dict.fromkeys(
            (e.group(1) or e.group(0)).strip()
            for e in _ENTITY.finditer(obj)
            if (e.group(1) or e.group(0)).strip() not in ("I",)
        )
    )
    when = find_when(quote, ts)
    detail = shown(at, when.precision if when else "day")
    if when is not None:
        detail = f"{quote[when.start : when.end]} ({detail})"
    return EventParts(subject, action, obj, entities, detail)

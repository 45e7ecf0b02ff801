# ruff: noqa: RUF001  (full-width punctuation and curly quotes are what the patterns match)
"""Goals, plans and values taken from what people say (DESIGN §3.10, linghun's goal.js).

:func:`read_goals` reads one turn with rules, English and Chinese, and returns what it
says about the speaker's goals: a new goal, plan or value ("My goal this year is to run
a half marathon", "I'm saving for a house", "I believe in respecting people's privacy",
"I refuse to spread rumors", 我们打算明年买房, 我的目标是…, 我坚持…), or a state signal
about one already stated: progress ("I've been training every morning"), achieved ("I
finally ran it!", 终于…了), abandoned ("we gave up on the house", 放弃了…), paused ("on
hold"). :mod:`souls.knowledge.goal_merge` turns the signals into goal updates.

Precision first — a wrong goal is worse than a missed one. A sentence yields nothing
when it is:

- a question (a question mark, 吗/呢, or an English question's opening words);
- a hypothetical or a wish ("if I won the lottery I want to…", "maybe", 如果, 要是);
- someone else's words: a marker inside quotation marks, or after "said", "told", 说;
- about someone else: every marker needs a first-person subject (I, we, my, our, 我, 我们);
- a passing intention: "I want to", "I'm going to", 想, 要 count only with a long horizon
  ("by June", "this year", "someday", 明年, 以后), and a plan for today, tonight or
  tomorrow is no goal (the claim rules keep those as plans);
- filler: the object must hold a content word ("I want to say…", "my plan is to, um"),
  and not open on the listener or only point back ("I believe in you", "go there");
- named, not stated: a marker in a relative clause ("what I believe in").

Every statement is a verbatim piece of the turn (the quote is the whole sentence), cut
at the clause's end. Pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import msgspec

from souls.knowledge.claim_scan import Claimed, Cue, Found
from souls.knowledge.domains import domain_of
from souls.mind.topics import is_topic
from souls.text.tokenize import tokens

__all__ = ["GoalSignal", "SignalAction", "read_goals"]

T = TypeVar("T")

SignalAction = Literal["new", "progress", "achieve", "abandon", "pause"]
SignalKind = Literal["goal", "plan", "value"]

MAX_OBJECT = 120  # characters of a statement


class GoalSignal(msgspec.Struct, frozen=True, kw_only=True):
    action: SignalAction
    kind: SignalKind  # what a "new" states; state signals are about a "goal"
    statement: str  # new: the goal; else the words that name it ("" or "it": the latest)
    quote: str  # the sentence it was read from, verbatim
    domain: str  # from the domain lexicon, "" when none


# -- the turn, in sentences ---------------------------------------------------------------

_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*", re.UNICODE)
_CLAUSE_END = re.compile(
    r"\s*(?:[,，;；:：()（）\"“”「」]|\s[-–—]\s|\.\.\.|…"
    r"|\b(?:but|because|since|although|though|cause|cuz|unless|lol|haha+|lmao|tbh)\b"
    r"|但是|因为|可是|不过|所以|然后|哈哈)",
    re.IGNORECASE,
)
_QUOTES = re.compile(r"[\"“”「」『』]")
_EN_QUESTION_START = re.compile(
    r"^\s*(?:(?:so|and|but|hey|ok|okay|well)[,\s]+)?"
    r"(?:what|how|why|when|where|which|who|should|shall|do|does|did|is|are|am|was|were|"
    r"can|could|would|will|have|has|any)\b",
    re.IGNORECASE,
)
_ZH_QUESTION = re.compile(
    r"(?:吗|呢|么|嘛)\s*[.!?。！？~～]*$|是不是|要不要|该不该|能不能|有没有|怎么|为什么|什么"
)
# Before a marker in its sentence: it is not the speaker's own, present intent.
_NOT_MINE = re.compile(
    r"\b(?:if|unless|suppose|supposing|imagine|pretend|wish|would|could|might|maybe|"
    r"perhaps|said|says|told|tells|asked|asks|according|joked|jokes|wrote|writes|"
    r"used\s+to|she|he|they|his|her|their)\b"
    r"|如果|要是|假如|假设|万一|说|告诉|问|可能|也许|或许|他|她|他们|她们",
    re.IGNORECASE,
)
_NOT_MINE_AFTER = re.compile(r"的话")
_LONG = re.compile(
    r"\b(?:by\s+(?:the\s+end\s+of\s+)?(?:this|next|the)\s+(?:year|month|summer|spring|fall|"
    r"autumn|winter|decade)|by\s+(?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december|christmas|summer|spring|fall|winter|\d{4}|"
    r"(?:the\s+)?time)|(?:this|next)\s+(?:year|summer|spring|fall|autumn|winter|decade)|"
    r"some\s?day|one\s+day|eventually|in\s+the\s+(?:future|long\s+run)|long[-\s]term|"
    r"in\s+(?:a|one|two|three|four|five|ten|a\s+few|\d+)\s+(?:years?|months?)|"
    r"within\s+(?:a|one|two|three|\d+)\s+(?:years?|months?)|"
    r"before\s+(?:i|we)\s+(?:turn|die|retire|graduate|leave|hit)|"
    r"before\s+(?:the\s+end\s+of\s+)?(?:the\s+)?year|in\s+\d{4}|for\s+\d{4})\b"
    r"|今年|明年|后年|年底|年内|以后|将来|未来|有一天|总有一天|这辈子|退休|几年|今年内|年前",
    re.IGNORECASE,
)
_SHORT = re.compile(
    r"\b(?:today|tonight|tomorrow|this\s+(?:morning|afternoon|evening|weekend)|later|"
    r"in\s+a\s+(?:bit|minute|sec|second|few\s+minutes)|right\s+now|after\s+work|weekend|"
    r"after\s+lunch|after\s+dinner)\b"
    r"|今天|今晚|明天|待会|一会|马上|现在|等下|等一下|周末|晚上|下午|中午",
    re.IGNORECASE,
)
# Intents that are turns of speech, not goals ("I want to say thanks").
_SPEECH = re.compile(
    r"^(?:say|tell|ask|know|see|check|thank|mention|share|add|point|admit|be\s+honest|"
    r"let\s+you|make\s+sure|remind|clarify|confirm|apologi[sz]e)\b",
    re.IGNORECASE,
)
_TAIL = re.compile(
    r"[\s.!?。！？~～…\-–—*]+$|\s+(?:too|though|tho|lol|haha+|tbh|and\s+stuff|or\s+something)\s*$",
    re.I,
)
_PRONOUN_ONLY = re.compile(
    r"^(?:it|that|this|them|those|these|it\s+all|这个|那个|它|这|那)?$", re.I
)


# -- markers ------------------------------------------------------------------------------

_I = r"(?:i|we)"
_BE = r"(?:'m|’m|\s+am|'re|’re|\s+are)"
_HAVE = r"(?:'ve|’ve|\s+have)?"
_HORIZON_NOUN = (
    r"(?:\s+(?:for\s+)?(?:this|next|the)\s+(?:year|month|summer|decade)|\s+for\s+\d{4})?"
)

# (pattern, kind, needs a long horizon, statement starts at the "verb" group)
_NEW: tuple[tuple[re.Pattern[str], SignalKind, bool, bool], ...] = (
    (
        re.compile(
            rf"\b(?:my|our)\s+(?:main\s+|big\s+|biggest\s+|new\s+|real\s+|long[-\s]term\s+|"
            rf"ultimate\s+|personal\s+|one\s+|only\s+|top\s+)?"
            rf"(?:goal|dream|aim|ambition|resolution|target|mission)s?{_HORIZON_NOUN}"
            rf"(?:\s+(?:is|are)|'s|’s)\s+(?:to\s+|that\s+i\s+|that\s+we\s+)?(?P<obj>)",
            re.I,
        ),
        "goal",
        False,
        False,
    ),
    (
        re.compile(rf"\b(?:my|our)\s+plan{_HORIZON_NOUN}(?:\s+is|'s|’s)\s+to\s+(?P<obj>)", re.I),
        "plan",
        False,
        False,
    ),
    (
        re.compile(
            rf"\b{_I}{_BE}\s+(?:currently\s+|still\s+|really\s+|now\s+)?"
            rf"(?P<verb>(?:saving|putting\s+money\s+aside|training|preparing|working\s+towards?|"
            rf"studying)\s+(?:up\s+)?(?:money\s+)?for\s+(?P<obj>))",
            re.I,
        ),
        "goal",
        False,
        True,
    ),
    (
        re.compile(
            rf"\b{_I}{_BE}\s+(?:currently\s+|still\s+|now\s+)?saving\s+(?:up\s+)?to\s+(?P<obj>)",
            re.I,
        ),
        "goal",
        False,
        False,
    ),
    (
        re.compile(
            rf"\b{_I}{_BE}\s+(?:really\s+|so\s+)?(?:determined|committed|aiming|"
            rf"planning|hoping|going\s+to\s+try)\s+(?:to|on)\s+(?P<obj>)",
            re.I,
        ),
        "plan",
        False,
        False,
    ),
    (
        re.compile(
            rf"\b{_I}\s+(?:really\s+)?(?:plan|intend|aim|vow|resolve)\s+to\s+(?P<obj>)", re.I
        ),
        "plan",
        False,
        False,
    ),
    (
        re.compile(
            rf"\b{_I}{_HAVE}\s+(?:finally\s+)?(?:decided|made\s+up\s+(?:my|our)\s+minds?|"
            rf"resolved|set\s+(?:myself\s+|ourselves\s+)?a\s+goal|committed)\s+to\s+(?P<obj>)",
            re.I,
        ),
        "goal",
        False,
        False,
    ),
    (
        re.compile(
            rf"\b{_I}(?:\s+(?:really\s+|so\s+|just\s+|still\s+)?(?:want|wanna|hope|would\s+love|"
            rf"would\s+like|dream\s+of|need)|(?:'d|’d)\s+(?:really\s+|so\s+)?(?:love|like))\s+"
            rf"(?:to\s+)?(?P<obj>)",
            re.I,
        ),
        "goal",
        True,
        False,
    ),
    (
        re.compile(
            rf"\b{_I}(?:{_BE}\s+going\s+to|{_BE}\s+gonna|'ll|’ll|\s+will)\s+(?:finally\s+)?(?P<obj>)",
            re.I,
        ),
        "plan",
        True,
        False,
    ),
    # values
    (
        re.compile(
            rf"\b{_I}\s+(?:really\s+|truly\s+|strongly\s+|firmly\s+|deeply\s+|do\s+|still\s+|"
            rf"always\s+have\s+|have\s+always\s+|'ve\s+always\s+|’ve\s+always\s+)?"
            rf"(?P<verb>(?:believe|believed)\s+in\s+(?P<obj>))",
            re.I,
        ),
        "value",
        False,
        True,
    ),
    (
        re.compile(
            rf"\b{_I}\s+(?:really\s+|truly\s+|strongly\s+|firmly\s+)?"
            rf"(?P<verb>believe\s+(?:that\s+)?(?:everyone|everybody|people|nobody|no\s+one|"
            rf"kids|children|we\s+should|you\s+should|it'?s\s+(?:important|wrong|right))"
            rf"(?P<obj>))",
            re.I,
        ),
        "value",
        False,
        True,
    ),
    (
        re.compile(
            rf"\b{_I}\s+(?:always\s+|simply\s+|just\s+|still\s+)?(?P<verb>(?:refuse|refused)\s+to\s+(?P<obj>))",
            re.I,
        ),
        "value",
        False,
        True,
    ),
    (
        re.compile(
            rf"\b{_I}\s+(?P<verb>(?:do\s+not|don't|don’t|never)\s+believe\s+in\s+(?P<obj>))",
            re.I,
        ),
        "value",
        False,
        True,
    ),
    (
        re.compile(
            rf"\b{_I}{_BE}\s+(?P<verb>(?:a\s+)?(?:firm\s+|big\s+|strong\s+)?believers?\s+in\s+(?P<obj>))",
            re.I,
        ),
        "value",
        False,
        True,
    ),
    (
        re.compile(rf"\b{_I}\s+(?:really\s+|deeply\s+)?(?P<verb>value\s+(?P<obj>))", re.I),
        "value",
        False,
        True,
    ),
    (
        re.compile(
            r"\b(?P<verb>(?:it's|it\s+is|it’s)\s+(?:really\s+|very\s+|so\s+)?important\s+to\s+"
            r"(?:me|us)\s+(?:to|that)\s+(?P<obj>))",
            re.I,
        ),
        "value",
        False,
        True,
    ),
    # Chinese
    (
        re.compile(
            r"我(?:们)?(?:今年|明年|这辈子|最大|现在|新的|人生)?的?(?:目标|梦想|心愿|愿望|新年愿望)"
            r"(?:之一)?(?:就)?是(?:要|能)?(?P<obj>)"
        ),
        "goal",
        False,
        False,
    ),
    (re.compile(r"我(?:们)?的计划是(?:要)?(?P<obj>)"), "plan", False, False),
    (
        re.compile(r"我(?:们)?(?:一直|正在|现在)?在(?P<verb>(?:存钱|攒钱|省钱)(?P<obj>))"),
        "goal",
        False,
        True,
    ),
    (
        re.compile(r"我(?:们)?(?:已经)?(?:打算|计划|决定|立志|下定决心)(?:要)?(?P<obj>)"),
        "plan",
        False,
        False,
    ),
    (
        re.compile(r"我(?:们)?(?:一直|特别|真的|很)?(?:想要|希望|想|要|准备)(?P<obj>)"),
        "goal",
        True,
        False,
    ),
    (
        re.compile(
            r"我(?:们)?(?:一直|始终|永远|从来都)?(?P<verb>(?:坚持|信奉|主张|拒绝|绝不|绝对不会|从不)(?P<obj>))"
        ),
        "value",
        False,
        True,
    ),
    (re.compile(r"我(?:们)?(?:一直|始终)?(?P<verb>相信(?P<obj>))"), "value", False, True),
    (re.compile(r"我(?:们)?的(?:原则|底线|信条|价值观)(?:就)?是(?P<obj>)"), "value", False, False),
)

# State signals: (pattern, action). The "obj" group names the goal, when it does.
_STATE: tuple[tuple[re.Pattern[str], SignalAction], ...] = (
    (
        re.compile(
            rf"\b{_I}{_HAVE}\s+(?:finally|actually|officially)\s+(?:just\s+)?(?P<obj>(?:[a-z]+ed|ran|did|"
            rf"made|got|won|bought|passed|finished|completed|reached|hit|became|wrote|sold|"
            rf"found|moved|graduated|published|done|run|paid|built|landed)\b.*)",
            re.I,
        ),
        "achieve",
    ),
    (
        re.compile(
            rf"\b{_I}\s+(?:did|made|nailed)\s+it\b|\b(?:i|we){_HAVE}\s+(?:achieved|reached|hit|"
            rf"accomplished|met)\s+(?:my|our)\s+(?:goal|target)\b(?P<obj>)",
            re.I,
        ),
        "achieve",
    ),
    (
        re.compile(
            rf"\b{_I}{_HAVE}\s+(?:just\s+|finally\s+|officially\s+|kind\s+of\s+|basically\s+)?"
            rf"(?:gave|given|give|giving)\s+up\s+(?:on\s+)?(?P<obj>.*)",
            re.I,
        ),
        "abandon",
    ),
    (
        re.compile(
            rf"\b{_I}{_HAVE}\s+(?:decided|chose)\s+(?:not\s+to|against)\s+(?P<obj>.*)"
            rf"|\b{_I}{_BE}\s+(?:not|no\s+longer)\s+(?:going\s+to|gonna|planning\s+to|planning\s+on)\s+(?P<obj2>[^.!?\n]{{0,80}}?)\s*(?:anymore|any\s+more)\b"
            rf"|\b{_I}\s+(?:don't|don’t|do\s+not)\s+(?:want|plan)\s+to\s+(?P<obj3>[^.!?\n]{{0,80}}?)\s*(?:anymore|any\s+more)\b"
            rf"|\b{_I}{_HAVE}\s+(?:dropped|scrapped|shelved|cancelled|canceled|called\s+off|"
            rf"abandoned)\s+(?P<obj4>.*)"
            rf"|\b{_I}{_HAVE}\s+changed\s+(?:my|our)\s+minds?\s+about\s+(?P<obj5>.*)",
            re.I,
        ),
        "abandon",
    ),
    (
        re.compile(
            rf"\b{_I}{_HAVE}\s+(?:put|putting)\s+(?P<obj>[^.!?\n]{{0,80}}?)\s+on\s+hold\b"
            rf"|\b{_I}{_BE}\s+taking\s+a\s+break\s+from\s+(?P<obj2>.*)",
            re.I,
        ),
        "pause",
    ),
    (
        re.compile(
            rf"\b{_I}{_HAVE}\s+been\s+(?P<obj>(?:training|saving|practicing|practising|working\s+on|"
            rf"studying|preparing|running|writing|learning)\b.*)"
            rf"|\b{_I}{_BE}\s+(?:still\s+)?(?:making\s+progress\s+on|getting\s+closer\s+to|"
            rf"halfway\s+(?:to|through)|on\s+track\s+(?:for|with|to))\s+(?P<obj2>.*)"
            rf"|\bso\s+far\s+{_I}{_HAVE}\s+(?P<obj3>.*)",
            re.I,
        ),
        "progress",
    ),
    (re.compile(r"我(?:们)?(?:终于|总算)(?P<obj>[^，,；;。！？]{1,60}?)(?:了|啦)?\s*$"), "achieve"),
    (re.compile(r"我(?:们)?(?:做到了|成功了|实现了|达成了)(?P<obj>)"), "achieve"),
    (re.compile(r"我(?:们)?(?:已经|还是)?(?:决定)?放弃(?:了)?(?P<obj>.*)"), "abandon"),
    (
        re.compile(r"我(?:们)?(?:已经)?不(?:打算|想|准备|计划)(?P<obj>[^，,；;。！？]{1,60}?)了"),
        "abandon",
    ),
    (
        re.compile(
            r"我(?:们)?(?:先)?(?:暂停|搁置)(?:了)?(?P<obj>.*)|(?P<obj2>[^，,；;。！？\s]{1,40}?)先放一放"
        ),
        "pause",
    ),
    (
        re.compile(r"我(?:们)?(?:已经|一直|每天都)(?:在)?(?P<obj>(?:存|攒|练|跑|学|准备).+)"),
        "progress",
    ),
)
_DISCOURSE = re.compile(
    r"^(?:\s*(?:well|so|and|but|now|also|actually|honestly|really|anyway|anyways|oh|yeah|"
    r"yes|ok|okay|um|uh|lol|haha+|btw|plus|i\s+think|i\s+guess|i\s+feel\s+like|"
    r"this\s+year|next\s+year|for\s+\d{4}|嗯|哦|哈+|其实|所以|而且|然后|反正)[\s,，]*)*",
    re.I,
)


# -- reading a sentence once ----------------------------------------------------------------
#
# Every stored event, up to 8,000 characters, is read here on the loop all souls share:
# what a match asks of its sentence is answered without reading the sentence again
# (souls.knowledge.claim_scan), so one long sentence of repeated triggers costs its length,
# not its length squared.

# A necessary piece of every marker: each pattern starts with one of these words (or 我),
# but the "X 先放一放" pause.
_ANY_MARKER = re.compile(r"\b(?:i|we|my|our|it|so)\b|我|先放一放", re.I)
# Per pattern of _NEW and _STATE, in order: literal pieces one of which each match holds.
_NEW_CUES = (
    Cue("goal|dream|aim|ambition|resolution|target|mission"),
    Cue("plan"),
    Cue("saving|putting|training|preparing|working|studying"),
    Cue("saving"),
    Cue("determined|committed|aiming|planning|hoping|going"),
    Cue("plan|intend|aim|vow|resolve"),
    Cue("decided|made|resolved|set|committed"),
    Cue("want|wanna|hope|would|dream|need|'d|’d"),
    Cue("going|gonna|'ll|’ll|will"),
    Cue("believe"),
    Cue("believe"),
    Cue("refuse"),
    Cue("believe"),
    Cue("believer"),
    Cue("value"),
    Cue("important"),
    Cue("", "目标|梦想|心愿|愿望"),
    Cue("", "的计划是"),
    Cue("", "存钱|攒钱|省钱"),
    Cue("", "打算|计划|决定|立志|下定决心"),
    Cue("", "想|希望|要|准备"),
    Cue("", "坚持|信奉|主张|拒绝|绝不|绝对不会|从不"),
    Cue("", "相信"),
    Cue("", "原则|底线|信条|价值观"),
)
_STATE_CUES = (
    Cue("finally|actually|officially"),
    Cue("did|made|nailed|goal|target"),
    Cue("gave|give|giving"),
    Cue("decided|chose|any|dropped|scrapped|shelved|cancel|called|abandoned|changed"),
    Cue("put|taking"),
    Cue("been|making|getting|halfway|track|far"),
    Cue("", "终于|总算"),
    Cue("", "做到了|成功了|实现了|达成了"),
    Cue("", "放弃"),
    Cue("", "不打算|不想|不准备|不计划"),
    Cue("", "暂停|搁置|先放一放"),
    Cue("", "已经|一直|每天都"),
)
assert len(_NEW_CUES) == len(_NEW)
assert len(_STATE_CUES) == len(_STATE)

# Literal pieces one of which every match of _LONG, and of _SHORT, holds (case as theirs).
_LONG_CUE = re.compile(
    r"year|month|summer|spring|fall|autumn|winter|decade|january|february|march|april|may|"
    r"june|july|august|september|october|november|december|christmas|time|day|eventually|"
    r"future|long|before|\d|年|以后|将来|未来|有一天|这辈子|退休",
    re.I,
)
_SHORT_CUE = re.compile(
    r"today|tonight|tomorrow|morning|afternoon|evening|weekend|later|bit|minute|sec|now|"
    r"work|lunch|dinner|今天|今晚|明天|待会|一会|马上|现在|等下|周末|晚上|下午|中午",
    re.I,
)
_LONG_WORDS = Cue(
    "year|month|summer|spring|fall|autumn|winter|decade|january|february|march|april|may|"
    "june|july|august|september|october|november|december|christmas|time|day|eventually|"
    "future|long|before",
    "年|以后|将来|未来|有一天|这辈子|退休",
)
_SHORT_WORDS = Cue(
    "today|tonight|tomorrow|morning|afternoon|evening|weekend|later|bit|minute|sec|now|"
    "work|lunch|dinner",
    "今天|今晚|明天|待会|一会|马上|现在|等下|周末|晚上|下午|中午",
)
_DIGIT = re.compile(r"\d")
_NONE = Found(_LONG_CUE, "", [])
_YOU = re.compile(r"\byou\b|你", re.I)
# An object that opens on the listener, or on a word pointing back at what was said.
_TO_LISTENER = re.compile(r"(?:in\s+)?(?:you|your|yours|u)\b|你|您", re.I)
_POINTING = re.compile(
    r"(?:[a-z]+\s+)?(?:there|that|it|this)(?:\s+(?:work|happen|count|right))?"
    r"(?:\s+(?:some\s?day|one\s+day|eventually|again|too))?\s*$",
    re.I,
)
_RELATIVE = re.compile(r"\b(?:what|which|whatever|everything|things)\s+$", re.I)
_CONDITION = re.compile(r"\s*(?:if|unless|suppose|imagine|如果|要是|假如|万一)\b", re.I)
# _TAIL read backwards, from a clause's end: a trailing filler word (with the blanks
# around it, which starts before any trailing run of marks) or else a run of marks.
_TAIL_BACK = re.compile(
    r"\s*(?:oot|hguoht|oht|lol|a+hah|hbt|ffuts\s+dna|gnihtemos\s+ro)\s+"
    r"|[\s.!?。！？~～…\-–—*]+",
    re.I,
)
_BLANKS = re.compile(r"\s*")
# _CLAUSE_END but its leading blanks: found at its own start, then the blanks before it
# are taken back, so a long run of blanks is read once, not once per blank.
_CLAUSE_END_CORE = re.compile(_CLAUSE_END.pattern.removeprefix(r"\s*"), _CLAUSE_END.flags)
assert _CLAUSE_END.pattern.startswith(r"\s*(?:")
_LOOK = 16  # how far before a marker a clause end is looked for again, truncated there
_PREFIX = 128  # a marker's clause before it up to this long is searched as it stands


class _Sentence:
    """One sentence and what its matches ask of it, each found once."""

    __slots__ = (
        "_long",
        "_not_mine",
        "_short",
        "clause_ends",
        "dehua",
        "low",
        "quotes",
        "rev",
        "tails",
        "text",
    )

    def __init__(self, text: str) -> None:
        self.text = text
        self.low = text.lower()
        self.quotes = Found(_QUOTES, text)
        self.rev = text[::-1]  # for the blanks before a clause end, and a clause's tail
        self.clause_ends = Found(_CLAUSE_END, text, self._clause_ends(0))
        self._not_mine: Found | None = None
        self.dehua = text.rfind("的话")
        self.tails: dict[int, int] = {}  # clause end: where trimming it from there stops
        self._long: Found | None = None
        self._short: Found | None = None

    def _clause_ends(self, at: int, first: bool = False) -> list[tuple[int, int]]:
        """``_CLAUSE_END.finditer(text, at)`` (its first match only, if ``first``)."""
        spans: list[tuple[int, int]] = []
        n, prev = len(self.text), at
        for m in _CLAUSE_END_CORE.finditer(self.text, at):
            start = m.start()
            if start > prev:  # the blanks before it, back to the last match's end
                start = max(prev, n - _blanks(self.rev, n - start))
            spans.append((start, m.end()))
            if first:
                break
            prev = m.end()
        return spans

    def clause_end(self, at: int) -> int:
        """Where ``_CLAUSE_END.search(text, at)`` starts, or the text's end."""
        if self.clause_ends.inside(at):
            spans = self._clause_ends(at, first=True)
            return spans[0][0] if spans else len(self.text)
        span = self.clause_ends.search(at)
        return span[0] if span else len(self.text)

    def long_cues(self) -> Found:
        """Where a horizon (_LONG) may be: its cues, found once, if the sentence has any."""
        if self._long is None:
            some = not _LONG_WORDS.absent(self.text, self.low) or _DIGIT.search(self.text)
            self._long = Found(_LONG_CUE, self.text) if some else _NONE
        return self._long

    def short_cues(self) -> Found:
        """Where a near time (_SHORT) may be: its cues, found once, if the sentence has any."""
        if self._short is None:
            some = not _SHORT_WORDS.absent(self.text, self.low)
            self._short = Found(_SHORT_CUE, self.text) if some else _NONE
        return self._short

    def not_mine(self) -> Found:
        if self._not_mine is None:
            self._not_mine = Found(_NOT_MINE, self.text)
        return self._not_mine

    def mine(self, start: int) -> bool:
        """Whether a marker at ``start`` is the speaker's own present statement: no
        hypothetical, reported or third-person words before it in its clause, not quoted."""
        if self.quotes.before(start) % 2:
            return False
        text = self.text
        cut = self.clause_ends.last_end(start)  # the clause ends of text[:start]
        glued = start > 0 and _word(text[start - 1])
        if glued:  # cut at start, a clause end's closing \b or + sees the end of text[:start]
            for m in _CLAUSE_END.finditer(text, max(cut, start - _LOOK), start):
                cut = max(cut, m.end())
        # A conditional opening the sentence governs its clauses ("If I get the job, I want…").
        if cut and _CONDITION.match(text, 0, cut):
            return False
        if self.dehua >= start:
            return False
        if (glued or (cut and _word(text[cut - 1]) and _word(text[cut]))) and (
            start - cut <= _PREFIX
        ):  # a \b at either end of text[cut:start] that the whole text does not have
            return not _NOT_MINE.search(text[cut:start])
        found = self.not_mine().search(cut)
        return not (found and found[1] <= start)

    def object(self, start: int, limit: int | None = None) -> tuple[str, int]:
        """The clause from ``start`` to its end (or ``limit``), trimmed; and where it ends."""
        text = self.text
        if limit is None:
            end = self.clause_end(start)
            stop = self._trimmed(start, end)
        else:
            m = _CLAUSE_END.search(text, start, limit)
            end = m.start() if m else limit
            stop = self._trim(start, end)
        lead = _blanks(text, start, stop)
        if stop - lead > MAX_OBJECT:
            piece = text[lead : lead + MAX_OBJECT]
            cut = piece.rfind(" ", 0, MAX_OBJECT)
            piece = piece[: cut if cut > MAX_OBJECT // 2 else MAX_OBJECT].rstrip()
        else:
            piece = text[lead:stop]
        return piece, start + len(piece)

    def _trim(self, start: int, end: int) -> int:
        """Where ``text[start:end]`` ends once its tail (_TAIL, again and again) is cut."""
        n = len(self.text)
        while end > start and (m := _TAIL_BACK.match(self.rev, n - end, n - start)):
            end = n - m.end()
        return end

    def _trimmed(self, start: int, end: int) -> int:
        """``_trim(start, end)``, remembered per clause end: trimmed from the sentence's
        start, the tail stops at the same place unless it reaches ``start``."""
        stop = self.tails.get(end)
        if stop is None:
            stop = self.tails[end] = self._trim(0, end)
        return stop if stop >= start else self._trim(start, end)


def read_goals(text: str) -> list[GoalSignal]:
    """What ``text`` (one turn of one speaker) says about the speaker's goals, in order."""
    found: list[GoalSignal] = []
    known: dict[str, Any] = {}  # what was worked out of a piece of this turn
    for sentence_match in _SENTENCE.finditer(text):
        sentence = sentence_match.group().strip()
        if not sentence or not _ANY_MARKER.search(sentence) or _asks(sentence):
            continue
        here = _Sentence(sentence)
        taken = Claimed(len(sentence))
        for signal, span in _states(here, known):
            found.append(signal)
            taken.take(*span)
        for signal, span in _news(here, known):
            if not taken.holds(span[0]):
                found.append(signal)
                taken.take(*span)
    return found


def _blanks(text: str, at: int, end: int | None = None) -> int:
    """Where the blanks from ``at`` end."""
    m = _BLANKS.match(text, at, len(text) if end is None else end)
    return m.end() if m else at


def _word(char: str) -> bool:
    """Whether ``char`` is a word character to re's ``\\b``."""
    return char.isalnum() or char == "_"


def _asks(sentence: str) -> bool:
    end = sentence.rstrip()
    if end.endswith(("?", "？")):
        return True
    return bool(_EN_QUESTION_START.match(sentence)) or bool(_ZH_QUESTION.search(end))


def _contentful(text: str) -> bool:
    return any(is_topic(t) for t in tokens(text)) or len(re.findall("[\u4e00-\u9fff]", text)) >= 2


def _known(known: dict[str, Any], key: str, work: Callable[[str], T], arg: str) -> T:
    """``work(arg)``, once per turn for each ``key``."""
    if key not in known:
        known[key] = work(arg)
    value: T = known[key]
    return value


def _news(here: _Sentence, known: dict[str, Any]) -> list[tuple[GoalSignal, tuple[int, int]]]:
    found: list[tuple[GoalSignal, tuple[int, int]]] = []
    sentence = here.text
    claimed = Claimed(len(sentence))
    for (pattern, kind, needs_horizon, with_verb), cue in zip(_NEW, _NEW_CUES, strict=True):
        if cue.absent(sentence, here.low) or (
            needs_horizon and not here.long_cues().meets(0, len(sentence))
        ):
            continue
        for m in pattern.finditer(sentence):
            if claimed.holds(m.start()) or not here.mine(m.start()):
                continue
            obj, end = here.object(m.start("obj"))
            if not obj or not _known(known, "c" + obj, _contentful, obj) or _SPEECH.match(obj):
                continue
            if _TO_LISTENER.match(obj) or _POINTING.match(obj):
                continue  # "I believe in you", "I'd love to go there someday": not one's own
            if _RELATIVE.search(sentence, max(0, m.start() - _LOOK), m.start()):
                continue  # "the ones that suit what I believe in": named, not stated
            if kind != "value" and _YOU.search(obj):
                continue  # a promise to the listener: a commitment (the claim rules')
            if (
                kind != "value"
                and here.short_cues().meets(m.start(), end)
                and _SHORT.search(sentence[m.start() : end])
            ):
                continue
            horizon = None  # a value needs none, and keeps its statement as said
            window = (max(0, m.start() - 40), end + 40)
            if kind != "value" and here.long_cues().meets(*window):
                horizon = _LONG.search(sentence[window[0] : window[1]])
            if needs_horizon and horizon is None:
                continue
            start = m.start("verb") if with_verb else m.start("obj")
            statement = sentence[start:end].strip()
            if horizon is not None and horizon.group() not in statement and kind != "value":
                statement = f"{statement} ({horizon.group().strip()})"
            domain = _known(known, "d" + statement, domain_of, statement)
            if kind == "value" and not (statement.startswith("坚持") and domain):
                domain = "belief"  # a persistence (坚持每天锻炼) keeps its own domain
            signal = GoalSignal(
                action="new", kind=kind, statement=statement, quote=sentence, domain=domain
            )
            found.append((signal, (m.start(), end)))
            claimed.take(m.start(), end)
    found.sort(key=lambda f: f[1][0])
    return found


def _states(here: _Sentence, known: dict[str, Any]) -> list[tuple[GoalSignal, tuple[int, int]]]:
    found: list[tuple[GoalSignal, tuple[int, int]]] = []
    sentence = here.text
    claimed = Claimed(len(sentence))
    for (pattern, action), cue in zip(_STATE, _STATE_CUES, strict=True):
        if cue.absent(sentence, here.low):
            continue
        for m in pattern.finditer(sentence):
            if claimed.holds(m.start()) or not here.mine(m.start()):
                continue
            group = next((g for g in m.groupdict() if m.group(g) is not None), None)
            if group is None:
                obj, end = "", m.end()
            elif m.end(group) < m.end():  # bounded by the pattern ("put X on hold")
                obj, end = here.object(m.start(group), m.end(group))
            else:
                obj, end = here.object(m.start(group))
            obj = re.sub(r"了$", "", obj)
            obj = re.sub(r"^(?:the|my|our|on|that|this)\s+", "", obj, flags=re.I)
            if _PRONOUN_ONLY.match(obj):
                obj = ""
            signal = GoalSignal(
                action=action,
                kind="goal",
                statement=obj,
                quote=sentence,
                domain=_known(known, "d" + obj, domain_of, obj),
            )
            span = (m.start(), max(end, m.end()))
            found.append((signal, span))
            claimed.take(*span)
    found.sort(key=lambda f: f[1][0])
    return found

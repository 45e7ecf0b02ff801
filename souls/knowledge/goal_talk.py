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
- filler: the object must hold a content word ("I want to say…", "my plan is to, um").

Every statement is a verbatim piece of the turn (the quote is the whole sentence), cut
at the clause's end. Pure and deterministic.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from souls.knowledge.domains import domain_of
from souls.mind.topics import is_topic
from souls.text.tokenize import tokens

__all__ = ["GoalSignal", "SignalAction", "read_goals"]

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
            rf"|\b{_I}{_BE}\s+(?:not|no\s+longer)\s+(?:going\s+to|gonna|planning\s+to|planning\s+on)\s+(?P<obj2>.*?)\s*(?:anymore|any\s+more)\b"
            rf"|\b{_I}\s+(?:don't|don’t|do\s+not)\s+(?:want|plan)\s+to\s+(?P<obj3>.*?)\s*(?:anymore|any\s+more)\b"
            rf"|\b{_I}{_HAVE}\s+(?:dropped|scrapped|shelved|cancelled|canceled|called\s+off|"
            rf"abandoned)\s+(?P<obj4>.*)"
            rf"|\b{_I}{_HAVE}\s+changed\s+(?:my|our)\s+minds?\s+about\s+(?P<obj5>.*)",
            re.I,
        ),
        "abandon",
    ),
    (
        re.compile(
            rf"\b{_I}{_HAVE}\s+(?:put|putting)\s+(?P<obj>.*?)\s+on\s+hold\b"
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
    (re.compile(r"我(?:们)?(?:终于|总算)(?P<obj>[^，,；;]+?)(?:了|啦)?\s*$"), "achieve"),
    (re.compile(r"我(?:们)?(?:做到了|成功了|实现了|达成了)(?P<obj>)"), "achieve"),
    (re.compile(r"我(?:们)?(?:已经|还是)?(?:决定)?放弃(?:了)?(?P<obj>.*)"), "abandon"),
    (re.compile(r"我(?:们)?(?:已经)?不(?:打算|想|准备|计划)(?P<obj>.+?)了"), "abandon"),
    (re.compile(r"我(?:们)?(?:先)?(?:暂停|搁置)(?:了)?(?P<obj>.*)|(?P<obj2>.+?)先放一放"), "pause"),
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


def read_goals(text: str) -> list[GoalSignal]:
    """What ``text`` (one turn of one speaker) says about the speaker's goals, in order."""
    found: list[GoalSignal] = []
    for sentence_match in _SENTENCE.finditer(text):
        sentence = sentence_match.group().strip()
        if not sentence or _asks(sentence):
            continue
        taken: list[tuple[int, int]] = []
        for signal, span in _states(sentence):
            found.append(signal)
            taken.append(span)
        for signal, span in _news(sentence):
            if not any(a <= span[0] < b for a, b in taken):
                found.append(signal)
                taken.append(span)
    return found


def _asks(sentence: str) -> bool:
    end = sentence.rstrip()
    if end.endswith(("?", "？")):
        return True
    return bool(_EN_QUESTION_START.match(sentence)) or bool(_ZH_QUESTION.search(end))


def _mine(sentence: str, start: int) -> bool:
    """Whether a marker at ``start`` is the speaker's own present statement: no
    hypothetical, reported or third-person words before it in its clause, not quoted."""
    if len(_QUOTES.findall(sentence[:start])) % 2:
        return False
    before = sentence[:start]
    cut = max((m.end() for m in _CLAUSE_END.finditer(before)), default=0)
    prefix = before[cut:]
    # A conditional opening the sentence governs its clauses ("If I get the job, I want…").
    head = before[:cut]
    if re.match(r"\s*(?:if|unless|suppose|imagine|如果|要是|假如|万一)\b", head, re.I):
        return False
    return not (_NOT_MINE.search(prefix) or _NOT_MINE_AFTER.search(sentence[start:]))


def _object(sentence: str, start: int) -> tuple[str, int]:
    """The clause from ``start`` to its end, trimmed; and where it ends."""
    end_match = _CLAUSE_END.search(sentence, start)
    end = end_match.start() if end_match else len(sentence)
    piece = sentence[start:end]
    while True:
        trimmed = _TAIL.sub("", piece)
        if trimmed == piece:
            break
        piece = trimmed
    piece = piece.strip()
    if len(piece) > MAX_OBJECT:
        cut = piece.rfind(" ", 0, MAX_OBJECT)
        piece = piece[: cut if cut > MAX_OBJECT // 2 else MAX_OBJECT].rstrip()
    return piece, start + len(piece)


def _contentful(text: str) -> bool:
    return any(is_topic(t) for t in tokens(text)) or len(re.findall("[\u4e00-\u9fff]", text)) >= 2


def _news(sentence: str) -> list[tuple[GoalSignal, tuple[int, int]]]:
    found: list[tuple[GoalSignal, tuple[int, int]]] = []
    for pattern, kind, needs_horizon, with_verb in _NEW:
        for m in pattern.finditer(sentence):
            if any(a <= m.start() < b for _, (a, b) in found) or not _mine(sentence, m.start()):
                continue
            obj, end = _object(sentence, m.start("obj"))
            if not obj or not _contentful(obj) or _SPEECH.match(obj):
                continue
            if re.search(r"\byou\b|你", obj, re.I) and kind != "value":
                continue  # a promise to the listener: a commitment (the claim rules')
            clause = sentence[m.start() : end]
            if _SHORT.search(clause) and kind != "value":
                continue
            horizon = _LONG.search(sentence[max(0, m.start() - 40) : end + 40])
            if needs_horizon and horizon is None:
                continue
            start = m.start("verb") if with_verb else m.start("obj")
            statement = sentence[start:end].strip()
            if horizon is not None and horizon.group() not in statement and kind != "value":
                statement = f"{statement} ({horizon.group().strip()})"
            domain = domain_of(statement)
            if kind == "value" and not (statement.startswith("坚持") and domain):
                domain = "belief"  # a persistence (坚持每天锻炼) keeps its own domain
            signal = GoalSignal(
                action="new", kind=kind, statement=statement, quote=sentence, domain=domain
            )
            found.append((signal, (m.start(), end)))
    found.sort(key=lambda f: f[1][0])
    return found


def _states(sentence: str) -> list[tuple[GoalSignal, tuple[int, int]]]:
    found: list[tuple[GoalSignal, tuple[int, int]]] = []
    for pattern, action in _STATE:
        for m in pattern.finditer(sentence):
            if any(a <= m.start() < b for _, (a, b) in found) or not _mine(sentence, m.start()):
                continue
            group = next((g for g in m.groupdict() if m.group(g) is not None), None)
            if group is None:
                obj, end = "", m.end()
            elif m.end(group) < m.end():  # bounded by the pattern ("put X on hold")
                obj, end = _object(sentence[: m.end(group)], m.start(group))
            else:
                obj, end = _object(sentence, m.start(group))
            obj = re.sub(r"了$", "", obj)
            obj = re.sub(r"^(?:the|my|our|on|that|this)\s+", "", obj, flags=re.I)
            if _PRONOUN_ONLY.match(obj):
                obj = ""
            signal = GoalSignal(
                action=action, kind="goal", statement=obj, quote=sentence, domain=domain_of(obj)
            )
            found.append((signal, (m.start(), max(end, m.end()))))
    found.sort(key=lambda f: f[1][0])
    return found

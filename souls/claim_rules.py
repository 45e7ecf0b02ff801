# ruff: noqa: RUF001  (full-width punctuation and curly quotes are what the patterns match)
"""Rule extraction of claims (DESIGN §3.10): zero-cost English and Chinese patterns.

``find_claims(text, ts)`` is the whole job; ``souls.claims.extract_rules`` turns its
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal, NamedTuple

__all__ = ["Confidence", "RuleMatch", "find_claims", "find_due"]

Confidence = Literal["high", "medium", "low"]


class RuleMatch(NamedTuple):
    slot: str
    value: str
    start: int  # text[start:end] is the quote
    end: int
    confidence: Confidence
    due: float | None  # epoch seconds, plans and commitments only


# Building blocks. English triggers are case-insensitive through scoped (?i:...) groups;
# names and places stay case-sensitive, since a capital letter is what marks them.
_AP = "['’]"
_HAN = "\u4e00-\u9fff"
_WORD = r"[A-Z\u00c0-\u00de][A-Za-z\u00c0-\u024f'’\-]*"
_NAME = rf"{_WORD}(?:\s(?!I\b){_WORD}){{0,2}}"
_PLACE = rf"{_WORD}\.?(?:[\s\-](?:(?:of|upon|on|de|del|la|le|am)\s)?(?!I\b){_WORD}\.?){{0,3}}"
_ORG = r"[A-Z0-9][\w&'’.\-]*(?:\s(?:&\s)?(?!I\b)[A-Z0-9][\w&'’.\-]*){0,3}"
_STOPS = r"\s，。！？、,.!?；;：:~～…）)」』"
_ZH_END = rf"(?=$|[{_STOPS}]|了|啦|哦|呀|啊|吧|哈|呢)"
_ZH_NAME = rf"(?:[{_HAN}]{{1,4}}?|{_NAME})"  # lazy: 麻薯了 is 麻薯
_ZH_PHRASE = rf"[{_HAN}A-Za-z0-9][{_HAN}A-Za-z0-9 ·]{{0,19}}?"
_ZH_PHRASE_END = rf"(?=$|[{_STOPS}]|了|啦|啊|呀|吧|哦|呢|哈|因为|但是|可是|不过|所以|而且)"
_ZH_PLACE_END = rf"(?=$|[{_STOPS}]|了|啦|啊|呀|吧|哦|的|已经|工作|上班|生活|读书|上学|长大)"
_CLAUSE_END = (
    r"(?=\s*$|\s*[,;:()\[\]\"“”—–]|\s+(?i:but|because|since|although|though|when|whenever"
    r"|if|so|as|and\s+i|or\s+i|which|who|that|too|anymore|any\s+more|these\s+days"
    r"|nowadays|now|again|a\s+lot|very\s+much|more|either)\b)"
)
_OBJ = rf"[^\s,;:()\"“”][^,;:()\"“”]{{0,60}}?{_CLAUSE_END}"
_ACTION_END = (
    r"(?=\s*$|\s*[,;:()\"“”—–]|\s+(?i:but|because|since|although|though|so\s+that|if"
    r"|unless|and\s+then|and\s+i|or\s+i)\b)"
)
_KIND = (
    r"cat|kitten|kitty|dog|puppy|rabbit|bunny|hamster|parrot|bird|turtle|tortoise"
    r"|goldfish|fish|horse|guinea\s+pig|ferret|snake|lizard"
)
_ZH_KIND = r"猫咪|小猫|猫|小狗|狗狗|狗|兔子|仓鼠|鹦鹉|乌龟|金鱼|鱼|龙猫|刺猬"
_PARTNER = r"wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|spouse"
_ZH_PARTNER = r"老婆|老公|妻子|丈夫|太太|先生|女朋友|男朋友|女友|男友|对象|爱人|未婚妻|未婚夫"
_JOBS = (
    r"teacher|nurse|doctor|engineer|developer|programmer|designer|lawyer|accountant|student"
    r"|researcher|scientist|writer|journalist|manager|chef|cook|pilot|farmer|architect"
    r"|dentist|pharmacist|librarian|consultant|analyst|professor|lecturer|artist|musician"
    r"|photographer|translator|editor|mechanic|electrician|plumber|carpenter|firefighter"
    r"|officer|barista|waiter|waitress|cashier|driver|veterinarian|vet|therapist"
    r"|psychologist|surgeon|paramedic|tutor|intern|freelancer|entrepreneur|founder"
)
_LANG = (
    r"English|Chinese|Mandarin|Cantonese|French|German|Spanish|Japanese|Korean|Italian"
    r"|Portuguese|Russian|Arabic|Dutch|Hindi|Swedish|Polish|Turkish|Vietnamese|Thai|Greek"
    r"|Hebrew|Indonesian"
)
_ZH_LANG = (
    r"中文|汉语|普通话|粤语|英语|英文|日语|日文|韩语|法语|德语|西班牙语|俄语|意大利语"
    r"|葡萄牙语|阿拉伯语|闽南语|上海话|四川话"
)
_MONTH = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_BDAY = (
    rf"(?i:\d{{4}}-\d\d-\d\d|(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH})(?:,?\s+\d{{4}})?)(?![\w-])"
)
_ZH_DATE = (
    r"大后天|后天|明天|明早|明晚|今天|今晚|(?:下个?|这个?|本)?(?:周|星期|礼拜)[一二三四五六日天]"
    r"|(?:\d{4}年)?\d{1,2}月\d{1,2}[日号]"
)
_WILL = rf"(?:{_AP}ll|\s+will)"
_BE = rf"(?:{_AP}m|{_AP}re|\s+am|\s+are)"


def _en_action(slot: str) -> str:
    return rf"(?P<{slot}>[A-Za-z][^,;:()\"“”]{{1,80}}?){_ACTION_END}"


def _zh_action(slot: str) -> str:
    return rf"(?P<{slot}>[^{_STOPS}]{{2,30}})"


@dataclass(frozen=True, slots=True)
class _Rule:
    # Each named group is a slot and yields one claim. With ``dated``, a plan counts only
    # when its sentence holds a date phrase ("I'll go hiking" is no plan, "I'll go hiking
    # tomorrow" is); an action addressed to the listener is a commitment and needs none.
    pattern: re.Pattern[str]
    # Words a sentence the pattern can match holds (at least one of them): most
    # sentences skip most patterns on this cheap check.
    trigger: _Trigger
    dated: bool = False


@dataclass(frozen=True, slots=True)
class _Trigger:
    words: frozenset[str]  # lowercase ASCII words, as _WORDS splits a sentence
    han: tuple[str, ...]  # Chinese substrings

    def hit(self, words: set[str], sentence: str) -> bool:
        if not self.words.isdisjoint(words):
            return True
        return not sentence.isascii() and any(h in sentence for h in self.han)


_WORDS = re.compile(r"[a-z]+")


def _trigger(words: str, han: str = "") -> _Trigger:
    return _Trigger(frozenset(words.split()), tuple(han.split("|")) if han else ())


def _rules(*patterns: str, trigger: _Trigger, dated: bool = False) -> list[_Rule]:
    return [_Rule(re.compile(p), trigger, dated) for p in patterns]


# Order matters only among plans and commitments: the first rule that covers an action
# claims it, so a promise is never also read as a plan.
_RULES: tuple[_Rule, ...] = (
    *_rules(
        # names
        rf"(?i:\bmy\s+name\s+is|\bmy\s+name{_AP}s|\bi{_AP}m\s+called|\bi\s+am\s+called"
        rf"|\bcall\s+me|\bi\s+go\s+by)\s+(?P<name>{_NAME})",
        rf"(?:^|(?<=[，,。\s好]))我叫(?P<name>{_ZH_NAME}){_ZH_END}",
        rf"我的名字(?:是|叫)(?P<name>{_ZH_NAME}){_ZH_END}",
        trigger=_trigger("name named called call by", "我叫|名字"),
    ),
    *_rules(
        # pets
        rf"(?i:\b(?:my|our)\s+(?P<pet_kind>{_KIND})(?:{_AP}s\s+(?:new\s+)?name\s+is"
        rf"|\s+is\s+called|\s+is\s+named|\s+is|\s+named|\s+called))\s+(?:the\s+)?"
        rf"(?P<pet_name>{_NAME})",
        rf"(?i:\b(?:i|we)\s+(?:have|got|adopted|own)\s+a\s+(?P<pet_kind>{_KIND})\s+"
        rf"(?:called|named))\s+(?P<pet_name>{_NAME})",
        rf"(?i:\b(?:i|we)(?:\s+have|{_AP}ve)?\s+(?:just\s+)?renamed\s+(?:the|our|my)\s+"
        rf"(?P<pet_kind>{_KIND}))\s+(?:to\s+)?(?P<pet_name>{_NAME})",
        rf"我(?:们)?(?:的|家的?|养的)(?P<pet_kind>{_ZH_KIND})(?:的名字)?(?:叫做?|名叫|是)"
        rf"(?P<pet_name>{_ZH_NAME}){_ZH_END}",
        rf"我(?:们)?(?:已经|刚)?把(?:我的|我们的|我家的?|家里的)?(?P<pet_kind>{_ZH_KIND})"
        rf"(?:的名字)?改(?:名|成|为)(?:叫|为|成)?了?(?P<pet_name>{_ZH_NAME}){_ZH_END}",
        trigger=_trigger(_KIND.replace("|", " ").replace("\\s+", " "), _ZH_KIND),
    ),
    *_rules(
        # partner
        rf"(?i:\bmy\s+(?:{_PARTNER})(?:{_AP}s\s+name\s+is|\s+is\s+called|\s+is\s+named|,)?)"
        rf"\s+(?P<partner_name>{_NAME})",
        rf"我的?(?:{_ZH_PARTNER})(?:叫做?|名叫|的名字是|的名字叫)(?P<partner_name>{_ZH_NAME})"
        rf"{_ZH_END}",
        trigger=_trigger(
            "wife husband partner girlfriend boyfriend fiance fiancee fianc spouse", _ZH_PARTNER
        ),
    ),
    *_rules(
        # places
        rf"(?i:\b(?:i|we)\s+(?:still\s+|now\s+|currently\s+)?live\s+in"
        rf"|\bi(?:{_AP}m|\s+am)\s+(?:now\s+|currently\s+)?living\s+in"
        rf"|\b(?:i|we)(?:\s+have|{_AP}ve)?\s+(?:just\s+|recently\s+)?(?:moved|relocated)\s+to)"
        rf"\s+(?:the\s+)?(?P<location>{_PLACE})",
        rf"我(?:们)?(?:现在|目前|一直|已经)?(?:住在|生活在|搬到了?|搬去了?|搬家到了?)"
        rf"(?P<location>[{_HAN}]{{2,8}}?){_ZH_PLACE_END}",
        rf"(?i:\bi(?:{_AP}m|\s+am)\s+(?:originally\s+)?from|\bi\s+(?:was\s+born\s+and\s+raised"
        rf"|grew\s+up|was\s+born|was\s+raised)\s+in|\bmy\s+hometown\s+is)\s+(?:the\s+)?"
        rf"(?P<hometown>{_PLACE})",
        rf"我(?:的)?老家(?:是|在)(?P<hometown>[{_HAN}]{{2,8}}?){_ZH_PLACE_END}",
        rf"我(?:来自|出生在|是在)(?P<hometown>[{_HAN}]{{2,8}}?){_ZH_PLACE_END}",
        trigger=_trigger(
            "live lives living moved relocated from grew born raised hometown",
            "住|生活|搬|老家|来自|出生|是在",
        ),
    ),
    *_rules(
        # work
        rf"(?i:\bi\s+(?:currently\s+|now\s+)?work\s+as\s+(?:an?\s+)?)"
        rf"(?P<job>[A-Za-z][A-Za-z\-]*(?:\s(?!(?i:at|for|in|and|but|with|on|because)\b)"
        rf"[A-Za-z][A-Za-z\-]*){{0,3}})(?:\s+(?i:at|for)\s+(?:the\s+)?(?P<employer>{_ORG}))?",
        rf"(?i:\bi(?:{_AP}m|\s+am)\s+an?)\s+(?P<job>(?i:(?:[a-z\-]+\s){{0,2}}(?:{_JOBS})))\b"
        rf"(?:\s+(?i:at|for)\s+(?:the\s+)?(?P<employer>{_ORG}))?",
        rf"(?i:\bi(?:{_AP}m|\s+am)\s+an?)\s+(?P<job>(?i:[a-z\-]+(?:\s[a-z\-]+){{0,2}}))"
        rf"\s+(?i:at|for)\s+(?:the\s+)?(?P<employer>{_ORG})",
        rf"(?i:\bi\s+(?:currently\s+|now\s+)?work\s+(?:at|for))\s+(?:the\s+)?(?P<employer>{_ORG})",
        rf"我(?:现在|目前)?是一名(?P<job>[{_HAN}]{{2,8}}?)(?=$|[{_STOPS}]|在|了)",
        rf"我的(?:工作|职业)是(?P<job>[{_HAN}]{{2,8}}?)(?=$|[{_STOPS}]|在|了)",
        rf"我(?:现在|目前)?在(?P<employer>[{_HAN}]{{2,12}}?|{_ORG})(?:工作|上班|任职|实习)",
        trigger=_trigger("work m am", "一名|工作|职业|上班|任职|实习"),
    ),
    *_rules(
        # likes and dislikes
        rf"(?i:\bi\s+(?:really\s+|also\s+|still\s+|absolutely\s+|just\s+|totally\s+"
        rf"|truly\s+|do\s+)?(?:love|like|enjoy|adore))\s+(?P<likes>{_OBJ})",
        rf"(?i:\bi\s+(?:really\s+|absolutely\s+|just\s+|still\s+)?(?:hate|dislike|detest"
        rf"|can{_AP}?t\s+stand|cannot\s+stand)|\bi\s+(?:really\s+|just\s+)?(?:don{_AP}?t"
        rf"|do\s+not|no\s+longer)\s+(?:really\s+)?(?:like|love|enjoy))\s+(?P<dislikes>{_OBJ})",
        rf"我(?:真的|特别|非常|很|超|最|也|还|一直|挺|蛮)*(?:喜欢|热爱|喜爱)"
        rf"(?P<likes>{_ZH_PHRASE}){_ZH_PHRASE_END}",
        rf"我(?:真的|特别|非常|很|超|最|也|还|一直|挺|蛮)*爱(?P<likes>(?:吃|喝|看|听|玩)"
        rf"{_ZH_PHRASE}){_ZH_PHRASE_END}",
        rf"我(?:真的|特别|非常|也|还|一直|现在|已经)*(?:不(?:太|是很|怎么|再)?喜欢|讨厌|受不了)"
        rf"(?P<dislikes>{_ZH_PHRASE}){_ZH_PHRASE_END}",
        rf"我(?:真的|也|还|一直|现在|已经)*不(?:再)?爱(?P<dislikes>(?:吃|喝|看|听|玩)"
        rf"{_ZH_PHRASE}){_ZH_PHRASE_END}",
        trigger=_trigger(
            "love like enjoy adore hate dislike detest stand longer", "喜|爱|讨厌|受不了"
        ),
    ),
    *_rules(
        # birthday and language
        rf"(?i:\bmy\s+birthday\s+is(?:\s+on)?|\bi\s+was\s+born\s+on)\s+(?P<birthday>{_BDAY})",
        r"我的生日是(?P<birthday>(?:\d{4}年)?\d{1,2}月\d{1,2}[日号])",
        r"我是?(?P<birthday>(?:\d{4}年)?\d{1,2}月\d{1,2}[日号])(?:出生|生日)",
        rf"(?i:\bmy\s+(?:native|first|mother)\s+(?:language|tongue)\s+is)\s+"
        rf"(?P<language>{_LANG})\b",
        rf"(?i:\bi(?:{_AP}m|\s+am)\s+a\s+native)\s+(?P<language>{_LANG})\s+(?i:speaker)",
        rf"(?i:(?:^\s*|\bplease\s+)(?:always\s+)?(?:reply|respond|answer|talk|speak|write)"
        rf"(?:\s+to\s+me)?\s+in)\s+(?P<language>{_LANG})\b",
        rf"我的母语是(?P<language>{_ZH_LANG})",
        rf"(?:^|请)(?:用|说)(?P<language>{_ZH_LANG})(?:回答|回复|跟我说|和我说|和我聊|交流)",
        trigger=_trigger(
            "birthday born language tongue native reply respond answer talk speak write",
            "生日|出生|母语|用|说",
        ),
    ),
    *_rules(
        # promises, then plans
        rf"(?i:\bi\s+(?:solemnly\s+)?promised?(?:\s+you)?(?:\s+to|\s+(?:that\s+)?i{_WILL}"
        rf"|\s+(?:that\s+)?i\s+would|\s+(?:that\s+)?i{_AP}d))\s+{_en_action('commitment')}",
        rf"我(?:们)?(?:已经|一定)?(?:答应|保证|承诺|发誓)过?(?:你|您)?了?{_zh_action('commitment')}",
        rf"(?<![你他她们])(?:我们)?说好了要?{_zh_action('commitment')}",
        rf"(?i:\b(?:i|we){_BE}\s+planning\s+to|\b(?:i|we)\s+plan\s+to)\s+{_en_action('plan')}",
        rf"我(?:们)?(?:打算|准备|计划)(?:{_ZH_DATE})?{_zh_action('plan')}",
        trigger=_trigger(
            "promise promised plan planning", "答应|保证|承诺|发誓|说好|打算|准备|计划"
        ),
    ),
    *_rules(
        rf"(?i:\b(?:i|we){_BE})\s+(?P<plan>(?i:going)\s+to\s+(?:(?i:the|a|an|my|our|his|her"
        rf"|their|your)\s+|[A-Z])[^,;:()\"“”]{{0,80}}?){_ACTION_END}",
        rf"(?i:\b(?:i|we){_BE}\s+(?:going\s+to|gonna))\s+{_en_action('plan')}",
        rf"(?i:\b(?:i|we){_WILL})\s+{_en_action('plan')}",
        rf"我(?:们)?(?:可能|也许|大概|应该|或许)?(?:{_ZH_DATE})?(?:要|会|得)(?![不是])"
        rf"{_zh_action('plan')}",
        rf"我(?:们)?(?:可能|也许|大概|应该|或许)?(?:{_ZH_DATE})(?P<plan>(?:去|来|回|给|陪|跟|和)[^{_STOPS}]{{1,29}})",
        trigger=_trigger("going gonna ll will", "要|会|得|去|来|回|给|陪|跟|和"),
        dated=True,
    ),
)
# The rules by trigger, in order (consecutive rules share their group's trigger).
_GROUPS: tuple[tuple[_Trigger, tuple[_Rule, ...]], ...] = tuple(
    (group[0].trigger, tuple(group))
    for group in (
        [rule for rule in _RULES if rule.trigger is trigger]
        for trigger in {id(rule.trigger): rule.trigger for rule in _RULES}.values()
    )
)
_ACTION_SLOTS = frozenset({"plan", "commitment"})

# Sentences end at CJK or English terminators; a "." ends one only before a space or
# the end, and not after a title such as "Dr" or "St" ("St. Louis" stays one place).
_SENTENCE_END = re.compile(
    r"[。！？!?\n…]+|(?<!\bMr)(?<!\bMs)(?<!\bDr)(?<!\bSt)(?<!\bMt)(?<!\bMrs)(?<!\bJr)"
    r"(?<!\bSr)\.+(?=\s|$)"
)
_QUESTION = re.compile(
    r"^\s*(?i:do|does|did|am|are|is|was|were|can|could|would|will|shall|should|have|has"
    r"|what|why|how|where|when|who|which)\b|[吗么呢]\s*$|是不是|有没有|要不要|会不会|什么"
)
_CONDITIONAL = re.compile(
    r"(?:(?i:\b(?:if|unless|whether|once|in\s+case)\s+)|如果|要是|假如|万一)$"
)
_HEARSAY = re.compile(
    rf"(?i:\b(?:apparently|supposedly|reportedly|allegedly|i\s+heard|i{_AP}ve\s+heard"
    r"|they\s+say|people\s+say|(?:he|she|they|someone|somebody)\s+(?:said|says|told\s+me))\b)"
    r"|听说|据说|听人说|别人说|他们说|他说|她说"
)
_HEDGE = re.compile(
    rf"(?i:\b(?:maybe|perhaps|probably|possibly|might|i\s+think|i\s+guess|i\s+suppose"
    rf"|not\s+sure|i\s+believe|kind\s+of|sort\s+of|i{_AP}m\s+not\s+sure)\b)"
    r"|可能|也许|大概|或许|好像|估计|应该|说不定|我觉得"
)
# Every rule needs a first-person word, or a request for a language ("please reply in",
# "reply in", 请用, 用...回答).
_FIRST_PERSON = frozenset("i my we our me please reply respond answer talk speak write".split())


def _any_word(words: frozenset[str]) -> re.Pattern[str]:
    """A regex that finds, in lowered text, any of ``words`` as a whole _WORDS word (no
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
    if _FIRST_PERSON_WORD.search(low) is None and (
        text.isascii() or not any(h in text for h in _FIRST_PERSON_HAN)
    ):
        return []  # every rule needs the speaker to speak of themself (or to ask for a language)
    words = set(_WORDS.findall(low))
    if not any(trigger.hit(words, text) for trigger, _ in _GROUPS):
        return []  # no sentence can trigger a rule the whole text does not
    found: list[RuleMatch] = []
    seen: set[tuple[str, str]] = set()
    for start, end, asked in _sentences(text):
        sentence = text[start:end]
        words = set(_WORDS.findall(sentence.lower()))
        rules = [
            rule for trigger, group in _GROUPS if trigger.hit(words, sentence) for rule in group
        ]
        if not rules or asked or _QUESTION.search(sentence):
            continue
        for match in _sentence_claims(sentence, ts, rules):
            key = (match.slot, match.value.casefold())
            if key not in seen:
                seen.add(key)
                found.append(match._replace(start=match.start + start, end=match.end + start))
    return found


def _sentences(text: str) -> Iterator[tuple[int, int, bool]]:
    """(start, end, is a question) of each sentence, its terminator excluded."""
    start = 0
    for end in _SENTENCE_END.finditer(text):
        yield start, end.start(), "?" in end.group() or "？" in end.group()
        start = end.end()
    if start < len(text):
        yield start, len(text), False


def _sentence_claims(sentence: str, ts: float, rules: list[_Rule]) -> Iterator[RuleMatch]:
    confidence: Confidence = "high"
    if _HEARSAY.search(sentence):
        confidence = "low"
    elif _HEDGE.search(sentence):
        confidence = "medium"
    due: list[tuple[int, int, float] | None] = []  # found once, when an action needs it
    actions: list[tuple[int, int]] = []  # spans already claimed by a plan or commitment
    for rule in rules:
        for m in rule.pattern.finditer(sentence):
            if _inside_quotes(sentence, m.start()) or _CONDITIONAL.search(sentence[: m.start()]):
                continue
            facts: list[RuleMatch] = []
            for slot, raw in m.groupdict().items():
                if raw is None:
                    continue
                if slot in _ACTION_SLOTS:
                    span = m.span(slot)
                    if not any(a < span[1] and span[0] < b for a, b in actions):
                        actions.append(span)
                        if not due:
                            due.append(find_due(sentence, ts))
                        action = _action(slot, sentence, m, due[0], rule.dated, confidence)
                        if action is not None:
                            yield action
                    continue
                value = _clean(slot, raw)
                if not (value and _VALID[slot](value, sentence[m.end(slot) :])):
                    break  # one implausible value discredits the whole match
                facts.append(RuleMatch(slot, value, m.start(), m.end(), confidence, None))
            else:
                yield from facts


def _inside_quotes(sentence: str, pos: int) -> bool:
    before = sentence[:pos]
    return (
        before.count('"') % 2 == 1
        or before.count("“") > before.count("”")
        or before.count("「") > before.count("」")
    )


_TRAILING = re.compile(r"[\s.,;:!?。，；：！？、'\"“”’)）]+$")
_LEADING_ARTICLE = re.compile(r"^(?i:the|an?)\s+")
_DATE_CONNECTOR = re.compile(
    r"(?:\s+(?i:by|on|before|until|till|at|this|next|the|in|coming))+$|[\s,]+$"
)
_ACTION_ADVERB = re.compile(
    r"^(?i:probably|maybe|definitely|surely|certainly|also|just|really|actually|still)\s+"
)
_WEAK_ACTIONS = frozenset("go do see try be think wait come leave stay know check".split())


def _clean(slot: str, raw: str) -> str:
    value = _TRAILING.sub("", raw.strip())
    if slot in ("likes", "dislikes"):
        value = _LEADING_ARTICLE.sub("", value)
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
    ):
        return None
    return RuleMatch(slot, value, quote_start, quote_end, confidence, when)


# Validators: (value, text after the value in its sentence) -> keep?
_NAME_STOP = frozenset(
    """I The A An Not Just Here There Back Home Sorry Sure Fine Good Okay OK Yes No Please
    Thanks Today Tomorrow Monday Tuesday Wednesday Thursday Friday Saturday Sunday January
    February March April May June July August September October November December Persian
    Siamese Bengal British Maine Ragdoll Sphynx Labrador Poodle Beagle Husky Corgi Mr Mrs Ms
    Dr""".split()
)
_PLACE_STOP = _NAME_STOP - {"The"}
_ZH_PRONOUN = tuple("你我他她它这那谁哪啥")
_ZH_NAME_STOP = frozenset("外卖 出租车 快递 救护车 醒 什么 名字".split())
_ZH_GENERIC_PLACE = frozenset(
    "家 家里 这里 那里 这儿 那儿 公司 学校 宿舍 附近 隔壁 楼上 楼下".split()
)
_ZH_ORG_SUFFIX = (
    "公司 集团 银行 医院 学校 大学 中学 小学 研究所 研究院 工作室 事务所 出版社 报社 电视台"
    " 科技 网络 餐厅 酒店 超市 工厂 厂 局 中心 幼儿园".split()
)
_GENERIC_START = frozenset(
    """it it's that this these those them him her his you your me us their its what how when
    where which who why whatever here there everything anything something nothing everyone
    everybody someone somebody all both each some any""".split()
)
_GENERIC_NOUN = frozenset(
    """idea ideas thought thoughts suggestion plan point way one ones thing things stuff
    approach option answer question proposal sound look""".split()
)
_COGNITIVE = frozenset("think say know believe imagine see hear be have get".split())
_ZH_GENERIC = frozenset("东西 事情 样子 感觉 想法 主意 这样 那样".split())
_HAS_HAN = re.compile(f"[{_HAN}]")


def _valid_name(value: str, after: str) -> bool:
    if _HAS_HAN.search(value):
        return not value.startswith(_ZH_PRONOUN) and value not in _ZH_NAME_STOP
    return value.split()[0].rstrip(".") not in _NAME_STOP


def _valid_place(value: str, after: str) -> bool:
    if _HAS_HAN.search(value):
        return (
            not value.startswith(_ZH_PRONOUN)
            and value not in _ZH_GENERIC_PLACE
            and not after.startswith("的时候")
        )
    return value.split()[0].rstrip(".") not in _PLACE_STOP


def _valid_job(value: str, after: str) -> bool:
    return "的" not in value and value.split()[0].lower() not in _GENERIC_START


def _valid_employer(value: str, after: str) -> bool:
    if _HAS_HAN.search(value):
        return value.endswith(tuple(_ZH_ORG_SUFFIX)) and not value.startswith(_ZH_PRONOUN)
    return value.split()[0] not in _NAME_STOP


def _valid_object(value: str, after: str) -> bool:
    if _HAS_HAN.search(value):
        return (
            not value.startswith(_ZH_PRONOUN)
            and value not in _ZH_GENERIC
            and not re.search("什么|吗|哪|谁|啥", value)
        )
    words = value.lower().split()
    if len(value) < 2 or not words or len(words) > 6 or words[0] in _GENERIC_START:
        return False
    if words[0] == "to":
        return 1 < len(words) <= 4 and words[1] not in _COGNITIVE
    return not (len(words) == 1 and words[0] in _GENERIC_NOUN)


def _always(value: str, after: str) -> bool:
    return True


_VALID: dict[str, Callable[[str, str], bool]] = {
    "name": _valid_name,
    "pet_name": _valid_name,
    "partner_name": _valid_name,
    "pet_kind": _always,
    "location": _valid_place,
    "hometown": _valid_place,
    "job": _valid_job,
    "employer": _valid_employer,
    "likes": _valid_object,
    "dislikes": _valid_object,
    "birthday": _always,
    "language": _always,
}


# Dates. Each alternative is one named group; find_due resolves the first match.
_MONTH_PREFIXES = (
    "jan",
    "feb",
    "mar",
    "apr",
    "may",
    "jun",
    "jul",
    "aug",
    "sep",
    "oct",
    "nov",
    "dec",
)
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_WEEKDAYS = "一二三四五六日"
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_RELATIVE = {"今天": 0, "今晚": 0, "明天": 1, "明早": 1, "明晚": 1, "后天": 2, "大后天": 3}
_DATE = re.compile(
    r"(?P<iso>\b(?P<iy>\d{4})-(?P<im>\d\d)-(?P<id>\d\d)\b)"
    r"|(?P<zh_md>(?:(?P<zy>\d{4})年)?(?P<zm>\d{1,2})月(?P<zd>\d{1,2})[日号])"
    r"|(?P<zh_rel>大后天|后天|明天|明早|明晚|今天|今晚)"
    r"|(?P<zh_wd>(?P<zpre>下个?|这个?|本)?(?:周|星期|礼拜)(?P<zday>[一二三四五六日天]))"
    r"|(?i:(?P<en_rel>\bthe\s+day\s+after\s+tomorrow\b|\btomorrow\b|\btoday\b|\btonight\b))"
    r"|(?i:(?P<en_wd>(?:\b(?P<epre>next|this|coming|on|by|until|before)\s+)?\b"
    r"(?P<eday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b(?!s)))"
    rf"|(?i:(?P<en_md>\b(?P<mon1>{_MONTH})\.?\s+(?P<day1>\d{{1,2}})(?:st|nd|rd|th)?\b"
    r"(?:,?\s+(?P<year1>\d{4})\b)?))"
    rf"|(?i:(?P<en_dm>\b(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon2>{_MONTH})\b"
    r"(?:,?\s+(?P<year2>\d{4})\b)?))"
    r"|(?i:(?P<en_in>\bin\s+(?P<n>\d{1,2}|one|two|three|four|five|six|seven)\s+days?\b))"
)


def find_due(text: str, ts: float) -> tuple[int, int, float] | None:
    """(start, end, midnight UTC epoch) of the first date phrase in ``text`` that names a
    real day, resolved against ``ts``; None when there is none."""
    today = datetime.fromtimestamp(ts, UTC).date()
    for m in _DATE.finditer(text):
        day = _resolve(m, today)
        if day is not None:
            epoch = datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()
            return m.start(), m.end(), epoch
    return None


def _resolve(m: re.Match[str], today: date) -> date | None:
    g = m.group
    monday = today - timedelta(days=today.weekday())
    try:
        if g("iso"):
            return date(int(g("iy")), int(g("im")), int(g("id")))
        if g("zh_md"):
            return _month_day(today, g("zy"), int(g("zm")), int(g("zd")))
        if g("en_md") or g("en_dm"):
            month = _month_number(g("mon1") or g("mon2"))
            return _month_day(today, g("year1") or g("year2"), month, int(g("day1") or g("day2")))
    except ValueError:  # 2月30日, February 31
        return None
    if g("zh_rel"):
        return today + timedelta(days=_RELATIVE[g("zh_rel")])
    if g("en_rel"):
        word = g("en_rel").lower()
        return today + timedelta(days=2 if "after" in word else 1 if word == "tomorrow" else 0)
    if g("zh_wd"):
        weekday = _ZH_WEEKDAYS.find(g("zday").replace("天", "日"))
        return _weekday(today, monday, weekday, (g("zpre") or "")[:1] or None)
    if g("en_wd"):
        prefix = {"next": "下", "this": "这"}.get((g("epre") or "").lower())
        return _weekday(today, monday, _EN_WEEKDAYS.index(g("eday").lower()), prefix)
    n = g("n").lower()
    return today + timedelta(days=int(n) if n.isdigit() else _NUMBERS[n])


def _weekday(today: date, monday: date, weekday: int, prefix: str | None) -> date:
    if prefix == "下":
        return monday + timedelta(days=7 + weekday)
    if prefix in ("这", "本"):
        return monday + timedelta(days=weekday)
    return today + timedelta(days=(weekday - today.weekday()) % 7 or 7)


def _month_number(name: str) -> int:
    return _MONTH_PREFIXES.index(name.lower()[:3]) + 1


def _month_day(today: date, year: str | None, month: int, day: int) -> date:
    if year:
        return date(int(year), month, day)
    this_year = date(today.year, month, day)
    return this_year if this_year >= today else date(today.year + 1, month, day)

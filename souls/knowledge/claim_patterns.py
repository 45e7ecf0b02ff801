# ruff: noqa: RUF001  (full-width punctuation and curly quotes are what the patterns match)
"""The rule table of claim extraction: what a rule is, and every English and Chinese rule.

``RULES`` holds, by family, the patterns for names, pets, partner, places and hometown,
job and employer, phone number, likes and dislikes, birthday and language, then promises and plans.
``souls.knowledge.claim_rules`` applies them. What a caller may rely on:

- Every named group of a pattern is a slot name of ``souls.knowledge.claims.SLOTS``.
- Consecutive rules of one family share one ``Trigger`` object (compared by identity).
- Order matters only among plans and commitments: the first rule that covers an action
  claims it, so a promise is never also read as a plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from souls.knowledge.claim_fragments import (
    ACTION_END,
    AP,
    BDAY,
    BE,
    CHILD,
    HAN,
    JOBS,
    KIND,
    LANG,
    NAME,
    OBJ,
    ORG,
    PARTNER,
    PHONE,
    PLACE,
    SIBLING,
    STOPS,
    WILL,
    ZH_CHILD,
    ZH_DATE,
    ZH_END,
    ZH_JOBS,
    ZH_KIND,
    ZH_LANG,
    ZH_MD,
    ZH_NAME,
    ZH_PARTNER,
    ZH_PAST,
    ZH_PHRASE,
    ZH_PHRASE_END,
    ZH_PLACE_END,
    ZH_SIBLING,
    en_action,
    zh_action,
)

__all__ = ["RULES", "WORDS", "Rule", "Trigger"]


@dataclass(frozen=True, slots=True)
class Rule:
    # Each named group is a slot and yields one claim. With ``dated``, a plan counts only
    # when its sentence holds a date phrase ("I'll go hiking" is no plan, "I'll go hiking
    # tomorrow" is); an action addressed to the listener is a commitment and needs none.
    pattern: re.Pattern[str]
    # Words a sentence the pattern can match holds (at least one of them): most
    # sentences skip most patterns on this cheap check.
    trigger: Trigger
    dated: bool = False
    # The pattern's own words say what its value is (a job change names the workplace):
    # a bare name will do where the slot's validator would want a telling suffix (腾讯,
    # not only 腾讯公司). See claim_validators.NAMED.
    named: bool = False


@dataclass(frozen=True, slots=True)
class Trigger:
    words: frozenset[str]  # lowercase ASCII words, as WORDS splits a sentence
    han: tuple[str, ...]  # Chinese substrings

    def hit(self, words: set[str], sentence: str) -> bool:
        if not self.words.isdisjoint(words):
            return True
        return not sentence.isascii() and any(h in sentence for h in self.han)


WORDS = re.compile(r"[a-z]+")


def _trigger(words: str, han: str = "") -> Trigger:
    return Trigger(frozenset(words.split()), tuple(han.split("|")) if han else ())


def _rules(
    *patterns: str, trigger: Trigger, dated: bool = False, named: bool = False
) -> list[Rule]:
    return [Rule(re.compile(p), trigger, dated, named) for p in patterns]


_WORK = _trigger(
    "work m am job position role started began switched",
    "一名|工作|职业|上班|任职|实习|跳槽|入职|当|做|" + ZH_JOBS,
)

# Order matters only among plans and commitments: the first rule that covers an action
# claims it, so a promise is never also read as a plan.
RULES: tuple[Rule, ...] = (
    *_rules(
        # names
        rf"(?i:\bmy\s+name\s+is|\bmy\s+name{AP}s|\bi{AP}m\s+called|\bi\s+am\s+called"
        rf"|\bcall\s+me|\bi\s+go\s+by)\s+(?P<name>{NAME})",
        rf"(?:^|(?<=[，,。\s好]))我叫(?P<name>{ZH_NAME}){ZH_END}",
        rf"我的名字(?:是|叫)(?P<name>{ZH_NAME}){ZH_END}",
        trigger=_trigger("name named called call by", "我叫|名字"),
    ),
    *_rules(
        # pets
        rf"(?i:\b(?:my|our)\s+(?P<pet_kind>{KIND})(?:{AP}s\s+(?:new\s+)?name\s+is"
        rf"|\s+is\s+called|\s+is\s+named|\s+is|\s+named|\s+called))\s+(?:the\s+)?"
        rf"(?P<pet_name>{NAME})",
        rf"(?i:\b(?:i|we)\s+(?:have|got|adopted|own)\s+a\s+(?P<pet_kind>{KIND})\s+"
        rf"(?:called|named))\s+(?P<pet_name>{NAME})",
        rf"(?i:\b(?:i|we)(?:\s+have|{AP}ve)?\s+(?:just\s+)?renamed\s+(?:the|our|my)\s+"
        rf"(?P<pet_kind>{KIND}))\s+(?:to\s+)?(?P<pet_name>{NAME})",
        rf"我(?:们)?(?:的|家的?|养的)(?P<pet_kind>{ZH_KIND})(?:的名字)?(?:叫做?|名叫|是)"
        rf"(?P<pet_name>{ZH_NAME}){ZH_END}",
        rf"我(?:们)?(?:已经|刚)?把(?:我的|我们的|我家的?|家里的)?(?P<pet_kind>{ZH_KIND})"
        rf"(?:的名字)?改(?:名|成|为)(?:叫|为|成)?了?(?P<pet_name>{ZH_NAME}){ZH_END}",
        rf"我(?:们)?(?:家)?(?:还|也|刚|最近)?(?:养了|养着|有|收养了|领养了|捡了)"
        rf"(?:一|两|三|几)?(?:只|条|个|头)?(?P<pet_kind>{ZH_KIND})[，,]?(?:它|她|他)?"
        rf"(?:叫做?|名叫|名字叫)(?P<pet_name>{ZH_NAME}){ZH_END}",
        rf"(?i:\b(?:and|plus)\s+(?:also\s+)?an?\s+(?P<pet_kind>{KIND})\s+(?:called|named))"
        rf"\s+(?P<pet_name>{NAME})",
        # apposition: "Oscar, my guinea pig", "my dog, Max,"
        rf"(?:^|(?<=[\s,;:\-–—]))(?P<pet_name>{NAME}),\s+(?i:my|our)\s+(?:(?i:little|new|old|sweet)\s+)?"
        rf"(?P<pet_kind>(?i:{KIND}))(?=\s*[.!,;)]|\s*$)",
        rf"(?i:\b(?:my|our)\s+(?:(?:little|new|old|sweet)\s+)?(?P<pet_kind>{KIND})),\s+"
        rf"(?P<pet_name>{NAME})(?=\s*[,.!;]|\s*$)",
        rf"(?i:\b(?:i|we)(?:\s+have|{AP}ve)?\s+(?:just\s+)?renamed\s+(?:the|our|my)\s+"
        rf"(?P<pet_kind>{KIND})),?\s+(?i:(?:and\s+)?(?:she|he|it)(?:{AP}s|\s+is)\s+"
        rf"(?:now\s+)?(?:called|named))\s+(?P<pet_name>{NAME})",
        trigger=_trigger(KIND.replace("|", " ").replace("\\s+", " "), ZH_KIND),
    ),
    *_rules(
        # partner
        rf"(?i:\bmy\s+(?:{PARTNER})(?:{AP}s\s+name\s+is|\s+is\s+called|\s+is\s+named|,)?)"
        rf"\s+(?P<partner_name>{NAME})",
        rf"我的?(?:{ZH_PARTNER})(?:叫做?|名叫|的名字是|的名字叫)(?P<partner_name>{ZH_NAME})"
        rf"{ZH_END}",
        trigger=_trigger(
            "wife husband partner girlfriend boyfriend fiance fiancee fianc spouse", ZH_PARTNER
        ),
    ),
    *_rules(
        # children and siblings (several of each may be named)
        rf"(?i:\b(?:my|our)\s+(?:(?:eldest|oldest|youngest|little|baby|older|younger|big)\s+)?"
        rf"(?:{CHILD})(?:{AP}s\s+name\s+is|\s+is\s+called|\s+is\s+named|\s+named|\s+called"
        rf"|,)?)\s+(?P<child_name>{NAME})(?!\s*{AP}s)",
        rf"我(?:们)?的?(?:大|小|二)?(?:{ZH_CHILD})(?:叫做?|名叫|的名字是|的名字叫)"
        rf"(?P<child_name>{ZH_NAME}){ZH_END}",
        rf"(?i:\b(?:my|our)\s+(?:(?:older|younger|big|little|twin|baby|eldest|oldest|youngest)"
        rf"\s+)?(?:{SIBLING})(?:{AP}s\s+name\s+is|\s+is\s+called|\s+is\s+named|\s+named"
        rf"|\s+called|,)?)\s+(?P<sibling_name>{NAME})(?!\s*{AP}s)",
        rf"我的?(?:{ZH_SIBLING})(?:叫做?|名叫|的名字是|的名字叫)(?P<sibling_name>{ZH_NAME}){ZH_END}",
        trigger=_trigger(
            f"{CHILD} {SIBLING}".replace("|", " ").replace("\\s+", " "), f"{ZH_CHILD}|{ZH_SIBLING}"
        ),
    ),
    *_rules(
        # allergies: the speaker's, or a named person's ("Bob is allergic to peanuts")
        rf"(?i:\b(?:i{AP}m|i\s+am|(?P<about>{NAME})\s+is)\s+(?:(?:very|really|so|super|"
        rf"severely|deathly|also|quite)\s+)?allergic\s+to)\s+(?P<allergy>{OBJ})",
        rf"(?i:\b(?:i|(?P<about>{NAME}))\s+(?:has|have)\s+an?\s+(?:(?:severe|bad|serious|"
        rf"mild)\s+)?)(?P<allergy>[A-Za-z][A-Za-z\s\-]{{1,30}}?)\s+(?i:allergy)\b",
        rf"(?:我|(?P<about>{ZH_NAME}))(?:对|吃)(?P<allergy>[{HAN}A-Za-z]{{1,10}}?)(?:严重|有点|很)?过敏",
        trigger=_trigger("allergic allergy", "过敏"),
    ),
    *_rules(
        # places
        rf"(?i:\b(?:i|we)\s+(?:still\s+|now\s+|currently\s+)?live\s+in"
        rf"|\bi(?:{AP}m|\s+am)\s+(?:now\s+|currently\s+)?living\s+in"
        rf"|\b(?:i|we)(?:\s+have|{AP}ve)?\s+(?:just\s+|recently\s+|finally\s+|officially\s+)?"
        rf"(?:moved|relocated)\s+(?:back\s+|over\s+)?to)"
        rf"\s+(?:the\s+)?(?P<location>{PLACE})",
        # a move from one place to another: where the speaker lives now is the second
        rf"(?i:\b(?:i|we)(?:\s+have|{AP}ve)?\s+(?:just\s+|recently\s+|finally\s+|officially\s+)?"
        rf"(?:moved|relocated)(?:\s+(?:all\s+the\s+way|back))?\s+from)\s+(?:the\s+)?{PLACE}"
        rf"\s+(?i:to)\s+(?:the\s+)?(?P<location>{PLACE})",
        # leaving a place for another: "we left Paris and moved to Lyon"
        rf"(?i:\b(?:i|we)(?:\s+have|{AP}ve)?\s+(?:just\s+|finally\s+)?left)\s+(?:the\s+)?{PLACE}"
        rf"(?i:\s*,?\s+and\s+(?:have\s+|just\s+)?(?:moved|relocated)\s+(?:back\s+|over\s+)?to)"
        rf"\s+(?:the\s+)?(?P<location>{PLACE})",
        rf"我(?:们)?(?:{ZH_PAST})?(?:现在|目前|一直|已经|刚|终于)?(?:住在|生活在|搬到了?|搬去了?"
        rf"|搬家到了?)(?P<location>[{HAN}]{{2,8}}?){ZH_PLACE_END}",
        rf"我(?:们)?(?:{ZH_PAST})?(?:已经|刚|终于)?从[{HAN}]{{2,8}}?(?:搬家?|迁)(?:到|去|来)了?"
        rf"(?P<location>[{HAN}]{{2,8}}?){ZH_PLACE_END}",
        # a move told, then where: 我们搬家了 and 现在住在杭州 in one sentence
        rf"我(?:们)?(?:已经|刚|终于)?搬家了?[，,]\s*(?:我们?)?(?:现在|目前)?(?:住在|搬到了?)"
        rf"(?P<location>[{HAN}]{{2,8}}?){ZH_PLACE_END}",
        rf"(?i:\bi(?:{AP}m|\s+am)\s+(?:originally\s+)?from|\bi\s+(?:was\s+born\s+and\s+raised"
        rf"|grew\s+up|was\s+born|was\s+raised)\s+in|\bmy\s+hometown\s+is)\s+(?:the\s+)?"
        rf"(?P<hometown>{PLACE})",
        rf"我(?:的)?老家(?:是|在)(?P<hometown>[{HAN}]{{2,8}}?){ZH_PLACE_END}",
        rf"我(?:来自|出生在|是在)(?P<hometown>[{HAN}]{{2,8}}?){ZH_PLACE_END}",
        trigger=_trigger(
            "live lives living moved relocated from grew born raised hometown",
            "住|生活|搬|老家|来自|出生|是在",
        ),
    ),
    *_rules(
        # work
        rf"(?i:\bi\s+(?:currently\s+|now\s+)?work\s+as\s+(?:an?\s+)?)"
        rf"(?P<job>[A-Za-z][A-Za-z\-]*(?:\s(?!(?i:at|for|in|and|but|with|on|because)\b)"
        rf"[A-Za-z][A-Za-z\-]*){{0,3}})(?:\s+(?i:at|for)\s+(?:the\s+)?(?P<employer>{ORG}))?",
        rf"(?i:\bi(?:{AP}m|\s+am)\s+an?)\s+(?P<job>(?i:(?:[a-z\-]+\s){{0,2}}(?:{JOBS})))\b"
        rf"(?:\s+(?i:at|for)\s+(?:the\s+)?(?P<employer>{ORG}))?",
        rf"(?i:\bi(?:{AP}m|\s+am)\s+an?)\s+(?P<job>(?i:[a-z\-]+(?:\s[a-z\-]+){{0,2}}))"
        rf"\s+(?i:at|for)\s+(?:the\s+)?(?P<employer>{ORG})",
        rf"(?i:\bi\s+(?:currently\s+|now\s+)?work\s+(?:at|for))\s+(?:the\s+)?(?P<employer>{ORG})",
        rf"(?i:\b(?:i|we)\s+(?:just\s+|recently\s+|finally\s+)?(?:got|landed|accepted|started"
        rf"|took)\s+(?:a\s+|the\s+)?(?:new\s+)?(?:job|position|role)\s+(?:at|with)\s+(?:the\s+)?)"
        rf"(?P<employer>{ORG})",
        rf"(?i:\bi\s+(?:just\s+|recently\s+)?(?:started|began)\s+(?:working|to\s+work)\s+"
        rf"(?:at|for)\s+(?:the\s+)?)(?P<employer>{ORG})",
        rf"(?i:\bi(?:\s+have|{AP}ve)?\s+(?:just\s+|recently\s+)?(?:switched|moved|changed)"
        rf"\s+(?:jobs?\s+)?to\s+(?:the\s+)?)(?P<employer>{ORG})",
        rf"我(?:已经|刚)?(?:换了?工作|跳槽)了?[，,]?(?:现在|目前)?(?:去|在|到)了?"
        rf"(?P<employer>[{HAN}]{{2,12}}?|{ORG})(?:工作|上班|任职)",
        rf"我(?:现在|目前)?是一名(?P<job>[{HAN}]{{2,8}}?)(?=$|[{STOPS}]|在|了)",
        rf"我的(?:工作|职业)是(?P<job>[{HAN}]{{2,8}}?)(?=$|[{STOPS}]|在|了)",
        # an occupation of the list, said plainly: 我是程序员, 我在一家医院当护士, 我现在做销售
        rf"我(?:现在|目前)?是(?:个|一个)?(?P<job>{ZH_JOBS})(?=$|[{STOPS}]|在|了|呢|啊)",
        rf"我(?:现在|目前)?(?:在[{HAN}]{{1,10}}?)?(?:当|做)(?:了)?(?:一名|一个|个)?"
        rf"(?P<job>{ZH_JOBS})(?=$|[{STOPS}]|在|了|呢|啊|，|,)",
        rf"我(?:现在|目前)?在(?P<employer>[{HAN}]{{2,12}}?|{ORG})(?:工作|上班|任职|实习)",
        trigger=_WORK,
    ),
    *_rules(
        # a job change names the workplace: a bare company name (腾讯) will do
        rf"我(?:已经|刚|终于)?(?:换了?(?:新)?工作|跳槽)了?[，,]\s*(?:我)?(?:现在|目前)?"
        rf"(?:去|在|到)了?(?P<employer>[{HAN}]{{2,8}}?|{ORG})(?:工作|上班|任职)",
        rf"我(?:已经|刚|终于)?(?:跳槽|入职)(?:到|去)?了?(?P<employer>[{HAN}]{{2,8}}?|{ORG})"
        rf"(?=$|[{STOPS}]|了|啦|啊)",
        trigger=_WORK,
        named=True,
    ),
    *_rules(
        # joining a workplace: "I joined X" alone may be a club or a gym, so only when
        # the sentence leaves another for it ("I left Siemens and joined Bosch", "I quit
        # Acme to join Initech") or joins it as a job ("I joined Bosch as an engineer")
        rf"(?i:\bi(?:\s+have|{AP}ve)?\s+(?:just\s+|recently\s+|finally\s+)?(?:left|quit"
        rf"|resigned\s+from)\s+(?:my\s+job\s+at\s+)?(?:the\s+)?){ORG}(?i:\s*,?\s+(?:and|to)"
        rf"\s+(?:(?:have\s+|just\s+|now\s+|then\s+)?joined|join)\s+(?:the\s+)?)(?P<employer>{ORG})",
        rf"(?i:\bi(?:\s+have|{AP}ve)?\s+(?:just\s+|recently\s+|finally\s+)?joined\s+(?:the\s+)?)"
        rf"(?P<employer>{ORG})(?=\s+(?i:as)\s+(?i:an?|the|their|a\s+new)\s)",
        rf"我(?:已经|刚|终于)?从(?:[{HAN}]{{2,8}}?|{ORG})(?:跳槽|换工作|离职)(?:到|去)了?"
        rf"(?P<employer>[{HAN}]{{2,8}}?|{ORG})(?=$|[{STOPS}]|了|啦|啊|工作|上班)",
        rf"我(?:已经|刚|终于)?(?:离开了?|辞职离开了?|从)(?:[{HAN}]{{2,8}}?|{ORG})(?:辞职)?"
        rf"[，,]?\s*(?:然后|并且?|又)?(?:加入了?|入职了?)(?P<employer>[{HAN}]{{2,8}}?|{ORG})"
        rf"(?=$|[{STOPS}]|了|啦|啊|工作|上班)",
        trigger=_trigger("joined join", "跳槽|加入|入职|离职"),
        named=True,
    ),
    *_rules(
        # phone number (one at a time: a new number replaces the old)
        rf"(?i:\bmy\s+(?:new\s+|current\s+|personal\s+)?(?:(?:cell|mobile|phone|cellphone"
        rf"|telephone)(?:\s+(?:phone\s+)?number)?|number)(?:\s+is(?:\s+now)?|{AP}s|:"
        rf"|\s+(?:has\s+)?changed\s+to)|\b(?:you\s+can\s+)?(?:reach|call|text)\s+me\s+"
        rf"(?:at|on))\s*(?P<phone>{PHONE})",
        rf"我(?:的)?(?:新的?|现在的)?(?:手机号码?|手机|电话号码?|电话|号码)(?:换成了?|改成了?"
        rf"|变成了?|现在是|是|为|：|:)\s*(?P<phone>{PHONE})",
        rf"我(?:已经|刚)?换(?:了)?(?:手机)?号(?:码)?了?[，,]\s*(?:我的)?(?:新的?)(?:手机)?号码?"
        rf"(?:是|为|：|:)\s*(?P<phone>{PHONE})",
        trigger=_trigger(
            "number phone cell mobile cellphone telephone reach call text", "手机|电话|号"
        ),
    ),
    *_rules(
        # likes and dislikes
        rf"(?i:\b(?:i|we)\s+(?:really\s+|also\s+|still\s+|absolutely\s+|just\s+|totally\s+"
        rf"|truly\s+|do\s+|both\s+|all\s+)?(?:love|like|enjoy|adore))\s+(?P<likes>{OBJ})",
        # a fan of something, a favourite: preferences said the other way round
        rf"(?i:\b(?:i{AP}m|i\s+am|we{AP}re|we\s+are)\s+(?:(?:such|also|still|really)\s+)?"
        rf"(?:an?\s+)?(?:(?:big|huge|massive|great|real|total|die-hard|longtime|long-time)\s+)?"
        rf"fans?\s+of)\s+(?P<likes>{OBJ})",
        rf"(?i:\bmy\s+(?:absolute\s+|all-time\s+|personal\s+)?favou?rite\s+[a-z]+(?:\s+[a-z]+)?"
        rf"\s+(?:is|are|has\s+to\s+be))\s+(?P<likes>{OBJ})",
        r"^\s*(?P<likes>[A-Z][^,;:()\"“”]{1,50}?)\s+(?i:is|are)\s+(?i:definitely\s+|probably\s+"
        r"|totally\s+|still\s+)?(?i:my)\s+(?i:absolute\s+|all-time\s+)?(?i:favou?rite)"
        r"(?=\s*$|\s*[!.,])",
        rf"(?i:\bi\s+(?:really\s+|absolutely\s+|just\s+|still\s+)?(?:hate|dislike|detest"
        rf"|can{AP}?t\s+stand|cannot\s+stand)|\bi\s+(?:really\s+|just\s+)?(?:don{AP}?t"
        rf"|do\s+not|no\s+longer)\s+(?:really\s+)?(?:like|love|enjoy))\s+(?P<dislikes>{OBJ})",
        rf"我(?:真的|特别|非常|很|超|最|也|还|一直|挺|蛮)*(?:喜欢|热爱|喜爱)"
        rf"(?P<likes>{ZH_PHRASE}){ZH_PHRASE_END}",
        rf"我(?:真的|特别|非常|很|超|最|也|还|一直|挺|蛮)*爱(?P<likes>(?:吃|喝|看|听|玩)"
        rf"{ZH_PHRASE}){ZH_PHRASE_END}",
        rf"我(?:们)?最(?:喜欢|爱)的[{HAN}]{{1,4}}(?:是|就是)(?P<likes>{ZH_PHRASE}){ZH_PHRASE_END}",
        rf"我(?:们)?是(?P<likes>[{HAN}A-Za-z0-9·]{{1,12}}?)的(?:忠实|铁杆|超级|死忠|老)?(?:粉丝|迷)"
        rf"{ZH_END}",
        rf"我(?:真的|特别|非常|也|还|一直|现在|已经)*(?:不(?:太|是很|怎么|再)?喜欢|讨厌|受不了)"
        rf"(?P<dislikes>{ZH_PHRASE}){ZH_PHRASE_END}",
        rf"我(?:真的|也|还|一直|现在|已经)*不(?:再)?爱(?P<dislikes>(?:吃|喝|看|听|玩)"
        rf"{ZH_PHRASE}){ZH_PHRASE_END}",
        trigger=_trigger(
            "love like enjoy adore hate dislike detest stand longer fan fans favorite favourite",
            "喜|爱|讨厌|受不了|粉丝|迷",
        ),
    ),
    *_rules(
        # birthday and language
        rf"(?i:\bmy\s+birthday\s+is(?:\s+on)?|\bi\s+was\s+born\s+on)\s+(?P<birthday>{BDAY})",
        rf"我的生日是(?:在)?(?P<birthday>{ZH_MD})",
        rf"我是?(?P<birthday>{ZH_MD})(?:出生|生日)",
        rf"(?i:\bmy\s+(?:native|first|mother)\s+(?:language|tongue)\s+is)\s+"
        rf"(?P<language>{LANG})\b",
        rf"(?i:\bi(?:{AP}m|\s+am)\s+a\s+native)\s+(?P<language>{LANG})\s+(?i:speaker)",
        rf"(?i:(?:^\s*|\bplease\s+)(?:always\s+)?(?:reply|respond|answer|talk|speak|write)"
        rf"(?:\s+to\s+me)?\s+in)\s+(?P<language>{LANG})\b",
        rf"我的母语是(?P<language>{ZH_LANG})",
        rf"(?:^|请)(?:用|说)(?P<language>{ZH_LANG})(?:回答|回复|跟我说|和我说|和我聊|交流)",
        trigger=_trigger(
            "birthday born language tongue native reply respond answer talk speak write",
            "生日|出生|母语|用|说",
        ),
    ),
    *_rules(
        # promises, then plans
        rf"(?i:\bi\s+(?:solemnly\s+)?promised?(?:\s+you)?(?:\s+to|\s+(?:that\s+)?i{WILL}"
        rf"|\s+(?:that\s+)?i\s+would|\s+(?:that\s+)?i{AP}d))\s+{en_action('commitment')}",
        rf"我(?:们)?(?:已经|一定)?(?:答应|保证|承诺|发誓)过?(?:你|您)?了?{zh_action('commitment')}",
        rf"(?<![你他她们])(?:我们)?说好了要?{zh_action('commitment')}",
        rf"我(?:们)?(?:已经|一定)?(?:答应|保证|承诺)(?:你|您)了?[，,]\s*{zh_action('commitment')}",
        rf"(?:^|(?<=[，,。！!\s]))(?P<commitment>[^{STOPS}]{{2,30}})[，,]\s*(?:那就)?(?:说好了|一言为定"
        rf"|不见不散)",
        rf"(?i:\b(?:i|we){BE}\s+planning\s+to|\b(?:i|we)\s+plan\s+to)\s+{en_action('plan')}",
        rf"我(?:们)?(?:打算|准备|计划)(?:{ZH_DATE})?{zh_action('plan')}",
        trigger=_trigger(
            "promise promised plan planning",
            "答应|保证|承诺|发誓|说好|一言为定|不见不散|打算|准备|计划",
        ),
    ),
    *_rules(
        rf"(?i:\b(?:i|we){BE})\s+(?P<plan>(?i:going)\s+to\s+(?:(?i:the|a|an|my|our|his|her"
        rf"|their|your)\s+|[A-Z])[^,;:()\"“”]{{0,80}}?){ACTION_END}",
        rf"(?i:\b(?:i|we){BE}\s+(?:going\s+to|gonna))\s+{en_action('plan')}",
        rf"(?i:\b(?:i|we){WILL})\s+{en_action('plan')}",
        rf"我(?:们)?(?:可能|也许|大概|应该|或许)?(?:{ZH_DATE})?(?:要|会|得)(?![不是])"
        rf"{zh_action('plan')}",
        rf"我(?:们)?(?:可能|也许|大概|应该|或许)?(?:{ZH_DATE})(?P<plan>(?:去|来|回|给|陪|跟|和)[^{STOPS}]{{1,29}})",
        trigger=_trigger("going gonna ll will", "要|会|得|去|来|回|给|陪|跟|和"),
        dated=True,
    ),
)

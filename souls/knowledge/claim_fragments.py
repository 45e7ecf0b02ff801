# ruff: noqa: RUF001  (full-width punctuation and curly quotes are what the patterns match)
"""The regex building blocks the claim patterns are written in (``souls.knowledge.claim_patterns``).

Plain strings, each a fragment to splice into a pattern with an f-string; none holds a
capturing group except what ``en_action`` and ``zh_action`` name. What a caller may
rely on: English triggers are case-insensitive through scoped ``(?i:...)`` groups, while
``WORD``, ``NAME``, ``PLACE`` and ``ORG`` are case-sensitive, since a capital letter is
what marks a name; the ``ZH_*_END`` fragments are lookaheads that consume nothing;
``HAN`` and ``STOPS`` are character-class bodies, to splice inside ``[...]``.
"""

from __future__ import annotations

__all__ = [
    "ACTION_END",
    "AP",
    "BDAY",
    "BE",
    "CHILD",
    "CLAUSE_END",
    "HAN",
    "JOBS",
    "KIND",
    "LANG",
    "MONTH",
    "NAME",
    "OBJ",
    "ORG",
    "PARTNER",
    "PHONE",
    "PLACE",
    "SIBLING",
    "STOPS",
    "WILL",
    "WORD",
    "ZH_CHILD",
    "ZH_DATE",
    "ZH_END",
    "ZH_JOBS",
    "ZH_KIND",
    "ZH_LANG",
    "ZH_MD",
    "ZH_NAME",
    "ZH_PARTNER",
    "ZH_PAST",
    "ZH_PHRASE",
    "ZH_PHRASE_END",
    "ZH_PLACE_END",
    "ZH_SIBLING",
    "en_action",
    "zh_action",
]

# Building blocks. English triggers are case-insensitive through scoped (?i:...) groups;
# names and places stay case-sensitive, since a capital letter is what marks them.
AP = "['’]"
HAN = "\u4e00-\u9fff"
WORD = r"[A-Z\u00c0-\u00de][A-Za-z\u00c0-\u024f'’\-]*"
NAME = rf"{WORD}(?:\s(?!I\b){WORD}){{0,2}}"
PLACE = rf"{WORD}\.?(?:[\s\-](?:(?:of|upon|on|de|del|la|le|am)\s)?(?!I\b){WORD}\.?){{0,3}}"
ORG = r"[A-Z0-9][\w&'’.\-]*(?:\s(?:&\s)?(?!I\b)[A-Z0-9][\w&'’.\-]*){0,3}"
STOPS = r"\s，。！？、,.!?；;：:~～…）)」』"
ZH_END = rf"(?=$|[{STOPS}]|了|啦|哦|呀|啊|吧|哈|呢)"
ZH_NAME = rf"(?:[{HAN}]{{1,4}}?|{NAME})"  # lazy: 麻薯了 is 麻薯
ZH_PHRASE = rf"[{HAN}A-Za-z0-9][{HAN}A-Za-z0-9 ·]{{0,19}}?"
ZH_PHRASE_END = rf"(?=$|[{STOPS}]|了|啦|啊|呀|吧|哦|呢|哈|因为|但是|可是|不过|所以|而且)"
ZH_PLACE_END = rf"(?=$|[{STOPS}]|了|啦|啊|呀|吧|哦|的|已经|工作|上班|生活|读书|上学|长大)"
# The ends below are tried after every character of a lazy value: each opens with a guard
# that fails at once before a letter (every alternative needs a blank, a mark or the end),
# so a value of 60 characters costs 60 cheap checks, not 60 tries of every alternative.
CLAUSE_END = (
    r"(?![^\s,;:()\[\]\"“”—–!.?])"
    r"(?=\s*$|\s*[,;:()\[\]\"“”—–!.?]|\s+-\s|\s+(?i:but|because|since|although|though|when|whenever"
    r"|if|so|as|and\s+i|or\s+i|which|who|that|too|anymore|any\s+more|these\s+days|cause"
    r"|nowadays|lately|now|again|a\s+lot|very\s+much|more|either"
    # another clause, with its own subject: "I love cooking and my husband is a chef"
    r"|and\s+(?:my|our|his|her|their|the|he|she|they|it|we)"
    # a verb after the object ("hiking is the best"), lower case only: a title's words
    # are capitalised ("My favourite film is Life Is Beautiful")
    r"|(?-i:is|are|was|were))\b)"
)
OBJ = rf"[^\s,;:()\"“”][^,;:()\"“”]{{0,60}}?{CLAUSE_END}"
ACTION_END = (
    r"(?![^\s,;:()\"“”—–])"
    r"(?=\s*$|\s*[,;:()\"“”—–]|\s+(?i:but|because|since|although|though|so\s+that|if"
    r"|unless|and\s+then|and\s+i|or\s+i)\b)"
)
KIND = (
    r"cat|kitten|kitty|dog|puppy|rabbit|bunny|hamster|parrot|bird|turtle|tortoise"
    r"|goldfish|fish|horse|guinea\s+pig|ferret|snake|lizard"
)
ZH_KIND = r"猫咪|小猫|猫|小狗|狗狗|狗|兔子|仓鼠|鹦鹉|乌龟|金鱼|鱼|龙猫|刺猬"
PARTNER = r"wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|spouse"
ZH_PARTNER = r"老婆|老公|妻子|丈夫|太太|先生|女朋友|男朋友|女友|男友|对象|爱人|未婚妻|未婚夫"
CHILD = r"daughter|son|kid|child|baby\s+girl|baby\s+boy|stepdaughter|stepson"
ZH_CHILD = r"女儿|儿子|闺女|孩子|宝宝|大宝|二宝"
SIBLING = r"sister|brother|sis|bro|stepsister|stepbrother|half-sister|half-brother"
ZH_SIBLING = r"姐姐|妹妹|哥哥|弟弟|姐|妹|哥|弟"
ZH_NUMERAL = "[零〇一二两三四五六七八九十]{1,3}"
# A Chinese month-day (year optional) in digits or numerals: 5月8号, 五月八号.
ZH_MD = rf"(?:\d{{4}}年)?(?:\d{{1,2}}|{ZH_NUMERAL})月(?:\d{{1,2}}|{ZH_NUMERAL})[日号]"
JOBS = (
    r"teacher|nurse|doctor|engineer|developer|programmer|designer|lawyer|accountant|student"
    r"|researcher|scientist|writer|journalist|manager|chef|cook|pilot|farmer|architect"
    r"|dentist|pharmacist|librarian|consultant|analyst|professor|lecturer|artist|musician"
    r"|photographer|translator|editor|mechanic|electrician|plumber|carpenter|firefighter"
    r"|officer|barista|waiter|waitress|cashier|driver|veterinarian|vet|therapist"
    r"|psychologist|surgeon|paramedic|tutor|intern|freelancer|entrepreneur|founder"
)
# Occupations as a Chinese speaker names them (我在医院当护士, 我是程序员): the rules that
# read a job without 一名 or 职业 before it take only these, longest first.
ZH_JOBS = "|".join(
    sorted(
        (
            "护士 医生 大夫 老师 教师 教授 讲师 工程师 程序员 设计师 律师 会计 会计师 厨师 司机"
            " 警察 记者 编辑 翻译 导游 销售 服务员 店员 收银员 研究员 科学家 经理 产品经理"
            " 秘书 演员 歌手 画家 作家 摄影师 建筑师 药剂师 兽医 牙医 心理咨询师 理发师 保安"
            " 快递员 外卖员 健身教练 教练 农民 工人 电工 木匠 飞行员 空姐 消防员 公务员 学生"
            " 研究生 博士生 实习生 自由职业者 创业者 主播 博主 咨询师 分析师 数据分析师"
        ).split(),
        key=len,
        reverse=True,
    )
)
LANG = (
    r"English|Chinese|Mandarin|Cantonese|French|German|Spanish|Japanese|Korean|Italian"
    r"|Portuguese|Russian|Arabic|Dutch|Hindi|Swedish|Polish|Turkish|Vietnamese|Thai|Greek"
    r"|Hebrew|Indonesian"
)
ZH_LANG = (
    r"中文|汉语|普通话|粤语|英语|英文|日语|日文|韩语|法语|德语|西班牙语|俄语|意大利语"
    r"|葡萄牙语|阿拉伯语|闽南语|上海话|四川话"
)
MONTH = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
BDAY = (
    rf"(?i:\d{{4}}-\d\d-\d\d|(?:{MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{MONTH})(?:,?\s+\d{{4}})?)(?![\w-])"
)
ZH_DATE = (
    r"大后天|后天|明天|明早|明晚|今天|今晚|(?:下个?|这个?|本)?(?:周|星期|礼拜)[一二三四五六日天]"
    r"(?![定直起样般些点])|(?:\d{4}年)?\d{1,2}月\d{1,2}[日号]"
)
# When something happened, said before the verb: 我们去年从北京搬到上海了.
ZH_PAST = r"去年|前年|今年|上个?月|上周|上星期|上礼拜|最近|刚刚|前几天|前阵子|年初|\d{4}年"
# A phone number as people write it: +86 138 1234 5678, (555) 123-4567, 13812345678. The
# validator counts its digits (7 to 15, as E.164 allows).
PHONE = r"\+?\(?\d[\d\s().\-]{4,22}\d(?![\d\-])"
WILL = rf"(?:{AP}ll|\s+will)"
BE = rf"(?:{AP}m|{AP}re|\s+am|\s+are)"


def en_action(slot: str) -> str:
    return rf"(?P<{slot}>[A-Za-z][^,;:()\"“”]{{1,80}}?){ACTION_END}"


def zh_action(slot: str) -> str:
    return rf"(?P<{slot}>[^{STOPS}]{{2,30}})"

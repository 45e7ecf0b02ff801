"""The domain lexicon: which life domain a text is about, in English and Chinese.

linghun's DOMAIN_LEXICON (DESIGN §3.10): a goal carries a domain ("money", "health"...),
and a situation hits the domain when it holds one of the domain's words — so "How should
I budget this month?" calls up a money goal that shares no word with it ("save for a
house"). Offline, no model, a word list per domain; the seed's eleven domains and two
more that conversation keeps needing (home, pets).

Invariants a caller may rely on:

- English entries are compared as the shared tokenizer's stems, whole words only:
  "budgeting" hits "budget", "rental" is no "rent". An entry of several words hits
  when its words stand in that order, next to each other ("credit card", "lose weight").
- Chinese entries hit as substrings of the text (no spaces between Chinese words); an
  entry of one Han character is never used (too vague).
- :data:`CONCEPTS` are bilingual synonyms for the few things goals are most often about
  (a house, a marathon, a wedding...), so that "we gave up on the house" finds the goal
  "明年买房": :func:`concepts` names them by their first English word.
- Pure and deterministic; per-text results are memoised in bounded caches.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping

from souls.text.tokenize import tokens

__all__ = [
    "CONCEPTS",
    "DOMAIN_LEXICON",
    "concept_words",
    "concepts",
    "domain_of",
    "domains_in",
    "hits",
]

_CJK = re.compile("[\u2e80-\u9fff\uf900-\ufaff\U00020000-\U0003ffff]")

# fmt: off
DOMAIN_LEXICON: Mapping[str, tuple[str, ...]] = {
    "money": (
        *"money budget budgeting saving savings spend spending expense expenses cost costs "
        "price afford debt debts loan loans mortgage salary income paycheck bank invest "
        "investing investment stocks retirement tax taxes bill bills cash dollars finances "
        "financial finance deposit rent frugal broke pension".split(),
        "credit card",
        "pay off",
        "save money",
        "save up",
        "saving up",
        "emergency fund",
        "college fund",
        "buy a car",
        "buy a house",
        "钱",
        "存钱",
        "攒钱",
        "省钱",
        "预算",
        "花钱",
        "开销",
        "开支",
        "理财",
        "投资",
        "贷款",
        "房贷",
        "车贷",
        "买车",
        "工资",
        "收入",
        "薪水",
        "存款",
        "储蓄",
        "基金",
        "股票",
        "账单",
        "还款",
        "欠债",
        "退休金",
        "首付",
        "房租",
        "买房",
        "记账",
        "财务",
    ),
    "family": (
        *"family parents parent mom mum dad mother father kids kid children child son "
        "daughter baby brother sister siblings grandma grandpa grandmother grandfather "
        "grandparents wife husband cousin aunt uncle nephew niece".split(),
        "家人",
        "家庭",
        "父母",
        "爸爸",
        "妈妈",
        "孩子",
        "儿子",
        "女儿",
        "宝宝",
        "哥哥",
        "姐姐",
        "弟弟",
        "妹妹",
        "爷爷",
        "奶奶",
        "外婆",
        "姥姥",
        "老婆",
        "老公",
        "亲戚",
        "爸妈",
    ),
    "career": (
        *"job jobs career boss promotion interview resume office colleague colleagues "
        "coworker coworkers company employer manager hired hiring business startup "
        "client clients workplace profession internship".split(),
        "new job",
        "pay raise",
        "工作",
        "上班",
        "老板",
        "升职",
        "面试",
        "简历",
        "同事",
        "公司",
        "跳槽",
        "辞职",
        "职业",
        "创业",
        "加薪",
        "客户",
        "实习",
        "事业",
    ),
    "health": (
        *"health healthy exercise workout gym running marathon jog jogging fitness diet "
        "weight sleep doctor hospital sick therapy therapist medication yoga swim "
        "swimming smoking calories cardio knee injury".split(),
        "half marathon",
        "lose weight",
        "quit smoking",
        "mental health",
        "健康",
        "锻炼",
        "运动",
        "跑步",
        "马拉松",
        "半马",
        "健身",
        "减肥",
        "体重",
        "饮食",
        "睡眠",
        "医生",
        "医院",
        "生病",
        "吃药",
        "戒烟",
        "瑜伽",
        "游泳",
        "体检",
    ),
    "travel": (
        *"travel traveling travelling trip trips vacation holiday flight flights airport "
        "hotel passport visa abroad tour backpacking journey itinerary visit visiting".split(),
        "road trip",
        "旅行",
        "旅游",
        "出差",
        "机票",
        "航班",
        "酒店",
        "护照",
        "签证",
        "出国",
        "度假",
        "景点",
        "自驾",
    ),
    "belief": (
        *"believe belief beliefs values principle principles faith religion god church "
        "pray moral morals ethics ethical honest honesty integrity respect privacy "
        "rumor rumors rumour rumours gossip fairness justice kindness".split(),
        "信仰",
        "相信",
        "价值观",
        "原则",
        "底线",
        "诚实",
        "尊重",
        "隐私",
        "谣言",
        "道德",
        "良心",
        "公平",
        "宗教",
        "撒谎",
        "说谎",
        "八卦",
    ),
    "lifestyle": (
        *"habit habits routine cook cooking meal meals vegetarian vegan hobby hobbies "
        "garden gardening declutter minimalism minimalist".split(),
        "wake up early",
        "screen time",
        "习惯",
        "作息",
        "做饭",
        "素食",
        "早起",
        "熬夜",
        "爱好",
        "生活方式",
        "园艺",
        "极简",
    ),
    "art": (
        *"art paint painting paintings draw drawing sketch music song songs guitar "
        "piano violin sing singing dance dancing photography poem poetry novel "
        "pottery sculpture museum concert band artist album".split(),
        "画画",
        "绘画",
        "艺术",
        "音乐",
        "吉他",
        "钢琴",
        "唱歌",
        "跳舞",
        "摄影",
        "写作",
        "小说",
        "书法",
        "展览",
        "音乐会",
        "乐队",
    ),
    "education": (
        *"school college university class classes course courses degree study studying "
        "exam exams homework learn learning language teacher tuition student graduate "
        "thesis scholarship spanish french japanese english chinese german".split(),
        "学习",
        "学校",
        "大学",
        "课程",
        "考试",
        "学位",
        "毕业",
        "论文",
        "留学",
        "老师",
        "学费",
        "考研",
        "作业",
        "读书",
        "英语",
        "日语",
        "上课",
    ),
    "community": (
        *"community volunteer volunteering charity donate donation neighbor neighbors "
        "neighbour neighbours nonprofit activism activist mentor mentoring shelter".split(),
        "support group",
        "社区",
        "志愿者",
        "义工",
        "慈善",
        "捐款",
        "邻居",
        "公益",
        "社团",
    ),
    "relationship": (
        *"relationship partner boyfriend girlfriend dating marry marriage wedding engaged "
        "divorce breakup friend friends friendship crush propose proposal".split(),
        "恋爱",
        "男朋友",
        "女朋友",
        "对象",
        "结婚",
        "婚礼",
        "离婚",
        "分手",
        "朋友",
        "友谊",
        "约会",
        "感情",
    ),
    "home": (
        *"house home apartment flat condo furniture renovate renovation landlord".split(),
        "move out",
        "moving out",
        "房子",
        "买房",
        "搬家",
        "装修",
        "公寓",
        "家具",
        "房东",
    ),
    "pets": (
        *"dog dogs cat cats pet pets puppy kitten vet".split(),
        "宠物",
        "小狗",
        "小猫",
        "养狗",
        "养猫",
        "狗狗",
        "猫咪",
    ),
}

# fmt: on

# Bilingual synonyms of what goals are most often about: a goal's topic and a later
# turn's "the house" meet through them, whatever the language of each.
CONCEPTS: tuple[tuple[str, ...], ...] = (
    ("house", "home", "apartment", "flat", "condo", "房", "房子", "买房", "住房", "公寓"),
    ("car", "车", "买车", "汽车"),
    ("marathon", "half marathon", "马拉松", "半马", "全马"),
    ("wedding", "marry", "married", "结婚", "婚礼"),
    ("baby", "pregnant", "宝宝", "怀孕", "要孩子", "生孩子"),
    ("degree", "graduate", "diploma", "学位", "毕业", "文凭"),
    ("weight", "lose weight", "减肥", "体重"),
    ("smoking", "cigarettes", "戒烟", "抽烟"),
    ("job", "career", "工作", "找工作"),
    ("trip", "travel", "vacation", "旅行", "旅游"),
    ("guitar", "吉他"),
    ("piano", "钢琴"),
    ("spanish", "西班牙语"),
    ("japanese", "日语"),
    ("english", "英语"),
    ("novel", "book", "小说", "写书"),
    ("dog", "puppy", "狗", "小狗", "养狗"),
    ("cat", "kitten", "猫", "小猫", "养猫"),
)


def domains_in(text: str) -> frozenset[str]:
    """The domains of the lexicon that ``text`` holds a word of."""
    return _hits(text, _DOMAIN_ENTRIES)


def hits(domain: str, text: str) -> bool:
    """domainHit: whether ``text`` touches ``domain``. A lexicon domain hits through any
    of its words (or its own name); another word, only where the text holds it."""
    domain = domain.strip().lower()
    if not domain:
        return False
    if domain in DOMAIN_LEXICON:
        return domain in domains_in(text)
    wanted = set(tokens(domain))
    return bool(wanted) and wanted <= set(tokens(text))


def domain_of(text: str) -> str:
    """The domain ``text`` holds most words of (lexicon order breaks ties), or ""."""
    counts = _counts(text, _DOMAIN_ENTRIES)
    if not counts:
        return ""
    best = max(counts.values())
    return next(d for d in DOMAIN_LEXICON if counts.get(d) == best)


def concepts(text: str) -> frozenset[str]:
    """The :data:`CONCEPTS` ``text`` names, each by its first English word."""
    return _hits(text, _CONCEPT_ENTRIES)


def concept_words(name: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """The words of concept ``name``: its English stems, and its Chinese strings."""
    stems: set[str] = set()
    chinese: list[str] = []
    for entry_name, entry in _CONCEPT_ENTRIES:
        if entry_name == name:
            if isinstance(entry, str):
                chinese.append(entry)
            else:
                stems.update(entry)
    for group in CONCEPTS:
        if group[0] == name:
            chinese += [w for w in group if _CJK.search(w) and len(w) == 1]
    return frozenset(stems), tuple(chinese)


# -- matching ---------------------------------------------------------------------------

_Entries = tuple[tuple[str, tuple[str, ...] | str], ...]  # (name, stems or a CJK string)


def _compile(groups: Mapping[str, tuple[str, ...]]) -> _Entries:
    found: list[tuple[str, tuple[str, ...] | str]] = []
    for name, words in groups.items():
        for word in (name, *words):
            if _CJK.search(word):
                if len(word) > 1:
                    found.append((name, _normal(word)))
            elif stems := tuple(tokens(word)):
                found.append((name, stems))
    return tuple(found)


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _hits(text: str, entries: _Entries) -> frozenset[str]:
    return frozenset(_counts(text, entries))


@functools.lru_cache(maxsize=2048)
def _counts(text: str, entries: _Entries) -> dict[str, int]:
    words = tokens(text)
    present = set(words)
    normal = _normal(text) if _CJK.search(text) else ""
    counts: dict[str, int] = {}
    for name, entry in entries:
        if isinstance(entry, str):
            hit = bool(normal) and entry in normal
        elif len(entry) == 1:
            hit = entry[0] in present
        else:
            hit = entry[0] in present and _in_order(entry, words)
        if hit:
            counts[name] = counts.get(name, 0) + 1
    return counts


def _in_order(entry: tuple[str, ...], words: list[str]) -> bool:
    n = len(entry)
    return any(tuple(words[i : i + n]) == entry for i in range(len(words) - n + 1))


_DOMAIN_ENTRIES = _compile(DOMAIN_LEXICON)
_CONCEPT_ENTRIES = _compile({group[0]: group[1:] for group in CONCEPTS})

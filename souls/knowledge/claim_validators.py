"""Plausibility checks on the values claim patterns capture (``souls.knowledge.claim_rules``).

``VALIDATORS[slot](value, after)`` says whether to keep ``value``, a trimmed capture of
``slot``, given ``after``, the rest of its sentence. What a caller may rely on: every
slot a pattern can capture, except plans and commitments, has an entry; the checks are
pure and reject pronouns, generic objects ("it", "that idea", 这个), common words read
as names (weekdays, months, breeds) and Chinese places that are no place (家里, 公司); a
taste (likes, dislikes) is never about the listener nor a pointer back at what was said.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from souls.knowledge.claim_fragments import HAN
from souls.knowledge.claim_substance import to_listener

__all__ = ["NAMED", "VALIDATORS"]

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
# What a bare workplace name must not be: a place (在北京上班 says where, not for whom),
# or something counted (一家公司).
_ZH_PLACE_SUFFIX = tuple("市 省 区 县 镇 村 路 街 州".split())
_ZH_PLACES = frozenset(
    """北京 上海 天津 重庆 广州 深圳 杭州 南京 苏州 成都 武汉 西安 长沙 郑州 青岛 厦门 大连 沈阳
    哈尔滨 济南 合肥 福州 昆明 南宁 贵阳 兰州 太原 石家庄 南昌 宁波 无锡 东莞 佛山 珠海 香港
    澳门 台北 广东 浙江 江苏 四川 湖北 湖南 山东 河南 河北 福建 云南 海南 东北 国外 海外 外地
    老家 本地 美国 英国 日本 德国 法国 加拿大 澳洲 新加坡 韩国""".split()
)
_ZH_COUNTED = tuple("一 两 几 某 这 那 哪 每".split())
_GENERIC_START = frozenset(
    """it it's that this these those them him her his you your me us their its what how when
    where which who why whatever here there everything anything something nothing everyone
    everybody someone somebody all both each some any yours mine ours theirs hers""".split()
)
_GENERIC_NOUN = frozenset(
    """idea ideas thought thoughts suggestion plan point way one ones thing things stuff
    approach option answer question proposal sound look""".split()
)
_COGNITIVE = frozenset("think say know believe imagine see hear be have get".split())
_ZH_GENERIC = frozenset("东西 事情 样子 感觉 想法 主意 这样 那样".split())
_HAS_HAN = re.compile(f"[{HAN}]")
# A date or a time written in digits is no phone number (2024-06-01, 12.05.2024).
_DATE_LIKE = re.compile(r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}")


def _valid_name(value: str, after: str) -> bool:
    if _HAS_HAN.search(value):
        return not value.startswith(_ZH_PRONOUN) and value not in _ZH_NAME_STOP
    return value.split()[0].rstrip(".") not in _NAME_STOP


def _valid_place(value: str, after: str) -> bool:
    if _HAS_HAN.search(value):
        return (
            not value.startswith((*_ZH_PRONOUN, "的"))
            and value not in _ZH_GENERIC_PLACE
            and not after.startswith("的时候")
        )
    return value.split()[0].rstrip(".") not in _PLACE_STOP


def _valid_job(value: str, after: str) -> bool:
    return "的" not in value and value.split()[0].lower() not in _GENERIC_START


def _valid_employer(value: str, after: str) -> bool:
    if _HAS_HAN.search(value):
        return value.endswith(tuple(_ZH_ORG_SUFFIX)) and not value.startswith(
            (*_ZH_PRONOUN, *_ZH_COUNTED)
        )
    return value.split()[0] not in _NAME_STOP


def _valid_phone(value: str, after: str) -> bool:
    digits = sum(c.isdigit() for c in value)
    return 7 <= digits <= 15 and not _DATE_LIKE.fullmatch(value)


def _valid_named_employer(value: str, after: str) -> bool:
    """A workplace the sentence says is one (我跳槽到字节了): any name that is no place."""
    if not _HAS_HAN.search(value):
        return _valid_employer(value, after)
    return (
        not value.startswith((*_ZH_PRONOUN, *_ZH_COUNTED))
        and value not in _ZH_GENERIC_PLACE
        and value not in _ZH_PLACES
        and not value.endswith(_ZH_PLACE_SUFFIX)
        and "的" not in value
    )


def _valid_object(value: str, after: str) -> bool:
    if _HAS_HAN.search(value):
        return (
            not value.startswith((*_ZH_PRONOUN, "的"))
            and value not in _ZH_GENERIC
            and not re.search("什么|吗|哪|谁|啥", value)
        )
    words = value.lower().split()
    if len(value) < 2 or not words or len(words) > 6 or words[0] in _GENERIC_START:
        return False
    if words[0] == "to":
        return 1 < len(words) <= 4 and words[1] not in _COGNITIVE
    return not (len(words) == 1 and words[0] in _GENERIC_NOUN)


# What ends a taste that points back at what was just said or shown ("every minute of
# it", "stuff like [that]", "moments like these").
_ANAPHOR_END = frozenset("it that this these those like".split())
_POINTING = re.compile(r"\s*(?i:it|that|this|these|those)\b")


def _valid_taste(value: str, after: str) -> bool:
    """A like or dislike is the speaker's taste in things in general: never about the
    listener ("hearing from you", 和你聊天) and never a pointer back at what was just
    said ("every minute of it", "doing [that]")."""
    if not _valid_object(value, after) or to_listener(value):
        return False
    if _HAS_HAN.search(value):
        return True
    words = value.lower().split()
    if words[-1].strip(".,!'\u2019") in _ANAPHOR_END:
        return False
    return not (len(words) == 1 and words[0].endswith("ing") and _POINTING.match(after))


def _always(value: str, after: str) -> bool:
    return True


# For the rules whose own words say what the value is (claim_patterns.Rule.named).
NAMED: dict[str, Callable[[str, str], bool]] = {"employer": _valid_named_employer}

VALIDATORS: dict[str, Callable[[str, str], bool]] = {
    "name": _valid_name,
    "pet_name": _valid_name,
    "partner_name": _valid_name,
    "child_name": _valid_name,
    "sibling_name": _valid_name,
    "allergy": _valid_object,
    "pet_kind": _always,
    "location": _valid_place,
    "hometown": _valid_place,
    "job": _valid_job,
    "employer": _valid_employer,
    "likes": _valid_taste,
    "dislikes": _valid_taste,
    "birthday": _always,
    "phone": _valid_phone,
    "language": _always,
}

"""Somatic markers (DESIGN §3.7): weighted gut feelings per (topic, valence), and
their configuration.

An event's text is *appraised*: lexicon hits give it a valence (unless they state the
speaker's own stance), its content words and names are the topics the feeling attaches
to, and its salience is the weight. The markers
accumulate those weights per (topic, valence), decay nightly and prune the faint ones;
a turn whose terms touch a topic gets its markers as ``GUT FEELINGS``.

The mechanism is split by concept:

- ``souls.mind.lexicon``: the valence words compiled for matching;
- ``souls.mind.stance``: which hits state a stance or a value rather than a feeling;
- ``souls.mind.topics``: which terms a feeling is about, and the word shown for each;
- ``souls.mind.appraisal``: ``appraise`` (the feeling a text carries) and ``with_person``;
- ``souls.mind.markers``: ``Markers`` (weights, decay, touching) and ``gut_feelings``.

This module holds ``SomaticConfig``, the one home of the mechanism's defaults: the
lexicon entries, the stance and value words (``souls.mind.stance``: "I refuse to spread
rumors" states a position, it is no feeling), the topic cap, decay and what GUT
FEELINGS shows. A config that
constructs is valid (``ValueError`` otherwise, naming the field).
"""

from __future__ import annotations

import msgspec

from souls.mind.lexicon import entry_key

__all__ = ["SomaticConfig"]


class SomaticConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """How a soul's feelings are appraised, kept and shown."""

    # Words and phrases that make an event feel bad: English whole words (a space matches
    # any whitespace, an apostrophe is optional; inflections are listed because matching
    # is exact) or CJK substrings. Where two entries overlap the longer one counts, so
    # "not working" is negative although "working now" is positive.
    negative_words: list[str] = msgspec.field(
        default_factory=lambda: [
            *("error", "errors", "fail", "fails", "failed", "failing", "failure", "failures"),
            *("refuse", "refuses", "refused", "refusing", "refusal", "refusals", "denied"),
            *("reject", "rejects", "rejected", "rejecting", "rejection", "rejections"),
            *("complain", "complains", "complained", "complaint", "complaints"),
            *("bug", "bugs", "buggy", "regression", "regressions", "outage", "outages"),
            *("crash", "crashes", "crashed", "crashing", "broken", "unsuccessful"),
            *("wrong", "bad", "worse", "worst", "terrible", "awful", "horrible", "useless"),
            *("frustrated", "frustrating", "annoyed", "annoying", "disappointed"),
            *("disappointing", "hate", "hated", "not good", "not great", "no good"),
            *("sad", "unhappy", "upset", "not happy"),
            *("doesn't work", "does not work", "didn't work", "did not work", "won't work"),
            *("not working", "isn't working", "stopped working", "no longer works"),
            *("错误", "失败", "拒绝", "不行", "糟糕", "崩溃", "故障", "报错", "出错", "异常"),
            *("宕机", "投诉", "抱怨", "不好", "不太好", "不对", "太差", "很差", "差劲"),
            *("讨厌", "失望", "没用", "用不了", "坏了", "不成功", "没成功"),
        ]
    )
    # Words and phrases that make an event feel good, matched the same way.
    positive_words: list[str] = msgspec.field(
        default_factory=lambda: [
            *("thanks", "thank you", "thx", "praise", "praised", "appreciate", "appreciated"),
            *("success", "successes", "successful", "successfully", "succeed", "succeeded"),
            *("fixed", "solved", "resolved", "works", "worked", "working now", "works now"),
            *("great", "excellent", "awesome", "perfect", "perfectly", "wonderful"),
            *("fantastic", "amazing", "brilliant", "impressive", "helpful", "nice"),
            *("love", "loved", "good job", "good work", "well done", "looks good"),
            *("glad", "happy", "pleased"),
            *("谢谢", "感谢", "多谢", "成功", "很好", "真好", "太好了", "好极了", "棒"),
            *("完美", "优秀", "厉害", "满意", "不错", "修好", "解决了", "搞定", "给力"),
        ]
    )
    # Lexicon words that, said by the speaker of themselves ("I refuse", "we rejected",
    # "我拒绝"), state a stance, not a feeling: they count towards no valence. Said of
    # someone else ("they refused my refund") or suffered ("I was refused") they count.
    stance_words: list[str] = msgspec.field(
        default_factory=lambda: [
            *("refuse", "refuses", "refused", "refusing", "refusal"),
            *("reject", "rejects", "rejected", "rejecting", "拒绝"),
        ]
    )
    # Words with which a speaker states a value ("I believe in second chances, even
    # after failures"): lexicon hits in the rest of that clause count towards no valence.
    value_words: list[str] = msgspec.field(
        default_factory=lambda: ["believe in", "stand for", "坚信", "信奉", "崇尚"]
    )
    # Most topics one event attaches its feeling to.
    max_topics_per_event: int = 3
    # Every weight is multiplied by this once a night.
    nightly_decay: float = 0.9
    # A marker whose weight falls below this on decay is dropped.
    prune_below: float = 0.05
    # Most markers shown in GUT FEELINGS.
    inject_limit: int = 5
    # Markers lighter than this are not shown.
    min_weight_to_show: float = 0.5

    def __post_init__(self) -> None:
        lists = (
            ("negative", self.negative_words),
            ("positive", self.positive_words),
            ("stance", self.stance_words),
            ("value", self.value_words),
        )
        for name, words in lists:
            if any(not word.strip() for word in words):
                raise ValueError(f"{name}_words must not contain blank entries")
        negative = {entry_key(w) for w in self.negative_words}
        both = negative & {entry_key(w) for w in self.positive_words}
        if both:
            raise ValueError(f"words in both lexicons: {', '.join(sorted(both))}")
        if self.max_topics_per_event < 1:
            raise ValueError("max_topics_per_event must be at least 1")
        if not 0 < self.nightly_decay <= 1:
            raise ValueError("nightly_decay must be within (0, 1]")
        if self.prune_below < 0 or self.min_weight_to_show < 0 or self.inject_limit < 0:
            raise ValueError("prune_below, min_weight_to_show and inject_limit must be >= 0")

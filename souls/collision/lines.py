"""How the collision memory reads one line: its content terms, its negations, its
numbers, and whether it asks something.

Cards, the presentation gate and the tide compare lines only through :func:`read`, so
a card that was crystallised, a collision that was judged and a closure that was
proposed all agree on what a line is about. Invariants a caller may rely on:

* Pure and deterministic; terms are tokens of :mod:`souls.text.tokenize` (stems).
* Content terms are never stopwords, numbers, interjections and laughter ("wow",
  "hahaha", "yeahhh"), contraction remnants ("im", "dont"), words that carry no subject
  in a conversation (``_PLAIN``: "sure", "great", "thing", "get", "chat", "busy"...;
  觉得, 东西...), negation cues, CJK unigrams already in a bigram, or CJK bigrams holding
  a function character. Two lines sharing only such words share nothing.
* A negation is a cue (not, never, no, n't forms, without; 不 没 无 未 别 非 勿) that
  is no idiom ("can't wait", "no worries", "not sure"; 非常, 不错, 没关系...). It
  negates only the clause it stands in: ``Line.negated`` holds the content terms of
  each negated clause, so "it's not easy, but I love painting" negates "easy", never
  "painting". "fail" is a verb, not a negation.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from souls.text.tokenize import query_terms, tokens

__all__ = ["Line", "covers", "key", "read", "sentences"]

_EN_CUES = """not no nor never neither none nothing nobody nowhere without cannot can't
won't don't doesn't didn't isn't aren't wasn't weren't couldn't wouldn't shouldn't
hasn't haven't hadn't mustn't needn't ain't"""
_ZH_CUES = frozenset("不没无未别非勿")
# Words holding a cue character that negate nothing.
_ZH_IDIOMS = tuple(
    """非常 未来 别人 别的 无论 不仅 不但 不过 不断 除非 不错 不少 不久 不管 不得不 差不多
    不好意思 没关系 没事 没问题 不客气 无聊 不知道 不确定 说不定 了不起 不一定""".split()
)
# English phrases that hold a cue but negate nothing (apostrophes already dropped):
# hedges ("not sure", "don't know") are doubt, not a contrary claim.
_EN_IDIOMS = re.compile(
    r"\b(?:(?:cant|cannot|couldnt|wont|can not) (?:wait|believe)|no (?:problem|worries|worry|doubt|"
    r"wonder|matter|way|kidding|pressure)|never mind|not (?:only|just|sure|bad)|"
    r"(?:dont|do not|didnt) (?:know|think|mind|worry)|(?:couldnt|cant) (?:be|agree)|"
    r"nothing like|not at all|why not|if not)\b"
)
# Words that carry no subject in any conversation: thanks and praise, hedges and
# intensifiers, light verbs, vague nouns and time words. A line made of them concludes
# nothing, and two lines sharing them share no subject.
_PLAIN_EN = """
sure thank thanks great awesome amazing nice cool glad fun lovely wonderful fantastic
incredible cute sweet beautiful perfect interesting exciting excited happy proud
congrats congratulations really pretty totally definitely absolutely maybe probably
actually basically literally honestly seriously just also too very much many more most
some any lot lots bit little anything something everything nothing anyone someone
everyone thing things stuff way kind sort part good bad fine well right okay true
get got getting gets go going goes gone went come came comes make made makes making
take took takes give gave keep kept let put say said says tell told know knew think
thought see saw seen look looks looking seem seems feel felt feeling feels want wanted
wants need needs try tried trying use used like liked likes love loved loves hope mean
means sound sounds guess bet wish happen happened wait
time times day days today yesterday tomorrow week weekend month months year years
first second third now then soon still already
ever even again back always often sometimes lately recently ago later next last
new old own one ones other another same whole every each such up out off big small
large different able real ready start started starting begin began notice noticed
only yet quite rather almost enough sorry please anyway though instead either all
since during while until after before because although through around over under
across along among between toward towards within upon via per whether long far away
hey hello friend guys yo ya man dude chat chatting talk talked talking catch share
ask asked hear heard help helped helps busy remember mention mentioned wonder crazy
wild place stay join people person life
"""
# Interjections, chat abbreviations and contraction remnants (the tokenizer makes "im"
# of "I'm"); drawn-out spellings and laughter count too (_REPEATED, _LAUGHTER).
_FILLERS = """
ah aha alright aw bye eh gee geez gosh ha hah haha hehe hm hmm huh jeez lmao lol meh
mhm nah nope oh ok omg ooh ouch phew rofl ugh uh um umm whoa woah wow yay yeah yep yes
yup btw tbh imo imho idk lmk fyi pls plz ikr np
aint arent cant couldnt didnt doesnt dont hadnt hasnt havent hes im isnt ive shes
shouldnt theyd theyll theyre theyve wasnt werent weve whos wont wouldnt youd youll
youre youve dunno gonna gotta kinda sorta wanna yall
"""
_REPEATED = re.compile(r"(.)\1+")
_LAUGHTER = re.compile(r"a*(?:h+[aeiou]+){2,}h*|(?:l+o+)+l+")
_PLAIN_ZH = """觉得 知道 一下 真的 特别 可以 还是 然后 就是 那个 这个 其实 可能 应该 已经 现在
今天 明天 昨天 时候 东西 事情 一些 有点 谢谢 好的 哈哈 感觉 一起 自己 我们 你们 他们 大家
什么 怎么 这样 那样 因为 所以 但是 如果 还有 一个 这么 那么 非常 真是 太好 好像 一直 有些 时间"""
# Characters that make a CJK bigram noise: particles, pronouns, little adverbs.
_ZH_FUNCTION = frozenset("的了吗呢吧啊么是在和与也就都这那个我你他她它们什怎哪把被着")
_ZH_FUNCTION |= frozenset("呀哦嗯并很太还又才")
# Where a clause ends: punctuation, or a "but" that turns to another claim.
_CLAUSE = re.compile(
    r"[,.;:!?\u2026\uff0c\u3002\uff1b\uff1a\uff01\uff1f\u3001]+|\s(?:but|though)\s|但是|不过|可是"
)
_SENTENCE = re.compile(r"(?<=[.!?\u2026])\s+|(?<=[\u3002\uff01\uff1f])|\s*(?=\[)|(?<=\])\s*")
# A question without its question mark, as chat writes it: a wh-word first, or an
# auxiliary and then a pronoun ("should I ...", "did you ..."); 为什么, 是否... in Chinese.
_QUESTION_START = re.compile(
    r"(?:who|whom|whose|what|when|where|which|why|how)\b"
    r"|(?:should|shall|could|would|can|do|does|did|is|are|was|were|will|have|has)"
    r" (?:i|you|we|he|she|they|it|this|that|there)\b"
    r"|(?:为什么|为何|怎么|怎样|如何|是否|是不是|能否|可否)"
)
_PUNCT = re.compile(r"[\W_]+")
_CONTRACTED = re.compile(r"(?<=[^\W\d_])['\u2019](?:ll|d|re|ve|m)\b", re.IGNORECASE)
_NUMBER = re.compile("[0-9]+")


@dataclass(frozen=True, slots=True)
class Line:
    raw: str
    terms: frozenset[str]  # content terms
    words: frozenset[str]  # every term but stopwords and interjections: "every", "week", "3"
    negated: tuple[frozenset[str], ...]  # the content terms of each negated clause
    cue: str  # the first negation cue that negates something; "" when none does
    numbers: frozenset[str]  # digit runs, leading zeros stripped
    asks: bool  # a question: it asks, so it states nothing

    def negates(self, terms: frozenset[str] | set[str]) -> bool:
        """Whether a negated clause of this line holds one of ``terms``."""
        return any(clause & terms for clause in self.negated)

    def without(self, terms: frozenset[str]) -> Line:
        """The line with ``terms`` taken out of its content terms (and of its negated
        clauses): the names of the people talking, who are no subject of what they say."""
        if not terms or not (self.terms & terms or self.words & terms):
            return self
        negated = tuple(c - terms for c in self.negated if c - terms)
        return Line(
            self.raw,
            self.terms - terms,
            self.words - terms,
            negated,
            self.cue if negated else "",
            self.numbers,
            self.asks,
        )


@functools.cache
def _cues() -> frozenset[str]:
    return frozenset(tokens(_EN_CUES))


@functools.cache
def _plain() -> frozenset[str]:
    return frozenset(tokens(_PLAIN_EN)) | frozenset(_PLAIN_ZH.split())


@functools.cache
def _fillers() -> frozenset[str]:
    stems = frozenset(tokens(_FILLERS))
    return stems | {_REPEATED.sub(r"\1", t) for t in stems}


def _filler(term: str) -> bool:
    fillers = _fillers()
    return (
        term in fillers
        or _REPEATED.sub(r"\1", term) in fillers
        or _LAUGHTER.fullmatch(term) is not None
    )


def _fold(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return text.lower().replace("\u2019", "'")


def _terms(text: str) -> list[str]:
    # A contraction's tail is grammar: "I'll" is no "ill", "we'd" no "wed".
    text = _CONTRACTED.sub("", text)
    # "" (no token, no stopword) keeps query_terms from falling back to the stopwords.
    return [t for t in query_terms(text, [*tokens(text), ""]) if t]


def _content(terms: list[str]) -> frozenset[str]:
    cues, plain = _cues(), _plain()
    in_bigrams = {c for t in terms if len(t) == 2 and not t.isascii() for c in t}
    return frozenset(
        t
        for t in terms
        if t not in cues
        and t not in plain
        and not t[0].isdigit()
        and not _filler(t)
        and (
            t.isascii()
            or (_ZH_FUNCTION.isdisjoint(t) and _ZH_CUES.isdisjoint(t) and t not in in_bigrams)
        )
    )


def _cue(clause: str) -> str:
    """The clause's negation cue, idioms set aside; "" when it has none."""
    english = _EN_IDIOMS.sub(" ", clause.replace("'", ""))
    found = next((w for w in tokens(english) if w in _cues()), "")
    if found or clause.isascii():
        return found
    for idiom in _ZH_IDIOMS:
        clause = clause.replace(idiom, " ")
    return next((c for c in clause if c in _ZH_CUES), "")


@functools.lru_cache(maxsize=4096)
def read(text: str) -> Line:
    """The line as the collision memory compares it (memoised: cards are read often)."""
    folded = _fold(text)
    negated: list[frozenset[str]] = []
    first = ""
    for clause in _CLAUSE.split(folded):
        cue = _cue(clause)
        terms = _content(_terms(clause)) if cue else frozenset()
        if terms:
            negated.append(terms)
            first = first or cue
    numbers = frozenset(n.lstrip("0") or "0" for n in _NUMBER.findall(folded))
    every = _terms(text)
    words = frozenset(t for t in every if not _filler(t))
    return Line(text, _content(every), words, tuple(negated), first, numbers, _asks(folded))


def _asks(folded: str) -> bool:
    stripped = folded.strip()
    if stripped.endswith(("?", "\uff1f", "吗", "呢")):
        return True
    exclaims = stripped.endswith(("!", ".", "\uff01", "\u3002"))
    return not exclaims and _QUESTION_START.match(stripped) is not None


def covers(question: Line, answer: Line, share: float) -> frozenset[str]:
    """The question's terms ``answer`` holds when it answers ``question``: it states
    (it asks nothing), holds at least two of the question's content terms and at least
    ``share`` of them, and says something the question did not ("every week" to "how
    often?"). Empty when it does not answer."""
    if answer.asks or not question.terms:
        return frozenset()
    shared = question.terms & answer.terms
    if len(shared) < 2 or len(shared) / len(question.terms) < share:
        return frozenset()
    return shared if answer.words - question.words else frozenset()


def key(text: str) -> str:
    """What makes two lines the same line: case, punctuation and spacing aside."""
    return " ".join(_PUNCT.split(_fold(text))).strip()


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (a bracketed aside is one of its own), trimmed."""
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]

"""The credential rule of the hygiene gate: the built-in rules over one text, in linear time.

A text is read the way a person would read it: NFKC-normalised (a fullwidth colon or
equals sign is a colon or an equals sign, fullwidth letters are letters) and without
invisible format characters, so a token split by U+200B is still the token. The view
is only read, never stored: the gate rejects and never repairs.

Cost. A prefilter (one automaton over the literal strings the rules need: ``ghp_``,
``-----BEGIN``...) names the rules that could match; each of those runs once over the
text, its matches visited left to right (they do not overlap), each judged by a check
that reads only the match, at most ``MOST_MATCHES`` of them. Every step is linear in
the text, the text is at most ``max_chars`` long, and the Python work is capped: that is
the bound on a gate's time per event.
"""

from __future__ import annotations

import functools
import unicodedata

from souls.intake.linear_regex import LinearPattern, Prefilter
from souls.intake.secret_rules import RULES, Rule

__all__ = ["MOST_MATCHES", "TOO_MANY", "compile_rules", "find_credential"]

# Default-ignorable format characters: invisible, so they can split a token unseen.
_INVISIBLE = dict.fromkeys(
    [
        0x00AD,
        0x034F,
        0x061C,
        0x115F,
        0x1160,
        0x180E,
        *range(0x200B, 0x2010),
        *range(0x202A, 0x202F),
        *range(0x2060, 0x2070),
        0x3164,
        0xFEFF,
        0xFFA0,
    ]
)


# Texts up to this many bytes are first searched for any rule at once (:attr:`_Compiled.
# any`): about 4 us for a chat line, where the prefilter and the rules that need no
# literal cost about 35 us. Past it the one search can cost more than the rules it spares
# (an automaton of all the rules, thrashing on a text built for it: 2.7 ms for
# ``"sk-" * 2666``), so longer texts go to the rules directly.
ANY_FIRST_BYTES = 1024


class _Compiled:
    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.prefilter = Prefilter([rule.pattern for rule in rules])
        self.rules = [(rule, LinearPattern(rule.pattern)) for rule in rules]
        # Whether any rule's pattern matches anywhere: each rule in a group of its own,
        # so its flags stay its own. A search RE2 falls back to a slower engine for is
        # still exact (never the DFA's "out of memory" that a re2.Set would take for no).
        self.any = LinearPattern("|".join(f"(?:{rule.pattern})" for rule in rules), capture=False)


@functools.cache
def _compiled() -> _Compiled:
    """Compiled once per process, the first time a gate needs it (every soul shares it)."""
    return _Compiled(RULES)


def compile_rules() -> None:
    """Compile the built-in rules now rather than at the first text (a soul's start)."""
    _compiled()


def _view(text: str) -> str:
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text).translate(_INVISIBLE)


# The most matches a text may offer the checks. Each costs microseconds in Python, and
# only a text built for it has this many (``"token=x " * 1000``); it is refused, since a
# secret could sit past the last match judged.
MOST_MATCHES = 256
TOO_MANY = f"more than {MOST_MATCHES} places where a secret could be"


def find_credential(text: str) -> str | None:
    """What kind of secret ``text`` holds ("a GitHub token"), or None."""
    compiled = _compiled()
    data = _view(text).encode("utf-8", "surrogatepass")
    if len(data) <= ANY_FIRST_BYTES and not compiled.any.search(data):
        return None  # no rule's pattern matches: nothing for the checks to judge
    judged: set[tuple[int, bytes]] = set()  # a match met again needs no new judgement
    offered = 0
    for index in compiled.prefilter.candidates(data):
        rule, pattern = compiled.rules[index]
        for match in pattern.matches(data):
            if rule.check is None:
                return rule.what
            offered += 1
            if offered > MOST_MATCHES:
                return TOO_MANY
            seen = (index, match.covered)
            if seen not in judged:
                judged.add(seen)
                if rule.check(match):
                    return rule.what
    return None

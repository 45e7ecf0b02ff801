"""The hygiene gate (DESIGN §3.1): the one write boundary of a soul.

Every text a soul stores passes ``HygieneGate.check`` first, exactly once. The gate
rejects and never repairs: it does not redact, trim or normalise, so what is stored is
byte for byte what the caller sent. A rejection is ``RejectedInput(rule, message)`` with
code ``hygiene.<rule>``; rules are checked in this order and the first failure wins:

``empty`` → ``too_long`` → ``invalid_chars`` → ``repeated_lines`` → ``credential``

The credential rule is :func:`~souls.intake.credential_scan.find_credential` (the
built-in rules of :mod:`~souls.intake.secret_rules`) and the soul's ``extra_patterns``;
every pattern runs on RE2, in time linear in the text, and the text is at most
``max_chars`` long, so a gate's time per event is bounded whatever the text holds.

A message is one sentence that says what is wrong and what to do. It may name a kind of
secret or a character's code point and offset, but never quotes the text itself, so a
rejected secret cannot leak into logs or replies.
"""

from __future__ import annotations

import re

import msgspec

from souls.intake.credential_scan import compile_rules, find_credential
from souls.intake.linear_regex import LinearPattern, PatternError
from supervisor.errors import RejectedInput

__all__ = ["HygieneConfig", "HygieneGate"]


class HygieneConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Longest accepted text, in characters (code points), not bytes.
    max_chars: int = 8000
    # Reject when one non-blank line occurs this many times in a row; blank lines between
    # the copies neither count nor break the run (markdown and code are full of blank
    # lines, while "x\n\nx\n\nx" is the same stuck loop as "x\nx\nx").
    max_repeated_lines: int = 3
    # Whether the built-in credential patterns apply (extra_patterns always do).
    credentials: bool = True
    # More regexes whose match means "this is a secret", searched in the text as sent.
    # RE2 syntax (linear time: no look-around, no backreferences; \z, not \Z), so no
    # pattern can stall the event loop whatever text it meets.
    extra_patterns: list[str] = []

    def __post_init__(self) -> None:
        if self.max_chars < 1:
            raise ValueError("max_chars must be at least 1")
        if self.max_repeated_lines < 2:
            raise ValueError("max_repeated_lines must be at least 2")
        for index, pattern in enumerate(self.extra_patterns):
            try:
                compiled = LinearPattern(pattern)
            except PatternError as exc:
                raise ValueError(
                    f"extra_patterns[{index}]: {pattern!r} is not a pattern RE2 can run "
                    f"({exc}); write it without look-around or backreferences"
                ) from None
            if compiled.search(b""):
                raise ValueError(
                    f"extra_patterns[{index}]: {pattern!r} matches the empty text, so it "
                    "would refuse every text; make it require at least one character"
                )


# Every Unicode Cc character except \t and \n, U+FFFD, and surrogates (a Python str only
# holds one when it was decoded with surrogateescape or built by hand: never valid text).
_INVALID = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffd\ud800-\udfff]")


class HygieneGate:
    """Checks texts against one HygieneConfig; build once, call ``check`` per text."""

    def __init__(self, config: HygieneConfig) -> None:
        self._max_chars = config.max_chars
        self._max_repeats = config.max_repeated_lines
        self._credentials = config.credentials
        self._extra = [LinearPattern(p) for p in config.extra_patterns]
        if self._credentials:
            compile_rules()

    def check(self, text: str) -> None:
        """Return if ``text`` may be stored; raise RejectedInput naming the rule if not."""
        if not text or text.isspace():
            raise RejectedInput("empty", "text is empty or only whitespace; send some content")
        if len(text) > self._max_chars:
            raise RejectedInput(
                "too_long",
                f"text is {len(text)} characters, over the limit of {self._max_chars}; "
                "split it into smaller pieces and send them separately",
            )
        bad = _INVALID.search(text)
        if bad is not None:
            raise RejectedInput("invalid_chars", _invalid_message(bad.group(), bad.start()))
        if "\n" in text:
            self._check_repeats(text)
        what = self.find_secret(text)
        if what is not None:
            raise _credential(what)

    def find_secret(self, text: str) -> str | None:
        """What kind of secret ``text`` holds (the built-in rules, when on, then
        ``extra_patterns``), or None. The credential rule alone, for texts that are not an
        event's text (a sender, a tag, a query): :mod:`~souls.intake.field_screen`."""
        if self._credentials:
            what = find_credential(text)
            if what is not None:
                return what
        if self._extra:
            data = text.encode("utf-8", "surrogatepass")
            for i, extra in enumerate(self._extra):
                if extra.search(data):
                    return f"a match of extra_patterns[{i}]"
        return None

    def _check_repeats(self, text: str) -> None:
        previous, run = "", 0
        for number, raw in enumerate(text.split("\n"), start=1):
            line = raw.rstrip()
            if not line:
                continue
            run = run + 1 if line == previous else 1
            previous = line
            if run >= self._max_repeats:
                raise RejectedInput(
                    "repeated_lines",
                    f"the same line occurs {run} times in a row (ending at line {number} of "
                    "the text); send it once, or say how often it repeated",
                )


def _invalid_message(char: str, offset: int) -> str:
    where = f"at offset {offset}"
    if char == "\r":
        return f"text contains a carriage return {where}; normalise line endings to \\n"
    if char == "\ufffd":
        return (
            f"text contains U+FFFD {where}, the mark of a failed decode; "
            "decode the source with its real encoding and send again"
        )
    if "\ud800" <= char <= "\udfff":
        return f"text contains a lone surrogate U+{ord(char):04X} {where}; send valid UTF-8"
    return (
        f"text contains the control character U+{ord(char):04X} {where}; "
        "remove it (only \\n and \\t are allowed) and send again"
    )


def _credential(what: str) -> RejectedInput:
    return RejectedInput(
        "credential",
        f"text looks like it contains a credential ({what}); remove the secret and send "
        "again — soupd never stores credentials",
    )

"""The hygiene gate (DESIGN §3.1): the one write boundary of a soul.

Every text a soul stores passes ``HygieneGate.check`` first, exactly once. The gate
rejects and never repairs: it does not redact, trim or normalise, so what is stored is
byte for byte what the caller sent. A rejection is ``RejectedInput(rule, message)`` with
code ``hygiene.<rule>``; rules are checked in this order and the first failure wins:

``empty`` → ``too_long`` → ``invalid_chars`` → ``repeated_lines`` → ``credential``

A message is one sentence that says what is wrong and what to do. It may name a kind of
secret or a character's code point and offset, but never quotes the text itself, so a
rejected secret cannot leak into logs or replies.
"""

from __future__ import annotations

import re

import msgspec

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
    # More regexes whose match means "this is a secret"; each is compiled on its own.
    extra_patterns: list[str] = []

    def __post_init__(self) -> None:
        if self.max_chars < 1:
            raise ValueError("max_chars must be at least 1")
        if self.max_repeated_lines < 2:
            raise ValueError("max_repeated_lines must be at least 2")
        for pattern in self.extra_patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"extra_patterns: {pattern!r} is not a regex: {exc}") from None


# Every Unicode Cc character except \t and \n, U+FFFD, and surrogates (a Python str only
# holds one when it was decoded with surrogateescape or built by hand: never valid text).
_INVALID = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffd\ud800-\udfff]")

_TOKEN = r"[A-Za-z0-9_-]"  # base64url
# Anywhere, so DB_PASSWORD= and access_token= count; never "tokens", "pass" or "passed".
_KEYWORD = (
    r"(?i:pass(?:word|wd|phrase)|pwd|secret|token|api[_-]?key|access[_-]?key"
    r"|private[_-]?key|credentials?)"
)
# Values that stand for a secret instead of being one: <...>, ${VAR}, $VAR, {{x}}, %(x)s,
# ***, xxxx, your_key, changeme, REDACTED, placeholder.
_PLACEHOLDER = r"(?![\"']?(?:<|\$|\{\{|%|\*\*\*|(?i:xxxx|your[_-]|changeme|redacted|placeholder)))"
_VALUE = r"[A-Za-z0-9_\-+/=!@#$%^&*~.]"
_VALUE_END = r"(?=$|[\s\"',;&)}\]])"

# Name → (what the message calls it, regex). Order matters where two could match at the
# same place: the more specific pattern comes first.
_PATTERNS: dict[str, tuple[str, str]] = {
    "aws_key_id": ("an AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "aws_secret": (
        "an AWS secret access key",
        r"(?i:aws_?secret(?:_access)?_?key)[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])",
    ),
    "github": (
        "a GitHub token",
        r"\bgh[pousr]_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{30,}",
    ),
    "anthropic": ("an Anthropic API key", rf"\bsk-ant-{_TOKEN}{{20,}}"),
    "openai": ("an OpenAI-style API key", rf"\bsk-(?:proj-)?(?=[A-Za-z_-]*\d){_TOKEN}{{20,}}"),
    "slack": ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    "google": ("a Google API key", rf"\bAIza{_TOKEN}{{35}}"),
    "stripe": ("a Stripe live key", r"\b[rs]k_live_[A-Za-z0-9]{16,}"),
    "private_key": ("a private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
    "jwt": ("a JSON Web Token", rf"\beyJ{_TOKEN}{{5,}}\.{_TOKEN}{{5,}}\.{_TOKEN}{{8,}}"),
    "url_password": (
        "a password in a URL",
        r"(?<=[A-Za-z0-9])://[^\s/:@]+:(?!<|\$|\{\{|\*+@)[^\s/@]+@",
    ),
    "telegram": ("a Telegram bot token", rf"\b\d{{8,10}}:{_TOKEN}{{35}}(?!{_TOKEN})"),
    "bearer": ("a bearer token", r"\b(?i:bearer)\s+[A-Za-z0-9._~+/=-]{20,}"),
    # key=value: any value of 8+ characters that is not a placeholder or a dotted name
    # (code such as ``token = config.token``); ``func(...)`` fails _VALUE_END.
    "assignment": (
        "a password or secret assignment",
        rf"{_KEYWORD}[\"']?\s*=\s*{_PLACEHOLDER}[\"']?"
        rf"(?![A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+{_VALUE_END}){_VALUE}{{8,}}{_VALUE_END}",
    ),
    # key: value reads like prose too ("invalid token: signature mismatch"), so the value
    # must also hold a digit and be neither a date nor a name=value pair.
    "colon_assignment": (
        "a password or secret assignment",
        rf"{_KEYWORD}[\"']?\s*:\s*{_PLACEHOLDER}[\"']?(?=[^\s\"']*\d)"
        rf"(?!\d{{4}}-\d\d-\d\d|\w+=){_VALUE}{{8,}}{_VALUE_END}",
    ),
}
# ASCII: \b, \d, \s and (?i) mean their ASCII selves, so lowering the text for the hints
# below can never hide a match (Unicode folding would let a long s, U+017F, match "s").
_BUILTIN = re.compile(
    "|".join(f"(?P<{name}>{rx})" for name, (_, rx) in _PATTERNS.items()), re.ASCII
)

# The combined regex costs tens of microseconds per 100 characters; these substring tests
# cost about one. Invariant: a text that _BUILTIN matches always passes _may_hold_secret,
# so each pattern above must be covered by a hint here (lowercase; tested on lowered text).
_LITERAL_HINTS = (
    "akia",
    "asia",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "sk-",
    "xox",
    "aiza",
    "k_live_",
    "-----begin",
    "eyj",
    "://",
    "bearer",
)
# Every _KEYWORD followed by its separator, on lowered text: case-sensitive literals let
# the regex engine skip ahead, so this costs under a microsecond.
_KEYWORD_HINT = re.compile(r"(?:pass|pwd|secret|token|key|credential)[a-z_-]*[\"']?\s*[:=]")
_TELEGRAM_HINT = re.compile(r"[0-9]{8}:")


def _by_mark(hints: tuple[str, ...], marks: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``hints`` grouped under the first of ``marks`` each holds ("" for none): a text
    without a mark cannot hold the hints of its group, and finding one character is far
    cheaper than finding seven substrings."""
    groups: dict[str, list[str]] = {}
    for hint in hints:
        mark = next((m for m in marks if m in hint), "")
        groups.setdefault(mark, []).append(hint)
    return tuple((mark, tuple(group)) for mark, group in groups.items())


_HINT_GROUPS = _by_mark(_LITERAL_HINTS, "_-:")


def _may_hold_secret(text: str) -> bool:
    low = text.lower()
    for mark, hints in _HINT_GROUPS:
        if mark not in low:  # "" is in every text
            continue
        for hint in hints:
            if hint in low:
                return True
    if "=" not in text and ":" not in text:
        return False
    return _KEYWORD_HINT.search(low) is not None or _TELEGRAM_HINT.search(text) is not None


class HygieneGate:
    """Checks texts against one HygieneConfig; build once, call ``check`` per text."""

    def __init__(self, config: HygieneConfig) -> None:
        self._max_chars = config.max_chars
        self._max_repeats = config.max_repeated_lines
        self._credentials = config.credentials
        self._extra = [re.compile(p) for p in config.extra_patterns]

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
        if self._credentials and _may_hold_secret(text):
            found = _BUILTIN.search(text)
            if found is not None and found.lastgroup is not None:
                raise _credential(_PATTERNS[found.lastgroup][0])
        for i, extra in enumerate(self._extra):
            if extra.search(text) is not None:
                raise _credential(f"a match of extra_patterns[{i}]")

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
                    f"the same line occurs {run} times in a row (ending at line {number}); "
                    "send it once, or say how often it repeated",
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

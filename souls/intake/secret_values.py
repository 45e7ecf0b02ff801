"""Whether a named value is a secret: the judgement behind the keyword rules.

A keyword rule (:mod:`~souls.intake.secret_rules`) finds a name and a value
(``DB_PASSWORD=...``, ``"api_key": "..."``, "my password is ...", 密码是...); these
functions decide whether the name really names a secret and whether the value really is
one, so that code (``password = os.environ[...]``), placeholders (``<your-api-key>``),
settings about secrets (``token_ttl = 3600``) and prose ("invalid token: signature
mismatch") pass. Every function here reads one short match, never the whole text.
"""

from __future__ import annotations

import itertools
import re
from typing import Literal

__all__ = ["Form", "is_secret_value", "is_stand_in", "names_a_secret", "random_looking"]

# How the value was introduced, strictest last:
# ``equals``  ``=``, ``:=``, ``=>``, a command-line flag, an XML element: code and config;
# ``colon``   ``:`` after an ASCII name, which reads like prose too ("token: expired");
# ``label``   a Chinese name (密码是, 密码: after NFKC): an ASCII run after it is the value;
# ``prose``   "... is ...": the rule has already asked for a digit or a symbol;
# ``weak``    a name that only ends in ``key`` (``STRIPE_KEY``): the value must look random.
Form = Literal["equals", "colon", "label", "prose", "weak"]

# Whole name components that name a secret (``DB_PASSWORD``, ``authToken``, ``creds``).
_SECRET_WORDS = frozenset(
    {
        *("password", "passwd", "passphrase", "passcode", "pwd", "pw", "pass"),
        *("secret", "token", "credential", "credentials", "creds", "apikey"),
        *("privatekey", "accesskey", "secretkey", "authkey"),
    }
)
# ``<word> key`` (``API_KEY``, ``account-key``, ``signingKey``) names a secret.
_SECRET_KEY_KINDS = frozenset(
    {
        *("api", "access", "secret", "private", "account", "client", "master", "signing"),
        *("encryption", "auth", "service", "app", "consumer", "shared", "storage", "admin"),
        *("subscription", "license", "webhook", "session", "root", "ssh", "wifi", "deploy"),
    }
)
# ``<word> key`` that is never a secret.
_PUBLIC_KEY_KINDS = frozenset(
    {"public", "pub", "primary", "foreign", "sort", "partition", "cache", "idempotency"}
)
# A component after the secret's name that makes the whole name a setting about the
# secret rather than the secret (``token_ttl``, ``password_min_length``, ``tokenUrl``).
_ABOUT = frozenset(
    {
        *("count", "counts", "limit", "limits", "len", "length", "size", "min", "max"),
        *("ttl", "expiry", "expires", "expire", "expiration", "expired", "timeout", "age"),
        *("lifetime", "duration", "type", "kind", "url", "uri", "endpoint", "host", "port"),
        *("path", "file", "dir", "name", "id", "hint", "policy", "rules", "field", "header"),
        *("param", "format", "version", "env", "var", "rotation", "strength", "reset"),
        *("prompt", "label", "placeholder", "required", "enabled", "mode", "method"),
        *("algorithm", "alg", "hash", "hashed", "salt", "stdin", "prefix", "usage", "used"),
        *("index", "budget", "rate", "regex", "pattern", "validator", "changed", "updated"),
        *("at", "in", "on", "date", "time", "user", "username", "login", "email", "style"),
        *("input", "class", "error", "errors", "message", "status", "cmd", "command"),
    }
)
# A component before it that does the same (``max_tokens`` is plural, but ``max_token``).
_ABOUT_BEFORE = frozenset(
    {"max", "min", "num", "total", "prompt", "completion", "input", "output", "context"}
)
_COMPONENT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# Names written as one word (``PGPASSWORD``, ``dbpassword``, ``mytoken``) end in one.
_ENDINGS = ("password", "passwd", "passphrase", "passcode", "secret", "token", "apikey")


def _secret_word(part: str) -> str:
    return next((word for word in _ENDINGS if part.endswith(word)), part)


def names_a_secret(name: str) -> Literal["strong", "weak", None]:
    """``strong`` if ``name`` names a secret, ``weak`` if it only ends in ``key`` or
    ``auth`` (``STRIPE_KEY``: a value there is a secret only if it looks random), else
    None."""
    parts = [_secret_word(p.lower()) for p in _COMPONENT.findall(name[-80:])]
    for index, part in enumerate(parts):
        kind: Literal["strong", "weak"] | None = None
        if part in _SECRET_WORDS:
            kind = "strong"
        elif part == "auth":
            kind = "weak"  # ``auth: oauth2`` names a method; docker's ``"auth"`` is base64
        elif part == "key" and index > 0:
            before = parts[index - 1]
            if before in _PUBLIC_KEY_KINDS:
                return None
            kind = "strong" if before in _SECRET_KEY_KINDS else "weak"
        if kind is None:
            continue
        after = parts[index + 1 :]
        if any(p in _ABOUT for p in after) or (index > 0 and parts[index - 1] in _ABOUT_BEFORE):
            return None
        if after and after[-1] in _SECRET_WORDS | {"key", "auth"}:
            continue  # the last secret word decides: ``token_secret``
        return kind
    return None


# Values that stand for a secret instead of being one.
_DUMMIES = frozenset(
    {
        *("password", "passwd", "pass", "pwd", "secret", "token", "apikey", "key", "value"),
        *("none", "null", "nil", "undefined", "true", "false", "yes", "no", "required"),
        *("optional", "empty", "hidden", "masked", "redacted", "removed", "unset", "default"),
        *("changeme", "example", "sample", "placeholder", "dummy", "todo", "tbd", "fixme"),
        *("string", "str", "bytes", "int", "any", "object", "foo", "bar", "baz", "test"),
        *("mypassword", "yourpassword", "secretkey", "mysecret", "yoursecret", "abc", "xyz"),
    }
)
_DUMMY_PARTS = ("your", "example", "placeholder", "changeme", "change_me", "redacted", "xxxx")
_MASK = re.compile(r"^[*x#?._-]+$", re.IGNORECASE)
_OPENS_A_REFERENCE = ("<", "$", "{", "%", "[", "(", "@{", "!", "&")
# Not secrets: dates, times, versions, numbers with a unit, addresses, paths, mail.
_NOT_SECRET = re.compile(
    r"""^(?:
      \d{4}-\d\d-\d\d.*                                 # 2024-06-01, 2024-05-01T12:00Z
    | \d{1,2}:\d\d(?::\d\d)?.*                          # 14:02
    | v?\d+(?:\.\d+)+[a-z]?                             # 1.2.3, v2.0
    | \d+[a-z]*(?:-[a-z]+)+                             # 2fa-protected, 256-bit
    | \d+(?:\.\d+)?(?:ms|s|sec|secs|m|min|mins|h|hr|hrs|d|days?|k|kb|mb|gb|x|%)
    | [a-z][a-z0-9+.-]*://.* | www\..*                  # a link
    | (?:~|\.{1,2})?/[\w.@-]+(?:/[\w.@-]*)* | [a-z]:\\.*  # a path
    | [\w.+-]+@[\w-]+\.[\w.-]+                          # an address
    | \#[0-9a-f]{3,8}                                   # a colour
    )$""",
    re.IGNORECASE | re.VERBOSE | re.ASCII,
)
_DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$", re.ASCII)
_NAME = re.compile(r"^[A-Za-z_]+$", re.ASCII)
# ``expires_in=3600`` after "token:" is the next setting, not the token.
_ASSIGNS = re.compile(r"^[A-Za-z_][\w.-]*=[^=]", re.ASCII)
_RANDOM_CHARS = re.compile(r"^[A-Za-z0-9+/=_.~-]+$", re.ASCII)
# After a bare number, a Chinese measure word makes it a quantity (密码是2024年改的).
_MEASURE_WORDS = frozenset("年月日号点时分秒个位次天周岁元块条张遍")
# A longer value is judged by its start: the checks below stay cheap whatever it holds.
_LONGEST = 256
# Sentence punctuation a value may be followed by in prose, never part of it.
_TRAILING = ".,;:!?)]}>'\"`"


def _unwrap(raw: str) -> tuple[str, bool]:
    """The value without its quotes or trailing punctuation, and whether it was quoted."""
    if len(raw) >= 2 and raw[0] in "\"'`" and raw[-1] == raw[0]:
        return raw[1:-1], True
    if raw[:1] in "\"'`":
        return raw[1:], True
    return raw.rstrip(_TRAILING), False


def is_stand_in(value: str) -> bool:
    """A placeholder, a mask or a reference that stands for a secret: ``<password>``,
    ``${DB_PASS}``, ``********``, ``your-api-key``, ``changeme``."""
    low = value.lower()
    return (
        value.startswith(_OPENS_A_REFERENCE)
        or "***" in value
        or "..." in value
        or "\u2026" in value
        or _MASK.match(value) is not None
        or low.strip("_-.") in _DUMMIES
        or any(part in low for part in _DUMMY_PARTS)
    )


def _code(value: str) -> bool:
    """An expression: a call, an index, an attribute, a constant's name."""
    return (
        any(c in value for c in "()[]{}")
        or _DOTTED_NAME.match(value) is not None
        or (_NAME.match(value) is not None and "_" in value.strip("_"))
    )


def _switches(value: str) -> float:
    """How often the kind of character (lower, upper, digit, other) changes from one
    character to the next: about 0.6 in random base62, 0.45 in hex, under 0.3 in words
    and names (``userPassword``, ``hashing_algorithm_v2``)."""
    kinds = ["l" if c.islower() else "u" if c.isupper() else "d" if c.isdigit() else "o"
             for c in value]  # fmt: skip
    return sum(a != b for a, b in itertools.pairwise(kinds)) / max(1, len(value) - 1)


def random_looking(value: str) -> bool:
    """Base64, hex or a token alphabet, of some length, with letters, digits and the
    variety of random characters; a slash only with base64's other marks
    (``reports/2024/q2`` is a storage path, not a key)."""
    return (
        len(value) >= 20
        and _RANDOM_CHARS.match(value) is not None
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and len(set(value)) >= 10
        and ("/" not in value or "+" in value or value.endswith("="))
        and _switches(value) >= 0.3
    )


def is_secret_value(raw: str, form: Form, after: str = "") -> bool:
    """Whether ``raw`` (as matched, quotes included) is a secret, given how it was
    introduced; ``after`` is the character that follows it in the text."""
    value, quoted = _unwrap(raw[:_LONGEST])
    if len(value) < 4 or any(c.isspace() for c in value):
        return False
    if is_stand_in(value) or _NOT_SECRET.match(value) is not None:
        return False
    if form == "weak":
        return random_looking(value)
    if not quoted and (_code(value) or _ASSIGNS.match(value) is not None):
        return False
    if value.isdigit() and after in _MEASURE_WORDS:
        return False
    if _NAME.match(value) is None or form == "label":
        return True
    # A bare word: code reads it as a name, prose as a word ("token: expired"), unless
    # its letters switch case like random ones (``Password=JEeAgYzQJjOI``).
    if len(value) >= 8 and _switches(value) >= 0.3:
        return True
    if form == "prose" or (form == "colon" and not quoted):
        return quoted
    flat = value.islower() or value.isupper()
    return flat and len(value) >= 8  # PWD=correcthorsebattery, never token=tok

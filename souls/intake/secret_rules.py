"""The credential rules of the hygiene gate: what a secret looks like in a text.

Two kinds of rule. A *shape* rule knows a secret by its form: a vendor prefix and a
body (``ghp_`` and 36 characters), an armoured or bare private key, a password in a URL,
an ``Authorization`` header. A *keyword* rule knows it by its name: ``DB_PASSWORD=...``,
``"api_key": "..."``, "my password is ...", 密码是...; its ``check`` then asks
:mod:`~souls.intake.secret_values` whether the name and the value really are a secret.

Every pattern is RE2 syntax (:mod:`~souls.intake.linear_regex`): no look-around, so a
rule that must see past its match captures what it needs. The families and shapes
follow two public rule sets, read for their ideas and written anew here: gitleaks'
``config/gitleaks.toml`` (MIT, github.com/gitleaks/gitleaks) and detect-secrets'
``detect_secrets/plugins`` (Apache-2.0, github.com/Yelp/detect-secrets).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass

from souls.intake.linear_regex import LinearMatch
from souls.intake.secret_values import (
    Form,
    is_secret_value,
    is_stand_in,
    names_a_secret,
    random_looking,
)

__all__ = ["RULES", "Rule"]


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    what: str  # how a rejection names it: "a GitHub token"
    pattern: str  # RE2, matched against the text as UTF-8
    # Whether a match really is a secret; None: every match is.
    check: Callable[[LinearMatch], bool] | None = None


# --- checks -------------------------------------------------------------------------


def _has_digit(match: LinearMatch) -> bool:
    """Random bodies hold digits; words joined by dashes (``sk-learn-...``) do not."""
    return not match["v"] or any(map(str.isdigit, match["v"]))


def _mixed_case(match: LinearMatch) -> bool:
    """Random letters switch case often; a CamelCase name after ``hf_`` does not."""
    body = match["v"]
    upper = sum(map(str.isupper, body))
    return not body or any(map(str.isdigit, body)) or min(upper, len(body) - upper) >= 8


def _not_a_stand_in(match: LinearMatch) -> bool:
    low = match["v"].lower()
    return not low.startswith(("<", "$", "{")) and "your" not in low and "example" not in low


def _url_password(match: LinearMatch) -> bool:
    return not is_stand_in(match["v"])


def _basic_credentials(match: LinearMatch) -> bool:
    """``Basic`` then base64 of ``user:password``."""
    try:
        decoded = base64.b64decode(match["v"], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, colon, password = decoded.partition(":")
    return bool(colon and user and password.isprintable()) and not is_stand_in(password)


def _keyed(form: Form, key: str = "k", value: str = "v") -> Callable[[LinearMatch], bool]:
    """A check for a name in group ``key`` and its value in group ``value``."""

    def check(match: LinearMatch) -> bool:
        strength = names_a_secret(match[key])
        if strength is None:
            return False
        raw = match[value]
        if match["sep"] in ("==", "!=") and raw[:1] not in "\"'`":
            return False  # a comparison with a name, not a value
        if raw.endswith("=") and match.after.isalnum():
            return False  # ``token: expires_in=3600``: the value is the next name
        if strength == "weak":
            form_here: Form = "weak"
        else:
            form_here = "colon" if match["sep"] == ":" else form
        return is_secret_value(raw, form_here, match.after)

    return check


def _spaced(match: LinearMatch) -> bool:
    """A secret's name, a space, a random value: ``Authorization: token 8d51...``."""
    return names_a_secret(match["k"]) is not None and random_looking(match["v"])


def _random_value(match: LinearMatch) -> bool:
    return random_looking(match["v"])


def _markup(match: LinearMatch) -> bool:
    return _keyed("equals")(match) if match["k"] else _keyed("equals", "k2", "v2")(match)


_UNITS = frozenset(
    {
        *("characters", "chars", "char", "digits", "letters", "bytes", "bits", "words"),
        *("seconds", "secs", "minutes", "mins", "hours", "hrs", "days", "weeks", "months"),
        *("years", "times", "tokens", "lines", "long", "old", "ms", "kb", "mb"),
    }
)


def _prose(match: LinearMatch) -> bool:
    """``my password is hunter2``, never ``the token is 8000 characters long``."""
    value = match["v"].rstrip(".,;:!?)")
    if value.rstrip("+%").isdigit() and match["next"].lower() in _UNITS:
        return False
    return is_secret_value(match["v"], "prose", match.after)


def _label(match: LinearMatch) -> bool:
    return is_secret_value(match["v"], "label", match.after)


def _command_line(match: LinearMatch) -> bool:
    return is_secret_value(match["v"] or match["v2"] or match["v3"], "label")


# --- patterns -----------------------------------------------------------------------

_B64URL = "[A-Za-z0-9_-]"
# A keyed value: quoted (to its closing quote, on one line) or a run of value characters;
# base64 padding may end it.
_VALUE = r"""(?P<v>"[^"\n]*"?|'[^'\n]*'?|`[^`\n]*`?|[^\s"'`,;&=]+={0,3})"""
# Substrings of every name that names_a_secret accepts; it judges the whole name.
_NAME_HINT = r"(?:pass|pw|secret|token|auth|cred|key)"
# Chinese verbs that give a name its value: 是, 为, 改成了, 设置为...
_ZH_IS = r"(?:已经|已|现在|也|都|还|就|应该)?(?:是|为|[改换设变]成了?|改为|设为|设置为)"

_KEYED = [
    Rule(
        "assignment",
        "a password or secret assignment",
        rf"(?i)(?P<k>[a-z0-9_.-]*{_NAME_HINT}[a-z0-9_.-]*)[\"'\]]{{0,2}}[ \t]*"
        rf"(?P<sep>:=|=>|==|!=|=|:)[ \t]*{_VALUE}",
        _keyed("equals"),
    ),
    Rule(
        "flag",
        "a password or secret on a command line",
        rf"(?i)(?:^|\s)--?(?P<k>[a-z0-9-]*{_NAME_HINT}[a-z0-9-]*)[ \t]+"
        r"""(?P<v>"[^"\n]*"|'[^'\n]*'|[^\s"'`;&|-][^\s"'`;&|]*)""",
        _keyed("equals"),
    ),
    Rule(
        "markup",
        "a password or secret in markup",
        rf"(?i:<(?P<k>[a-z0-9_:.-]*{_NAME_HINT}[a-z0-9_:.-]*)>(?P<v>[^<\s]+)</"
        r"""|\bkey[ \t]*=[ \t]*"(?P<k2>[^"\n]*)"[ \t]+value[ \t]*=[ \t]*(?P<v2>"[^"\n]*"))""",
        _markup,
    ),
    Rule(
        "spaced",
        "a password or secret after its name",
        rf"(?i)(?P<k>[a-z0-9_.-]*{_NAME_HINT}[a-z0-9_.-]*)[\"']?[ \t]+"
        r"(?P<v>[A-Za-z0-9+/=_.~-]{20,})",
        _spaced,
    ),
    Rule(
        "prose",
        "a password or secret written out",
        r"(?i)\b(?P<k>pass(?:word|wd|phrase|code)|pwd|pw|token|secret|credentials?"
        r"|(?:api|access|secret|private|ssh|wi-?fi|license)[ _-]?key)"
        r"(?:[ \t]+(?:for|of|to|on|at|in)(?:[ \t]+[^\s]+){1,3}?)?"
        r"(?:[ \t]+(?:is|was|=|to|is now|now is|becomes|became|reads)|[ \t]*:)[ \t]*:?[ \t]*"
        r"""(?P<v>"[^"\n]{4,}"|'[^'\n]{4,}'|[^\s"']*[0-9!@#$%^&*+=?~][^\s"']*)"""
        r"(?:[ \t]+(?P<next>[A-Za-z]+))?",
        _prose,
    ),
    Rule(
        "label",
        "a password or secret written out",
        rf"(?:(?:密码|口令|密钥|秘钥|私钥|令牌|授权码)[ \t]*(?:{_ZH_IS}|:|=)"
        rf"|(?i:pass(?:word|wd)|pwd|token|api[ _-]?key)[ \t]*{_ZH_IS})"
        r"[ \t]*(?:了[ \t]*)?:?[ \t]*(?P<v>[!-~]+)",
        _label,
    ),
]

# A private key's body without its armour: the first bytes of its DER (or OpenSSH)
# encoding, as base64 always spells them, then more base64.
_KEY_BODY = (
    r"\b(?:MII[A-Za-z0-9+/]{3}IBAAK[BC]"  # PKCS#1 RSA, DSA
    r"|MII[A-Za-z0-9+/]{3}IBAD(?:AN|CC)"  # PKCS#8 RSA, DSA
    r"|MIG[A-Za-z0-9+/]AgEAMBMGByqGSM49"  # PKCS#8 EC
    r"|MHcCAQEE|MIG[A-Za-z0-9+/]AgEBBD"  # SEC1 EC
    r"|MC4CAQAwBQYDK2V[uw]|MEcCAQAwBQYDK2V[xv]"  # PKCS#8 X25519, Ed25519, X448, Ed448
    r"|b3BlbnNzaC1rZXktdjE)"  # OpenSSH
    r"[A-Za-z0-9+/=\s]{40}"
)

_SHAPES = [
    Rule(
        "private_key",
        "a private key",
        r"-{4,5}BEGIN[ A-Z0-9_-]{0,60}PRIVATE KEY(?: BLOCK)?-{4,5}"
        r"|PuTTY-User-Key-File-\d",
    ),
    Rule("private_key_body", "a private key", _KEY_BODY),
    Rule(
        "aws_key_id", "an AWS access key id", r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"
    ),
    Rule(
        "aws_secret",
        "an AWS secret access key",
        r"(?i)aws[a-z0-9_.-]{0,20}(?:secret|key)[a-z0-9_.-]{0,20}[\"']?[ \t]*[:=]{1,2}[ \t]*"
        r"[\"']?[A-Za-z0-9/+]{40}(?:[^A-Za-z0-9/+=]|$)",
    ),
    Rule("github", "a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_\w{22,})"),
    Rule(
        "gitlab",
        "a GitLab token",
        rf"\b(?:gl(?:pat|dt|ft|soat|rt|oas|ptt|imt|agent|cbt|ffct|sa)-{_B64URL}{{20,}}"
        rf"|GR1348941{_B64URL}{{20,}})",
    ),
    Rule("anthropic", "an Anthropic API key", rf"\bsk-ant-{_B64URL}{{20,}}"),
    Rule(
        "openai",
        "an OpenAI-style API key",
        rf"\b(?P<v>sk-(?:proj-|svcacct-|admin-)?{_B64URL}{{20,}})"
        rf"|{_B64URL}{{10,}}T3BlbkFJ{_B64URL}{{10,}}",
        _has_digit,
    ),
    Rule(
        "ai_platform",
        "an AI platform API key",
        r"\b(?:gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{40,}|pplx-[A-Za-z0-9]{40,}"
        r"|r8_[A-Za-z0-9]{30,}|(?:hf_|api_org_)(?P<v>[A-Za-z0-9]{30,}))\b",
        _mixed_case,
    ),
    Rule(
        "slack",
        "a Slack token or webhook",
        r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}"
        r"|hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
    ),
    Rule(
        "chat_webhook",
        "a chat webhook URL",
        rf"discord(?:app)?\.com/api/webhooks/\d+/{_B64URL}{{30,}}"
        r"|webhook\.office\.com/webhookb2/[A-Za-z0-9@/-]{40,}"
        rf"|open\.(?:feishu\.cn|larksuite\.com)/open-apis/bot/v2/hook/{_B64URL}{{20,}}"
        rf"|qyapi\.weixin\.qq\.com/cgi-bin/webhook/send\?key={_B64URL}{{20,}}",
    ),
    Rule(
        "discord",
        "a Discord bot token",
        rf"\b[MNO]{_B64URL}{{23,25}}\.{_B64URL}{{6}}\.{_B64URL}{{27,38}}\b",
    ),
    Rule(
        "telegram",
        "a Telegram bot token",
        rf"\b(?:\d{{8,10}}:{_B64URL}{{35}}|\d{{5,16}}:AA{_B64URL}{{33}})(?:[^A-Za-z0-9_-]|$)",
    ),
    Rule(
        "stripe",
        "a Stripe secret key",
        r"\b(?:[rs]k_(?:live|test|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{24,})",
    ),
    Rule(
        "google",
        "a Google API key or OAuth secret",
        rf"\bAIza{_B64URL}{{35}}|\bGOCSPX-{_B64URL}{{24,}}|\bya29\.{_B64URL}{{30,}}",
    ),
    Rule(
        "azure",
        "an Azure key",
        r"(?i)\b(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*[A-Za-z0-9+/]{30,}"
        r"|(?:^|[^A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?:[^A-Za-z0-9_~.-]|$)",
    ),
    Rule(
        "cloud",
        "a cloud provider key",
        r"\b(?:LTAI[A-Za-z0-9]{20}|AKID[A-Za-z0-9]{32}|do[opr]_v1_[0-9a-f]{40,}"
        r"|dapi[0-9a-f]{32}|HRKU-AA[A-Za-z0-9_-]{40,}|[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{40,}"
        r"|v1\.0-[0-9a-f]{24}-[0-9a-f]{40,}|fo1_[A-Za-z0-9_-]{40,}|pul-[0-9a-f]{40}"
        r"|pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,})",
    ),
    Rule(
        "vault",
        "a HashiCorp Vault token",
        rf"\bhv[sbr]\.{_B64URL}{{24,}}|(?i:vault)[^\n]{{0,40}}\bs\.[A-Za-z0-9]{{24}}\b",
    ),
    Rule(
        "package_registry",
        "a package registry token",
        r"\b(?:npm_[A-Za-z0-9]{36}|pypi-AgE[IN][A-Za-z0-9_-]{40,}|rubygems_[0-9a-f]{40,}"
        r"|CLOJARS_[a-z0-9]{40,}|AKCp[A-Za-z0-9]{40,}|oy2[a-z0-9]{43})\b",
    ),
    Rule(
        "saas",
        "an API token",
        r"\b(?:shp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}|SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"
        r"|xkeysib-[0-9a-f]{40,}|key-[0-9a-f]{32}|[0-9a-f]{32}-us\d{1,2}"
        r"|lin_(?:api|oauth)_[A-Za-z0-9]{40}|PMAK-[0-9a-f]{24}-[0-9a-f]{34}"
        r"|dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}|ntn_\d{11}[A-Za-z0-9]{35}"
        r"|secret_[A-Za-z0-9]{43}|pat[A-Za-z0-9]{14}\.[0-9a-f]{40,}|glsa_[A-Za-z0-9]{32}_[0-9a-fA-F]{8}"
        r"|glc_[A-Za-z0-9+/]{32,}|eyJrIjoi[A-Za-z0-9]{40,}|ATATT3[A-Za-z0-9_=-]{40,}"
        r"|NR(?:AK|II|JS|AA)-[A-Za-z0-9]{19,32}|sntry[usa]_[A-Za-z0-9+/=_]{40,}"
        r"|dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{40,}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,}"
        r"|EAA[A-Za-z0-9]{40,}|EZ[AT]K[A-Za-z0-9]{40,}|duffel_(?:test|live)_[A-Za-z0-9_=-]{40,}"
        r"|FLWSECK(?:_TEST)?-[0-9a-fA-F]{12,}|fio-u-[A-Za-z0-9_=-]{40,}|ico-[A-Za-z0-9]{32}"
        r"|pnu_[A-Za-z0-9]{36}|rdme_[a-z0-9]{40,}|tk-us-[A-Za-z0-9_-]{40,}|sgp_[0-9a-f_]{40,}"
        r"|shippo_(?:live|test)_[0-9a-fA-F]{40}|sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}"
        r"|ops_eyJ[A-Za-z0-9+/]{40,}|A3-[A-Z0-9]{6}-[A-Z0-9-]{11,12}-[A-Z0-9]{5}-[A-Z0-9]{5})",
    ),
    Rule("twilio", "a Twilio API key", r"\bSK[0-9a-fA-F]{32}\b"),
    Rule(
        "age",
        "an age secret key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{40,}",
    ),
    Rule("jwt", "a JSON Web Token", rf"\beyJ{_B64URL}{{5,}}\.{_B64URL}{{5,}}\.{_B64URL}{{8,}}"),
    Rule(
        "url_password",
        "a password in a URL",
        r"[A-Za-z0-9]://[^\s/:@]*:(?P<v>[^\s/@]+)@[A-Za-z0-9\[]",
        _url_password,
    ),
    Rule(
        "url_token",
        "a token in a URL",
        r"[A-Za-z0-9]://(?P<v>[A-Za-z0-9_.~-]{20,})@[A-Za-z0-9\[]",
        _random_value,
    ),
    Rule(
        "basic_auth",
        "a basic-auth header",
        r"(?i)\bbasic[ \t]+(?P<v>[A-Za-z0-9+/]{8,}={0,2})",
        _basic_credentials,
    ),
    Rule(
        "bearer",
        "a bearer token",
        r"(?i)\bbearer[ \t]+(?P<v>[A-Za-z0-9._~+/=-]{20,})",
        _not_a_stand_in,
    ),
    Rule(
        "command_line",
        "a password on a command line",
        r"\b(?:mysql\w*|sshpass)\b[^\n]{0,200}[ \t]-p(?P<v>[^\s-][^\s]*)"
        r"|\bcurl\b[^\n]{0,200}[ \t](?:-u|--user)[ =][\"']?[^\s:\"']+:(?P<v2>[^\s\"']+)"
        r"|\bmachine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+(?P<v3>\S+)",
        _command_line,
    ),
]

# Shapes first (the message names the vendor), then names; within each, the more
# specific rule comes first where two could match the same secret.
RULES: tuple[Rule, ...] = (*_SHAPES, *_KEYED)

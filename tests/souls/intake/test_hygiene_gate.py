# ruff: noqa: RUF001  (Chinese chat is written with full-width punctuation)
from __future__ import annotations

import msgspec
import pytest

from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from souls.intake.secret_rules import RULES
from supervisor.errors import RejectedInput

GATE = HygieneGate(HygieneConfig())

# Fake secrets are assembled at run time so no scanner mistakes this file for a leak.
ALNUM = "a1B2c3D4e5F6g7H8i9J0"
SECRETS: dict[str, str] = {
    "private_key": "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEow...",
    "private_key_body": "MIIEpAIBAAKCAQEA" + ALNUM * 3,
    "aws_key_id": "AKIA" + "ABCDEFGHIJ234567",
    "aws_secret": "aws_secret_access_key = " + (ALNUM * 2),
    "github": "ghp" + "_" + ALNUM + ALNUM[:16],
    "gitlab": "glpat" + "-" + ALNUM,
    "anthropic": "sk-" + "ant-api03-" + ALNUM + ALNUM,
    "openai": "sk-" + "proj-" + ALNUM + ALNUM,
    "ai_platform": "gsk" + "_" + ALNUM * 3,
    "slack": "xox" + "b-123456789012-" + ALNUM,
    "chat_webhook": "https://discord.com/api/" + "webhooks/123456789/" + ALNUM * 2,
    "discord": "M" + ALNUM + "abcd." + "AbCdEf." + ALNUM + "1234567",
    "telegram": "123456789:" + "AA" + ALNUM + "xyz" + ALNUM[:10],
    "stripe": "sk" + "_live_" + ALNUM,
    "google": "AI" + "za" + ALNUM + ALNUM[:15],
    "azure": "AccountKey=" + ALNUM * 4 + "==",
    "cloud": "dop" + "_v1_" + "0123456789abcdef" * 4,
    "vault": "hvs" + "." + ALNUM * 2,
    "package_registry": "npm" + "_" + ALNUM + ALNUM[:16],
    "saas": "SG." + ALNUM + "ab." + ALNUM * 2 + "abc",
    "twilio": "SK" + "0123456789abcdef" * 2,
    "age": "AGE-SECRET-KEY-" + "1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2,
    "jwt": "eyJ" + "hbGciOiJIUzI1NiJ9." + "eyJ" + "zdWIiOiIxIn0." + ALNUM,
    "url_password": "postgres://admin:" + "Hunter2x@db.internal:5432/app",
    "url_token": "https://" + ALNUM + "@github.com/acme/app.git",
    "basic_auth": "Authorization: Basic " + "ZGVwbG95OlRyMHViNGRvciYz",
    "bearer": "Authorization: Bearer " + ALNUM + ALNUM,
    "command_line": "mysql -u root -p" + "Tr0ub4dor3 -h db",
    "assignment": "DB_PASSWORD=" + "Tr0ub4dor&3",
    "flag": "deploy --password " + "Tr0ub4dor3",
    "markup": "<password>" + "Tr0ub4dor3" + "</password>",
    "spaced": "Authorization: token " + "8d512c9791e558e08baa7196b50ac2f86702824c",
    "prose": "pw is " + "Tr0ub4dor3",
    "label": "我的密码是" + "tr0ub4dor3",
}
WHAT = {rule.name: rule.what for rule in RULES}


def rejection(text: str, gate: HygieneGate = GATE) -> RejectedInput:
    with pytest.raises(RejectedInput) as caught:
        gate.check(text)
    return caught.value


def test_every_builtin_rule_has_a_case_here() -> None:
    assert set(SECRETS) == set(WHAT)


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_credentials_are_rejected_without_echoing_them(name: str) -> None:
    secret = SECRETS[name]
    error = rejection(f"note for later: {secret} (from the deploy log)")
    assert error.code == "hygiene.credential"
    assert error.rule == "credential"
    assert WHAT[name] in error.message
    assert "remove the secret" in error.message
    for chunk in secret.split():
        assert chunk not in error.message


@pytest.mark.parametrize(
    "text",
    [
        "the token limit is 8000",
        "the token limit is 8000: we hit it twice today",
        "password reset email sent",
        "Password: required",
        "invalid token: signature mismatch",
        "the access token: expires_in=3600",
        "pass: 2024-06-01 release, token: 2024-05-01T12:00:00Z",
        "token = get_token() and if token == expected_token:",
        "secret_key = settings.SECRET_KEY",
        'export GITHUB_TOKEN="$GH_TOKEN" and PASSWORD=$(cat /run/secrets/db)',
        "set password=<your password> and token=${GITHUB_TOKEN} in .env",
        "api_key: xxxxxxxxxxxx, secret = '********', pwd=REDACTED",
        "token = config.token",
        "password = os.environ.get('DB_PASSWORD')",
        "max_tokens=4096 and prompt_tokens: 123456789",
        "see https://example.com/a:b@c and ssh://git@github.com:22/repo",
        "postgres://user:<password>@localhost/db",
        "Bearer tokens are described in RFC 6750",
        "the risk-adjusted task-management roadmap for 2025",
        "Asia AKIA sk- eyJ are just words here",
        "数据库迁移超时\uff0c请检查密码重置邮件",
        "The deploy to prod failed at 14:02 because the migration timed out.",
    ],
)
def test_ordinary_text_passes(text: str) -> None:
    GATE.check(text)


@pytest.mark.parametrize(
    "text",
    [
        "secret = 'supersecretvalue'",
        "https://x.example/cb?access_token=" + ALNUM,
        "password: hunter2hunter2",
        "PWD = correcthorsebattery",
        "password: hunter2",
        "Server=db;User Id=sa;Password=JEeAgYzQJjOI;",
        "set PGPASSWORD=q4i9DoV8gz4F && psql",
        "wifi密码：woaini1314",
        "新密码改成了 Abc123!了",
    ],
)
def test_assignments_are_credentials(text: str) -> None:
    assert rejection(text).code == "hygiene.credential"


def test_empty() -> None:
    for text in ("", "   ", "\n\n\t"):
        assert rejection(text).code == "hygiene.empty"


def test_too_long() -> None:
    GATE.check("x" * 8000)
    error = rejection("x" * 8001)
    assert error.code == "hygiene.too_long"
    assert "8001" in error.message
    assert "8000" in error.message


def test_too_long_counts_characters_not_bytes() -> None:
    GATE.check("数" * 8000)


@pytest.mark.parametrize(
    ("char", "hint"),
    [
        ("\r", "normalise line endings to \\n"),
        ("\x00", "U+0000"),
        ("\x07", "U+0007"),
        ("\x1b", "U+001B"),
        ("\x7f", "U+007F"),
        ("\x85", "U+0085"),
        ("\ufffd", "U+FFFD"),
        ("\udcff", "surrogate"),
    ],
)
def test_invalid_chars(char: str, hint: str) -> None:
    error = rejection(f"line one{char}line two")
    assert error.code == "hygiene.invalid_chars"
    assert hint in error.message
    assert "offset 8" in error.message


def test_tabs_newlines_and_unicode_pass() -> None:
    GATE.check("a\tb\nc\u2028d \u00a0 \U0001f680 数据")


def test_repeated_lines() -> None:
    GATE.check("retry\nretry\nok\nretry")
    error = rejection("start\nretry\nretry  \nretry\nend")
    assert error.code == "hygiene.repeated_lines"
    assert "3 times" in error.message


def test_blank_lines_neither_count_nor_break_a_run() -> None:
    GATE.check("para\n\n\n\n\n\nnext")
    GATE.check("a\n   \n\t\n\nb")
    assert rejection("retry\n\nretry\n\nretry").code == "hygiene.repeated_lines"


def test_indentation_makes_lines_different() -> None:
    GATE.check("      }\n    }\n  }\n}")


def test_rules_are_checked_in_order() -> None:
    assert rejection("x\x00" * 5000).code == "hygiene.too_long"
    assert rejection("a\na\na\x00").code == "hygiene.invalid_chars"
    assert rejection(f"{SECRETS['github']}\n" * 3).code == "hygiene.repeated_lines"


def test_configurable_limits() -> None:
    gate = HygieneGate(HygieneConfig(max_chars=10, max_repeated_lines=2))
    gate.check("0123456789")
    assert rejection("0123456789a", gate).code == "hygiene.too_long"
    assert rejection("a\na", gate).code == "hygiene.repeated_lines"


def test_credentials_can_be_switched_off() -> None:
    HygieneGate(HygieneConfig(credentials=False)).check(SECRETS["github"])


def test_extra_patterns_are_credentials() -> None:
    config = msgspec.convert({"extra_patterns": [r"\bACME-\d{6}\b"]}, HygieneConfig)
    secret = "ACME-123456"
    only_extra = msgspec.structs.replace(config, credentials=False)
    for gate in (HygieneGate(config), HygieneGate(only_extra)):
        gate.check("ACME-12 is a product code")
        error = rejection(f"the key is {secret}", gate)
        assert error.code == "hygiene.credential"
        assert "extra_patterns[0]" in error.message
        assert secret not in error.message


def test_a_bad_extra_pattern_is_a_validation_error() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"extra_patterns"):
        msgspec.convert({"extra_patterns": ["("]}, HygieneConfig)


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        (r"(?=secret)\w+", "look-around"),
        (r"(?<!x)token", "look-around"),
        (r"(\w)\1{7}", "backreferences"),
        (r"\d{2000}", "RE2"),
    ],
)
def test_an_extra_pattern_re2_cannot_run_is_refused_at_load(pattern: str, why: str) -> None:
    """Python's re would accept these; a backtracking engine on the event loop is what
    froze every soul, so the config is refused with what to change."""
    with pytest.raises(msgspec.ValidationError, match=r"extra_patterns\[0\]") as caught:
        msgspec.convert({"extra_patterns": [pattern]}, HygieneConfig)
    assert why in str(caught.value)
    assert "RE2" in str(caught.value)


def test_an_extra_pattern_that_matches_nothing_at_all_is_refused() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"every text"):
        msgspec.convert({"extra_patterns": [r"\bACME-\d+", "x*"]}, HygieneConfig)


def test_extra_patterns_are_searched_in_the_text_as_sent() -> None:
    gate = HygieneGate(HygieneConfig(credentials=False, extra_patterns=[r"工号\d{6}"]))
    gate.check("我的工号是12345")
    assert rejection("我的工号123456，别外传", gate).code == "hygiene.credential"


@pytest.mark.parametrize("fields", [{"max_chars": 0}, {"max_repeated_lines": 1}, {"oops": 1}])
def test_bad_config_is_a_validation_error(fields: dict[str, int]) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(fields, HygieneConfig)

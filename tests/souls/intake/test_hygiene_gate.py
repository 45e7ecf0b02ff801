from __future__ import annotations

import msgspec
import pytest

from souls.intake.hygiene_gate import _PATTERNS, HygieneConfig, HygieneGate
from supervisor.errors import RejectedInput

GATE = HygieneGate(HygieneConfig())

# Fake secrets are assembled at run time so no scanner mistakes this file for a leak.
ALNUM = "a1B2c3D4e5F6g7H8i9J0"
SECRETS: dict[str, str] = {
    "aws_key_id": "AKIA" + "ABCDEFGHIJ234567",
    "aws_secret": "aws_secret_access_key = " + (ALNUM * 2),
    "github": "ghp" + "_" + ALNUM + ALNUM[:16],
    "anthropic": "sk-" + "ant-api03-" + ALNUM + ALNUM,
    "openai": "sk-" + "proj-" + ALNUM + ALNUM,
    "slack": "xox" + "b-123456789012-" + ALNUM,
    "google": "AI" + "za" + ALNUM + ALNUM[:15],
    "stripe": "sk" + "_live_" + ALNUM,
    "private_key": "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEow...",
    "jwt": "eyJ" + "hbGciOiJIUzI1NiJ9." + "eyJ" + "zdWIiOiIxIn0." + ALNUM,
    "url_password": "postgres://admin:" + "Hunter2x@db.internal:5432/app",
    "telegram": "123456789:" + "AA" + ALNUM + "xyz" + ALNUM[:10],
    "bearer": "Authorization: Bearer " + ALNUM + ALNUM,
    "assignment": "DB_PASSWORD=" + "Tr0ub4dor&3",
    "colon_assignment": '{"api_key": "' + "9f8e7d6c5b4a" + '"}',
}


def rejection(text: str, gate: HygieneGate = GATE) -> RejectedInput:
    with pytest.raises(RejectedInput) as caught:
        gate.check(text)
    return caught.value


def test_every_builtin_pattern_has_a_case_here() -> None:
    assert set(SECRETS) == set(_PATTERNS)


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_credentials_are_rejected_without_echoing_them(name: str) -> None:
    secret = SECRETS[name]
    error = rejection(f"note for later: {secret} (from the deploy log)")
    assert error.code == "hygiene.credential"
    assert error.rule == "credential"
    assert _PATTERNS[name][0] in error.message
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


@pytest.mark.parametrize("fields", [{"max_chars": 0}, {"max_repeated_lines": 1}, {"oops": 1}])
def test_bad_config_is_a_validation_error(fields: dict[str, int]) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(fields, HygieneConfig)

# ruff: noqa: RUF001  (Chinese chat is written with full-width punctuation)
"""The credential rule on two corpora (credential_corpus.py) and on hostile text.

Coverage: at least 55 of the 60 secret families are refused, each named by a rule and
never echoed. Precision: none of the ordinary messages (talk about passwords and
tokens, SHAs, UUIDs, base64 images, public keys, placeholders, code) is refused.
Time: no text of ``max_chars`` costs the gate more than a bound, whatever it repeats.
"""

from __future__ import annotations

import time

import pytest
from credential_corpus import ORDINARY, SECRETS

from souls.intake import credential_scan
from souls.intake.credential_scan import MOST_MATCHES, TOO_MANY
from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from supervisor.errors import RejectedInput

GATE = HygieneGate(HygieneConfig())


def refusal(text: str, gate: HygieneGate = GATE) -> RejectedInput | None:
    try:
        gate.check(text)
    except RejectedInput as error:
        return error
    return None


def test_at_least_55_of_60_secret_families_are_refused() -> None:
    assert len(SECRETS) == 60
    missed = [name for name, text in SECRETS.items() if refusal(text) is None]
    assert len(SECRETS) - len(missed) >= 55, missed


@pytest.mark.parametrize("family", sorted(SECRETS))
def test_each_secret_family_is_refused_as_a_credential(family: str) -> None:
    error = refusal(SECRETS[family])
    assert error is not None, family
    assert error.code == "hygiene.credential", error.message
    for word in SECRETS[family].split():
        if sum(c.isdigit() for c in word) >= 3:  # the secret's own characters
            assert word not in error.message


@pytest.mark.parametrize("text", ORDINARY, ids=range(len(ORDINARY)))
def test_ordinary_text_about_secrets_is_stored(text: str) -> None:
    error = refusal(text)
    assert error is None, (text, error and error.message)


def test_no_ordinary_message_is_refused() -> None:
    refused = [text[:60] for text in ORDINARY if refusal(text) is not None]
    assert refused == []


def test_a_conversation_that_turns_to_a_secret_is_refused_only_then() -> None:
    turns = [
        "ugh the staging db won't let me in again",
        "did you try the password from the wiki? the one Sam posted",
        "yeah, password reset email never came either, lol",
        "wait no, I think the token expired, not the password",
        "ok found it in my notes, the password is Marzipan-4417, try that",
        "thx!! works now. I'll rotate it tomorrow",
        "好的，顺便把令牌过期时间改长一点吧",
        "密码我先不改了，等周一再说",
        "算了，现在就改：新密码是 Kiwi2024sun，记一下",
    ]
    refused = [i for i, turn in enumerate(turns) if refusal(turn) is not None]
    assert refused == [4, 8]


# --- time -------------------------------------------------------------------------

MAX = 8000
HOSTILE = [
    "sk-", "sk-ant-", "ghp_", "github_pat_", "glpat-", "xoxb-", "AKIA", "eyJ", "Bearer ",
    "://a:", "-----BEGIN ", "MIIEpAIBAAKC", "password=", "password: ", "token=", "key=",
    "api_key: ", "my password is 1 ", "密码是", "密码：1 ", "--password ", "token ", "a",
    "1234567890:", "\u200b", "curl -u ", "mysql -p",
]  # fmt: skip
# Generous: the old patterns took 150 ms and more on "sk-" * N; these take a few.
BOUND_MS = 40.0


def worst_ms(gate: HygieneGate, text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        refusal(text, gate)
        best = min(best, (time.perf_counter() - started) * 1000)
    return best


@pytest.mark.parametrize("prefix", HOSTILE)
def test_a_repeated_prefix_costs_the_gate_a_bounded_time(prefix: str) -> None:
    text = (prefix * (MAX // len(prefix) + 1))[:MAX]
    assert worst_ms(GATE, text) < BOUND_MS


def test_a_users_catastrophic_pattern_runs_in_linear_time() -> None:
    """``(a+)+$`` on Python's re takes seconds for 26 a's and a "!"; RE2 takes µs."""
    gate = HygieneGate(HygieneConfig(extra_patterns=[r"(a+)+$"]))
    assert worst_ms(gate, "a" * 26 + "!") < BOUND_MS
    assert worst_ms(gate, "a" * (MAX - 1) + "!") < BOUND_MS
    assert refusal("a" * 30, gate) is not None


def test_a_text_built_to_be_judged_is_refused_as_too_many_places() -> None:
    text = " ".join(f"token{i}=x" for i in range(MOST_MATCHES + 10))[:MAX]
    error = refusal(text)
    assert error is not None
    assert error.code == "hygiene.credential"
    assert TOO_MANY in error.message


def test_a_long_code_paste_with_many_names_is_still_stored() -> None:
    lines = [f"    token_{i} = tokens[{i}]  # the {i}th token of the line" for i in range(60)]
    GATE.check("def split(line):\n" + "\n".join(lines))


@pytest.mark.parametrize("corpus", ["secrets", "ordinary"])
def test_the_search_for_any_rule_first_changes_no_verdict(
    corpus: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Short texts are first searched for all the rules at once; a verdict must be the
    # one the rules give each text on their own, secrets and ordinary text alike, each
    # text also cut short and padded past the bound.
    texts = list(SECRETS.values()) if corpus == "secrets" else list(ORDINARY)
    texts += [text[: len(text) // 2] for text in texts]
    texts += [f"note: {text} (pasted from the chat)" for text in texts]
    first = [credential_scan.find_credential(text) for text in texts]
    monkeypatch.setattr(credential_scan, "ANY_FIRST_BYTES", -1)
    alone = [credential_scan.find_credential(text) for text in texts]
    assert first == alone

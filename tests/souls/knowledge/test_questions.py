"""Unanswered questions: what counts as a question, and what an assistant reply settles."""

from __future__ import annotations

import pytest

from souls.knowledge.questions import PendingQuestion, Settlement, addresses, is_question, settle


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("when is the billing migration?", True),
        ("Did the deploy finish? I need to know", True),
        ("数据库什么时候迁移\uff1f", True),
        ("你明天来吗", True),
        ("你呢。", True),
        ("the deploy finished.", False),
        ("我明天来", False),
        ("", False),
    ],
)
def test_is_question(text: str, asked: bool) -> None:
    assert is_question(text) is asked


def test_a_reply_addresses_a_question_by_its_content_terms() -> None:
    question = "when do we migrate the billing database?"
    assert addresses(question, "The billing database migrates on Friday.")
    assert not addresses(question, "Lunch is at noon.")
    assert addresses("数据库什么时候迁移\uff1f", "数据库周五迁移")
    assert addresses("why?", "because")  # nothing to take up: any reply answers


def test_settle_takes_the_questions_of_the_conversation() -> None:
    pending = [
        PendingQuestion(1, "ann", "s1", "when do we migrate the billing database?"),
        PendingQuestion(2, "ann", "s1", "who owns the backups?"),
        PendingQuestion(3, "bob", "s2", "where are the billing logs?"),
        PendingQuestion(4, "cy", None, "is the billing database on Postgres?"),
    ]
    reply = "The billing database migrates on Friday."
    assert settle(pending, session="s1", reply=reply) == [
        Settlement(1, "answered"),
        Settlement(2, "unanswered"),
    ]
    assert settle(pending, session=None, reply=reply) == [Settlement(4, "answered")]
    assert settle(pending, session="s9", reply=reply) == []

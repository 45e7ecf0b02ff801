# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese fragments)
"""Goal reading against hostile text: the time of ``read_goals`` per event.

Every stored event (up to the hygiene gate's 8,000 characters) is read for goals, plans
and values on the event loop that every soul shares (issue 19: one soul never stalls the
others). Each fragment (the trigger of a goal or state rule, English or Chinese, or what
a match asks of its sentence) is repeated to 1,000 and to 8,000 characters, one sentence
with no end, and timed in this process, best of ``--runs``; then the same for ordinary
text, LoCoMo turns joined to 8,000 characters when ``--data`` is given. Printed per
fragment: ms at 1k and 8k and their ratio (about 8 for linear code); the worst and the
median close the table.

    python bench/goal_talk.py [--runs 7] [--data ../shared/data/locomo/locomo10-dev.json]
        [--json FILE]
"""

from __future__ import annotations

import sys
from pathlib import Path

from extraction import report

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from souls.knowledge.goal_talk import read_goals

# The trigger of every pattern of goal_talk's _NEW and _STATE, and what a match asks of
# its sentence (quotes, conditions, clause ends, horizons), English then Chinese.
FRAGMENTS = [
    *("my goal is to |my goal this year is to |our dream is that we |my plan is to "
      "|I'm saving for |I'm training for |we're working towards |I'm saving up to "
      "|I'm determined to |I'm planning to |I plan to |I intend to |I've decided to "
      "|I made up my mind to |I want to |I'd love to |I hope to |I want to run this year "
      "|I'm going to |I'll |I will |I believe in |I believe that people |I refuse to "
      "|I don't believe in |I'm a firm believer in |I value |it's important to me to "
      "|I've finally |I finally ran |I did it |I've reached my goal |I gave up on "
      "|I've decided not to |I'm not going to |I'm not going to run anymore "
      "|I don't want to |I dropped |I changed my mind about |I put |I put it on hold "
      "|I'm taking a break from |I've been training |I'm making progress on |so far I've "
      "|if I |\"I want to |she said |but |, |this year |by June |someday |you |sk-|I "
      "|I|a|a |? |. |... ").split("|"),
    *("我的目标是|我们今年的目标是|我的计划是|我在存钱|我打算|我们打算明年|我想|我希望|我要"
      "|我准备|我坚持|我拒绝|我相信|我的原则是|我终于|我终于跑完了|我做到了|我放弃了|我不打算"
      "|我暂停了|先放一放|我已经在存|如果我|的话|他说|但是|，|今年|吗|我|。").split("|"),
]  # fmt: skip


def main() -> None:
    report(read_goals, FRAGMENTS, "I want to ", 10.0)


if __name__ == "__main__":
    main()

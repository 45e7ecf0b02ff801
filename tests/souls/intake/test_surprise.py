# ruff: noqa: RUF001  (full-width punctuation is part of the Chinese texts under test)
"""Surprise (souls.intake.surprise): novelty over content words against the summary's
vocabulary, the novel tokens a reply lists, and the config (no count-based cooldown)."""

from __future__ import annotations

import msgspec
import pytest

from souls.intake.surprise import MAX_NOVEL, SurpriseConfig, WorldModel
from souls.text.tokenize import tokens

# What the extractive reflector made of an ops channel's routine morning.
SUMMARY = """\
## Notable
- ok the deploy 28 to prod succeeded again (\u00d77) [m1, m28]
- deploy 29 to prod succeeded, all green (\u00d77) [m2, m29]
- the deploy 30 to prod succeeded (\u00d78) [m3, m30]
"""


def novelty(text: str, summary: str = SUMMARY) -> float:
    return WorldModel(summary).novelty(tokens(text))


def test_the_failure_after_routine_deploys_is_measured_on_its_content_words() -> None:
    # "the", "to" and the build number are in every line: counted, they would dilute
    # the failure to 5 new tokens of 9 (0.56). Content words: fail, databas, migrat,
    # timeout new; deploy, prod known.
    failure = "the deploy 31 to prod failed: database migration timeout"
    assert novelty(failure) == pytest.approx(4 / 6, abs=1e-4)
    assert novelty(failure) > SurpriseConfig().threshold
    assert WorldModel(SUMMARY).novel(tokens(failure)) == ["fail", "databas", "migrat", "timeout"]


@pytest.mark.parametrize(
    "routine",
    [
        "the deploy 31 to prod succeeded",
        "deploy #32 to prod succeeded, all green again",
        "ok ok the deploy 33 to prod succeeded \U0001f44d",
    ],
)
def test_routine_is_no_surprise_whatever_its_number_and_fillers(routine: str) -> None:
    assert novelty(routine) == 0.0
    assert WorldModel(SUMMARY).novel(tokens(routine)) == []


def test_an_event_of_fillers_only_is_measured_on_all_its_tokens() -> None:
    assert novelty("haha yes!!") == 1.0  # neither word is in the summary
    assert novelty("ok thanks!!") == 0.5  # "ok" is
    assert WorldModel("- ok thanks [m1]").novelty(tokens("ok thanks!!")) == 0.0
    assert WorldModel("").novelty([]) == 0.0
    assert WorldModel("").novel(tokens("hello")) == ["hello"]


def test_repeats_count_and_chinese_is_measured_too() -> None:
    world = WorldModel("## Notable\n- 第30次部署成功 [m30]")
    # 失败, 数据库 and 迁移超时 are new; 部署 and the characters of 第 次 are known.
    assert novelty("第31次部署失败：数据库迁移超时", "## Notable\n- 第30次部署成功 [m30]") > 0.65
    assert world.novelty(tokens("第31次部署成功")) == 0.0
    repeated = WorldModel("- the migration ran [m1]").novelty(tokens("migration migration timeout"))
    assert repeated == pytest.approx(1 / 3, abs=1e-4)


def test_the_novel_tokens_are_distinct_in_order_and_capped() -> None:
    text = " ".join(f"word{chr(97 + i % 26)}{i // 26}x" for i in range(60))
    novel = WorldModel("").novel(tokens(text))
    assert len(novel) == MAX_NOVEL
    assert novel == list(dict.fromkeys(tokens(text)))[:MAX_NOVEL]


def test_the_count_based_cooldown_is_gone_and_the_storm_guard_is_checked() -> None:
    with pytest.raises(msgspec.ValidationError, match="cooldown"):
        msgspec.convert({"threshold": 0.65, "cooldown": 5}, SurpriseConfig)
    assert SurpriseConfig(storm_reflects=0).storm_reflects == 0
    for bad in ({"storm_reflects": -1}, {"storm_window": -1.0}, {"threshold": 1.5}):
        with pytest.raises(ValueError, match=r"storm|threshold"):
            SurpriseConfig(**bad)  # type: ignore[arg-type]

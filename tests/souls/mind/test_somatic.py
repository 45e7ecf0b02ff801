"""The somatic configuration (souls.mind.somatic): validated on construction, decoded from
TOML-shaped data."""

from __future__ import annotations

import msgspec
import pytest

import souls.mind.somatic
from souls.mind.appraisal import Appraisal, appraise
from souls.mind.somatic import SomaticConfig


def test_public_surface() -> None:
    assert souls.mind.somatic.__all__ == ["SomaticConfig"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"negative_words": ["error", " "]},
        {"negative_words": ["meh"], "positive_words": ["MEH"]},
        {"max_topics_per_event": 0},
        {"nightly_decay": 0.0},
        {"nightly_decay": 1.5},
        {"prune_below": -1.0},
        {"inject_limit": -1},
    ],
)
def test_config_validation(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        SomaticConfig(**kwargs)  # type: ignore[arg-type]


def test_config_decodes_from_toml_shaped_data_and_rejects_unknown_keys() -> None:
    config = msgspec.convert({"positive_words": ["yay"], "inject_limit": 2}, SomaticConfig)
    assert appraise("yay, the build", 0.5, config) == Appraisal(
        valence="positive", topics=("build",), weight=0.5, labels=("build",)
    )
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"inject_limt": 2}, SomaticConfig)

"""The bilingual domain lexicon: domainHit by the words of a domain, in either language."""

from __future__ import annotations

import pytest

from souls.knowledge.domains import DOMAIN_LEXICON, concepts, domain_of, domains_in, hits

SEED_DOMAINS = (
    "money family career health travel belief lifestyle art education community relationship"
)


def test_the_seed_domains_are_all_there_in_both_languages() -> None:
    for domain in SEED_DOMAINS.split():
        words = DOMAIN_LEXICON[domain]
        assert any(w.isascii() for w in words), domain
        assert any(not w.isascii() for w in words), domain


@pytest.mark.parametrize(
    ("text", "domain"),
    [
        ("How should I budget this month?", "money"),
        ("这个月房贷压力好大", "money"),
        ("my mom is visiting", "family"),
        ("面试又挂了", "career"),
        ("knee hurts after the marathon", "health"),
        ("我们下个月去日本旅行", "travel"),
        ("gossip about Jen again", "belief"),
        ("想培养早起的习惯", "lifestyle"),
        ("guitar lessons are fun", "art"),
        ("考研复习中", "education"),
        ("volunteering at the shelter", "community"),
        ("我和男朋友分手了", "relationship"),
    ],
)
def test_a_situation_hits_its_domain(text: str, domain: str) -> None:
    assert domain in domains_in(text)
    assert hits(domain, text)


def test_whole_words_only_and_unknown_domains_hit_literally() -> None:
    assert not hits("money", "the rental car was fine")  # "rental" is no "rent"
    assert hits("money", "the rent went up")
    assert not hits("money", "")
    assert hits("garden", "the garden needs water")
    assert not hits("garden", "water it")
    assert not hits("", "money")


def test_domain_of_and_concepts() -> None:
    assert domain_of("run a half marathon") == "health"
    assert domain_of("the weather is nice") == ""
    assert concepts("we gave up on the house") == concepts("明年买房") == {"house"}
    assert concepts("跑完了半马") == {"marathon"}

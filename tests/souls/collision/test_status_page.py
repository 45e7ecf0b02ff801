"""The status page as HTML: user text escaped (the page runs no script), the tide's
Markdown rendered, weights on one absolute scale, empty states, a legend."""

from __future__ import annotations

import re

from souls.collision.cards import Card
from souls.collision.collider import Collision
from souls.collision.status_page import VERDICT_COLOURS, render_status_page

PWN = "<script>alert(1)</script><img src=x onerror=alert(2)>"
NO_VERDICTS = {"strong": 0, "approve": 0, "neutral": 0, "oppose": 0}


def card(number: int, title: str = "t") -> Card:
    return Card(number, "card", title, "manual", 0.0, ["c"], ["q?"], [], [], [])


def collision(draw: int, topic: str, presented: bool = True) -> Collision:
    return Collision(
        draw, 7, topic, [1, 2], 2, presented, "answers_question" if presented else None,
        [], "soupd lightning ada --as-of 1", 1_800_000_000.0,
    )  # fmt: skip


def page(
    weights: dict[int, float],
    *,
    titles: dict[int, str] | None = None,
    draws: list[Collision] | None = None,
    verdicts: dict[str, int] | None = None,
    tide: str = "# Tide\n\n- none\n",
) -> str:
    cards = [card(n, (titles or {}).get(n, f"t{n}")) for n in sorted(weights)]
    return render_status_page(
        "ada", cards, weights, draws or [], verdicts or NO_VERDICTS, tide, "stamp"
    )


def bar_widths(html: str) -> list[int]:
    return [int(w) for w in re.findall(r"class=bar style='width:(\d+)px'", html)]


def test_user_text_is_escaped_and_runs_nothing() -> None:
    html = page(
        {1: 1.0, 2: 1.0},
        titles={1: PWN},
        draws=[collision(1, PWN)],
        tide=f"# Tide\n\n**Reconciliation incomplete:** {PWN}\n\n- card 0001: {PWN}\n",
    )
    assert "<script" not in html
    assert "<img" not in html
    # the title, the topic, the two tide lines
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 4
    assert "<strong>Reconciliation incomplete:</strong>" in html
    assert "**" not in html
    assert "<ul>\n<li>card 0001:" in html


def test_weights_sit_on_one_absolute_scale() -> None:
    alone = bar_widths(page({1: 1.0, 2: 1.0}))
    beside_a_heavy_card = bar_widths(page({1: 1.0, 2: 16.0}))
    assert alone[0] == beside_a_heavy_card[0]  # the same weight, the same bar
    assert beside_a_heavy_card[1] > beside_a_heavy_card[0]
    floor, double, beyond = bar_widths(page({1: 0.1, 2: 2.0, 3: 500.0}))
    assert floor >= 6  # the lightest card still has a bar to see
    assert floor < alone[0] < double < beyond
    assert "500.00+" in page({1: 500.0})  # beyond the axis: said so


def test_three_hundred_cards_each_get_a_bar() -> None:
    weights = {n: 0.1 + (n % 7) for n in range(1, 301)}
    html = page(weights)
    widths = bar_widths(html)
    assert len(widths) == 300
    assert min(widths) >= 6
    assert html.count("<svg") == 1  # the histogram; no 300-row chart


def test_verdicts_have_distinct_colours_and_a_legend() -> None:
    assert len(set(VERDICT_COLOURS.values())) == 4
    html = page({1: 1.0}, verdicts={"strong": 1, "approve": 2, "neutral": 0, "oppose": 3})
    for verdict, colour in VERDICT_COLOURS.items():
        assert f"data-label='{verdict}'" in html
        assert f"fill='{colour}'" in html
        assert f"background:{colour}'></span>{verdict}</li>" in html  # the legend
    assert "How to read this page" in html


def test_an_empty_deck_says_so() -> None:
    html = render_status_page("ada", [], {}, [], NO_VERDICTS, "", "stamp")
    for said in ("No cards yet", "No draws yet", "No verdicts yet", "No tide yet"):
        assert said in html
    assert "<svg" not in html
    assert "<table" not in html

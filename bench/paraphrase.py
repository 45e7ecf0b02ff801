# ruff: noqa: RUF001  (full-width punctuation is how a Chinese user writes)
"""Paraphrase probes: questions worded the way people ask, over probe souls written for
this benchmark (nothing from LoCoMo), through the real daemon with embeddings off and
on, beside bm25s and a dense model alone.

Four souls, each a few hundred events with a handful of facts among everyday filler:

* ``ops``: an ops bot's feed, 300 ``deploy N ok`` and one failure among alerts, backups,
  certificates and an on-call rota;
* ``assistant``: one person's chat with her assistant, facts (an allergy, a nephew, a
  move, a profession, meat given up, an engagement, ...) among errands and small talk;
* ``changes``: facts that change (a move, a new phone number, a renamed dog, a new
  employer, a new email), each stated, later replaced;
* ``chinese``: a Chinese-speaking user's chat, facts and questions in Chinese.

A probe is a question and the words that identify its memory (``target``); a changed-fact
probe also names the memory it replaced (``older``). ``hit@5``: the target is among the
first 5 recalled; ``newer first``: the target ranks above the older memory (or the older
is not recalled at all) in the first 10. soupd runs once with ``provider = "none"``
(``off``) and once with ``provider = "openai"`` against all-MiniLM-L6-v2 served on loopback
(``on``, :mod:`_minilm`); bm25s (English stopwords, Snowball stems) and MiniLM alone (cosine
over the texts) rank the same texts.

    python bench/paraphrase.py [--json] [--show-misses]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import _minilm
from _daemon import machine, running_daemon

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
K = 10


@dataclass
class Probe:
    question: str
    target: str  # a substring of the memory that answers it, and of no other
    older: str | None = None  # the memory the target replaced (changed-fact probes)


@dataclass
class Soul:
    name: str
    events: list[dict[str, Any]] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)

    def say(self, text: str, sender: str, at: float, kind: str = "message") -> None:
        self.events.append(
            {"text": text, "sender": sender, "ts": at, "kind": kind, "ref": f"e{len(self.events)}"}
        )


def _interleave(soul: Soul, filler: Sequence[tuple[str, str]], facts: Sequence[tuple[str, str]],
                rng: random.Random, start: float, step: float) -> None:  # fmt: skip
    """Filler turns with the facts spread among them, in the order given."""
    slots = sorted(rng.sample(range(len(filler)), len(facts)))
    fact_at = dict(zip(slots, facts, strict=True))
    at = start
    for i, (sender, text) in enumerate(filler):
        if i in fact_at:
            fact_sender, fact = fact_at[i]
            soul.say(fact, fact_sender, at)
            at += step
        soul.say(text, sender, at)
        at += step


# -- ops ------------------------------------------------------------------------------


def ops() -> Soul:
    soul = Soul("ops")
    rng = random.Random(3)
    feed: list[tuple[str, str]] = []
    for n in range(1, 301):
        feed.append(("ci", f"deploy {n} ok"))
        if n % 25 == 0:
            feed.append(("monitor", f"nightly health check {n // 25} passed, all services green"))
    facts = [
        ("ci", "deploy 187 failed: database migration timeout"),
        ("monitor", "disk usage on db-2 at 91%, threshold is 85%"),
        ("monitor", "TLS certificate for api.example.com renewed, valid until 2026-09-30"),
        ("ci", "rollback of release 4.2 completed after the checkout errors"),
        ("pager", "on-call handover: Priya holds the pager until Monday"),
        ("monitor", "backup of the orders database finished in 42 minutes"),
        ("monitor", "latency alert: checkout p99 above 2 s for 5 minutes"),
        ("monitor", "memory leak suspected in the image resizer, RSS grew to 3 GB overnight"),
    ]
    _interleave(soul, feed, facts, rng, T0, 300.0)
    soul.probes = [
        Probe("any deploy failures?", "deploy 187 failed"),
        Probe("did a deployment break?", "deploy 187 failed"),
        Probe("is any server running out of storage?", "disk usage on db-2"),
        Probe("was the SSL cert renewed?", "TLS certificate"),
        Probe("did we revert a release?", "rollback of release 4.2"),
        Probe("who is on call right now?", "Priya holds the pager"),
        Probe("how long did the last backup take?", "backup of the orders"),
        Probe("was checkout slow at some point?", "latency alert"),
        Probe("is some service using too much RAM?", "memory leak"),
    ]
    return soul


# -- a personal assistant ---------------------------------------------------------------

_ERRANDS = [
    "remind me to buy milk on the way home",
    "set a timer for {n} minutes",
    "what's the weather like tomorrow",
    "can you summarise this article for me",
    "add eggs and bread to the shopping list",
    "what time does the pharmacy close",
    "ugh, the tram was late again this morning",
    "the neighbours are loud tonight",
    "I need a gift idea for a colleague who likes gardening",
    "my laptop is so slow today",
    "is it going to rain this weekend",
    "what's a good recipe with leftover rice",
    "book a table for two on Friday at 8",
    "how many steps did I walk today",
    "play something calm, I need to focus",
    "what's on my calendar for {day}",
    "remind me to call the dentist at {n} o'clock",
    "translate 'see you soon' into Italian",
    "how long does it take to boil an egg",
    "I finished the book you suggested, it was lovely",
]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_REPLIES = [
    "Done, it's on your list.",
    "Sure, I've set that up.",
    "Here's what I found.",
    "Okay! Anything else?",
    "Noted.",
]


def _chat(rng: random.Random, person: str, turns: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for _ in range(turns):
        text = rng.choice(_ERRANDS).format(n=rng.randint(2, 11), day=rng.choice(_DAYS))
        out.append((person, text))
        if rng.random() < 0.5:
            out.append(("assistant", rng.choice(_REPLIES)))
    return out


def assistant() -> Soul:
    soul = Soul("assistant")
    rng = random.Random(5)
    facts = [
        ("maya", "I'm allergic to peanuts, so no satay for me please"),
        ("maya", "My sister's boy Theo turned six yesterday, we had cake in the park"),
        ("maya", "We moved to Leipzig in March and I'm still unpacking boxes"),
        ("maya", "Long shift today, I work as a pediatric nurse at the children's hospital"),
        ("maya", "I stopped eating meat last spring and honestly I don't miss it"),
        ("maya", "Jonas proposed on Saturday and I said yes!"),
        ("maya", "Pixel knocked my plant over again, that cat is a menace"),
        ("maya", "I'm training for the Berlin half marathon in October"),
        ("maya", "My little red Fiat failed its inspection, the brakes need work"),
        ("maya", "Horror films give me nightmares, I never watch them"),
        ("maya", "Mum still lives in Porto, I call her every Sunday"),
        ("maya", "Cello lesson went well, I can finally play a whole scale"),
        ("maya", "I'm saving up for a trip to Japan next spring"),
    ]
    _interleave(soul, _chat(rng, "maya", 260), facts, rng, T0, 1800.0)
    soul.probes = [
        Probe("does Maya have any allergies?", "allergic to peanuts"),
        Probe("what's her nephew called?", "Theo turned six"),
        Probe("which city did she relocate to?", "moved to Leipzig"),
        Probe("what is her profession?", "pediatric nurse"),
        Probe("is Maya a vegetarian?", "stopped eating meat"),
        Probe("is she engaged?", "Jonas proposed"),
        Probe("what's the name of her cat?", "Pixel knocked"),
        Probe("is she preparing for a race?", "half marathon"),
        Probe("what car does Maya drive?", "red Fiat"),
        Probe("which kind of movies does she avoid?", "Horror films"),
        Probe("where is her mother based?", "Mum still lives in Porto"),
        Probe("does she play a musical instrument?", "Cello lesson"),
        Probe("where does she want to go on holiday?", "trip to Japan"),
    ]
    return soul


# -- facts that change ------------------------------------------------------------------


def changes() -> Soul:
    soul = Soul("changes")
    rng = random.Random(7)
    first = [
        ("tom", "I live in Paris, in a tiny flat near the canal"),
        ("tom", "My phone number is 0612 345 678 if the courier asks"),
        ("tom", "Our dog is called Rex, he's a scruffy terrier"),
        ("tom", "I work at Siemens in the energy division"),
        ("tom", "My email is tom.b@oldmail.example"),
    ]
    later = [
        ("tom", "We moved from Paris to Lyon in June, the new flat has a balcony"),
        ("tom", "New phone number: 0798 765 432, the old one is cancelled"),
        ("tom", "We renamed the dog, he's called Bruno now"),
        ("tom", "I left Siemens and joined Bosch last month"),
        ("tom", "My new email address is tom@newmail.example"),
    ]
    chat = _chat(rng, "tom", 200)
    half = len(chat) // 2
    part = Soul("changes")
    _interleave(part, chat[:half], first, rng, T0, 1800.0)
    _interleave(part, chat[half:], later, rng, T0 + 1800.0 * (half + 10), 1800.0)
    soul.events = part.events
    soul.probes = [
        Probe("where do I live?", "from Paris to Lyon", older="I live in Paris"),
        Probe("what's my phone number?", "0798 765 432", older="0612 345 678"),
        Probe("what is my dog's name?", "called Bruno", older="called Rex"),
        Probe("who is my employer?", "joined Bosch", older="I work at Siemens"),
        Probe("what's my email?", "tom@newmail", older="tom.b@oldmail"),
    ]
    return soul


# -- a Chinese-speaking user ------------------------------------------------------------

_ZH_FILLER = [
    "今天天气怎么样",
    "提醒我下班买牛奶",
    "帮我定一个{n}分钟的闹钟",
    "地铁又晚点了，真烦",
    "周末会下雨吗",
    "推荐一个简单的晚饭菜谱",
    "帮我查一下快递到哪了",
    "楼上邻居今晚好吵",
    "明天早上八点叫我起床",
    "这篇文章帮我总结一下",
    "我的电脑今天特别慢",
    "帮我把会议改到下午{n}点",
]
_ZH_REPLIES = ["好的，已经设置好了。", "没问题。", "这是我找到的信息。", "收到！"]


def chinese() -> Soul:
    soul = Soul("chinese")
    rng = random.Random(11)
    chat: list[tuple[str, str]] = []
    for _ in range(220):
        chat.append(("lin", rng.choice(_ZH_FILLER).format(n=rng.randint(2, 9))))
        if rng.random() < 0.5:
            chat.append(("assistant", rng.choice(_ZH_REPLIES)))
    facts = [
        ("lin", "我对花生过敏，吃了会起疹子"),
        ("lin", "我们上个月搬到了杭州，新家离西湖很近"),
        ("lin", "我在一家医院当护士，经常上夜班"),
        ("lin", "我养了一只猫叫团子，特别黏人"),
        ("lin", "我已经两年不吃肉了"),
        ("lin", "男朋友昨天向我求婚了，我答应了！"),
        ("lin", "下个月我要去日本旅行，已经订好机票了"),
        ("lin", "我每天早上跑步五公里"),
    ]
    _interleave(soul, chat, facts, rng, T0, 1800.0)
    soul.probes = [
        Probe("她对什么东西过敏？", "花生过敏"),
        Probe("她现在住在哪个城市？", "搬到了杭州"),
        Probe("她是做什么工作的？", "当护士"),
        Probe("她的宠物叫什么名字？", "团子"),
        Probe("她吃素吗？", "不吃肉"),
        Probe("她订婚了吗？", "求婚"),
        Probe("她最近打算去哪里玩？", "日本旅行"),
        Probe("她平时怎么锻炼身体？", "跑步五公里"),
    ]
    return soul


SOULS = [ops, assistant, changes, chinese]


# -- the systems ------------------------------------------------------------------------


async def _call(reader: Any, writer: Any, method: str, params: dict[str, Any]) -> Any:
    writer.write(json.dumps({"id": 1, "method": method, "params": params}).encode() + b"\n")
    await writer.drain()
    reply = json.loads(await reader.readline())
    if "error" in reply:
        raise RuntimeError(f"{method}: {reply['error']}")
    return reply["result"]


async def soupd_rankings(socket_path: str, souls: list[Soul], suffix: str,
                         embedded: bool) -> dict[str, list[list[str]]]:  # fmt: skip
    """Per soul, per probe: the texts recalled (k = 10), best first."""
    reader, writer = await asyncio.open_unix_connection(socket_path, limit=1 << 24)
    out: dict[str, list[list[str]]] = {}
    try:
        for soul in souls:
            name = f"{soul.name}-{suffix}"
            result = await _call(
                reader, writer, "event.import", {"soul": name, "events": soul.events}
            )
            stored = result["stored"]
            if embedded:
                while True:
                    stats = (await _call(reader, writer, "soul.stats", {"soul": name}))["embedding"]
                    if stats.get("vectors", 0) >= stored:
                        break
                    if stats.get("state") == "failing":
                        raise RuntimeError(f"{name}: embedding fails: {stats}")
                    await asyncio.sleep(0.3)
            rankings = []
            for probe in soul.probes:
                reply = await _call(
                    reader, writer, "recall", {"soul": name, "query": probe.question, "k": K}
                )
                rankings.append(
                    [item["text"] for item in reply["items"] if item.get("kind") != "goal"]
                )
            out[soul.name] = rankings
    finally:
        writer.close()
    return out


def bm25s_rankings(souls: list[Soul]) -> dict[str, list[list[str]]] | None:
    try:
        import bm25s
        import Stemmer
    except ImportError:
        return None
    stemmer = Stemmer.Stemmer("english")
    out = {}
    for soul in souls:
        texts = [e["text"] for e in soul.events]
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
                        show_progress=False)  # fmt: skip
        rankings = []
        for probe in soul.probes:
            query = bm25s.tokenize(
                [probe.question], stopwords="en", stemmer=stemmer, show_progress=False
            )
            if not query.vocab:
                rankings.append([])
                continue
            docs, scores = retriever.retrieve(query, k=K, show_progress=False)
            rankings.append([texts[d] for d, s in zip(docs[0], scores[0], strict=True) if s > 0])
        out[soul.name] = rankings
    return out


def dense_rankings(souls: list[Soul]) -> dict[str, list[list[str]]]:
    out = {}
    for soul in souls:
        texts = [e["text"] for e in soul.events]
        matrix = _minilm.encode(texts)
        questions = _minilm.encode([p.question for p in soul.probes])
        rankings = []
        for row in questions @ matrix.T:
            rankings.append([texts[i] for i in (-row).argsort()[:K]])
        out[soul.name] = rankings
    return out


def score(souls: list[Soul], rankings: dict[str, list[list[str]]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    hits = total = newer = changed = 0
    for soul in souls:
        got = 0
        misses = []
        for probe, ranking in zip(soul.probes, rankings[soul.name], strict=True):
            where = [i for i, text in enumerate(ranking) if probe.target in text]
            if where and where[0] < 5:
                got += 1
            else:
                misses.append(probe.question)
            if probe.older is not None:
                changed += 1
                older = [i for i, text in enumerate(ranking) if probe.older in text]
                if where and (not older or where[0] < older[0]):
                    newer += 1
        table[soul.name] = {"hit@5": round(100 * got / len(soul.probes), 1), "n": len(soul.probes),
                            "misses": misses}  # fmt: skip
        hits += got
        total += len(soul.probes)
    table["overall"] = {"hit@5": round(100 * hits / total, 1), "n": total}
    table["newer_first"] = {"share": round(100 * newer / changed, 1), "n": changed}
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    souls = [make() for make in SOULS]
    results: dict[str, dict[str, Any]] = {}
    with _minilm.serving() as (url, _served):
        on = f'[embedding]\nprovider = "openai"\nmodel = "{_minilm.MODEL}"\nbase_url = "{url}"\n'
        config = {f"{s.name}-off": "" for s in souls} | {f"{s.name}-on": on for s in souls}
        with running_daemon(config) as daemon:
            off_rank = asyncio.run(soupd_rankings(str(daemon.socket), souls, "off", False))
            on_rank = asyncio.run(soupd_rankings(str(daemon.socket), souls, "on", True))
        results["soupd, embeddings off"] = score(souls, off_rank)
        results["soupd, embeddings on (MiniLM)"] = score(souls, on_rank)
        plain = bm25s_rankings(souls)
        if plain is not None:
            results["bm25s"] = score(souls, plain)
        results["MiniLM alone"] = score(souls, dense_rankings(souls))
    if args.json:
        print(json.dumps({"results": results, "machine": machine()}, indent=2))
        return
    names = [s.name for s in souls] + ["overall"]
    print(f"{'hit@5 (%)':<32}" + "".join(f"{n:>11}" for n in names) + f"{'newer first':>13}")
    for system, table in results.items():
        cells = "".join(f"{table[n]['hit@5']:>11.1f}" for n in names)
        print(f"{system:<32}{cells}{table['newer_first']['share']:>12.1f}%")
    print("probes: " + ", ".join(f"{s.name} {len(s.probes)}" for s in souls)
          + "; events: " + ", ".join(f"{s.name} {len(s.events)}" for s in souls))  # fmt: skip
    if args.show_misses:
        for system, table in results.items():
            for n in names[:-1]:
                if table[n]["misses"]:
                    print(f"  {system} / {n} missed: {table[n]['misses']}")


if __name__ == "__main__":
    main()

"""Evidence recall on LoCoMo: soupd's recall beside plain BM25 (bm25s), no LLM anywhere.

For each conversation of the benchmark file a fresh soul in a real daemon receives every
turn through ``event.import`` over the socket (``ref`` = the turn's dia_id, ``sender`` =
its speaker, ``ts`` = its session's date-time, ``session`` = the session key, the image
caption appended as ``[shares <caption>]``). Each question of categories 1-4 with at least
one valid evidence id is then recalled with k = 50; the recalled items' refs, in order and
de-duplicated, are the ranking. recall@k = |evidence ∩ top-k| / |evidence|, averaged over
questions; session-hit@5 = share of questions with a top-5 turn from an evidence session.

The same questions are run against bm25s (English stopwords, Snowball stemming, one
document per turn, "speaker: text", one index per conversation) for the plain figures,
as in the data README's table. ``--embedding PROVIDER[:MODEL]`` runs the souls with the
semantic layer on (DESIGN §3.12): after each import it waits until every turn has its
vector (they are made behind the acks), and prints the embedder's figures per soul.

    python bench/locomo.py --data ../shared/data/locomo/locomo10-dev.json [--json]
        [--conversations conv-26 conv-30] [--soul-toml 'cognition = false']
        [--embedding openai:MODEL --embedding-url http://127.0.0.1:8080/v1]
        [--serve-minilm]

``--serve-minilm`` serves all-MiniLM-L6-v2 (the ``bench`` extra) on loopback as an
OpenAI-compatible embeddings endpoint and runs the souls with ``provider = "openai"``
against it (the path a real embeddings server takes); ``--embedding
sentence-transformers:minilm`` runs the same model in the daemon's process instead.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from _daemon import percentile, running_daemon

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
CUTS = (1, 5, 10, 20)
K = 50
_DIA = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: str
    when: str  # ISO 8601


@dataclass
class Question:
    text: str
    category: int
    evidence: list[str]


@dataclass
class Conversation:
    name: str
    turns: list[Turn]
    questions: list[Question]


def session_time(value: str) -> str:
    """ "1:56 pm on 8 May, 2023" → "2023-05-08T13:56:00" (no zone: UTC)."""
    cleaned = " ".join(value.replace(",", " ").split())
    return datetime.strptime(cleaned, "%I:%M %p on %d %B %Y").isoformat()


def evidence_ids(raw: Iterable[str], known: set[str]) -> list[str]:
    """Normalised evidence ("D8:6; D9:17", "D:11:26", "D30:05"), only turns that exist."""
    found: list[str] = []
    for item in raw:
        for session, turn in _DIA.findall(str(item)):
            dia_id = f"D{int(session)}:{int(turn)}"
            if dia_id in known and dia_id not in found:
                found.append(dia_id)
    return found


def load(path: str) -> list[Conversation]:
    with open(path) as handle:
        samples = json.load(handle)
    conversations = []
    for sample in samples:
        talk = sample["conversation"]
        sessions = sorted(
            (key for key, value in talk.items() if re.fullmatch(r"session_\d+", key) and value),
            key=lambda key: int(key.split("_")[1]),
        )
        turns = []
        for key in sessions:
            when = session_time(talk[f"{key}_date_time"])
            for turn in talk[key]:
                text = turn["text"]
                if turn.get("blip_caption"):
                    text = f"{text} [shares {turn['blip_caption']}]"
                turns.append(Turn(turn["dia_id"], turn["speaker"], text, key, when))
        known = {turn.dia_id for turn in turns}
        questions = []
        for qa in sample["qa"]:
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = evidence_ids(qa.get("evidence", []), known)
            if evidence:
                questions.append(Question(qa["question"], qa["category"], evidence))
        conversations.append(Conversation(sample["sample_id"], turns, questions))
    return conversations


@dataclass
class Run:
    """Rankings of one system: per question, (conversation, question, dia_ids)."""

    rankings: list[tuple[str, Question, list[str]]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)  # seconds, one per question
    inside: dict[str, float] = field(default_factory=dict)  # soupd's own timer


def recall_at(ranking: Sequence[str], evidence: Sequence[str], k: int) -> float:
    top = set(ranking[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


def session_of(dia_id: str) -> str:
    return dia_id.split(":")[0]


def figures(run: Run) -> dict[str, Any]:
    groups: dict[str, list[tuple[Question, list[str]]]] = defaultdict(list)
    by_conversation: dict[str, list[tuple[Question, list[str]]]] = defaultdict(list)
    for name, question, ranking in run.rankings:
        groups[CATEGORIES[question.category]].append((question, ranking))
        groups["overall"].append((question, ranking))
        by_conversation[name].append((question, ranking))

    def table(rows: list[tuple[Question, list[str]]]) -> dict[str, float]:
        out = {
            f"R@{k}": round(100 * sum(recall_at(r, q.evidence, k) for q, r in rows) / len(rows), 1)
            for k in CUTS
        }
        hits = sum(
            1
            for q, r in rows
            if {session_of(d) for d in r[:5]} & {session_of(e) for e in q.evidence}
        )
        out["session@5"] = round(100 * hits / len(rows), 1)
        out["n"] = len(rows)
        return out

    result: dict[str, Any] = {
        "categories": {name: table(rows) for name, rows in groups.items()},
        "conversations": {name: table(rows) for name, rows in sorted(by_conversation.items())},
    }
    if run.latencies:
        result["latency_ms"] = {
            "p50": round(percentile(run.latencies, 50) * 1000, 3),
            "p95": round(percentile(run.latencies, 95) * 1000, 3),
        }
    if run.inside:
        result["latency_ms"].update(run.inside)
    return result


# -- soupd -----------------------------------------------------------------------------


class Client:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.next_id = 0

    async def call(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        frame = {"id": self.next_id, "method": method, "params": params}
        self.writer.write(json.dumps(frame).encode() + b"\n")
        await self.writer.drain()
        reply = json.loads(await self.reader.readline())
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]


def event_of(soul: str, turn: Turn) -> dict[str, Any]:
    """A turn as the event a channel would push: its dia_id as ref, its speaker as sender,
    its session's date as ts."""
    return {
        "soul": soul,
        "text": turn.text,
        "ref": turn.dia_id,
        "sender": turn.speaker,
        "ts": turn.when,
        "session": turn.session,
    }


def soul_name(conversation: Conversation) -> str:
    return re.sub(r"[^a-z0-9]+", "-", conversation.name.lower()).strip("-") or "conversation"


async def embedded(client: Client, soul: str, memories: int, limit: float = 3600.0) -> None:
    """Wait until every memory of ``soul`` has its vector (the embedder works behind the
    ack); fail past ``limit`` seconds, or once the provider fails with nothing embedded."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        figures = (await client.call("soul.stats", {"soul": soul}))["embedding"]
        if figures.get("vectors", 0) >= memories:
            return
        if figures.get("state") == "failing" and not figures.get("vectors"):
            raise RuntimeError(f"{soul}: the embedding provider fails: {figures}")
        await asyncio.sleep(0.2)
    raise RuntimeError(f"{soul}: not embedded within {limit} s")


async def run_soupd(
    socket_path: str, conversations: Sequence[Conversation], embedding: bool = False
) -> Run:
    reader, writer = await asyncio.open_unix_connection(socket_path, limit=1 << 24)
    client = Client(reader, writer)
    run = Run()
    inside_50, inside_95 = [], []
    try:
        for conversation in conversations:
            soul = soul_name(conversation)
            events = [
                {
                    "text": turn.text,
                    "ref": turn.dia_id,
                    "sender": turn.speaker,
                    "ts": turn.when,
                    "session": turn.session,
                }
                for turn in conversation.turns
            ]
            for start in range(0, len(events), 1000):
                result = await client.call(
                    "event.import", {"soul": soul, "events": events[start : start + 1000]}
                )
                if result["rejected"] or result["dropped"]:
                    print(f"{soul}: import {result}", file=sys.stderr)
            if embedding:
                started = time.perf_counter()
                await embedded(client, soul, len(events))
                took = time.perf_counter() - started
                print(f"{soul}: {len(events)} memories embedded in {took:.1f} s", file=sys.stderr)
            for question in conversation.questions:
                started = time.perf_counter()
                reply = await client.call("recall", {"soul": soul, "query": question.text, "k": K})
                run.latencies.append(time.perf_counter() - started)
                refs = (ref for item in reply["items"] for ref in item["refs"])
                ranking = list(dict.fromkeys(refs))
                run.rankings.append((conversation.name, question, ranking))
            stats = await client.call("soul.stats", {"soul": soul})
            if embedding:
                print(f"{soul}: embedding {stats['embedding']}", file=sys.stderr)
            inside_50.append(stats["recall_p50_ms"])
            inside_95.append(stats["recall_p95_ms"])
    finally:
        writer.close()
    # Each soul's own percentiles, the worst of them (the timer is per soul).
    run.inside = {"inside_p50": max(inside_50), "inside_p95": max(inside_95)}
    return run


# -- plain BM25 --------------------------------------------------------------------------


def run_bm25s(conversations: Sequence[Conversation]) -> Run | None:
    try:
        import bm25s
        import Stemmer
    except ImportError:
        return None
    stemmer = Stemmer.Stemmer("english")
    run = Run()
    for conversation in conversations:
        retriever = bm25s.BM25()
        corpus = bm25s.tokenize(
            [f"{turn.speaker}: {turn.text}" for turn in conversation.turns],
            stopwords="en",
            stemmer=stemmer,
            show_progress=False,
        )
        retriever.index(corpus, show_progress=False)
        ids = [turn.dia_id for turn in conversation.turns]
        k = min(K, len(ids))
        for question in conversation.questions:
            started = time.perf_counter()
            query = bm25s.tokenize(
                [question.text], stopwords="en", stemmer=stemmer, show_progress=False
            )
            if not query.vocab:
                ranking: list[str] = []
            else:
                docs, scores = retriever.retrieve(query, k=k, show_progress=False)
                ranking = [ids[d] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
            run.latencies.append(time.perf_counter() - started)
            run.rankings.append((conversation.name, question, ranking))
    return run


# -- report --------------------------------------------------------------------------------


def render(ours: dict[str, Any], theirs: dict[str, Any] | None) -> str:
    columns = [f"R@{k}" for k in CUTS] + ["session@5"]
    names = [*CATEGORIES.values(), "overall"]
    width = 7 * len(columns)
    lines = [
        f"{'':<12} {'n':>4}  {'soupd':^{width}}  {'bm25s (plain)':^{width}}",
        f"{'':<12} {'':>4}  " + "".join(f"{c:>7}" for c in columns) + "  "
        + "".join(f"{c:>7}" for c in columns),
    ]  # fmt: skip

    def row(label: str, a: dict[str, float] | None, b: dict[str, float] | None) -> str:
        n = (a or b or {}).get("n", 0)
        left = "".join(f"{a[c]:>7.1f}" for c in columns) if a else " " * width
        right = "".join(f"{b[c]:>7.1f}" for c in columns) if b else ""
        return f"{label:<12} {n:>4}  {left}  {right}"

    for name in names:
        lines.append(
            row(
                name,
                ours["categories"].get(name),
                theirs["categories"].get(name) if theirs else None,
            )
        )
    lines.append("")
    lines.append("per conversation:")
    for name in ours["conversations"]:
        lines.append(
            row(
                name,
                ours["conversations"][name],
                theirs["conversations"][name] if theirs else None,
            )
        )
    lines.append("")
    latency = ours["latency_ms"]
    lines.append(
        f"recall latency (ms): soupd socket p50 {latency['p50']:.3f} p95 {latency['p95']:.3f},"
        f" inside p50 {latency['inside_p50']:.3f} p95 {latency['inside_p95']:.3f}"
        + (
            f"; bm25s p50 {theirs['latency_ms']['p50']:.3f} p95 {theirs['latency_ms']['p95']:.3f}"
            if theirs
            else ""
        )
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True, metavar="PATH", help="locomo10 JSON file")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--conversations", nargs="+", metavar="ID", help="only these sample ids (e.g. conv-26)"
    )
    parser.add_argument(
        "--soul-toml", default="", metavar="TOML", help="each soul's TOML (default: empty)"
    )
    parser.add_argument(
        "--embedding",
        metavar="PROVIDER[:MODEL]",
        help="run with the semantic layer on: openai:MODEL (with --embedding-url), "
        "fastembed:MODEL or sentence-transformers:MODEL (pip install '.[semantic]')",
    )
    parser.add_argument(
        "--embedding-url",
        default="http://127.0.0.1:8080/v1",
        metavar="URL",
        help="base_url of the OpenAI-compatible embeddings endpoint (openai only)",
    )
    parser.add_argument(
        "--embedding-key-env", metavar="NAME", help="environment variable holding its API key"
    )
    parser.add_argument(
        "--serve-minilm",
        action="store_true",
        help="serve all-MiniLM-L6-v2 on loopback (OpenAI API) and embed with it",
    )
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        if args.serve_minilm:
            import _minilm

            args.embedding_url, _ = stack.enter_context(_minilm.serving())
            args.embedding = f"openai:{_minilm.MODEL}"
        bench(parser, args)


def bench(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    soul_toml = args.soul_toml
    if args.embedding:
        provider, _, model = args.embedding.partition(":")
        if provider == "sentence-transformers" and model == "minilm":
            import _minilm

            model = _minilm.path()
        table = {"provider": provider, "model": model}
        if provider == "openai":
            table["base_url"] = args.embedding_url
        if args.embedding_key_env:
            table["api_key_env"] = args.embedding_key_env
        soul_toml += "\n[embedding]\n" + "".join(
            f"{key} = {json.dumps(value)}\n" for key, value in table.items()
        )
    conversations = load(args.data)
    if args.conversations:
        wanted = set(args.conversations)
        conversations = [c for c in conversations if c.name in wanted]
        if not conversations:
            parser.error("none of those conversations is in the file")
    souls = {soul_name(c): soul_toml for c in conversations}
    with running_daemon(souls) as daemon:
        run = run_soupd(str(daemon.socket), conversations, embedding=bool(args.embedding))
        ours = figures(asyncio.run(run))
    plain = run_bm25s(conversations)
    theirs = figures(plain) if plain is not None else None
    if args.json:
        print(json.dumps({"soupd": ours, "bm25s": theirs}, indent=2))
    else:
        print(render(ours, theirs))


if __name__ == "__main__":
    main()

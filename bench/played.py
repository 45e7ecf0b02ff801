"""The mechanisms on played conversation: cards, collisions, reflects, contexts, feelings.

Each LoCoMo conversation is played to its own soul of one real daemon, turn by turn, as a
channel would (live ``event.push``: ``sender`` the speaker, ``ts`` the session's date,
``session`` the session key, ``ref`` the turn's dia_id). At the start of each session,
before its first turn, the agent does what it would on opening a conversation:

* draws lightning with that first turn as the topic (a seed fixed per session, so a run
  is reproducible) — the collision memory's moment (DESIGN §3.8);
* takes a context with that first turn as the query, then ``--contexts`` contexts with
  no query in a row (an agent idling into the session: emergence should rotate).

Printed per conversation and overall:

* cards: how many, mean lines (conclusions and questions) per card, and the share of
  lines that repeat a line of an earlier card (a card is one reflect's own conclusions);
* draws: how many, how many the gate silenced, the silence rate, the criterion of each
  presented draw, and presented draws that do not name the card lines behind them;
* reflects by reason (surprise / periodic), from the soul's ``summaries`` table;
* contexts in each mode (retrieval / emergence), for the queried and the no-query ones;
  the distinct sets of recalled memories over each session's no-query contexts;
* somatic topics (the ``markers`` table) that are stop words, fillers or bare numbers,
  by a word list of this script's own (not the product's), and the CJK topics shown for
  a reader to judge.

No LLM by default. ``--llm`` gives every soul a chat model: a fake OpenAI-compatible
server on loopback started by this script, that answers reflects with the previous
summary plus the new observations (cumulative, as models tend to) and judges draws by a
fixed rule, with some garbage answers among them; the same figures then show that the
fallbacks and checks keep the same contracts.

    python bench/played.py --data ../shared/data/locomo/locomo10-dev.json
        [--conversations conv-26 ...] [--contexts 5] [--llm] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import http.server
import json
import re
import sqlite3
import statistics
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from _daemon import machine, running_daemon, write_json
from locomo import Client, Conversation, Turn, event_of, load, soul_name

# Function words and fillers a feeling must never be about: English (a standard stop
# list, abridged), conversational fillers, and Chinese function characters. Kept here,
# apart from the product's own lists, so the figure is an outside check.
_STOP_EN = set(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    even ever few for from further get gets got had has have having he her here hers
    herself him himself his how i if in into is it its itself just let lets like made make
    many may me might more most much must my myself never new no nor not now of off often
    oh ok okay on once one only or other ought our ours ourselves out over own really same
    she should so some still such than that the their theirs them themselves then there
    these they thing things this those though through to too under until up upon us very
    was we were what when where which while who whom why will with would yes yet you your
    yours yourself yourselves yeah yep wow haha lol hey hi hello um uh hmm well sure thanks
    thank great good nice cool awesome totally definitely actually maybe kinda gonna wanna
    lot lots way day time sounds sound kind sort pretty again always""".split()
)
_STOP_ZH = set("的了是在我你他她它们这那就都也还很吗呢吧啊哦嗯呀啦和与及或但而着过被把给让对")
_NUMBER = re.compile(r"^[\d.,:/-]+$")
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass
class Played:
    name: str
    turns: int = 0
    sessions: int = 0
    draws: list[dict[str, Any]] = field(default_factory=list)
    no_draw: Counter[str] = field(default_factory=Counter)
    modes_query: Counter[str] = field(default_factory=Counter)
    modes_idle: Counter[str] = field(default_factory=Counter)
    # Per session: the distinct sets of recalled memory ids over its no-query contexts,
    # and of all recalled items (claims, questions, tasks, goals too).
    distinct_idle: list[int] = field(default_factory=list)
    distinct_idle_items: list[int] = field(default_factory=list)
    reflected_pushes: int = 0
    cards: list[dict[str, Any]] = field(default_factory=list)
    reflects: Counter[str] = field(default_factory=Counter)
    topics: list[tuple[str, str]] = field(default_factory=list)  # (topic, label)


def sessions(turns: Sequence[Turn]) -> Iterator[list[Turn]]:
    current: list[Turn] = []
    for turn in turns:
        if current and turn.session != current[0].session:
            yield current
            current = []
        current.append(turn)
    if current:
        yield current


async def _context(
    client: Client, params: dict[str, Any]
) -> tuple[str, frozenset[str], frozenset[str]]:
    """A context's mode, the memories recalled into it and all its recalled items (from
    its assembly log)."""
    context = await client.call("context", params)
    why = await client.call("why", {"soul": params["soul"], "hash": context["hash"]})
    items = frozenset(i["id"] for i in why["items"])
    # Memories are the items labelled m<id> (their kind is the memory's: observation,
    # voice, summary).
    memories = frozenset(i["id"] for i in why["items"] if i["id"].startswith("m"))
    return why["mode"], memories, items


async def play(socket: str, conversation: Conversation, contexts: int) -> Played:
    soul = soul_name(conversation)
    out = Played(conversation.name)
    reader, writer = await asyncio.open_unix_connection(socket, limit=1 << 24)
    client = Client(reader, writer)
    try:
        for index, session in enumerate(sessions(conversation.turns)):
            out.sessions += 1
            topic = session[0].text
            try:
                draw = await client.call(
                    "lightning", {"soul": soul, "topic": topic, "seed": 1000 + index}
                )
            except RuntimeError as exc:
                out.no_draw[_error_code(exc)] += 1
            else:
                out.draws.append(draw)
            where = {"soul": soul, "session": session[0].session}
            mode, _, _ = await _context(client, {**where, "query": topic})
            out.modes_query[mode] += 1
            seen, seen_items = set(), set()
            for _ in range(contexts):
                mode, recalled, items = await _context(client, where)
                out.modes_idle[mode] += 1
                seen.add(recalled)
                seen_items.add(items)
            if contexts:
                out.distinct_idle.append(len(seen))
                out.distinct_idle_items.append(len(seen_items))
            for turn in session:
                pushed = await client.call("event.push", event_of(soul, turn))
                out.turns += 1
                out.reflected_pushes += bool(pushed.get("reflected"))
        out.cards = (await client.call("cards", {"soul": soul}))["cards"]
    finally:
        writer.close()
    return out


def _error_code(exc: RuntimeError) -> str:
    found = re.search(r"'code': '([a-z_]+)'", str(exc))
    return found.group(1) if found else "error"


def read_database(path: str, played: Played) -> None:
    """Reflect reasons and somatic topics, read from the soul's database after the run."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        for reason, count in db.execute(
            "SELECT reason, COUNT(*) FROM summaries WHERE layer = 'consolidated' GROUP BY reason"
        ):
            played.reflects[reason] += count
        played.topics = [
            (topic, label or topic)
            for topic, label in db.execute("SELECT DISTINCT topic, label FROM markers ORDER BY 1")
        ]


def is_filler(topic: str, label: str) -> bool:
    word = label.casefold()
    if _NUMBER.match(word) or word in _STOP_EN or topic in _STOP_EN:
        return True
    return bool(_CJK.search(word)) and all(ch in _STOP_ZH for ch in word)


def _lines(card: dict[str, Any]) -> list[str]:
    return [*card.get("conclusions", []), *card.get("questions", [])]


def card_figures(cards: Sequence[dict[str, Any]]) -> dict[str, Any]:
    ordered = sorted((c for c in cards if c.get("kind") == "card"), key=lambda c: c["number"])
    seen: set[str] = set()
    lines = repeated = 0
    for card in ordered:
        own = [" ".join(line.casefold().split()) for line in _lines(card)]
        lines += len(own)
        repeated += sum(line in seen for line in own)
        seen.update(own)
    return {
        "cards": len(ordered),
        "mean_lines": round(lines / len(ordered), 2) if ordered else 0.0,
        "max_lines": max((len(_lines(c)) for c in ordered), default=0),
        "repeated_line_share": round(repeated / lines, 4) if lines else 0.0,
        "tags": sorted({t for c in ordered for t in c.get("tags", [])})[:20],
    }


def _names_lines(draw: dict[str, Any]) -> bool:
    """Whether a presented draw says which card lines meet its criterion."""
    passed = [v for v in draw.get("verdicts", []) if v.get("passed")]
    return bool(passed) and all(v.get("evidence") or v.get("lines") for v in passed)


def draw_figures(played: Played) -> dict[str, Any]:
    presented = [d for d in played.draws if d.get("presented")]
    n = len(played.draws)
    return {
        "draws": n,
        "silenced": n - len(presented),
        "silence_rate": round((n - len(presented)) / n, 4) if n else None,
        "criteria": dict(Counter(d.get("criterion") for d in presented)),
        "presented_without_lines": sum(not _names_lines(d) for d in presented),
        "judges": dict(Counter(d.get("judge", "builtin") for d in played.draws)),
        "presented_examples": [
            f"{d.get('criterion')}: {v.get('reason')}"
            for d in presented[:3]
            for v in d.get("verdicts", [])
            if v.get("passed")
        ],
        "no_draw": dict(played.no_draw),
    }


def figures(played: Played) -> dict[str, Any]:
    fillers = sorted({label for topic, label in played.topics if is_filler(topic, label)})
    cjk = sorted({label for _, label in played.topics if _CJK.search(label)})
    distinct = played.distinct_idle
    return {
        "turns": played.turns,
        "sessions": played.sessions,
        **card_figures(played.cards),
        **draw_figures(played),
        "reflects": dict(played.reflects),
        "pushes_reflected": played.reflected_pushes,
        "modes_query": dict(played.modes_query),
        "modes_idle": dict(played.modes_idle),
        "idle_distinct_mean": round(statistics.fmean(distinct), 2) if distinct else None,
        "idle_items_distinct_mean": round(statistics.fmean(played.distinct_idle_items), 2)
        if played.distinct_idle_items
        else None,
        "idle_sessions_3plus": round(sum(d >= 3 for d in distinct) / len(distinct), 4)
        if distinct
        else None,
        "somatic_topics": len(played.topics),
        "somatic_fillers": fillers,
        "somatic_cjk": cjk[:30],
    }


def overall(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    draws = sum(r["draws"] for r in rows)
    silenced = sum(r["silenced"] for r in rows)
    cards = sum(r["cards"] for r in rows)
    criteria: Counter[str] = Counter()
    reflects: Counter[str] = Counter()
    for r in rows:
        criteria.update(r["criteria"])
        reflects.update(r["reflects"])
    lines = sum(r["mean_lines"] * r["cards"] for r in rows)
    repeated = sum(r["repeated_line_share"] * r["mean_lines"] * r["cards"] for r in rows)
    distinct = [r["idle_distinct_mean"] for r in rows if r["idle_distinct_mean"] is not None]
    return {
        "cards": cards,
        "mean_lines": round(lines / cards, 2) if cards else 0.0,
        "repeated_line_share": round(repeated / lines, 4) if lines else 0.0,
        "draws": draws,
        "silence_rate": round(silenced / draws, 4) if draws else None,
        "criteria": dict(criteria),
        "presented_without_lines": sum(r["presented_without_lines"] for r in rows),
        "reflects": dict(reflects),
        "idle_distinct_mean": round(statistics.fmean(distinct), 2) if distinct else None,
        "somatic_fillers": sum(len(r["somatic_fillers"]) for r in rows),
    }


# --- a fake chat model on loopback, for --llm ------------------------------------------

_OBSERVATION = re.compile(r"^\[m(\d+)\] \([\d.]+, [\d.]+\) (.*)$")
_CARD = re.compile(r"^Card (\d+):$")


def fake_reflect(user: str) -> str:
    """The previous summary with every new observation appended: what a model that
    merges carelessly returns (the card made from it must still hold only what is new)."""
    previous, _, shown = user.partition("\n\nNew observations")
    previous = previous.removeprefix("Previous summary:\n")
    lines = [] if previous.strip() == "(none)" else previous.strip().splitlines()
    for line in shown.splitlines():
        found = _OBSERVATION.match(line)
        if found:
            lines.append(f"- {found.group(2)} [m{found.group(1)}]")
    if not any(line.startswith("## ") for line in lines):
        lines.insert(0, "## Notable")
    return "\n".join(lines)


def fake_judge(user: str) -> str:
    """Garbage for one draw in eight; otherwise a new direction between the first two
    cards for one draw in four, silence for the rest (fixed by the prompt's hash)."""
    cards = [int(m.group(1)) for line in user.splitlines() if (m := _CARD.match(line))]
    roll = int(hashlib.sha256(user.encode()).hexdigest()[:8], 16) % 8
    if roll == 0:
        return "I think these cards are interesting!"
    passed = roll in (1, 2) and len(cards) >= 2
    verdicts = [
        {
            "criterion": criterion,
            "passed": passed and criterion == "new_direction",
            "reason": f"cards {cards[0]} and {cards[1]} meet on a shared point"
            if passed and criterion == "new_direction"
            else "no real increment",
            "evidence": cards[:2] if passed and criterion == "new_direction" else [],
        }
        for criterion in (
            "answers_question",
            "counterexample",
            "changes_conclusion",
            "new_direction",
        )
    ]
    return json.dumps({"verdicts": verdicts})


class _FakeModel(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if "presentation gate" in system:
            content = fake_judge(user)
        elif "consolidated memory summary" in system:
            content = fake_reflect(user)
        else:
            content = "ok"
        reply = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def fake_model() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FakeModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


# --- the run ----------------------------------------------------------------------------


def measure(
    conversations: Sequence[Conversation], contexts: int, llm: str | None
) -> dict[str, Any]:
    toml = ""
    if llm:
        toml = f'[llm]\nbase_url = "{llm}"\nmodel = "fake"\nretries = 0\ntimeout = 10.0\n'
    souls = {soul_name(c): toml for c in conversations}
    rows: dict[str, dict[str, Any]] = {}
    with running_daemon(souls) as daemon:

        async def all_of_them() -> list[Played]:
            return list(
                await asyncio.gather(
                    *(play(str(daemon.socket), c, contexts) for c in conversations)
                )
            )

        for conversation, played in zip(conversations, asyncio.run(all_of_them()), strict=True):
            read_database(str(daemon.state(soul_name(conversation)) / "soul.db"), played)
            rows[conversation.name] = figures(played)
    return {"conversations": rows, "overall": overall(list(rows.values()))}


def render(result: dict[str, Any]) -> str:
    keys = [
        ("cards", "cards"),
        ("mean_lines", "lines/card"),
        ("repeated_line_share", "repeated"),
        ("draws", "draws"),
        ("silence_rate", "silence"),
        ("idle_distinct_mean", "idle sets"),
    ]
    out = [f"{'':<10}" + "".join(f"{label:>12}" for _, label in keys)]
    for name, row in [*result["conversations"].items(), ("overall", result["overall"])]:
        out.append(f"{name:<10}" + "".join(f"{row.get(k)!s:>12}" for k, _ in keys))
    out.append("")
    for name, row in result["conversations"].items():
        out.append(f"{name}:")
        out.append(
            f"  reflects {row['reflects']} (pushes that reflected: {row['pushes_reflected']})"
        )
        out.append(f"  presented by criterion {row['criteria']}, judges {row['judges']}")
        out.append(f"  presented without the lines behind them: {row['presented_without_lines']}")
        for example in row["presented_examples"]:
            out.append(f"    e.g. {example[:160]}")
        if row["no_draw"]:
            out.append(f"  sessions with no draw: {row['no_draw']}")
        out.append(f"  contexts: queried {row['modes_query']}, no query {row['modes_idle']}")
        out.append(
            f"  idle sessions with >= 3 distinct recalled sets: {row['idle_sessions_3plus']}"
        )
        out.append(f"  distinct sets of all recalled items: {row['idle_items_distinct_mean']}")
        out.append(f"  card tags (some): {', '.join(row['tags'][:12])}")
        out.append(
            f"  somatic topics {row['somatic_topics']}, fillers/numbers "
            f"{len(row['somatic_fillers'])}: {', '.join(row['somatic_fillers'][:20])}"
        )
        out.append(f"  CJK topics (to read): {', '.join(row['somatic_cjk'])}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", required=True, metavar="PATH", help="a locomo10 JSON file")
    parser.add_argument("--conversations", nargs="+", metavar="ID", help="only these")
    parser.add_argument("--contexts", type=int, default=5, help="no-query contexts a session")
    parser.add_argument("--llm", action="store_true", help="souls with a fake loopback model")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    conversations = [
        c for c in load(args.data) if not args.conversations or c.name in args.conversations
    ]
    if args.llm:
        with fake_model() as url:
            result = measure(conversations, args.contexts, url)
    else:
        result = measure(conversations, args.contexts, None)
    print(render(result))
    write_json(args.json, {"machine": machine(), "llm": args.llm, **result})


if __name__ == "__main__":
    main()

"""The soul database's schema as an ordered list of named migrations.

A migration is applied once, inside its own transaction, and recorded in the
``migrations`` table under its name. Names never change and entries are only ever
appended: the list is the history of every soul database in the field.

Events are the truth and append-only. Memories and their full-text index are derived:
they can be rebuilt by replaying events.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS"]

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_events_memories",
        """
        CREATE TABLE events (
            id        INTEGER PRIMARY KEY,
            ref       TEXT UNIQUE,          -- idempotency key, NULL when none was given
            kind      TEXT NOT NULL,
            channel   TEXT,
            sender    TEXT,
            grp       TEXT,
            mentioned INTEGER NOT NULL DEFAULT 0,
            session   TEXT,
            ts        REAL NOT NULL,        -- when it happened (valid time)
            recorded  REAL NOT NULL,        -- when it was stored (transaction time)
            salience  REAL NOT NULL,
            text      TEXT NOT NULL
        ) STRICT;
        CREATE INDEX events_ts ON events (ts);

        CREATE TABLE memories (
            id            INTEGER PRIMARY KEY,
            kind          TEXT NOT NULL,    -- observation, summary, ...
            event_id      INTEGER REFERENCES events (id),  -- the source event, if one
            text          TEXT NOT NULL,
            salience      REAL NOT NULL,
            created       REAL NOT NULL,
            last_recalled REAL,
            recalls       INTEGER NOT NULL DEFAULT 0,
            hidden_at     REAL
        ) STRICT;
        CREATE INDEX memories_event ON memories (event_id);

        -- Several source events for one memory (summaries); single-source memories
        -- use memories.event_id instead, to keep the ingest path to one row.
        CREATE TABLE memory_sources (
            memory_id INTEGER NOT NULL REFERENCES memories (id),
            event_id  INTEGER NOT NULL REFERENCES events (id),
            PRIMARY KEY (memory_id, event_id)
        ) STRICT, WITHOUT ROWID;

        -- Visible memories only: hiding a memory deletes its row here. The document
        -- is the shared tokenizer's output joined by spaces, hence the ascii tokenizer.
        CREATE VIRTUAL TABLE memory_fts USING fts5 (doc, tokenize = 'ascii');
        -- Per-term document counts of memory_fts, read to rebuild recall's BM25 stats.
        CREATE VIRTUAL TABLE memory_vocab USING fts5vocab (memory_fts, 'row');

        CREATE TABLE counters (
            name  TEXT PRIMARY KEY,
            value INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        """,
    ),
    (
        "0002_cognition",
        """
        -- How surprising each observation was against the summary of its time.
        ALTER TABLE memories ADD COLUMN surprise REAL NOT NULL DEFAULT 0;

        -- Every version of every summary layer is kept; the newest is in force.
        CREATE TABLE summaries (
            id           INTEGER PRIMARY KEY,
            layer        TEXT NOT NULL,      -- consolidated | weekly
            text         TEXT NOT NULL,
            created      REAL NOT NULL,
            observations INTEGER NOT NULL,   -- how many observations it folded in
            reflector    TEXT NOT NULL,      -- extractive | llm
            reason       TEXT NOT NULL       -- surprise | periodic | manual | weekly
        ) STRICT;
        CREATE INDEX summaries_layer ON summaries (layer, id);

        -- Hebbian edges between memories recalled together; a < b.
        CREATE TABLE edges (
            a       INTEGER NOT NULL,
            b       INTEGER NOT NULL,
            weight  REAL NOT NULL,
            updated REAL NOT NULL,
            PRIMARY KEY (a, b)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX edges_b ON edges (b);

        -- Somatic markers: felt weight per (topic, valence).
        CREATE TABLE markers (
            topic   TEXT NOT NULL,
            valence TEXT NOT NULL,
            weight  REAL NOT NULL,
            updated REAL NOT NULL,
            PRIMARY KEY (topic, valence)
        ) STRICT, WITHOUT ROWID;

        -- Knowledge gaps the soul recorded about itself.
        CREATE TABLE gaps (
            id      INTEGER PRIMARY KEY,
            topic   TEXT NOT NULL,
            detail  TEXT NOT NULL,
            created REAL NOT NULL
        ) STRICT;

        -- Small named values of the soul's own (reflect progress, pending signal...).
        CREATE TABLE soul_state (
            key   TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) STRICT, WITHOUT ROWID;
        """,
    ),
    (
        "0003_due",
        """
        -- Tasks with @due from TASKS.md: the source of truth for wake-ups. A fired row
        -- stays, so a task fires once however often the file is re-read.
        CREATE TABLE due (
            key      TEXT PRIMARY KEY,   -- hash of the task's text and due time
            due      REAL NOT NULL,
            text     TEXT NOT NULL,
            line     INTEGER NOT NULL,
            fired_at REAL
        ) STRICT, WITHOUT ROWID;
        """,
    ),
    (
        "0004_cards",
        """
        -- Conclusion cards. AUTOINCREMENT: a number is never handed out twice, even
        -- after the newest card went away.
        CREATE TABLE cards (
            number           INTEGER PRIMARY KEY AUTOINCREMENT,
            kind             TEXT NOT NULL,      -- card | protein
            title            TEXT NOT NULL,
            source           TEXT NOT NULL,      -- reflect | manual | synthesis
            created          REAL NOT NULL,
            last_touched     REAL NOT NULL,
            strong_approvals INTEGER NOT NULL DEFAULT 0
        );
        -- Lines are only ever added: conclusions, questions, tags, then notes.
        CREATE TABLE card_lines (
            card     INTEGER NOT NULL REFERENCES cards (number),
            position INTEGER NOT NULL,
            kind     TEXT NOT NULL,              -- conclusion | question | tag | note
            text     TEXT NOT NULL,
            created  REAL NOT NULL,
            PRIMARY KEY (card, position)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE card_members (
            protein INTEGER NOT NULL REFERENCES cards (number),
            member  INTEGER NOT NULL REFERENCES cards (number),
            PRIMARY KEY (protein, member)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE card_sources (
            card     INTEGER NOT NULL REFERENCES cards (number),
            event_id INTEGER NOT NULL,
            PRIMARY KEY (card, event_id)
        ) STRICT, WITHOUT ROWID;
        """,
    ),
    (
        "0005_ledger",
        """
        -- Every lightning draw, silenced ones included: seed, cards, topic, verdicts.
        CREATE TABLE draws (
            id        INTEGER PRIMARY KEY,
            seed      INTEGER NOT NULL,
            topic     TEXT NOT NULL,
            cards     TEXT NOT NULL,      -- JSON list of card numbers, wildcard last
            wildcard  INTEGER NOT NULL,
            presented INTEGER NOT NULL,   -- 1 when the gate let it through
            criterion TEXT,               -- the increment it passed on, if any
            verdicts  TEXT NOT NULL,      -- JSON: every criterion with its reason
            created   REAL NOT NULL
        ) STRICT;
        """,
    ),
    (
        "0006_verdicts",
        """
        -- The user's verdicts: one per card per presented draw.
        CREATE TABLE verdicts (
            draw    INTEGER NOT NULL REFERENCES draws (id),
            card    INTEGER NOT NULL,
            verdict TEXT NOT NULL,        -- strong | approve | neutral | oppose
            line    INTEGER,              -- the card line a strong approval points at
            created REAL NOT NULL,
            PRIMARY KEY (draw, card)
        ) STRICT, WITHOUT ROWID;
        """,
    ),
    (
        "0007_draw_judge",
        """
        -- Who judged a draw at the presentation gate: builtin | llm.
        ALTER TABLE draws ADD COLUMN judge TEXT NOT NULL DEFAULT 'builtin';
        """,
    ),
)

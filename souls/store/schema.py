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
    (
        "0008_knowledge",
        """
        -- Typed entries (DESIGN §3.10): facts (slot claims extracted from events, or
        -- stated), rules and events, bitemporal: valid time (when it is true in the
        -- world) and transaction time (when this row was believed). Rows are never
        -- rewritten but to close them: a change is a new row plus a closed old one.
        CREATE TABLE claims (
            id            INTEGER PRIMARY KEY,
            type          TEXT NOT NULL,      -- fact | rule | event
            subject       TEXT NOT NULL,      -- whom it is about
            slot          TEXT,               -- whitelisted slot; NULL for free entries
            value         TEXT NOT NULL,
            quote         TEXT NOT NULL,      -- verbatim in the source event ('' if stated)
            event_id      INTEGER,            -- the source event, if one
            source        TEXT NOT NULL,      -- user | rule | llm
            confidence    TEXT NOT NULL,      -- high | medium | low
            state         TEXT NOT NULL,      -- active | superseded | deferred | retracted
            valid_from    REAL NOT NULL,
            valid_to      REAL,
            recorded_from REAL NOT NULL,
            recorded_to   REAL,
            due           REAL,               -- plans and commitments with a date
            replaces      INTEGER             -- the entry an update superseded
        ) STRICT;
        CREATE INDEX claims_slot ON claims (subject, slot);
        CREATE INDEX claims_event ON claims (event_id);
        CREATE INDEX claims_state ON claims (state);

        -- Questions users asked: pending until an assistant event follows; then
        -- answered, or unanswered (unresolved pressure) when the answer missed it.
        CREATE TABLE questions (
            id       INTEGER PRIMARY KEY,
            event_id INTEGER NOT NULL,
            asker    TEXT,
            session  TEXT,
            text     TEXT NOT NULL,
            asked    REAL NOT NULL,
            state    TEXT NOT NULL,      -- pending | answered | unanswered
            resolved REAL,
            answer   INTEGER             -- the assistant event that settled it
        ) STRICT;
        CREATE INDEX questions_state ON questions (state);

        CREATE TABLE goals (
            id        INTEGER PRIMARY KEY,
            speaker   TEXT NOT NULL,
            statement TEXT NOT NULL,
            domain    TEXT NOT NULL,
            priority  INTEGER NOT NULL,
            triggers  TEXT NOT NULL,     -- JSON list of 1-2 bridge phrases
            state     TEXT NOT NULL,     -- active | paused | achieved | abandoned
            progress  TEXT NOT NULL,     -- JSON list of notes
            created   REAL NOT NULL,
            updated   REAL NOT NULL
        ) STRICT;

        -- One row per assembled context: what was injected and why.
        CREATE TABLE assemblies (
            id       INTEGER PRIMARY KEY,
            hash     TEXT NOT NULL,
            created  REAL NOT NULL,
            session  TEXT,
            query    TEXT,
            mode     TEXT NOT NULL,      -- retrieval | emergence | none
            chars    INTEGER NOT NULL,
            recalled INTEGER NOT NULL,   -- characters of recalled items injected
            paused   INTEGER NOT NULL,   -- 1 when the session budget paused recall
            items    TEXT NOT NULL,      -- JSON: [{id, kind, score, reason}]
            sections TEXT NOT NULL       -- JSON: [{name, chars, truncated}]
        ) STRICT;
        CREATE INDEX assemblies_hash ON assemblies (hash);
        CREATE INDEX assemblies_created ON assemblies (created);
        """,
    ),
    (
        "0009_context",
        """
        -- Each memory is indexed with its neighbouring turns in the same session (two
        -- each side, nearest first; none without a session: see souls/neighbours.py),
        -- which recall weighs lower.
        -- FTS5 columns cannot be added in place: the index is rebuilt from the old one.
        CREATE INDEX events_session ON events (session, id);
        CREATE VIRTUAL TABLE memory_fts_context USING fts5 (
            doc, prior, later, tokenize = 'ascii'
        );
        INSERT INTO memory_fts_context (rowid, doc, prior, later)
        SELECT id, doc,
               CASE WHEN session IS NULL THEN '' ELSE
                   trim(coalesce(lag(doc, 1) OVER turns, '') || ' '
                        || coalesce(lag(doc, 2) OVER turns, '')) END,
               CASE WHEN session IS NULL THEN '' ELSE
                   trim(coalesce(lead(doc, 1) OVER turns, '') || ' '
                        || coalesce(lead(doc, 2) OVER turns, '')) END
        FROM (SELECT f.rowid AS id, f.doc AS doc, e.session AS session, e.id AS event
              FROM memory_fts AS f
              JOIN memories AS m ON m.id = f.rowid
              LEFT JOIN events AS e ON e.id = m.event_id)
        WINDOW turns AS (PARTITION BY session ORDER BY event, id);
        DROP TABLE memory_vocab;
        DROP TABLE memory_fts;
        ALTER TABLE memory_fts_context RENAME TO memory_fts;
        CREATE VIRTUAL TABLE memory_vocab USING fts5vocab (memory_fts, 'row');
        """,
    ),
    (
        "0010_persons",
        """
        -- Cross-channel identity: persons and the accounts (channel, external id) that
        -- are theirs. An event from a linked account names its person.
        CREATE TABLE persons (
            id      INTEGER PRIMARY KEY,
            name    TEXT NOT NULL UNIQUE,
            created REAL NOT NULL
        ) STRICT;
        CREATE TABLE identities (
            channel  TEXT NOT NULL,
            external TEXT NOT NULL,
            person   INTEGER NOT NULL REFERENCES persons (id),
            created  REAL NOT NULL,
            PRIMARY KEY (channel, external)
        ) STRICT, WITHOUT ROWID;
        ALTER TABLE events ADD COLUMN person TEXT;
        CREATE INDEX events_account ON events (channel, sender);
        """,
    ),
    (
        "0011_marker_labels",
        """
        -- The word a marker's topic (a stem, "carolin") is shown by: as a person wrote it
        -- ("Caroline"; the rule is in souls/topics.py). One per topic, the same in each
        -- valence's row. NULL in rows stored before labels: the topic is shown instead.
        ALTER TABLE markers ADD COLUMN label TEXT;
        """,
    ),
    (
        "0012_collision_ledger",
        """
        -- What a draw was drawn with, so that its ledger row alone reproduces it: the
        -- cards asked for, the exclusion patterns, every candidate's weight (JSON
        -- {"card": weight}) and, for a reproduction, the draw it reproduces. NULL
        -- weights: a draw recorded before this migration (its seed is all there is).
        ALTER TABLE draws ADD COLUMN n INTEGER;
        ALTER TABLE draws ADD COLUMN exclude TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE draws ADD COLUMN weights TEXT;
        ALTER TABLE draws ADD COLUMN replay_of INTEGER;
        -- A card's open question closed by the user (a tide's closure proposal): which
        -- question (numbered from 1) and the card line that answered it. A card is
        -- closed once every question of it is.
        CREATE TABLE card_closures (
            card        INTEGER NOT NULL REFERENCES cards (number),
            question    INTEGER NOT NULL,
            answered_by INTEGER NOT NULL,
            line        INTEGER NOT NULL,
            created     REAL NOT NULL,
            PRIMARY KEY (card, question)
        ) STRICT, WITHOUT ROWID;
        """,
    ),
    (
        "0013_surfaced",
        """
        -- When each item (by its label in a context: m12, c5, g3, q2, t7) last surfaced,
        -- that is, was injected into a context: what rarity S counts from (DESIGN 3.5,
        -- souls/recall/surfacing.py). Derived from the assembly log, which it starts
        -- from; written with each assembly after that.
        CREATE TABLE surfaced (
            item TEXT PRIMARY KEY,
            at   REAL NOT NULL
        ) STRICT, WITHOUT ROWID;
        INSERT INTO surfaced (item, at)
        SELECT json_extract(shown.value, '$.id'), max(a.created)
        FROM assemblies AS a, json_each(a.items) AS shown
        WHERE json_extract(shown.value, '$.id') IS NOT NULL
        GROUP BY 1;
        """,
    ),
    (
        "0014_recall_scope",
        """
        -- A recall narrowed to what one sender, or one linked person, said (souls/store/
        -- store.py, Scope) finds their events without reading every event.
        CREATE INDEX events_sender ON events (sender);
        CREATE INDEX events_person ON events (person) WHERE person IS NOT NULL;
        """,
    ),
    (
        "0015_unspoken",
        """
        -- What a model judged a sentence to leave unsaid (Chaos's "unspoken"; souls/
        -- knowledge/claim_llm.py): the sentence itself, verbatim from its event, by
        -- unspoken.<hash of the sentence>. Never a fact, never injected; it goes with
        -- its event when that is forgotten.
        CREATE TABLE unspoken (
            id       TEXT PRIMARY KEY,
            event_id INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
            subject  TEXT NOT NULL,
            sentence TEXT NOT NULL,
            recorded REAL NOT NULL
        ) STRICT;
        CREATE INDEX unspoken_event ON unspoken (event_id);
        """,
    ),
    (
        "0016_memory_vectors",
        """
        -- A memory's embedding (souls/embed, souls/actor/embedding.py): unit float32,
        -- little-endian, as a BLOB (souls/embed/vectors.py says why), and the model that
        -- made it: a vector of another model is stale and made again. Derived: it goes
        -- with its memory (forget) and is remade from the memory's text.
        CREATE TABLE memory_vectors (
            memory_id INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
            model     TEXT NOT NULL,
            vector    BLOB NOT NULL
        ) STRICT;
        """,
    ),
    (
        "0017_goal_source",
        """
        -- The event a goal was first read from (souls/knowledge/goal_merge.py; NULL for a
        -- goal stated through goal.update, or stored before this column): the turn a
        -- bench credits the goal to. Forget finds a goal by its words (its statement is a
        -- piece of that turn); an event that goes leaves no dangling id behind.
        ALTER TABLE goals ADD COLUMN event_id INTEGER REFERENCES events (id) ON DELETE SET NULL;
        CREATE INDEX goals_event ON goals (event_id) WHERE event_id IS NOT NULL;
        """,
    ),
)

"""The PostgreSQL database's schema as an ordered list of named migrations.

One database holds every soul: each row carries its soul's id (``souls.id``), and every
key starts with it. As on SQLite (:mod:`souls.store.schema`) a migration is applied
once, in its own transaction, and recorded by name in ``migrations``; entries are only
ever appended. Several daemons may open the database at once: :func:`migrate` holds a
transaction-level advisory lock while it applies, so one migrates and the others wait,
then find nothing left to do.

The full-text index is not PostgreSQL's (``tsvector``/``ts_rank`` is not BM25 and its
parser is not soupd's): ``memory_index`` keeps each memory's documents from
:mod:`souls.text.tokenize` (its own text, its neighbouring turns'), ``postings`` the
inverted index of their tokens (per term and row: occurrences in the own text and in
the context, the row's length), and ``term_stats``/``index_stats`` the statistics BM25
needs, all kept current by the store in the same transaction as the rows. (0001 kept
term arrays under GIN indexes instead; 0002 replaced them.)
"""

from __future__ import annotations

import time

import asyncpg

__all__ = ["MIGRATIONS", "migrate"]

# pg_advisory_xact_lock key of the migrations (any fixed 64-bit number).
_MIGRATION_LOCK = 0x50_55_50_44_00_00_00_01

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_souls_events_index",
        """
        -- Every soul of the database. owner: the advertised address of the daemon that
        -- holds the soul's lease (souls/store/postgres/lease.py), NULL when none does.
        CREATE TABLE souls (
            id          serial PRIMARY KEY,
            name        text NOT NULL UNIQUE,
            created     double precision NOT NULL,
            owner       text,
            owner_since double precision
        );

        CREATE TABLE events (
            soul      integer NOT NULL REFERENCES souls (id),
            id        bigint NOT NULL,
            ref       text,                 -- idempotency key, NULL when none was given
            kind      text NOT NULL,
            channel   text,
            sender    text,
            grp       text,
            mentioned boolean NOT NULL DEFAULT false,
            session   text,
            ts        double precision NOT NULL,  -- when it happened (valid time)
            recorded  double precision NOT NULL,  -- when it was stored (transaction time)
            salience  double precision NOT NULL,
            text      text NOT NULL,
            person    text,
            PRIMARY KEY (soul, id),
            UNIQUE (soul, ref)
        );
        CREATE INDEX events_ts ON events (soul, ts);
        CREATE INDEX events_session ON events (soul, session, id);

        CREATE TABLE memories (
            soul          integer NOT NULL,
            id            bigint NOT NULL,
            kind          text NOT NULL,
            event_id      bigint,
            text          text NOT NULL,
            salience      double precision NOT NULL,
            created       double precision NOT NULL,
            last_recalled double precision,
            recalls       integer NOT NULL DEFAULT 0,
            hidden_at     double precision,
            surprise      double precision NOT NULL DEFAULT 0,
            PRIMARY KEY (soul, id),
            FOREIGN KEY (soul, event_id) REFERENCES events (soul, id)
        );
        CREATE INDEX memories_event ON memories (soul, event_id);

        -- Visible memories only, as memory_fts on SQLite: doc, prior and later are the
        -- tokenizer's documents (tokens joined by spaces); terms are doc's tokens,
        -- context prior's then later's, length every token of the row.
        CREATE EXTENSION IF NOT EXISTS btree_gin;
        CREATE TABLE memory_index (
            soul      integer NOT NULL,
            memory_id bigint NOT NULL,
            doc       text NOT NULL,
            prior     text NOT NULL DEFAULT '',
            later     text NOT NULL DEFAULT '',
            terms     text[] NOT NULL,
            context   text[] NOT NULL,
            length    integer NOT NULL,
            PRIMARY KEY (soul, memory_id)
        );
        CREATE INDEX memory_index_terms ON memory_index USING gin (soul, terms);
        CREATE INDEX memory_index_context ON memory_index USING gin (soul, context);

        -- BM25's statistics of memory_index: per term, the rows holding it in their own
        -- text (doc_rows) and in any column (rows); per soul, rows and tokens.
        CREATE TABLE term_stats (
            soul     integer NOT NULL,
            term     text NOT NULL,
            doc_rows integer NOT NULL,
            rows     integer NOT NULL,
            PRIMARY KEY (soul, term)
        );
        CREATE TABLE index_stats (
            soul      integer PRIMARY KEY REFERENCES souls (id),
            documents bigint NOT NULL,
            tokens    bigint NOT NULL
        );

        -- A term's frequency in a row as FTS5's bm25() counts it: each instance in the
        -- own text adds 1, then each in the context adds the context's weight, one
        -- addition at a time (the same floating-point sum, to the last bit). plpgsql:
        -- measured faster than an inlined SQL CASE that avoids the loop.
        CREATE FUNCTION soupd_tf(own integer, near integer, weight double precision)
        RETURNS double precision LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
        DECLARE tf double precision := own;
        BEGIN
            FOR i IN 1..near LOOP
                tf := tf + weight;
            END LOOP;
            RETURN tf;
        END
        $$;

        CREATE TABLE counters (
            soul  integer NOT NULL,
            name  text NOT NULL,
            value bigint NOT NULL,
            PRIMARY KEY (soul, name)
        );
        CREATE TABLE soul_state (
            soul  integer NOT NULL,
            key   text NOT NULL,
            value text NOT NULL,
            PRIMARY KEY (soul, key)
        );
        """,
    ),
    (
        "0002_postings",
        """
        -- The inverted index: one posting per (term, row holding it), with the term's
        -- occurrences in the row's own text and in its context, and the row's length.
        -- A search reads the postings of its terms only (rather than scoring every row
        -- whose arrays overlap the query: five times faster on LoCoMo, same scores);
        -- the term arrays and their GIN indexes go.
        CREATE TABLE postings (
            soul      integer NOT NULL,
            term      text NOT NULL,
            memory_id bigint NOT NULL,
            own       integer NOT NULL,
            near      integer NOT NULL,
            length    integer NOT NULL,
            PRIMARY KEY (soul, term, memory_id)
        );
        CREATE INDEX postings_memory ON postings (soul, memory_id);
        INSERT INTO postings (soul, term, memory_id, own, near, length)
        SELECT i.soul, t.term, i.memory_id,
               cardinality(array_positions(i.terms, t.term)),
               cardinality(array_positions(i.context, t.term)), i.length
        FROM memory_index AS i,
             LATERAL (SELECT DISTINCT unnest(i.terms || i.context) AS term) AS t;
        DROP INDEX memory_index_terms;
        DROP INDEX memory_index_context;
        ALTER TABLE memory_index DROP COLUMN terms, DROP COLUMN context;
        """,
    ),
    (
        "0003_turn_rows",
        """
        -- What a turn writes besides its events (souls/store/changes.py), as on SQLite.
        -- The ids of summaries, gaps and assemblies are the soul's own (its contexts
        -- name them: g3), handed out as SQLite's are: one more than the soul's largest.
        CREATE TABLE summaries (
            soul         integer NOT NULL,
            id           bigint NOT NULL,
            layer        text NOT NULL,      -- consolidated | weekly
            text         text NOT NULL,
            created      double precision NOT NULL,
            observations integer NOT NULL,   -- how many observations it folded in
            reflector    text NOT NULL,      -- extractive | llm
            reason       text NOT NULL,      -- surprise | periodic | manual | weekly
            PRIMARY KEY (soul, id)
        );
        CREATE INDEX summaries_layer ON summaries (soul, layer, id);

        -- Hebbian edges between memories recalled together; a < b.
        CREATE TABLE edges (
            soul    integer NOT NULL,
            a       bigint NOT NULL,
            b       bigint NOT NULL,
            weight  double precision NOT NULL,
            updated double precision NOT NULL,
            PRIMARY KEY (soul, a, b)
        );
        CREATE INDEX edges_b ON edges (soul, b);

        -- Somatic markers: felt weight per (topic, valence); label: the word the topic
        -- is shown by, NULL until one is known.
        CREATE TABLE markers (
            soul    integer NOT NULL,
            topic   text NOT NULL,
            valence text NOT NULL,
            weight  double precision NOT NULL,
            updated double precision NOT NULL,
            label   text,
            PRIMARY KEY (soul, topic, valence)
        );

        -- Knowledge gaps the soul recorded about itself.
        CREATE TABLE gaps (
            soul    integer NOT NULL,
            id      bigint NOT NULL,
            topic   text NOT NULL,
            detail  text NOT NULL,
            created double precision NOT NULL,
            PRIMARY KEY (soul, id)
        );

        -- One row per assembled context: what was injected and why (items, sections:
        -- JSON text, kept byte for byte as written).
        CREATE TABLE assemblies (
            soul     integer NOT NULL,
            id       bigint NOT NULL,
            hash     text NOT NULL,
            created  double precision NOT NULL,
            session  text,
            query    text,
            mode     text NOT NULL,      -- retrieval | emergence | none
            chars    integer NOT NULL,
            recalled integer NOT NULL,   -- characters of recalled items injected
            paused   boolean NOT NULL,   -- the session budget paused recall
            items    text NOT NULL,
            sections text NOT NULL,
            PRIMARY KEY (soul, id)
        );
        CREATE INDEX assemblies_hash ON assemblies (soul, hash);
        CREATE INDEX assemblies_created ON assemblies (soul, created);

        -- When each item (by its label in a context: m12, c5...) last surfaced.
        CREATE TABLE surfaced (
            soul integer NOT NULL,
            item text NOT NULL,
            at   double precision NOT NULL,
            PRIMARY KEY (soul, item)
        );
        """,
    ),
    (
        "0004_due",
        """
        -- Tasks with @due from TASKS.md (souls/actor/agenda.py): the source of truth for
        -- wake-ups, as on SQLite. A fired row stays, so a task fires once however often
        -- the file is re-read. key: a hash of the task's text and due time.
        CREATE TABLE due (
            soul     integer NOT NULL REFERENCES souls (id),
            key      text NOT NULL,
            due      double precision NOT NULL,
            text     text NOT NULL,
            line     integer NOT NULL,
            fired_at double precision,
            PRIMARY KEY (soul, key)
        );
        """,
    ),
    (
        "0005_claims",
        """
        -- Typed entries (DESIGN §3.10), as on SQLite: facts (slot claims extracted from
        -- events, or stated), rules and events, bitemporal: valid time (when it is true
        -- in the world) and transaction time (when this row was believed). Rows are
        -- never rewritten but to close them: a change is a new row plus a closed old
        -- one. ids are the soul's own (handed out by its actor).
        CREATE TABLE claims (
            soul          integer NOT NULL REFERENCES souls (id),
            id            bigint NOT NULL,
            type          text NOT NULL,      -- fact | rule | event
            subject       text NOT NULL,      -- whom it is about
            slot          text,               -- whitelisted slot; NULL for free entries
            value         text NOT NULL,
            quote         text NOT NULL,      -- verbatim in the source event ('' if stated)
            event_id      bigint,             -- the source event, if one
            source        text NOT NULL,      -- user | rule | llm
            confidence    text NOT NULL,      -- high | medium | low
            state         text NOT NULL,      -- active | superseded | deferred | retracted
            valid_from    double precision NOT NULL,
            valid_to      double precision,
            recorded_from double precision NOT NULL,
            recorded_to   double precision,
            due           double precision,   -- plans and commitments with a date
            replaces      bigint,             -- the entry an update superseded
            PRIMARY KEY (soul, id)
        );
        CREATE INDEX claims_slot ON claims (soul, subject, slot);
        CREATE INDEX claims_event ON claims (soul, event_id);
        """,
    ),
    (
        "0006_memory_vectors",
        """
        -- A memory's embedding, as on SQLite (souls/store/embeddings.py): unit float32,
        -- little-endian, and the model that made it. Derived: it goes with its memory.
        CREATE TABLE memory_vectors (
            soul      integer NOT NULL,
            memory_id bigint NOT NULL,
            model     text NOT NULL,
            vector    bytea NOT NULL,
            PRIMARY KEY (soul, memory_id),
            FOREIGN KEY (soul, memory_id) REFERENCES memories (soul, id) ON DELETE CASCADE
        );
        """,
    ),
    (
        "0007_cards",
        """
        -- The collision room's rows, as on SQLite (souls/store/cards.py): cards and their
        -- lines, members, source events and closed questions; every lightning draw and
        -- the user's verdicts. JSON columns are text, kept as written.
        -- numbering: the soul's last card and draw numbers (never reused, as SQLite's
        -- AUTOINCREMENT).
        CREATE TABLE numbering (
            soul integer NOT NULL REFERENCES souls (id),
            name text NOT NULL,
            last bigint NOT NULL,
            PRIMARY KEY (soul, name)
        );
        CREATE TABLE cards (
            soul             integer NOT NULL REFERENCES souls (id),
            number           bigint NOT NULL,
            kind             text NOT NULL,
            title            text NOT NULL,
            source           text NOT NULL,
            created          double precision NOT NULL,
            last_touched     double precision NOT NULL,
            strong_approvals integer NOT NULL DEFAULT 0,
            PRIMARY KEY (soul, number)
        );
        CREATE TABLE card_lines (
            soul     integer NOT NULL,
            card     bigint NOT NULL,
            position integer NOT NULL,
            kind     text NOT NULL,
            text     text NOT NULL,
            created  double precision NOT NULL,
            PRIMARY KEY (soul, card, position),
            FOREIGN KEY (soul, card) REFERENCES cards (soul, number)
        );
        CREATE TABLE card_members (
            soul    integer NOT NULL,
            protein bigint NOT NULL,
            member  bigint NOT NULL,
            PRIMARY KEY (soul, protein, member),
            FOREIGN KEY (soul, protein) REFERENCES cards (soul, number),
            FOREIGN KEY (soul, member) REFERENCES cards (soul, number)
        );
        CREATE TABLE card_sources (
            soul     integer NOT NULL,
            card     bigint NOT NULL,
            event_id bigint NOT NULL,
            PRIMARY KEY (soul, card, event_id),
            FOREIGN KEY (soul, card) REFERENCES cards (soul, number)
        );
        CREATE INDEX card_sources_event ON card_sources (soul, event_id);
        CREATE TABLE card_closures (
            soul        integer NOT NULL,
            card        bigint NOT NULL,
            question    integer NOT NULL,
            answered_by bigint NOT NULL,
            line        integer NOT NULL,
            created     double precision NOT NULL,
            PRIMARY KEY (soul, card, question),
            FOREIGN KEY (soul, card) REFERENCES cards (soul, number)
        );
        CREATE TABLE draws (
            soul      integer NOT NULL REFERENCES souls (id),
            id        bigint NOT NULL,
            seed      bigint NOT NULL,
            topic     text NOT NULL,
            cards     text NOT NULL,
            wildcard  bigint NOT NULL,
            presented boolean NOT NULL,
            criterion text,
            verdicts  text NOT NULL,
            created   double precision NOT NULL,
            judge     text NOT NULL DEFAULT 'builtin',
            n         integer,
            exclude   text NOT NULL DEFAULT '[]',
            weights   text,
            replay_of bigint,
            PRIMARY KEY (soul, id)
        );
        CREATE INDEX draws_created ON draws (soul, created);
        CREATE TABLE verdicts (
            soul    integer NOT NULL,
            draw    bigint NOT NULL,
            card    bigint NOT NULL,
            verdict text NOT NULL,
            line    integer,
            created double precision NOT NULL,
            PRIMARY KEY (soul, draw, card),
            FOREIGN KEY (soul, draw) REFERENCES draws (soul, id)
        );
        """,
    ),
    (
        "0008_persons",
        """
        -- People behind accounts, as on SQLite (souls/store/persons.py), and the
        -- questions people asked (souls/knowledge/questions.py), whose asker a link moves.
        CREATE TABLE persons (
            soul    integer NOT NULL REFERENCES souls (id),
            id      bigint NOT NULL,
            name    text NOT NULL,
            created double precision NOT NULL,
            PRIMARY KEY (soul, id),
            UNIQUE (soul, name)
        );
        CREATE TABLE identities (
            soul     integer NOT NULL,
            channel  text NOT NULL,
            external text NOT NULL,
            person   bigint NOT NULL,
            created  double precision NOT NULL,
            PRIMARY KEY (soul, channel, external),
            FOREIGN KEY (soul, person) REFERENCES persons (soul, id)
        );
        CREATE INDEX events_account ON events (soul, channel, sender);
        CREATE TABLE questions (
            soul     integer NOT NULL REFERENCES souls (id),
            id       bigint NOT NULL,
            event_id bigint NOT NULL,
            asker    text,
            session  text,
            text     text NOT NULL,
            asked    double precision NOT NULL,
            state    text NOT NULL,      -- pending | answered | unanswered
            resolved double precision,
            answer   bigint,             -- the assistant event that settled it
            PRIMARY KEY (soul, id)
        );
        CREATE INDEX questions_state ON questions (soul, state);
        CREATE INDEX questions_event ON questions (soul, event_id);
        """,
    ),
    (
        "0009_goals",
        """
        -- What people want (souls/knowledge/goals.py), as on SQLite: triggers and
        -- progress are JSON, kept byte for byte as written; event_id the event a goal
        -- was first read from (NULL: stated through goal.update), set to NULL when that
        -- event is forgotten (the store does it, as SQLite's ON DELETE SET NULL).
        CREATE TABLE goals (
            soul      integer NOT NULL REFERENCES souls (id),
            id        bigint NOT NULL,
            speaker   text NOT NULL,
            statement text NOT NULL,
            domain    text NOT NULL,
            priority  integer NOT NULL,
            triggers  text NOT NULL,     -- JSON list of 1-2 bridge phrases
            state     text NOT NULL,     -- active | paused | achieved | abandoned
            progress  text NOT NULL,     -- JSON list of notes
            created   double precision NOT NULL,
            updated   double precision NOT NULL,
            event_id  bigint,
            PRIMARY KEY (soul, id)
        );
        CREATE INDEX goals_event ON goals (soul, event_id) WHERE event_id IS NOT NULL;
        """,
    ),
    (
        "0010_unspoken",
        """
        -- What a model judged a sentence to leave unsaid (souls/knowledge/claim_llm.py),
        -- as on SQLite: the sentence itself, verbatim from its event, by
        -- unspoken.<hash of the sentence>. Never a fact, never injected; it goes with
        -- its event when that is forgotten.
        CREATE TABLE unspoken (
            soul     integer NOT NULL,
            id       text NOT NULL,
            event_id bigint NOT NULL,
            subject  text NOT NULL,
            sentence text NOT NULL,
            recorded double precision NOT NULL,
            PRIMARY KEY (soul, id),
            FOREIGN KEY (soul, event_id) REFERENCES events (soul, id) ON DELETE CASCADE
        );
        CREATE INDEX unspoken_event ON unspoken (soul, event_id);
        """,
    ),
    (
        "0011_epoch",
        """
        -- The epoch of a soul's lease (souls/store/postgres/lease.py): bumped by every take
        -- and give-up; a write transaction made under another epoch stores nothing.
        ALTER TABLE souls ADD COLUMN epoch bigint NOT NULL DEFAULT 0;
        """,
    ),
    (
        "0012_goal_event",
        """
        -- A goal's event held by a foreign key, as on SQLite: a goal names an event of
        -- its own soul or none, and loses its event id when that event is forgotten
        -- (only the event id: the soul stays). Ids left dangling before go first.
        UPDATE goals AS g SET event_id = NULL
        WHERE event_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM events AS e WHERE e.soul = g.soul AND e.id = g.event_id);
        ALTER TABLE goals ADD CONSTRAINT goals_event_fk FOREIGN KEY (soul, event_id)
            REFERENCES events (soul, id) ON DELETE SET NULL (event_id);
        """,
    ),
    (
        "0013_event_epoch",
        """
        -- The lease epoch each event was written under: the soul's epoch when the row goes
        -- in, which the write's own fence holds FOR SHARE (souls/store/postgres/lease.py),
        -- so it is the writer's. In a soul's id order epochs never go back: the record
        -- that no two daemons wrote the soul at once (tests/e2e/test_failover.py).
        ALTER TABLE events ADD COLUMN epoch bigint NOT NULL DEFAULT 0;
        CREATE FUNCTION events_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.epoch := (SELECT epoch FROM souls WHERE id = NEW.soul);
            RETURN NEW;
        END
        $$;
        CREATE TRIGGER events_epoch BEFORE INSERT ON events
            FOR EACH ROW EXECUTE FUNCTION events_epoch();
        """,
    ),
    (
        "0014_row_checks",
        """
        -- Three checks made at every row cost a push a third of its store time, each
        -- planned again for each row (plan_cache_mode = force_custom_plan,
        -- souls/store/postgres/pool.py): the trigger that gave an event its epoch, and
        -- the foreign keys from an event to its soul and from a memory to its event
        -- (20 and 40 us a row). The store writes the epoch itself: its fence's, which
        -- the write's check found on the soul's row and holds FOR SHARE until the
        -- commit (souls/store/postgres/lease.py), so the same value. The event's key
        -- goes: that check holds the soul's row more strongly than the key would, and
        -- no soul is ever deleted. The memory's key goes: a memory is written only by
        -- its soul's one writer, in the transaction that wrote its event, and
        -- forgetting deletes the memories before their events (PgStore._forget), as
        -- on SQLite, whose key stays. A check once a statement over the rows written
        -- (a transition table) was tried: planned without statistics on a growing
        -- table, it scanned the soul's events for each memory. The trigger stays for
        -- a row that comes without its epoch (a daemon not yet upgraded, sharing the
        -- database): such a row still records its writer's.
        DROP TRIGGER events_epoch ON events;
        CREATE TRIGGER events_epoch BEFORE INSERT ON events
            FOR EACH ROW WHEN (NEW.epoch = 0) EXECUTE FUNCTION events_epoch();
        ALTER TABLE memories DROP CONSTRAINT memories_soul_event_id_fkey;
        ALTER TABLE events DROP CONSTRAINT events_soul_fkey;
        """,
    ),
    (
        "0015_relayed_outputs",
        """
        -- An output too large for a NOTIFY (8000 bytes), kept for the other daemons of the
        -- store to read (supervisor/relay.py): the notification names its row. soul: its
        -- soul's id (souls.id); payload: the whole notification, JSON. Rows older than ten
        -- minutes are deleted by the publishers; nothing refers to them.
        CREATE TABLE relayed_outputs (
            id      bigserial PRIMARY KEY,
            soul    integer NOT NULL,
            payload text NOT NULL,
            at      timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX relayed_outputs_at ON relayed_outputs (at);
        """,
    ),
)


async def migrate(db: asyncpg.Connection) -> list[str]:
    """Apply the migrations not yet applied, each in its own transaction; the names
    applied now, in order."""
    done: list[str] = []
    for name, sql in MIGRATIONS:
        async with db.transaction():
            await db.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            await db.execute(
                "CREATE TABLE IF NOT EXISTS migrations"
                " (name text PRIMARY KEY, applied_at double precision NOT NULL)"
            )
            if await db.fetchval("SELECT 1 FROM migrations WHERE name = $1", name):
                continue
            await db.execute(sql)
            await db.execute(
                "INSERT INTO migrations (name, applied_at) VALUES ($1, $2)", name, time.time()
            )
            done.append(name)
    return done

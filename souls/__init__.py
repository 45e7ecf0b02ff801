"""A soul: one agent's living memory, as an actor and the mechanisms it thinks with.

The tree reads in the order an event travels (DESIGN §1, §3), each room a package:

* :mod:`souls.intake` — the write path's gates: hygiene, attention, surprise;
* :mod:`souls.store` — the soul's SQLite database, its schema and its full-text index;
* :mod:`souls.mind` — what the soul makes of what it stored: reflect, Hebbian edges,
  decay, somatic markers, homeostasis, metacognition;
* :mod:`souls.recall` — the recall path: ranking memories for a query and assembling a
  context;
* :mod:`souls.knowledge` — what the soul knows and wants: claims, entries, questions,
  goals, tasks, persons, the memory map;
* :mod:`souls.collision` — the collision memory: cards, lightning, the presentation gate
  and its judge, the weekly tide;
* :mod:`souls.llm` — a chat model, when a soul has one: the client, the LLM reflector
  and the answering loop;
* :mod:`souls.text` — the one tokenizer everything reads text with;
* :mod:`souls.actor` — the actor that owns one soul's state and serialises every change
  to it, with the parts it drives a turn through.

Where a request goes: the write path is :mod:`souls.intake` (gates), then
:mod:`souls.actor.ingest` (de-duplication, group commit), then :mod:`souls.store`; the
recall path is :mod:`souls.actor.recollection`, then :mod:`souls.recall` over
:mod:`souls.store`; the collision memory is :mod:`souls.actor.deck` over
:mod:`souls.collision`.

Beside the rooms, the actor's vocabulary, which every room may use:
:mod:`souls.events` (an event as it arrives), :mod:`souls.messages` (its mail) and
:mod:`souls.results` (its answers); and :mod:`souls.config`, the soul's TOML file, which
gathers the settings of every room and so is read by the actor alone.

Layering (``[tool.importlinter]`` in ``pyproject.toml``, checked by the test suite):
``actor`` > ``config`` > ``collision`` | ``knowledge`` > ``llm`` > ``recall`` > ``mind`` >
``intake`` > ``store`` > ``text`` > ``messages`` > ``events`` | ``results``. A package
imports only from those below it; nothing in ``souls`` imports ``channels``, and from
``supervisor`` only its exception tree (:mod:`supervisor.errors`) and the tree's
:func:`~supervisor.tree.shielded_cleanup`.
"""

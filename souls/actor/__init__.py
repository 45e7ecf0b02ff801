"""The soul actor: one task per soul, the sole owner of its database, and what it drives.

:mod:`~souls.actor.soul` runs the turns: it takes mail from its bounded
:mod:`~souls.actor.mailbox`, hands each kind of request to the part that serves it and
commits a turn's changes in one transaction. The parts: :mod:`~souls.actor.ingest` (the
write path, from events to committed rows), :mod:`~souls.actor.recollection` (the recall
path: recalled items and context blocks), :mod:`~souls.actor.deck` (cards and their
collisions), :mod:`~souls.actor.knowing` (requests on what it knows and whom),
:mod:`~souls.actor.agenda` (tasks with due times), :mod:`~souls.actor.rights` (forget,
export, backup, rebuild), :mod:`~souls.actor.memories` (memories by id: pages, one,
what a correction keeps) and :mod:`~souls.actor.cognition` (its ``Mind``: the cognitive
state carried between turns). :mod:`~souls.actor.brain` is its directory of Markdown
files, :mod:`~souls.actor.clock` where its time comes from.

The top room: it may import every other room of :mod:`souls` and :mod:`souls.config`;
nothing in :mod:`souls` imports it. The supervisor hosts souls through its public modules
(and the socket documents the results of forget and rebuild from :mod:`~souls.actor.rights`).
"""

# The modules other rooms may import; the rest are this room's own.
__all__ = ["clock", "cognition", "mailbox", "memories", "rights", "soul"]

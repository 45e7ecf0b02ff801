"""The ``soupd`` command: its entry point and one module per group of commands.

:mod:`~supervisor.cli.main` builds the parser, dispatches and holds the daemon's own
commands (``start``, ``send``, ``recall``, ``import``, ...); the commands of a topic live
beside it, each with a ``register`` (:mod:`~supervisor.cli.knowledge`,
:mod:`~supervisor.cli.loop`, :mod:`~supervisor.cli.tasks`, :mod:`~supervisor.cli.data`,
:mod:`~supervisor.cli.check`, :mod:`~supervisor.cli.cards`), with what they share in
:mod:`~supervisor.cli.shared`. ``soupd import`` streams a file through
:mod:`~supervisor.cli.importer` and restores what the user set with
:mod:`~supervisor.cli.restore`.

Every command but ``start`` is a client of the daemon's socket. Nothing in the runtime
(the rest of :mod:`supervisor`, :mod:`souls`, :mod:`channels`) imports this package.
"""

# The entry point (``[project.scripts]``); the rest are the command's own.
__all__ = ["main"]

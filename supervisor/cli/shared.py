"""What :mod:`supervisor.cli.main` hands the command modules beside it: the signatures
of its ``command``, ``call``, ``show`` and ``settings``, the ``key: value`` formatter
several commands print their result with (from :mod:`~supervisor.cli.render`), and the
argument type of a memory id (``7`` or ``m7``).

A command module has one ``register(command, ...)`` that adds its commands to the
parser through ``command`` and makes each a closure over the helpers it was given, so
that no module imports :mod:`~supervisor.cli.main` back.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from supervisor.cli.render import key_values

if TYPE_CHECKING:  # the configuration's Structs are slow to import: not at every start
    from supervisor.config import Settings

__all__ = ["Call", "Command", "LoadSettings", "Show", "key_values", "memory_id"]

# Adds a subcommand (name, handler, help) and returns its parser, for its arguments.
Command = Callable[[str, Callable[[argparse.Namespace], int], str], Any]
# One socket call (method, params) to the daemon; its result.
Call = Callable[[argparse.Namespace, str, dict[str, Any]], Any]
# Prints a result for people (the formatter) or as JSON (--json); the exit status.
Show = Callable[[argparse.Namespace, Any, Callable[[Any], str]], int]
# The settings the command line and environment name.
LoadSettings = Callable[[argparse.Namespace], "Settings"]


def memory_id(text: str) -> int:
    """argparse's type for a memory id: ``7`` or ``m7`` (:func:`souls.messages.memory_id`);
    anything else is a usage error that names the accepted forms."""
    from souls.messages import memory_id as parse
    from supervisor.errors import InvalidParams

    try:
        return parse(text)
    except InvalidParams as error:
        raise argparse.ArgumentTypeError(error.message) from None

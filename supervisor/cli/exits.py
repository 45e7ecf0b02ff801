"""How ``soupd`` ends: the exit status by cause, and the error it says.

==========  ===============================================================
status      cause
==========  ===============================================================
0           done
1           any other error (the daemon failed the request, busy, timeout...)
2           usage or configuration (a bad flag, flags that contradict each other,
            a file to read that cannot be read, ``soupd.toml`` or a soul file)
3           a check failed (``check``, ``cards --strict``, ``tide``, ``tasks``)
4           the daemon is not running (or its socket refused this user)
5           input refused (the hygiene gate, invalid parameters, a line of an
            import that was rejected)
6           not found (no such soul)
130         interrupted (Ctrl-C)
141         standard output was closed (``soupd cards x | head``): quietly
==========  ===============================================================

An error is one line on standard error, ``soupd: CODE: MESSAGE``; under ``--json`` it is
one JSON object there instead, ``{"error": {"code": ..., "message": ...}}``, so a script
reads the result from standard output and the error from standard error alike.
"""

from __future__ import annotations

import sys

from supervisor.errors import ConfigError, DaemonNotRunning, SoupdError, UsageError

__all__ = [
    "CHECK_FAILED",
    "ERROR",
    "INTERRUPTED",
    "NOT_FOUND",
    "NOT_RUNNING",
    "OK",
    "PIPE_CLOSED",
    "REFUSED",
    "USAGE",
    "say_error",
    "status_of",
]

OK = 0
ERROR = 1
USAGE = 2
CHECK_FAILED = 3
NOT_RUNNING = 4
REFUSED = 5
NOT_FOUND = 6
INTERRUPTED = 130
PIPE_CLOSED = 128 + 13  # as if killed by SIGPIPE, the way `yes | head` ends

# Wire codes of a request the daemon refused for what it carried.
_REFUSED = frozenset({"invalid_params", "frame_too_large", "bad_frame"})
_NOT_FOUND = frozenset({"unknown_soul", "not_found"})


def status_of(error: SoupdError) -> int:
    """The exit status for an error, by its cause."""
    if isinstance(error, ConfigError | UsageError):
        return USAGE
    if isinstance(error, DaemonNotRunning):
        return NOT_RUNNING
    if error.code in _NOT_FOUND:
        return NOT_FOUND
    if error.code in _REFUSED or error.code.startswith("hygiene."):
        return REFUSED
    return ERROR


def say_error(code: str, message: str, *, as_json: bool) -> None:
    """Write one error on standard error: a line for people, or a JSON object."""
    if as_json:
        import json

        line = json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False)
    elif code == ConfigError.code:
        line = f"soupd: config error: {message}"
    else:
        line = f"soupd: {code}: {message}"
    print(line, file=sys.stderr)

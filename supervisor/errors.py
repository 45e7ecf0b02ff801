"""The one exception tree of soupd.

Every error a user or a peer can meet derives from :class:`SoupdError`. Each class
carries a stable wire ``code`` (what clients branch on) and its message always says
what to do next. The module imports nothing from the rest of soupd, so every layer
(the supervision tree, souls, channels) may raise from it.

::

    SoupdError
    ├── ConfigError                  config.invalid
    ├── ProtocolError
    │   ├── FrameTooLarge            frame_too_large
    │   ├── MalformedFrame           bad_frame
    │   ├── UnknownMethod            unknown_method
    │   └── InvalidParams            invalid_params
    ├── UnknownSoul                  unknown_soul
    ├── NotFound                     not_found
    ├── RejectedInput                hygiene.<rule>
    ├── SoulBusy                     busy
    ├── SoulUnavailable              soul_unavailable
    ├── SoulElsewhere                soul_elsewhere    (PostgreSQL: another daemon owns it)
    ├── LeaseLost                    lease_lost        (PostgreSQL: another daemon took it)
    ├── Unsupported                  unsupported       (not on this store backend yet)
    ├── StoreUnusable                store_unusable
    │   └── SharedStoreUnusable      store_unusable    (the shared PostgreSQL store)
    ├── UnsafeFile                   unsafe_file
    ├── DiskFull                     disk_full
    ├── AskTimeout                   timeout
    ├── PeerRefused                  peer_refused
    ├── ConnectionLimit              (a [socket] limit of soupd.toml, named in the message)
    │   ├── TooManyConnections       too_many_connections
    │   ├── FrameTimeout             frame_timeout
    │   ├── IdleTimeout              idle_timeout
    │   └── ReplyBufferFull          reply_buffer_full
    ├── ClientError
    │   ├── DaemonNotRunning         daemon_not_running
    │   ├── RemoteError              (the code the daemon sent)
    │   └── UsageError               usage             (the CLI's own)
    ├── AlreadyRunning               already_running
    ├── InjectedFault                injected_fault
    ├── LLMError                     llm_unavailable   (souls/llm/chat.py)
    ├── ChannelError                 channel.upstream  (channels/base.py)
    │   └── NotAcknowledged          channel.unacknowledged
    └── SupervisorError
        ├── ChildStartError          child_start_failed
        └── RestartIntensityExceeded restart_intensity
"""

from __future__ import annotations

__all__ = [
    "AlreadyRunning",
    "AskTimeout",
    "ChildStartError",
    "ClientError",
    "ConfigError",
    "ConnectionLimit",
    "DaemonNotRunning",
    "DiskFull",
    "FrameTimeout",
    "FrameTooLarge",
    "IdleTimeout",
    "InjectedFault",
    "InvalidParams",
    "LeaseLost",
    "MalformedFrame",
    "MissingItem",
    "NotFound",
    "PeerRefused",
    "ProtocolError",
    "RejectedInput",
    "RemoteError",
    "ReplyBufferFull",
    "RestartIntensityExceeded",
    "SharedStoreUnusable",
    "SoulBusy",
    "SoulElsewhere",
    "SoulUnavailable",
    "SoupdError",
    "StoreUnusable",
    "SupervisorError",
    "TooManyConnections",
    "UnknownMethod",
    "UnknownSoul",
    "UnsafeFile",
    "Unsupported",
]


class SoupdError(Exception):
    """Base of every soupd error. ``code`` is stable; ``message`` says what to do."""

    code: str = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(SoupdError):
    """A configuration file is unreadable or does not validate.

    ``path`` is the file, ``key`` the dotted key path inside it (empty for the whole
    file), so an operator can go straight to the line to fix.
    """

    code = "config.invalid"

    def __init__(self, path: str, key: str, problem: str) -> None:
        where = f"{path}: {key}" if key else path
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.key = key
        self.problem = problem


class ProtocolError(SoupdError):
    """A frame on the socket could not be understood."""


class FrameTooLarge(ProtocolError):
    code = "frame_too_large"


class MalformedFrame(ProtocolError):
    code = "bad_frame"


class UnknownMethod(ProtocolError):
    code = "unknown_method"


class InvalidParams(ProtocolError):
    code = "invalid_params"


class UnknownSoul(SoupdError):
    code = "unknown_soul"

    def __init__(self, name: str) -> None:
        super().__init__(
            f"no soul named {name!r}; list them with `soupd souls`, or create it with "
            f"`soupd soul create {name}` (or add souls/{name}.toml beside soupd.toml and "
            "reload: `kill -HUP` the daemon)"
        )
        self.name = name


class NotFound(SoupdError):
    """A soul has no item with the id asked for (a memory, say); the message says how to
    list what there is."""

    code = "not_found"


class MissingItem(ValueError):
    """Raised by a room of a soul, where it would raise ValueError, when a request names
    an item the soul has none of (a claim, goal, card or draw id): a ValueError still to
    the room's own callers, NotFound (with this message) once the actor answers it."""


class RejectedInput(SoupdError):
    """The hygiene gate refused a text. ``code`` is ``hygiene.<rule>``; ``field`` names
    the refused field when it was not the event's text (``sender``, ``triggers[1]``)."""

    def __init__(self, rule: str, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.rule = rule
        self.code = f"hygiene.{rule}"
        self.field = field


class SoulBusy(SoupdError):
    """A mailbox is full and the caller asked not to wait."""

    code = "busy"


class StoreUnusable(SoupdError):
    """A soul's database cannot be opened or read: not a database, corrupt, no access."""

    code = "store_unusable"

    def __init__(self, path: object, cause: BaseException) -> None:
        super().__init__(
            f"cannot use the soul database {path}: {cause}; restore it from a backup, or "
            "move it away and the soul starts afresh"
        )
        self.path = str(path)


class SharedStoreUnusable(StoreUnusable):
    """The shared PostgreSQL store (``[store] backend = "postgres"``) cannot be reached
    or used: refused, unknown database, wrong password. ``where`` names where the DSN
    came from, never the DSN (it holds the password)."""

    def __init__(self, where: str, problem: str) -> None:
        SoupdError.__init__(
            self,
            f"cannot use the PostgreSQL database of {where}: {problem}; check that the "
            "server runs and accepts this DSN (host, port, database, user and password), "
            "then start soupd again",
        )
        self.path = where


class DiskFull(SoupdError):
    """The disk holding a soul's database is full: the write was not made. The soul stays
    up, answers reads, and writes again as soon as there is room."""

    code = "disk_full"

    def __init__(self, path: object) -> None:
        super().__init__(
            f"the disk holding {path} is full: nothing of this was stored; the soul keeps "
            "answering reads and stores again once space is freed, so free some and send "
            "it again"
        )
        self.path = str(path)


class UnsafeFile(SoupdError):
    """A soul's folder or database file is a symlink, another user's, or writable by
    others: the soul refuses to use it (the message says which and what to do)."""

    code = "unsafe_file"


class SoulUnavailable(SoupdError):
    """The soul is restarting, stopping, or was stopped after crashing too often."""

    code = "soul_unavailable"


class SoulElsewhere(SoupdError):
    """On a shared PostgreSQL store, another daemon owns the soul (holds its lease)."""

    code = "soul_elsewhere"

    def __init__(self, soul: str, owner: str | None) -> None:
        where = f"the daemon at {owner}" if owner else "another daemon"
        super().__init__(
            f"soul {soul!r} is served by {where}: send the request there, or retry here "
            "once that daemon has stopped (its lease then goes to whoever asks first)"
        )
        self.soul = soul
        self.owner = owner


class LeaseLost(SoupdError):
    """On a shared PostgreSQL store, this daemon no longer owns the soul: its lease went
    (its session ended) and another daemon took the soul over. Nothing of the write that
    found it was stored."""

    code = "lease_lost"

    def __init__(self, soul: str, epoch: int, now: int | None) -> None:
        moved = "its lease was given up" if now is None else f"its lease is at {now} now"
        super().__init__(
            f"this daemon no longer owns soul {soul!r} (it wrote under lease {epoch}, "
            f"{moved}: given up, or taken over by another daemon); nothing of this was "
            "stored: retry, and the request goes to its owner"
        )
        self.soul = soul
        self.epoch = epoch


class Unsupported(SoupdError):
    """What was asked exists, but not (yet) for a soul on this store backend."""

    code = "unsupported"


class AskTimeout(SoupdError):
    code = "timeout"


class PeerRefused(SoupdError):
    code = "peer_refused"


class ConnectionLimit(SoupdError):
    """A socket connection ran into one of the ``[socket]`` limits of ``soupd.toml``.

    The message names the limit and its value. Except for :class:`ReplyBufferFull`
    (the reply to one request), the daemon closes the connection right after sending
    the error, with ``id`` null.
    """


class TooManyConnections(ConnectionLimit):
    """Refused at connect: every connection slot (or file descriptor) is in use."""

    code = "too_many_connections"


class FrameTimeout(ConnectionLimit):
    """A frame was begun but its newline did not arrive in time."""

    code = "frame_timeout"


class IdleTimeout(ConnectionLimit):
    """The connection made no progress for too long: no request, or its replies unread."""

    code = "idle_timeout"


class ReplyBufferFull(ConnectionLimit):
    """A result did not fit the bytes of replies that may wait unread; the request
    itself was carried out."""

    code = "reply_buffer_full"


class ClientError(SoupdError):
    """Raised on the client side of the socket."""


class DaemonNotRunning(ClientError):
    code = "daemon_not_running"


class RemoteError(ClientError):
    """The daemon answered with an error; ``code`` is the daemon's."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class UsageError(ClientError):
    """The command line asks for something it cannot be: flags that contradict each
    other, a value of the wrong form, a file to read that is not there. Never sent on
    the wire; the CLI exits 2 for it, as for a bad flag."""

    code = "usage"


class AlreadyRunning(SoupdError):
    code = "already_running"


class InjectedFault(SoupdError):
    """Raised on purpose by the fault-injection hook (``debug.crash``)."""

    code = "injected_fault"


class SupervisorError(SoupdError):
    """Failures of the supervision tree itself."""


class ChildStartError(SupervisorError):
    code = "child_start_failed"


class RestartIntensityExceeded(SupervisorError):
    code = "restart_intensity"

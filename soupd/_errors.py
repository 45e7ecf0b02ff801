"""The client's exception tree: one class per error code the daemon sends.

Every error the client raises derives from :class:`SoupdError`; ``code`` is the wire
code (what to branch on) and ``message`` the daemon's text, which says what to do.
A code this client does not know yet is raised as :class:`SoupdError` itself, with
the code kept, so a newer daemon never breaks an older client.

::

    SoupdError                         (any code this client does not know)
    ├── InternalError                  error
    ├── ConfigInvalid                  config.invalid
    ├── ProtocolError
    │   ├── FrameTooLarge              frame_too_large
    │   ├── BadFrame                   bad_frame
    │   ├── UnknownMethod              unknown_method
    │   └── InvalidParams              invalid_params
    ├── NotFound                       not_found         (no such memory, ...)
    │   └── UnknownSoul                unknown_soul
    ├── RejectedInput                  hygiene.<rule> (a rule this client does not know)
    │   ├── EmptyText                  hygiene.empty
    │   ├── TextTooLong                hygiene.too_long
    │   ├── InvalidCharacters          hygiene.invalid_chars
    │   ├── RepeatedLines              hygiene.repeated_lines
    │   └── CredentialFound            hygiene.credential
    ├── Busy                           busy
    ├── SoulUnavailable                soul_unavailable
    ├── SoulElsewhere                  soul_elsewhere    (another daemon owns the soul)
    ├── LeaseLost                      lease_lost        (another daemon took it over)
    ├── Unsupported                    unsupported       (not on this store backend yet)
    ├── StoreUnusable                  store_unusable
    ├── UnsafeFile                     unsafe_file
    ├── DiskFull                       disk_full
    ├── Timeout (also a TimeoutError)  timeout           (the soul did not answer in time)
    │   └── ClientTimeout              client_timeout    (no reply within the call's timeout)
    ├── PeerRefused                    peer_refused
    ├── ConnectionLimit
    │   ├── TooManyConnections         too_many_connections
    │   ├── FrameTimeout               frame_timeout
    │   ├── IdleTimeout                idle_timeout
    │   └── ReplyBufferFull            reply_buffer_full
    ├── InjectedFault                  injected_fault
    ├── LLMUnavailable                 llm_unavailable
    ├── EmbeddingUnavailable           embedding_unavailable
    ├── LightningError
    │   ├── NotEnoughCards             not_enough_cards
    │   ├── AmbiguousExclusion         ambiguous_exclusion
    │   └── UnknownExclusion           unknown_exclusion
    └── ConnectionProblem              (raised by the client itself)
        ├── DaemonNotRunning           daemon_not_running
        └── ConnectionLost             connection_lost
"""

from __future__ import annotations

__all__ = [
    "AmbiguousExclusion",
    "BadFrame",
    "Busy",
    "ClientTimeout",
    "ConfigInvalid",
    "ConnectionLimit",
    "ConnectionLost",
    "ConnectionProblem",
    "CredentialFound",
    "DaemonNotRunning",
    "DiskFull",
    "EmbeddingUnavailable",
    "EmptyText",
    "FrameTimeout",
    "FrameTooLarge",
    "IdleTimeout",
    "InjectedFault",
    "InternalError",
    "InvalidCharacters",
    "InvalidParams",
    "LLMUnavailable",
    "LeaseLost",
    "LightningError",
    "NotEnoughCards",
    "NotFound",
    "PeerRefused",
    "ProtocolError",
    "RejectedInput",
    "RepeatedLines",
    "ReplyBufferFull",
    "SoulElsewhere",
    "SoulUnavailable",
    "SoupdError",
    "StoreUnusable",
    "TextTooLong",
    "Timeout",
    "TooManyConnections",
    "UnknownExclusion",
    "UnknownMethod",
    "UnknownSoul",
    "UnsafeFile",
    "Unsupported",
    "error_class",
    "from_wire",
]


class SoupdError(Exception):
    """Base of every error of the client. ``code`` is the wire code, ``message`` what
    the daemon (or the client) says to do about it."""

    code: str = "error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class InternalError(SoupdError):
    """A bug in the daemon answered this request; its log has the details."""

    code = "error"


class ConfigInvalid(SoupdError):
    code = "config.invalid"


class ProtocolError(SoupdError):
    """The daemon could not understand the request."""


class FrameTooLarge(ProtocolError):
    code = "frame_too_large"


class BadFrame(ProtocolError):
    code = "bad_frame"


class UnknownMethod(ProtocolError):
    code = "unknown_method"


class InvalidParams(ProtocolError):
    code = "invalid_params"


class NotFound(SoupdError):
    """What the request names does not exist (a memory id, say)."""

    code = "not_found"


class UnknownSoul(NotFound):
    code = "unknown_soul"


class RejectedInput(SoupdError):
    """The hygiene gate refused a text: nothing was stored. ``rule`` is the rule."""

    code = "hygiene"

    @property
    def rule(self) -> str:
        return self.code.removeprefix("hygiene.")


class EmptyText(RejectedInput):
    code = "hygiene.empty"


class TextTooLong(RejectedInput):
    code = "hygiene.too_long"


class InvalidCharacters(RejectedInput):
    code = "hygiene.invalid_chars"


class RepeatedLines(RejectedInput):
    code = "hygiene.repeated_lines"


class CredentialFound(RejectedInput):
    code = "hygiene.credential"


class Busy(SoupdError):
    code = "busy"


class SoulUnavailable(SoupdError):
    """The soul is restarting, stopping, or was stopped after crashing too often."""

    code = "soul_unavailable"


class SoulElsewhere(SoupdError):
    """On a shared PostgreSQL store, another daemon owns the soul: the message names it."""

    code = "soul_elsewhere"


class LeaseLost(SoupdError):
    """On a shared PostgreSQL store, the daemon lost the soul to another mid-request;
    nothing of the request was stored: retry."""

    code = "lease_lost"


class Unsupported(SoupdError):
    """What was asked exists, but not (yet) for a soul on the daemon's store backend."""

    code = "unsupported"


class StoreUnusable(SoupdError):
    code = "store_unusable"


class UnsafeFile(SoupdError):
    code = "unsafe_file"


class DiskFull(SoupdError):
    """Nothing of this was stored; send it again once space is freed."""

    code = "disk_full"


class Timeout(SoupdError, TimeoutError):
    """The answer did not come in time."""

    code = "timeout"


class ClientTimeout(Timeout):
    """No reply within the call's ``timeout``. The connection is dropped (a late reply
    must not be taken for the next call's), so the request may still be carried out."""

    code = "client_timeout"


class PeerRefused(SoupdError):
    code = "peer_refused"


class ConnectionLimit(SoupdError):
    """The connection ran into one of the daemon's ``[socket]`` limits."""


class TooManyConnections(ConnectionLimit):
    code = "too_many_connections"


class FrameTimeout(ConnectionLimit):
    code = "frame_timeout"


class IdleTimeout(ConnectionLimit):
    code = "idle_timeout"


class ReplyBufferFull(ConnectionLimit):
    code = "reply_buffer_full"


class InjectedFault(SoupdError):
    code = "injected_fault"


class LLMUnavailable(SoupdError):
    code = "llm_unavailable"


class EmbeddingUnavailable(SoupdError):
    code = "embedding_unavailable"


class LightningError(SoupdError):
    """A lightning draw could not be made as asked."""


class NotEnoughCards(LightningError):
    code = "not_enough_cards"


class AmbiguousExclusion(LightningError):
    code = "ambiguous_exclusion"


class UnknownExclusion(LightningError):
    code = "unknown_exclusion"


class ConnectionProblem(SoupdError):
    """Raised by the client itself: the daemon could not be reached or went away."""


class DaemonNotRunning(ConnectionProblem):
    code = "daemon_not_running"


class ConnectionLost(ConnectionProblem):
    """The connection broke before the reply came: the request may or may not have
    been carried out (calls that are safe to send twice were already sent again)."""

    code = "connection_lost"


def _codes() -> dict[str, type[SoupdError]]:
    found: dict[str, type[SoupdError]] = {}
    stack: list[type[SoupdError]] = SoupdError.__subclasses__()
    while stack:
        kind = stack.pop()
        stack.extend(kind.__subclasses__())
        if "code" in vars(kind):
            found[kind.code] = kind
    return found


_BY_CODE = _codes()


def error_class(code: str) -> type[SoupdError]:
    """The class raised for wire ``code`` (:class:`SoupdError` for an unknown one)."""
    kind = _BY_CODE.get(code)
    if kind is not None:
        return kind
    if code.startswith("hygiene."):
        return RejectedInput
    return SoupdError


def from_wire(code: str, message: str) -> SoupdError:
    """The exception for an error reply, keeping the daemon's code and message."""
    return error_class(code)(message, code=code)

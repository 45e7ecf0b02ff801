"""GitHub webhook deliveries as events (pure functions).

``X-GitHub-Event`` picks the mapping; each yields at most one event, or None for
what is no news (a green workflow run, a label change). Kinds are ``github.<event>``;
the text is one line a person would write, so the attention gate's alarm words
("failed", "failure") raise a failed run's salience without any special rule. The
ref is the delivery's GUID (``X-GitHub-Delivery``): a redelivery carries the same
one, so it is stored once.
"""

from __future__ import annotations

from typing import Any

from souls.events import EventIn

__all__ = ["github_event"]

# Longest excerpt of an issue or pull request body kept in the event.
_BODY_CHARS = 500

_ISSUE_ACTIONS = frozenset({"opened", "closed", "reopened"})
_PULL_ACTIONS = frozenset({"opened", "closed", "reopened", "ready_for_review", "review_requested"})


def github_event(channel: str, event: str, delivery: str, payload: Any) -> EventIn | None:
    """The event for one delivery, or None when it is not worth a soul's attention.

    Raises KeyError / TypeError on a payload that lacks what its event type promises.
    """
    if not isinstance(payload, dict):
        raise TypeError("a GitHub payload is a JSON object")
    mapper = _MAPPERS.get(event)
    if mapper is None:
        return None
    found = mapper(payload)
    if found is None:
        return None
    text, ts = found
    return EventIn(
        text=text,
        kind=f"github.{event}",
        channel=channel,
        sender=_login(payload.get("sender")),
        ref=f"github:{delivery}",
        ts=ts,
    )


def _login(user: Any) -> str | None:
    return user.get("login") if isinstance(user, dict) else None


def _excerpt(body: Any) -> str:
    if not isinstance(body, str) or not body.strip():
        return ""
    text = " ".join(body.split())
    return "\n" + (text if len(text) <= _BODY_CHARS else text[: _BODY_CHARS - 1] + "…")


def _issues(payload: dict[str, Any]) -> tuple[str, str | None] | None:
    action, issue = payload["action"], payload["issue"]
    if action not in _ISSUE_ACTIONS:
        return None
    repo = payload["repository"]["full_name"]
    who = _login(payload.get("sender")) or "someone"
    text = f"{repo}: issue #{issue['number']} {action} by {who}: {issue['title']}"
    if action == "opened":
        text += _excerpt(issue.get("body"))
    return text, issue.get("updated_at")


def _pull_request(payload: dict[str, Any]) -> tuple[str, str | None] | None:
    action, pull = payload["action"], payload["pull_request"]
    if action not in _PULL_ACTIONS:
        return None
    if action == "closed":
        action = "merged" if pull.get("merged") else "closed without merging"
    repo = payload["repository"]["full_name"]
    who = _login(payload.get("sender")) or "someone"
    text = f"{repo}: pull request #{pull['number']} {action} by {who}: {pull['title']}"
    if action == "review_requested":
        reviewer = _login(payload.get("requested_reviewer"))
        text += f" (review requested from {reviewer})" if reviewer else ""
    if action == "opened":
        text += _excerpt(pull.get("body"))
    return text, pull.get("updated_at")


def _push(payload: dict[str, Any]) -> tuple[str, str | None] | None:
    commits = payload.get("commits") or []
    if not commits:
        return None  # a branch created or deleted without new commits
    repo = payload["repository"]["full_name"]
    branch = str(payload["ref"]).removeprefix("refs/heads/")
    pusher = (payload.get("pusher") or {}).get("name") or _login(payload.get("sender"))
    messages = "; ".join(str(c["message"]).splitlines()[0] for c in commits[:5])
    more = f" (+{len(commits) - 5} more)" if len(commits) > 5 else ""
    noun = "commit" if len(commits) == 1 else "commits"
    text = f"{repo}: {pusher} pushed {len(commits)} {noun} to {branch}: {messages}{more}"
    head = payload.get("head_commit") or {}
    return text, head.get("timestamp")


def _workflow_run(payload: dict[str, Any]) -> tuple[str, str | None] | None:
    run = payload["workflow_run"]
    if payload["action"] != "completed" or run.get("conclusion") not in ("failure", "timed_out"):
        return None  # only failures are news
    repo = payload["repository"]["full_name"]
    how = "failed" if run["conclusion"] == "failure" else "failed (timed out)"
    text = (
        f"{repo}: workflow {run['name']!r} {how} on {run.get('head_branch')} "
        f"at {str(run.get('head_sha', ''))[:7]}: {run.get('html_url', '')}"
    ).rstrip(": ")
    return text, run.get("updated_at")


_MAPPERS = {
    "issues": _issues,
    "pull_request": _pull_request,
    "push": _push,
    "workflow_run": _workflow_run,
}

"""Souls made and removed at run time through both clients."""

from __future__ import annotations

from typing import Any

import pytest

import soupd


def test_a_soul_created_runs_and_a_deleted_one_is_gone(client: Any) -> None:
    made = client.create_soul("gamma", config={"recall": {"k": 5}})
    assert isinstance(made, soupd.SoulCreated)
    assert made.soul == "gamma"
    assert made.file is not None
    assert made.file.endswith("souls/gamma.toml")
    assert "gamma" in {soul.name for soul in client.souls()}
    client.push("gamma", "a soul made over the socket remembers")
    assert [hit.text for hit in client.recall("gamma", "remembers")] == [
        "a soul made over the socket remembers"
    ]
    with pytest.raises(soupd.InvalidParams, match="exists already"):
        client.create_soul("gamma")

    removed = client.delete_soul("gamma")
    assert isinstance(removed, soupd.SoulDeleted)
    assert (removed.soul, removed.stopped, removed.purged) == ("gamma", True, False)
    assert removed.kept  # its state folder stays unless purged
    assert "gamma" not in {soul.name for soul in client.souls()}
    with pytest.raises(soupd.UnknownSoul):
        client.recall("gamma", "remembers")


def test_a_soul_is_created_from_its_toml_text(client: Any) -> None:
    made = client.create_soul("delta", toml="[recall]\nk = 3\n")
    assert made.soul == "delta"
    gone = client.delete_soul("delta", purge=True)
    assert gone.purged


def test_kept_data_is_reopened_only_when_asked_and_purged_later(client: Any) -> None:
    client.create_soul("epsilon")
    client.push("epsilon", "the kept memory of epsilon")
    kept = client.delete_soul("epsilon").kept
    with pytest.raises(soupd.InvalidParams, match="reopen"):
        client.create_soul("epsilon")
    made = client.create_soul("epsilon", reopen=True)
    assert made.reopened == kept[0]
    assert client.recall("epsilon", "kept memory")
    client.delete_soul("epsilon")
    with pytest.raises(soupd.UnknownSoul, match="purge"):
        client.delete_soul("epsilon")
    gone = client.delete_soul("epsilon", purge=True)
    assert (gone.stopped, gone.purged, gone.kept) == (False, True, [])
    assert client.create_soul("epsilon").reopened is None
    assert client.recall("epsilon", "kept memory") == []

"""Memories by id through both clients: a page with its cursor and filters, get,
update (the corrected text takes the old one's place), delete; forget's dry run."""

from __future__ import annotations

from typing import Any

import pytest

import soupd


def test_memories_listed_got_updated_and_deleted(client: Any) -> None:
    for n in range(5):
        client.push(
            "alpha", f"standup note {n}: the build is green", sender="ana" if n % 2 else "bo"
        )
    first = client.list_memories("alpha", limit=2)
    assert isinstance(first, soupd.MemoryPage)
    assert [m.text for m in first.items] == [
        "standup note 4: the build is green",
        "standup note 3: the build is green",
    ]
    assert first.next_cursor is not None
    rest = client.list_memories("alpha", cursor=first.next_cursor, limit=10)
    assert [m.text[:13] for m in rest.items] == ["standup note ", "standup note ", "standup note "]
    assert rest.next_cursor is None
    anas = client.list_memories("alpha", sender="ana")
    assert {m.sender for m in anas.items} == {"ana"}
    assert len(anas.items) == 2

    memory = client.get_memory("alpha", first.items[0].id)
    assert isinstance(memory, soupd.Memory)
    assert (memory.text, memory.sender, memory.kind) == (
        "standup note 4: the build is green",
        "bo",
        "observation",
    )
    updated = client.update_memory("alpha", memory.id, "standup note 4: the build is red")
    assert isinstance(updated, soupd.MemoryUpdated)
    assert updated.replaced == memory.id
    assert client.get_memory("alpha", updated.id).text == "standup note 4: the build is red"
    with pytest.raises(soupd.NotFound) as gone:
        client.get_memory("alpha", memory.id)
    assert gone.value.code == "not_found"

    deleted = client.delete_memory("alpha", updated.id)
    assert isinstance(deleted, soupd.ForgetResult)
    assert deleted.memories == 1
    assert "red" not in {m.text[-3:] for m in client.list_memories("alpha").items}


def test_a_memory_by_its_label_and_forget_by_id(client: Any) -> None:
    client.push("alpha", "the staging cluster ran out of disk")
    client.push("alpha", "rotated the staging certificates")
    label = f"m{client.list_memories('alpha').items[0].id}"  # as ids are shown
    assert client.get_memory("alpha", label).text == "rotated the staging certificates"
    dry = client.forget("alpha", id=label, dry_run=True)
    assert (dry.events, dry.memories, dry.dry_run) == (1, 1, True)
    assert len(client.recall("alpha", "staging")) == 2
    done = client.forget("alpha", id=label)
    assert (done.events, done.memories, done.dry_run) == (1, 1, False)
    assert [hit.text for hit in client.recall("alpha", "staging")] == [
        "the staging cluster ran out of disk"
    ]
    with pytest.raises(soupd.InvalidParams):
        client.forget("alpha", id="first", dry_run=True)


def test_forget_dry_run_deletes_nothing(client: Any) -> None:
    client.push("alpha", "the staging cluster ran out of disk")
    client.push("alpha", "rotated the staging certificates")
    dry = client.forget("alpha", match="staging", dry_run=True)
    assert (dry.events, dry.dry_run) == (2, True)
    assert len(client.recall("alpha", "staging")) == 2
    done = client.forget("alpha", match="staging")
    assert (done.events, done.dry_run) == (2, False)
    assert client.recall("alpha", "staging") == []

"""The HTTP API's token file: made private and random, refused when others may know it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from channels.http_token import load_or_create_token, token_matches
from supervisor.errors import UnsafeFile


def test_the_first_start_makes_a_private_random_token(tmp_path: Path) -> None:
    path = tmp_path / "state" / "http.token"
    token = load_or_create_token(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(token) >= 43  # 32 random bytes, URL-safe base64
    assert path.read_text() == token + "\n"
    # Later starts read it; another home gets another token.
    assert load_or_create_token(path) == token
    assert load_or_create_token(tmp_path / "other" / "http.token") != token


def test_a_token_file_others_may_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "http.token"
    load_or_create_token(path)
    path.chmod(0o644)
    with pytest.raises(UnsafeFile) as caught:
        load_or_create_token(path)
    assert "chmod 600" in caught.value.message
    assert caught.value.code == "unsafe_file"


def test_a_symlink_or_an_empty_file_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    load_or_create_token(real)
    link = tmp_path / "link.token"
    os.symlink(real, link)
    with pytest.raises(UnsafeFile, match="symlink"):
        load_or_create_token(link)
    empty = tmp_path / "empty.token"
    empty.touch(mode=0o600)
    with pytest.raises(UnsafeFile, match="empty; delete it"):
        load_or_create_token(empty)


def test_only_the_bearer_token_itself_matches() -> None:
    token = "abc-DEF_123"
    assert token_matches(token, f"Bearer {token}")
    assert token_matches(token, f"bearer {token}")
    for header in (None, "", token, f"Basic {token}", f"Bearer {token}x", "Bearer ", "Bearer abc"):
        assert not token_matches(token, header), header

"""The wire format: request frames in, result and error frames out."""

from __future__ import annotations

import json

import msgspec
import pytest

from channels.protocol import (
    MAX_FRAME_BYTES,
    Request,
    decode_params,
    decode_request,
    encode_error,
    encode_request,
    encode_result,
)
from souls.events import EventIn
from souls.results import PushResult
from supervisor.errors import InvalidParams, MalformedFrame, SoulBusy, UnknownSoul


class Params(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    soul: str
    text: str
    k: int | None = None


class Nested(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    soul: str
    events: list[EventIn]


def test_frame_cap_is_one_mebibyte() -> None:
    assert MAX_FRAME_BYTES == 1 << 20


def test_decode_request_happy_path() -> None:
    request = decode_request(
        b'{"id": 7, "method": "event.push", "params": {"soul": "a", "text": "hi"}}'
    )
    assert (request.id, request.method) == (7, "event.push")
    assert msgspec.json.decode(request.params) == {"soul": "a", "text": "hi"}


@pytest.mark.parametrize(("raw_id", "expected"), [("1", 1), ('"abc"', "abc"), ("null", None)])
def test_request_ids_may_be_ints_strings_or_null(raw_id: str, expected: object) -> None:
    request = decode_request(f'{{"id": {raw_id}, "method": "soul.list"}}'.encode())
    assert request.id == expected


def test_id_and_params_are_optional() -> None:
    request = decode_request(b'{"method": "soul.list"}')
    assert request == Request(method="soul.list")
    assert request.id is None
    assert msgspec.json.decode(request.params) == {}


@pytest.mark.parametrize(
    ("frame", "names"),
    [
        (b"[1, 2]", "array"),
        (b'"event.push"', "str"),
        (b"42", "int"),
        (b"null", "null"),
        (b'{"id": 1}', "method"),
        (b'{"id": 1, "method": 5}', "method"),
        (b'{"id": 1.5, "method": "x"}', "id"),
        (b'{"id": 1, "method": "x", "extra": true}', "extra"),
    ],
)
def test_frames_that_are_not_requests_are_bad_frames(frame: bytes, names: str) -> None:
    with pytest.raises(MalformedFrame) as caught:
        decode_request(frame)
    assert caught.value.code == "bad_frame"
    message = caught.value.message
    assert names in message
    assert '"method"' in message  # says what a request looks like


@pytest.mark.parametrize(
    "frame",
    [
        b"\xff\xfe\x00",
        b'{"id": 1, "method": "\xff"}',
        b'{"id": 1, "method": "x", "params": {"text": "\xc3\x28"}}',
        b"{",
        b"",
        b"not json at all",
        b'{"id": 1, "method": "x"} trailing',
    ],
)
def test_bytes_that_are_not_utf8_json_are_bad_frames(frame: bytes) -> None:
    with pytest.raises(MalformedFrame) as caught:
        decode_request(frame)
    assert caught.value.code == "bad_frame"
    assert "JSON" in caught.value.message  # says what to send instead


def test_decode_params_happy_path() -> None:
    raw = msgspec.Raw(b'{"soul": "a", "text": "hi", "k": 3}')
    assert decode_params("recall", raw, Params) == Params(soul="a", text="hi", k=3)


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        (b'{"soul": "a", "text": 5}', "`text`"),
        (b'{"soul": "a"}', "`text`"),
        (b'{"soul": "a", "text": "x", "k": "3"}', "`k`"),
        (b'{"soul": "a", "text": "x", "txt": 1}', "`txt`"),
    ],
)
def test_decode_params_errors_name_the_key(raw: bytes, key: str) -> None:
    with pytest.raises(InvalidParams) as caught:
        decode_params("event.push", msgspec.Raw(raw), Params)
    assert caught.value.code == "invalid_params"
    message = caught.value.message
    assert "event.push" in message
    assert key in message
    assert "$" not in message  # msgspec's own path syntax is translated


def test_decode_params_errors_name_nested_key_paths() -> None:
    raw = msgspec.Raw(b'{"soul": "a", "events": [{"text": "ok"}, {"text": "x", "ts": [1]}]}')
    with pytest.raises(InvalidParams) as caught:
        decode_params("event.import", raw, Nested)
    assert "`events[1].ts`" in caught.value.message


@pytest.mark.parametrize("raw", [b"[]", b"null", b'"x"', b"{"])
def test_params_that_are_not_an_object(raw: bytes) -> None:
    with pytest.raises(InvalidParams) as caught:
        decode_params("recall", msgspec.Raw(raw), Params)
    assert caught.value.code == "invalid_params"
    assert "recall" in caught.value.message


def test_encode_result_shape() -> None:
    frame = encode_result(
        7, PushResult(3, 0.5, "stored", surprise=0.25, reflected=True, novel=["timeout"])
    )
    assert frame.endswith(b"\n")
    assert frame.count(b"\n") == 1
    assert json.loads(frame) == {
        "id": 7,
        "result": {
            "event_id": 3,
            "salience": 0.5,
            "status": "stored",
            "surprise": 0.25,
            "reflected": True,
            "novel": ["timeout"],
        },
    }
    # Fields left at their defaults are still on the wire: a reply always has every key.
    dropped = json.loads(encode_result(8, PushResult(None, 0.2, "dropped")))
    assert dropped["result"] == {
        "event_id": None,
        "salience": 0.2,
        "status": "dropped",
        "surprise": None,
        "reflected": False,
        "novel": [],
    }
    assert json.loads(encode_result("req-1", None)) == {"id": "req-1", "result": None}


def test_encode_error_shape() -> None:
    frame = encode_error("abc", SoulBusy("mailbox full; retry"))
    assert frame.endswith(b"\n")
    assert frame.count(b"\n") == 1
    assert json.loads(frame) == {
        "id": "abc",
        "error": {"code": "busy", "message": "mailbox full; retry"},
    }
    unknown = json.loads(encode_error(None, UnknownSoul("ghost")))
    assert unknown["id"] is None
    assert unknown["error"]["code"] == "unknown_soul"
    assert "'ghost'" in unknown["error"]["message"]


def test_multi_line_text_stays_on_one_frame_line() -> None:
    frame = encode_result(1, {"text": "line one\nline two"})
    assert frame.count(b"\n") == 1
    assert json.loads(frame)["result"]["text"] == "line one\nline two"


def test_encode_request_round_trips() -> None:
    frame = encode_request(5, "recall", {"soul": "a", "query": "q"})
    assert frame.endswith(b"\n")
    request = decode_request(frame.rstrip(b"\n"))
    assert (request.id, request.method) == (5, "recall")
    assert msgspec.json.decode(request.params) == {"soul": "a", "query": "q"}

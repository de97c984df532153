"""Inputs for ``bench/fuzz_parsers.py``: one hypothesis strategy per target, and issue 27's hostile inputs.

Strategies mix three sources: the target's grammar (tokens of the filter language, settings and search
parameter names, JWTs signed with a key the keyring knows, so the payload is reached), arbitrary bytes
or text, and valid values with a few bytes inserted, deleted or replaced.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import jwt
import orjson
from hypothesis import strategies as st

from common.settings.model import SETTINGS_KEYS
from gateway.auth.keyring import KeyRing
from gateway.search.params import BODY
from tests.support.json_strategies import json_values

MASTER_KEY = "fuzz-parsers-master-key-0123456789"
KEY_UID = "6062abda-a5aa-4414-ac91-ecd7944c0f8d"


def _keyring() -> KeyRing:
    ring = KeyRing(MASTER_KEY)
    ring.put(
        {
            "uid": KEY_UID,
            "name": None,
            "description": None,
            "actions": ["search"],
            "indexes": ["*"],
            "expiresNs": None,
            "createdNs": 0,
            "updatedNs": 0,
        }
    )
    return ring


KEYS = _keyring()


JSON_VALUES = json_values(max_text=12, max_items=5, max_leaves=16)
_SPICE = ["\x00", "\xff", "\ud7ff", "é", "🐻", "\n", "\t", "\\", '"', "'", "%", "%ff", "%00", "\u2028"]


def _mutate(data: bytes, rng: random.Random) -> bytes:
    """A few random byte edits: what a truncated, corrupted or hand-edited body looks like."""
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(buffer))
        edit = rng.randrange(3)
        if edit == 0:
            buffer[at:at] = rng.choice(
                [b"\x00", b"\xff", b"[", b"{", b'"', b",", b"\n", b"\\", b"}", b"]", b"1e999"]
            )
        elif edit == 1:
            del buffer[at : at + rng.randint(1, 8)]
        elif buffer:
            buffer[min(at, len(buffer) - 1)] = rng.randrange(256)
    return bytes(buffer)


_SKIP: Any = object()
"""A structured input whose mutant is no longer JSON: no route would read it, so it is not counted."""


def mutate_value(value: Any, rng: random.Random) -> Any:
    """A mutant of one input in the type its target reads."""
    if isinstance(value, bytes):
        return _mutate(value, rng)
    if isinstance(value, str):
        return _mutate(value.encode("utf-8", "surrogatepass"), rng).decode("utf-8", "replace")
    if isinstance(value, tuple):  # a CSV body and its delimiter
        return (_mutate(value[0], rng), value[1])
    try:
        return orjson.loads(_mutate(orjson.dumps(value), rng))
    except (orjson.JSONDecodeError, TypeError):
        return _SKIP


def mutated(valid: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    return st.builds(_mutate, valid, st.randoms(use_true_random=False))


def _text_of(tokens: list[str], max_size: int = 30) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(tokens), max_size=max_size).map("".join)


_FILTER_TOKENS = [
    "title",
    "genres",
    "year",
    "_geo",
    "a.b",
    " ",
    " ",
    "=",
    "!=",
    ">=",
    "<",
    " TO ",
    "1",
    "-2.5",
    "'x y'",
    '"q"',
    "(",
    ")",
    " AND ",
    " OR ",
    "NOT ",
    " IN ",
    "[",
    "]",
    ",",
    " EXISTS",
    " IS ",
    "NULL",
    "EMPTY",
    " CONTAINS ",
    " STARTS WITH ",
    "_geoRadius(",
    "_geoBoundingBox(",
    "_geoPolygon(",
    "[1, 2]",
    "_vectors",
    ".userProvided",
    " EXISTS",
    "_foreign(",
    *_SPICE,
]
FILTER_TEXT = _text_of(_FILTER_TOKENS)
FILTERS = st.one_of(
    FILTER_TEXT,
    st.text(),
    st.lists(FILTER_TEXT | st.lists(FILTER_TEXT, max_size=3), max_size=4),
    JSON_VALUES,
)
_SORT_TOKENS = [
    "title",
    "year",
    ":",
    "asc",
    "desc",
    "_geoPoint(",
    "1",
    ",",
    "2.5",
    ")",
    " ",
    "_geoDistance",
    "a.b",
    *_SPICE,
]
SORTS = st.lists(_text_of(_SORT_TOKENS, 12) | st.text(max_size=20), max_size=4)

_DOCUMENT = st.dictionaries(
    st.sampled_from(["id", "title", "_geo", "_vectors", "a.b"]) | st.text(max_size=6), JSON_VALUES, max_size=6
)
_JSON_DOCUMENTS = st.one_of(_DOCUMENT.map(orjson.dumps), st.lists(_DOCUMENT, max_size=4).map(orjson.dumps))
JSON_PAYLOADS = st.one_of(_JSON_DOCUMENTS, mutated(_JSON_DOCUMENTS), st.binary(max_size=200))
_NDJSON = st.lists(_DOCUMENT.map(orjson.dumps) | st.sampled_from([b"", b"  ", b"\r"]), max_size=5).map(
    b"\n".join
)
NDJSON_PAYLOADS = st.one_of(_NDJSON, mutated(_NDJSON), st.binary(max_size=200))
_CSV_CELL = _text_of(
    ["a", "1", ",", ";", '"', '""', "\n", "\r\n", ":number", ":string", ":boolean", "id", " ", *_SPICE], 8
)
_CSV = st.lists(st.lists(_CSV_CELL, min_size=1, max_size=4).map(",".join), max_size=5).map(
    lambda rows: "\n".join(rows).encode("utf-8", "surrogatepass")
)
CSV_PAYLOADS = st.tuples(
    st.one_of(_CSV, mutated(_CSV), st.binary(max_size=200)), st.sampled_from([",", ";", "|", "\t", '"'])
)
JSON_BODIES = st.one_of(
    JSON_VALUES.map(orjson.dumps), mutated(JSON_VALUES.map(orjson.dumps)), st.binary(max_size=200)
)

_SEARCH_KEYS = [*BODY.fields, "unknownParameter"]
_SEARCH_VALUES = (
    JSON_VALUES
    | FILTERS
    | SORTS
    | st.integers(-3, 2**64 - 1)
    | st.sampled_from(["last", "all", "frequency", "bm25"])
)
SEARCH_BODIES = st.one_of(
    st.dictionaries(st.sampled_from(_SEARCH_KEYS), _SEARCH_VALUES, max_size=5), JSON_VALUES
)
_QUERY_VALUES = st.one_of(
    FILTER_TEXT,
    _text_of(_SORT_TOKENS, 12),
    st.text(max_size=20),
    st.integers(-5, 2**70).map(str),
    st.sampled_from(["true", "false", "0.5", "1e3", "NaN", "", "a,b", "*", "-1"]),
)
SEARCH_QUERIES = st.one_of(
    st.lists(
        st.tuples(st.sampled_from([*_SEARCH_KEYS, "hybridEmbedder", "hybridSemanticRatio"]), _QUERY_VALUES),
        max_size=5,
    ).map(urlencode),
    _text_of(
        [
            "q=",
            "&",
            "=",
            "%",
            "%ff",
            "%00",
            "%2C",
            "+",
            "limit=",
            "filter=",
            "sort=",
            "a",
            "1",
            ";",
            "#",
            *_SPICE,
        ]
    ),
)
_SETTING_VALUES = JSON_VALUES | st.lists(
    _text_of(["title", "*", "words", "typo", ":asc", "year", "_geo", "."], 4), max_size=4
)
SETTINGS_BODIES = st.one_of(
    st.dictionaries(st.sampled_from([*SETTINGS_KEYS, "unknownSetting"]), _SETTING_VALUES, max_size=4),
    JSON_VALUES,
)


def _token(parts: tuple[dict[str, Any], Any, str, bool]) -> str:
    header, claims, algorithm, signed_with_parent = parts
    if isinstance(claims, dict) and signed_with_parent:
        claims = {"apiKeyUid": KEY_UID, **claims}
    key = KEYS.by_uid(KEY_UID)
    secret = (
        key.key
        if key is not None and signed_with_parent
        else "another secret key, 64 bytes long, that no key of the ring has...."
    )
    payload = orjson.dumps(claims)
    return jwt.api_jws.encode(payload, secret, algorithm=algorithm, headers=header)


_CLAIMS = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "searchRules": JSON_VALUES
            | st.dictionaries(
                st.sampled_from(["*", "movies", "mov*"]),
                st.none() | st.fixed_dictionaries({"filter": FILTERS}),
            ),
            "exp": st.integers(-(2**63), 2**64 - 1) | JSON_VALUES,
            "apiKeyUid": st.text(max_size=40) | JSON_VALUES,
        },
    ),
    JSON_VALUES,
)
_TOKENS = st.tuples(
    st.dictionaries(st.sampled_from(["kid", "typ", "cty", "x"]), st.text(max_size=8), max_size=2),
    _CLAIMS,
    st.sampled_from(["HS256", "HS384", "HS512"]),
    st.booleans(),
).map(_token)
TENANT_TOKENS = st.one_of(
    _TOKENS,
    mutated(_TOKENS.map(str.encode)).map(lambda raw: raw.decode("latin-1")),
    _text_of(["eyJ", ".", "-", "_", "=", "a", "A0", "%", "\x00"], 20),
    st.text(max_size=60),
)

TARGET_INPUTS: dict[str, st.SearchStrategy[Any]] = {
    "filter": FILTERS,
    "sort": SORTS,
    "json payload": JSON_PAYLOADS,
    "ndjson payload": NDJSON_PAYLOADS,
    "csv payload": CSV_PAYLOADS,
    "json body": JSON_BODIES,
    "search query string": SEARCH_QUERIES,
    "search body": SEARCH_BODIES,
    "settings body": SETTINGS_BODIES,
    "tenant token": TENANT_TOKENS,
}

N = 100_000


def _deep(depth: int, inner: bytes = b"") -> bytes:
    return b"[" * depth + inner + b"]" * depth


def hostile_inputs(target: str, huge: bool) -> Iterator[Any]:
    """Issue 27's list: 10^5 nested arrays, huge strings, invalid UTF-8, NUL bytes, 10^5 fields,
    duplicate keys, and (``huge``) a 100 MB single NDJSON line; in the shape each target reads."""
    many_fields = orjson.dumps({"id": 1, **{f"f{i}": i for i in range(N)}})
    documents = [
        b'{"id":1,"a":' + _deep(N) + b"}",
        b'{"id":1,"a":' + _deep(300) + b"}",
        many_fields,
        b'{"id":1,"id":2}',
        b'{"id":"\xff\xfe"}',
        b'{"id":"a\x00b"}',
        b'{"id":1}\x00',
        orjson.dumps({"id": 1, "s": "x" * 10_000_000}),
    ]
    if target in ("json payload", "json body"):
        yield from documents
        yield b"[" + b",".join([b'{"id":1}'] * N) + b"]"
    elif target == "ndjson payload":
        yield from (doc + b"\n" for doc in documents)
        yield b'{"id":1}\n' * N
        if huge:
            yield b'{"id":1,"s":"' + b"x" * 100_000_000 + b'"}\n'
    elif target == "csv payload":
        for body in (
            b"id,a\n1,\xff\n",
            b"id,a\n1,a\x00b\n",
            b"id,id\n1,2\n",
            b"a" * 10_000_000,
            ",".join(f"f{i}" for i in range(N)).encode() + b"\n" + b"1," * (N - 1) + b"1\n",
        ):
            yield (body, ",")
    elif target == "filter":
        yield from (
            "(" * N + "a = 1" + ")" * N,
            "NOT " * N + "a = 1",
            "a = '" + "x" * 10_000_000 + "'",
            "a = '\x00'",
            "\udcff = 1",
            "a IN [" + ", ".join(map(str, range(N))) + "]",
        )
        yield orjson.loads(_deep(1000, b'"a = 1"'))
        yield [["a = 1"] * N] * 3
    elif target == "sort":
        yield from (
            ["a:asc"] * N,
            ["x" * 10_000_000 + ":asc"],
            ["a\x00:desc"],
            ["_geoPoint(" + "1," * N + "1):asc"],
        )
    elif target == "search query string":
        yield from (
            "q=%ff%fe&filter=%ff",
            "q=a%00b",
            "filter=" + "(" * N + "a=1" + ")" * N,
            "q=" + "x" * 10_000_000,
            "limit=1&limit=2",
            "&" * N,
            "sort=" + "a:asc," * N,
        )
    elif target == "search body":
        yield from (
            {"q": "x" * 10_000_000},
            {"filter": orjson.loads(_deep(100, b'"a = 1"'))},
            {"q": "\x00"},
            {"facets": ["a"] * N},
            {"vector": [0.5] * N},
            {"sort": ["a:asc"] * N},
        )
    elif target == "settings body":
        yield from (
            {"rankingRules": ["words"] * N},
            {"synonyms": {f"w{i}": ["x"] for i in range(N)}},
            {"stopWords": ["x" * 10_000_000]},
            {"filterableAttributes": orjson.loads(_deep(100))},
            {"searchableAttributes": ["a\x00"]},
            {f"k{i}": 1 for i in range(N)},
        )
    elif target == "tenant token":
        key = KEYS.by_uid(KEY_UID)
        assert key is not None
        for rules in (b'{"*":{"filter":' + _deep(900, b'"a = 1"') + b"}}", _deep(1000)):
            claims = b'{"apiKeyUid":"' + KEY_UID.encode() + b'","searchRules":' + rules + b"}"
            yield jwt.api_jws.encode(claims, key.key, algorithm="HS256")
        yield from ("a.b.c", "." * N, "x" * 10_000_000 + ".e30.x", "eyJhbGciOiJIUzI1NiJ9.\xff.x")

"""The compare bench's pieces that need no server: its query sets, wrk's Lua script, the profile cuts."""

from __future__ import annotations

import orjson

from bench import compare_classes, wrk
from bench.compare_profile import where
from bench.loadgen import Request


def test_query_sets_are_seeded_and_distinct() -> None:
    first = compare_classes.build("movies", None, 7, 50)
    assert first == compare_classes.build("movies", None, 7, 50)
    assert list(first) == list(compare_classes.CLASSES["movies"])
    for name, bodies in first.items():
        assert len({orjson.dumps(body) for body in bodies}) == len(bodies) == 50, name
        if name != "placeholder":
            assert all(body["limit"] == compare_classes.LIMIT for body in bodies)
    assert all(body["offset"] + body["limit"] <= 39 for body in first["placeholder"])
    assert all(len(body["q"]) == 3 for body in first["prefix3"])
    assert all(body["attributesToHighlight"] == ["*"] for body in first["title3-highlight"])
    assert compare_classes.build("movies", None, 8, 50)["word"] != first["word"]


def test_query_subset_keeps_the_table_order() -> None:
    sets = compare_classes.build("movies", None, 7, 5, ["typo", "placeholder"])
    assert list(sets) == ["placeholder", "typo"]


def test_wrk_script_quotes_bodies_whatever_brackets_they_hold() -> None:
    body = b'{"q": "a]=]b]]c"}'
    lua = wrk.script([Request("POST", "/indexes/x/search", body, (("Content-Type", "application/json"),))])
    assert "[==[" + body.decode() + "]==]" in lua
    assert "[ [=[Content-Type]=] ] = [=[application/json]=]" in lua


def test_profile_cuts_by_package_and_by_deepest_sift_frame() -> None:
    collapsed = "\n".join(
        [
            "run (asyncio/runners.py:1);search (shard/query/search.py:5);get (lmdb/cursor.py:9) 6",
            "run (asyncio/runners.py:1);search (shard/query/search.py:7) 3",
            "run (asyncio/runners.py:1) 1",
        ]
    )
    cuts = where(collapsed)
    assert cuts["areas_pct"] == [("lmdb", 60.0), ("shard/query", 30.0), ("asyncio", 10.0)]
    assert cuts["ours_pct"] == [("search (shard/query/search.py)", 90.0), ("(no Sift frame)", 10.0)]

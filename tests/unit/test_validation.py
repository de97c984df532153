"""Validation messages must match Meilisearch's deserr wording (core.md §1.9, §1.10) to the character."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common.errors import ApiError, invalid_index_uid
from common.validation import (
    STAR,
    Kind,
    Param,
    QueryKind,
    QuerySchema,
    Schema,
    Spec,
    parse_json_body,
    validate,
)
from common.validation.describe import damerau_levenshtein, describe_found, describe_kinds, did_you_mean
from common.validation.json_body import serde_syntax_error
from tests.support.json_strategies import json_values


def _uid_problem(uid: str) -> str | None:
    return None if re.fullmatch(r"[A-Za-z0-9_-]{1,400}", uid) else invalid_index_uid(uid).message


CREATE_INDEX = Schema(
    {
        "uid": Spec(
            Kind.STRING,
            code="invalid_index_uid",
            required=True,
            missing_code="missing_index_uid",
            check=_uid_problem,
        ),
        "primaryKey": Spec(Kind.STRING, nullable=True, code="invalid_index_primary_key"),
    }
)
UPDATE_INDEX = Schema(
    {
        "primaryKey": Spec(Kind.STRING, nullable=True, code="invalid_index_primary_key"),
        "uid": Spec(Kind.STRING, code="invalid_index_uid"),
    },
    immutable={"createdAt": "immutable_index_created_at", "updatedAt": "immutable_index_updated_at"},
)
CREATE_KEY = Schema(
    {
        "description": Spec(Kind.STRING, nullable=True, code="invalid_api_key_description"),
        "name": Spec(Kind.STRING, nullable=True, code="invalid_api_key_name"),
        "uid": Spec(Kind.STRING, code="invalid_api_key_uid"),
        "actions": Spec(
            Kind.ARRAY,
            items=Spec(Kind.STRING, choices=("*", "search", "documents.*", "documents.add")),
            code="invalid_api_key_actions",
            required=True,
            missing_code="missing_api_key_actions",
        ),
        "indexes": Spec(
            Kind.ARRAY,
            items=Spec(Kind.STRING),
            code="invalid_api_key_indexes",
            required=True,
            missing_code="missing_api_key_indexes",
        ),
        "expiresAt": Spec(
            Kind.STRING,
            nullable=True,
            code="invalid_api_key_expires_at",
            required=True,
            missing_code="missing_api_key_expires_at",
        ),
    }
)
HYBRID = Schema(
    {
        "embedder": Spec(Kind.STRING, required=True, code="invalid_search_embedder"),
        "semanticRatio": Spec(Kind.NUMBER, code="invalid_search_semantic_ratio"),
    }
)
SEARCH_QUERY = Schema(
    {
        "indexUid": Spec(
            Kind.STRING, required=True, code="invalid_index_uid", missing_code="missing_index_uid"
        ),
        "q": Spec(Kind.STRING, nullable=True, code="invalid_search_q"),
        "limit": Spec(Kind.POSITIVE_INTEGER, code="invalid_search_limit"),
        "filter": Spec(Kind.STRING | Kind.ARRAY, nullable=True, code="invalid_search_filter"),
        "hybrid": Spec(Kind.OBJECT, nullable=True, schema=HYBRID, code="invalid_search_hybrid_query"),
        "matchingStrategy": Spec(
            Kind.STRING, choices=("last", "all", "frequency"), code="invalid_search_matching_strategy"
        ),
    }
)
MULTI_SEARCH = Schema({"queries": Spec(Kind.ARRAY, items=Spec(Kind.OBJECT, schema=SEARCH_QUERY))})
REMOTE = Schema({"url": Spec(Kind.STRING), "searchApiKey": Spec(Kind.STRING, nullable=True)})
NETWORK = Schema(
    {"remotes": Spec(Kind.OBJECT, values=Spec(Kind.OBJECT, schema=REMOTE), code="invalid_network_remotes")}
)
SWAP_INDEXES = Spec(
    Kind.ARRAY,
    items=Spec(
        Kind.OBJECT,
        schema=Schema(
            {
                "indexes": Spec(
                    Kind.ARRAY,
                    items=Spec(Kind.STRING),
                    code="invalid_swap_indexes",
                    required=True,
                    missing_code="missing_swap_indexes",
                ),
                "rename": Spec(Kind.BOOLEAN, code="invalid_swap_rename"),
            }
        ),
    ),
)


def _fails(schema: Schema, body: object) -> tuple[str, str]:
    with pytest.raises(ApiError) as caught:
        schema.validate(body)
    return caught.value.code, caught.value.message


# --- kind and value descriptions -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kinds", "text"),
    [
        (Kind.NULL, "null"),
        (Kind.BOOLEAN, "a boolean"),
        (Kind.POSITIVE_INTEGER, "a positive integer"),
        (Kind.NEGATIVE_INTEGER, "a negative integer"),
        (Kind.INTEGER, "an integer"),
        (Kind.NUMBER, "a number"),
        (Kind.POSITIVE_INTEGER | Kind.NUMBER, "a number"),
        (Kind.STRING, "a string"),
        (Kind.ARRAY, "an array"),
        (Kind.OBJECT, "an object"),
        (Kind.ARRAY | Kind.STRING, "a string or an array"),
        (Kind.STRING | Kind.NULL, "null or a string"),
        (Kind.NULL | Kind.STRING | Kind.ARRAY, "null, a string, or an array"),
        (
            Kind.OBJECT | Kind.BOOLEAN | Kind.STRING | Kind.ARRAY,
            "a boolean, a string, an array, or an object",
        ),
    ],
)
def test_describe_kinds_in_deserr_order(kinds: Kind, text: str) -> None:
    assert describe_kinds(kinds) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "a boolean: `true`"),
        (7, "a positive integer: `7`"),
        (-7, "a negative integer: `-7`"),
        (1.5, "a number: `1.5`"),
        ("doggo", 'a string: `"doggo"`'),
        (["doggo", 1], 'an array: `["doggo",1]`'),
        ({"a": {"b": None}}, 'an object: `{"a":{"b":null}}`'),
    ],
)
def test_describe_found_value_as_compact_json(value: object, text: str) -> None:
    assert describe_found(value) == text


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("", "abc", 3),
        ("ab", "ba", 1),
        ("ca", "abc", 2),
        ("expires_at", "expiresAt", 2),
        ("limit", "limit", 0),
    ],
)
def test_damerau_levenshtein_is_unrestricted(a: str, b: str, distance: int) -> None:
    assert damerau_levenshtein(a, b) == distance
    assert damerau_levenshtein(b, a) == distance


@pytest.mark.parametrize(
    ("received", "accepted", "hint"),
    [
        ("uia", ["uid"], ""),  # 3 bytes: never a hint
        ("uidd", ["uid"], "did you mean `uid`? "),
        ("limt", ["offset", "limit"], "did you mean `limit`? "),
        ("limmmt", ["limit"], ""),  # 6 bytes allow 1 typo, this is 2
        ("expires_at", ["name", "expiresAt"], "did you mean `expiresAt`? "),
        ("showRankingScoreDetail", ["showRankingScoreDetails"], "did you mean `showRankingScoreDetails`? "),
        ("éé", ["ééa"], "did you mean `ééa`? "),  # length counts UTF-8 bytes, like Rust
        ("abcd", ["abce", "abcf"], "did you mean `abce`? "),  # first of equally close names
        ("doggo", ["uid", "primaryKey"], ""),
    ],
)
def test_did_you_mean_thresholds(received: str, accepted: list[str], hint: str) -> None:
    assert did_you_mean(received, accepted) == hint


# --- JSON bodies ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (None, "Invalid value type: expected an object, but found null"),
        ([], "Invalid value type: expected an object, but found an array: `[]`"),
        ("uid", 'Invalid value type: expected an object, but found a string: `"uid"`'),
    ],
)
def test_root_must_be_an_object(body: object, message: str) -> None:
    assert _fails(CREATE_INDEX, body) == ("bad_request", message)


def test_root_code_can_be_a_field_code_for_settings_sub_routes() -> None:
    typo = Schema({"enabled": Spec(Kind.BOOLEAN)})
    with pytest.raises(ApiError) as caught:
        typo.validate([], code="invalid_settings_typo_tolerance")
    assert caught.value.code == "invalid_settings_typo_tolerance"
    assert caught.value.message == "Invalid value type: expected an object, but found an array: `[]`"


def test_valid_body_keeps_only_present_fields() -> None:
    assert CREATE_INDEX.validate({"uid": "movies"}) == {"uid": "movies"}
    assert CREATE_INDEX.validate({"primaryKey": None, "uid": "movies"}) == {
        "primaryKey": None,
        "uid": "movies",
    }


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (
            {"uid": "a", "primaryKey": 1},
            "invalid_index_primary_key",
            "Invalid value type at `.primaryKey`: expected a string, but found a positive integer: `1`",
        ),
        (
            {"uid": ["a"]},
            "invalid_index_uid",
            'Invalid value type at `.uid`: expected a string, but found an array: `["a"]`',
        ),
        (
            {"uid": None},
            "invalid_index_uid",
            "Invalid value type at `.uid`: expected a string, but found null",
        ),
        (
            {"uid": "a", "primaryKey": {"x": True}},
            "invalid_index_primary_key",
            'Invalid value type at `.primaryKey`: expected a string, but found an object: `{"x":true}`',
        ),
    ],
)
def test_wrong_type_names_path_expected_and_found(body: dict[str, Any], code: str, message: str) -> None:
    assert _fails(CREATE_INDEX, body) == (code, message)


@pytest.mark.parametrize(
    ("limit", "found"),
    [
        ("doggo", 'a string: `"doggo"`'),
        (True, "a boolean: `true`"),
        (1.0, "a number: `1.0`"),
        (-1, "a negative integer: `-1`"),
    ],
)
def test_positive_integer_refuses_booleans_floats_and_negatives(limit: object, found: str) -> None:
    body = {"queries": [{"indexUid": "movies", "limit": limit}]}
    assert _fails(MULTI_SEARCH, body) == (
        "invalid_search_limit",
        f"Invalid value type at `.queries[0].limit`: expected a positive integer, but found {found}",
    )


def test_contract_example_wrong_type_for_q() -> None:
    assert _fails(MULTI_SEARCH, {"queries": [{"indexUid": "m", "q": ["doggo"]}]}) == (
        "invalid_search_q",
        'Invalid value type at `.queries[0].q`: expected a string, but found an array: `["doggo"]`',
    )


def test_several_kinds_are_listed_and_null_is_accepted_silently() -> None:
    assert _fails(SEARCH_QUERY, {"indexUid": "m", "filter": 1}) == (
        "invalid_search_filter",
        "Invalid value type at `.filter`: expected a string or an array, but found a positive integer: `1`",
    )
    assert SEARCH_QUERY.validate({"indexUid": "m", "filter": None, "q": None}) == {
        "indexUid": "m",
        "filter": None,
        "q": None,
    }


def test_number_accepts_integers_as_floats() -> None:
    result = SEARCH_QUERY.validate({"indexUid": "m", "hybrid": {"embedder": "e", "semanticRatio": 1}})
    assert result["hybrid"] == {"embedder": "e", "semanticRatio": 1.0}
    assert isinstance(result["hybrid"]["semanticRatio"], float)


@pytest.mark.parametrize(
    ("schema", "body", "code", "message"),
    [
        (CREATE_INDEX, {}, "missing_index_uid", "Missing field `uid`"),
        (CREATE_INDEX, {"primaryKey": "id"}, "missing_index_uid", "Missing field `uid`"),
        (
            CREATE_KEY,
            {"indexes": [], "expiresAt": None},
            "missing_api_key_actions",
            "Missing field `actions`",
        ),
        (
            CREATE_KEY,
            {"actions": [], "expiresAt": None},
            "missing_api_key_indexes",
            "Missing field `indexes`",
        ),
        (
            CREATE_KEY,
            {"actions": [], "indexes": []},
            "missing_api_key_expires_at",
            "Missing field `expiresAt`",
        ),
        (
            MULTI_SEARCH,
            {"queries": [{"q": "a"}]},
            "missing_index_uid",
            "Missing field `indexUid` inside `.queries[0]`",
        ),
        # No dedicated code: the enclosing value's code (here the `hybrid` field's).
        (
            SEARCH_QUERY,
            {"indexUid": "m", "hybrid": {}},
            "invalid_search_hybrid_query",
            "Missing field `embedder` inside `.hybrid`",
        ),
        (Schema({"a": Spec(Kind.STRING, required=True)}), {}, "bad_request", "Missing field `a`"),
    ],
)
def test_missing_field(schema: Schema, body: object, code: str, message: str) -> None:
    assert _fails(schema, body) == (code, message)


@pytest.mark.parametrize(
    ("schema", "body", "code", "message"),
    [
        (
            CREATE_INDEX,
            {"uid": "a", "doggo": 1},
            "bad_request",
            "Unknown field `doggo`: expected one of `uid`, `primaryKey`",
        ),
        (
            CREATE_KEY,
            {"expires_at": None},
            "bad_request",
            "Unknown field `expires_at`: did you mean `expiresAt`? expected one of `description`, `name`, "
            "`uid`, "
            "`actions`, `indexes`, `expiresAt`",
        ),
        (
            NETWORK,
            {"remotes": {"new": {"url": "x", "doggo": 1}}},
            "invalid_network_remotes",
            "Unknown field `doggo` inside `.remotes.new`: expected one of `url`, `searchApiKey`",
        ),
        (
            SEARCH_QUERY,
            {"indexUid": "m", "hybrid": {"embedder": "e", "semanticRatioo": 1}},
            "invalid_search_hybrid_query",
            "Unknown field `semanticRatioo` inside `.hybrid`: did you mean `semanticRatio`? expected one of "
            "`embedder`, `semanticRatio`",
        ),
        # `key` is neither a field nor immutable: plain unknown field
        (
            UPDATE_INDEX,
            {"key": "x"},
            "bad_request",
            "Unknown field `key`: expected one of `primaryKey`, `uid`",
        ),
    ],
)
def test_unknown_field(schema: Schema, body: object, code: str, message: str) -> None:
    assert _fails(schema, body) == (code, message)


def test_unknown_fields_can_be_ignored() -> None:
    facet_search = Schema({"facetName": Spec(Kind.STRING)}, ignore_unknown=True)
    assert facet_search.validate({"doggo": 1, "facetName": "genre"}) == {"facetName": "genre"}


@pytest.mark.parametrize(
    ("field", "code"),
    [("createdAt", "immutable_index_created_at"), ("updatedAt", "immutable_index_updated_at")],
)
def test_immutable_field(field: str, code: str) -> None:
    assert _fails(UPDATE_INDEX, {field: "2024-01-01"}) == (
        code,
        f"Immutable field `{field}`: expected one of `primaryKey`, `uid`",
    )


def test_unknown_enum_value() -> None:
    body = {"actions": ["search", "doggo"], "indexes": [], "expiresAt": None}
    assert _fails(CREATE_KEY, body) == (
        "invalid_api_key_actions",
        "Unknown value `doggo` at `.actions[1]`: expected one of `*`, `search`, `documents.*`, "
        "`documents.add`",
    )
    assert _fails(SEARCH_QUERY, {"indexUid": "m", "matchingStrategy": "frequenci"}) == (
        "invalid_search_matching_strategy",
        "Unknown value `frequenci` at `.matchingStrategy`: did you mean `frequency`? "
        "expected one of `last`, `all`, `frequency`",
    )


def test_semantic_check() -> None:
    assert _fails(CREATE_INDEX, {"uid": "test test#!"}) == (
        "invalid_index_uid",
        "Invalid value at `.uid`: `test test#!` is not a valid index uid. Index uid can be an integer or a "
        "string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be "
        "more "
        "than 512 bytes.",
    )


def test_semantic_check_at_root_and_after_inner_validation() -> None:
    def exactly_two(indexes: list[str]) -> str | None:
        return None if len(indexes) == 2 else f"expected 2 indexes, got {len(indexes)}"

    spec = Spec(Kind.ARRAY, items=Spec(Kind.STRING), code="invalid_swap_indexes", check=exactly_two)
    with pytest.raises(ApiError) as caught:
        validate(spec, ["a"])
    assert (caught.value.code, caught.value.message) == (
        "invalid_swap_indexes",
        "Invalid value: expected 2 indexes, got 1",
    )
    with pytest.raises(ApiError) as caught:
        validate(spec, [1])  # the element's type is checked before the whole value
    assert (
        caught.value.message
        == "Invalid value type at `[0]`: expected a string, but found a positive integer: `1`"
    )


def test_first_problem_in_body_order_wins_and_missing_fields_come_last() -> None:
    assert _fails(SEARCH_QUERY, {"doggo": 1, "limit": "x"})[1].startswith("Unknown field `doggo`")
    assert _fails(SEARCH_QUERY, {"limit": "x", "doggo": 1})[1].startswith("Invalid value type at `.limit`")
    assert _fails(SEARCH_QUERY, {"doggo": 1})[1].startswith("Unknown field `doggo`")


def test_array_root_like_swap_indexes() -> None:
    cases = [
        ({}, "bad_request", "Invalid value type: expected an array, but found an object: `{}`"),
        (["a"], "bad_request", 'Invalid value type at `[0]`: expected an object, but found a string: `"a"`'),
        ([{"rename": True}], "missing_swap_indexes", "Missing field `indexes` inside `[0]`"),
        (
            [{"indexes": "a"}],
            "invalid_swap_indexes",
            'Invalid value type at `[0].indexes`: expected an array, but found a string: `"a"`',
        ),
        (
            [{"indexes": ["a", "b"], "rename": 1}],
            "invalid_swap_rename",
            "Invalid value type at `[0].rename`: expected a boolean, but found a positive integer: `1`",
        ),
    ]
    for body, code, message in cases:
        with pytest.raises(ApiError) as caught:
            validate(SWAP_INDEXES, body)
        assert (caught.value.code, caught.value.message) == (code, message)
    assert validate(SWAP_INDEXES, [{"indexes": ["a", "b"]}]) == [{"indexes": ["a", "b"]}]


def test_schema_mistakes_fail_at_definition() -> None:
    with pytest.raises(ValueError, match="unknown error code"):
        Spec(Kind.STRING, code="invalid_search_doggo")
    with pytest.raises(ValueError, match=r"Kind\.OBJECT"):
        Spec(Kind.ARRAY, schema=HYBRID)
    with pytest.raises(ValueError, match=r"Kind\.STRING"):
        Spec(Kind.INTEGER, choices=("a",))
    with pytest.raises(ValueError, match="unknown error code"):
        Schema({}, immutable={"createdAt": "immutable_doggo"})


# --- query strings --------------------------------------------------------------------------------------

TASKS = QuerySchema(
    {
        "limit": Param(QueryKind.POSITIVE_INTEGER, code="invalid_task_limit", maximum=2**32 - 1),
        "from": Param(QueryKind.POSITIVE_INTEGER, code="invalid_task_from", maximum=2**32 - 1),
        "reverse": Param(QueryKind.BOOLEAN, code="invalid_task_reverse"),
        "uids": Param(QueryKind.INTEGER_LIST, code="invalid_task_uids", star=True, maximum=2**32 - 1),
        "statuses": Param(
            QueryKind.STRING_LIST,
            code="invalid_task_statuses",
            star=True,
            check=lambda status: (
                None if status in ("enqueued", "succeeded") else f"`{status}` is not a valid task status."
            ),
        ),
    }
)
SIMILAR = QuerySchema(
    {
        "embedder": Param(QueryKind.STRING, code="invalid_similar_embedder", required=True),
        "retrieveVectors": Param(QueryKind.BOOLEAN, code="invalid_similar_retrieve_vectors"),
    }
)
STATS = QuerySchema(
    {"sizeFormat": Param(QueryKind.STRING, code="invalid_stats_size_format", choices=("raw", "human"))}
)


def _query_fails(schema: QuerySchema, query: dict[str, list[str]]) -> tuple[str, str]:
    with pytest.raises(ApiError) as caught:
        schema.validate(query)
    return caught.value.code, caught.value.message


def test_query_valid_values_are_typed() -> None:
    query = {
        "limit": ["5"],
        "from": ["+7"],
        "reverse": ["true"],
        "uids": ["1, 2,3"],
        "statuses": ["enqueued"],
    }
    assert TASKS.validate(query) == {
        "limit": 5,
        "from": 7,
        "reverse": True,
        "uids": [1, 2, 3],
        "statuses": ["enqueued"],
    }
    assert TASKS.validate({}) == {}
    assert TASKS.validate({"uids": ["*"], "statuses": ["*"]}) == {"uids": STAR, "statuses": STAR}


def test_query_repeated_parameter_takes_the_last_value() -> None:
    assert TASKS.validate({"limit": ["doggo", "3"]}) == {"limit": 3}


@pytest.mark.parametrize(
    ("query", "code", "message"),
    [
        (
            {"doggo": ["1"]},
            "bad_request",
            "Unknown parameter `doggo`: expected one of `limit`, `from`, `reverse`, `uids`, `statuses`",
        ),
        (
            {"reverze": ["true"]},
            "bad_request",
            "Unknown parameter `reverze`: did you mean `reverse`? expected one of `limit`, `from`, "
            "`reverse`, "
            "`uids`, `statuses`",
        ),
        (
            {"limit": ["doggo"]},
            "invalid_task_limit",
            "Invalid value in parameter `limit`: could not parse `doggo` as a positive integer",
        ),
        (
            {"limit": ["-1"]},
            "invalid_task_limit",
            "Invalid value in parameter `limit`: could not parse `-1` as a positive integer",
        ),
        (
            {"limit": [" 1"]},
            "invalid_task_limit",
            "Invalid value in parameter `limit`: could not parse ` 1` as a positive integer",
        ),
        (
            {"limit": [""]},
            "invalid_task_limit",
            "Invalid value in parameter `limit`: could not parse `` as a positive integer",
        ),
        (
            {"from": ["4294967296"]},
            "invalid_task_from",
            "Invalid value in parameter `from`: could not parse `4294967296` as a positive integer",
        ),
        (
            {"reverse": ["True"]},
            "invalid_task_reverse",
            "Invalid value in parameter `reverse`: could not parse `True` as a boolean, expected either "
            "`true` or "
            "`false`",
        ),
        (
            {"uids": ["1,doggo"]},
            "invalid_task_uids",
            "Invalid value in parameter `uids`: could not parse `doggo` as a positive integer",
        ),
        (
            {"statuses": ["enqueued,doggo"]},
            "invalid_task_statuses",
            "Invalid value in parameter `statuses`: `doggo` is not a valid task status.",
        ),
        (
            {"doggo": ["1"], "limit": ["x"]},
            "bad_request",
            "Unknown parameter `doggo`: expected one of `limit`, `from`, `reverse`, `uids`, `statuses`",
        ),
    ],
)
def test_query_errors(query: dict[str, list[str]], code: str, message: str) -> None:
    assert _query_fails(TASKS, query) == (code, message)


def test_query_boolean_contract_example() -> None:
    assert _query_fails(SIMILAR, {"embedder": ["e"], "retrieveVectors": ["tamo"]}) == (
        "invalid_similar_retrieve_vectors",
        "Invalid value in parameter `retrieveVectors`: could not parse `tamo` as a boolean, expected either "
        "`true` or `false`",
    )


def test_query_missing_parameter() -> None:
    assert _query_fails(SIMILAR, {}) == ("bad_request", "Missing parameter `embedder`")
    with_code = QuerySchema(
        {
            "embedder": Param(
                QueryKind.STRING,
                code="invalid_similar_embedder",
                required=True,
                missing_code="invalid_similar_embedder",
            )
        }
    )
    assert _query_fails(with_code, {}) == ("invalid_similar_embedder", "Missing parameter `embedder`")


def test_query_enum() -> None:
    assert STATS.validate({"sizeFormat": ["human"]}) == {"sizeFormat": "human"}
    assert _query_fails(STATS, {"sizeFormat": ["humann"]}) == (
        "invalid_stats_size_format",
        "Unknown value `humann` for parameter `sizeFormat`: did you mean `human`? "
        "expected one of `raw`, `human`",
    )


def test_query_param_mistakes_fail_at_definition() -> None:
    with pytest.raises(ValueError, match="unknown error code"):
        Param(QueryKind.STRING, code="invalid_doggo")
    with pytest.raises(ValueError, match="choices"):
        Param(QueryKind.BOOLEAN, code="bad_request", choices=("a",))
    with pytest.raises(ValueError, match="star"):
        Param(QueryKind.BOOLEAN, code="bad_request", star=True)


def test_a_star_string_is_star_only_when_exact() -> None:
    schema = QuerySchema({"after": Param(QueryKind.STRING, code="bad_request", star=True)})
    assert schema.validate({"after": ["*"]}) == {"after": STAR}
    assert schema.validate({"after": ["**"]}) == {"after": "**"}


# --- JSON body decoding ---------------------------------------------------------------------------------


def test_empty_body_is_missing_payload() -> None:
    with pytest.raises(ApiError) as caught:
        parse_json_body(b"")
    assert (caught.value.code, caught.value.status, caught.value.message) == (
        "missing_payload",
        400,
        "A json payload is missing.",
    )


def test_valid_body_is_decoded() -> None:
    assert parse_json_body(b'{"uid": "movies", "n": [1, 2.5, null, true]}') == {
        "uid": "movies",
        "n": [1, 2.5, None, True],
    }


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        (b'{"uid": "movies", "a":', "EOF while parsing a value at line 1 column 22"),
        (b'{"uid": "movies", "a"', "EOF while parsing an object at line 1 column 21"),
        (b'{"uid": "movies", "a": 1', "EOF while parsing an object at line 1 column 24"),
        (b"   ", "EOF while parsing a value at line 1 column 3"),
        (b"[1, 2", "EOF while parsing a list at line 1 column 5"),
        (b'{"a": "b', "EOF while parsing a string at line 1 column 8"),
        (b"[1,]", "trailing comma at line 1 column 4"),
        (b'{"a": 1,}', "trailing comma at line 1 column 9"),
        (b'{"a": 1}x', "trailing characters at line 1 column 9"),
        (b'{"a" 1}', "expected `:` at line 1 column 6"),
        (b"[1 2]", "expected `,` or `]` at line 1 column 4"),
        (b'{"a": 1 "b": 2}', "expected `,` or `}` at line 1 column 9"),
        (b"{1: 2}", "key must be a string at line 1 column 2"),
        (b'{"a": doggo}', "expected value at line 1 column 7"),
        (b"nul", "EOF while parsing a value at line 1 column 3"),
        (b"trux", "expected ident at line 1 column 4"),
        (b"01", "invalid number at line 1 column 2"),
        (b"1.x", "invalid number at line 1 column 3"),
        (b"-", "EOF while parsing a value at line 1 column 1"),
        (b"1e400", "number out of range at line 1 column 5"),
        (b'"a\x01"', "control character (\\u0000-\\u001F) found while parsing a string at line 1 column 3"),
        (b'"\\x"', "invalid escape at line 1 column 3"),
        (b'"\\ud800"', "unexpected end of hex escape at line 1 column 8"),
        (b'"\xff"', "invalid unicode code point at line 1 column 3"),
        (b"\xef\xbb\xbf{}", "expected value at line 1 column 1"),
        (b'{\n  "a": [1,\n  2', "EOF while parsing a list at line 3 column 3"),
        (b"[" * 200, "recursion limit exceeded at line 1 column 128"),
    ],
)
def test_malformed_body_has_serde_message(raw: bytes, detail: str) -> None:
    with pytest.raises(ApiError) as caught:
        parse_json_body(raw)
    assert (caught.value.code, caught.value.status) == ("malformed_payload", 400)
    assert caught.value.message == f"The json payload provided is malformed. `{detail}`."


def test_huge_malformed_body_keeps_orjson_message() -> None:
    raw = b"[" + b"1," * 200_000
    with pytest.raises(ApiError) as caught:
        parse_json_body(raw)
    assert caught.value.message == (
        "The json payload provided is malformed. `unexpected end of data at line 1 column 400002`."
    )


_json = json_values(max_text=5, max_items=4, max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(value=_json, cut=st.integers(min_value=0), insert=st.binary(max_size=2))
def test_scanner_and_orjson_agree_on_validity(value: object, cut: int, insert: bytes) -> None:
    """The serde-style scanner must find an error exactly when orjson refuses the body."""
    raw = orjson.dumps(value)
    position = cut % (len(raw) + 1)
    mutated = raw[:position] + insert + raw[position + 1 :]
    try:
        orjson.loads(mutated)
        orjson_ok = True
    except orjson.JSONDecodeError:
        orjson_ok = False
    assert (serde_syntax_error(mutated) is None) == orjson_ok

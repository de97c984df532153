"""Dynamic search rules (flag ``dynamicSearchRules``): the PATCH and list bodies, how a PATCH changes a
stored rule, and which rules a list filter keeps.

Shared by the gateway (validation, listing) and the scheduler (applying ``dsrUpdate`` tasks). A rule
is ``{uid, description?, lastUpdatedAt, precedence?, active, conditions, actions}``; a PATCH replaces
each field it names and a ``null`` resets it (description and precedence removed, ``active`` true,
``conditions`` ``{}``, ``actions`` ``[]``), as the reference does.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from common.errors import ApiError, invalid_index_uid
from common.index_patterns import is_valid_index_uid
from common.validation import Kind, Schema, Spec, validate

TASK_INDEX_UID = ".meili_dsr"
"""The ``indexUid`` of ``dsrUpdate``/``dsrClear`` tasks (core.md §3.4.1)."""

_ACTIONS_CODE = "invalid_dynamic_search_rule_actions"
_DEFAULTS: dict[str, Any] = {"active": True, "conditions": {}, "actions": []}
_FIELD_ORDER = ("uid", "description", "lastUpdatedAt", "precedence", "active", "conditions", "actions")


def rule_not_found(uid: str) -> ApiError:
    return ApiError("dynamic_search_rule_not_found", f"Dynamic search rule `{uid}` not found.")


def _rfc3339(value: str) -> str | None:
    """Only full date-times (``YYYY-MM-DDTHH:MM:SS`` with an offset); the reference refuses bare dates."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None or "T" not in value.upper():
        return (
            f"`{value}` is not a valid date. It should follow the RFC 3339 format to represents a date or"
            " datetime in the future or specified as a null value."
            " e.g. 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'.\n"
        )
    return None


def _selector_uid(value: str) -> str | None:
    return None if is_valid_index_uid(value) else invalid_index_uid(value).message


_DATE = Spec(Kind.STRING, nullable=True, check=_rfc3339)
_CONDITIONS = Schema(
    {
        "time": Spec(Kind.OBJECT, nullable=True, schema=Schema({"start": _DATE, "end": _DATE})),
        "query": Spec(
            Kind.OBJECT,
            nullable=True,
            schema=Schema(
                {"isEmpty": Spec(Kind.BOOLEAN, nullable=True), "words": Spec(Kind.STRING, nullable=True)}
            ),
        ),
        "filter": Spec(
            Kind.OBJECT, nullable=True, schema=Schema({"values": Spec(Kind.OBJECT, values=Spec(Kind.ANY))})
        ),
    }
)
_SELECTOR = Schema(
    {
        "indexUid": Spec(Kind.STRING, nullable=True, check=_selector_uid),
        "id": Spec(Kind.STRING, required=True),
    }
)
_ACTION = Schema(
    {
        "selector": Spec(Kind.OBJECT, required=True, schema=_SELECTOR),
        "action": Spec(Kind.OBJECT, required=True, values=Spec(Kind.ANY)),
    }
)
_PIN = Schema({"position": Spec(Kind.POSITIVE_INTEGER, required=True)})
_TAGS = {"pin": _PIN}

PATCH = Schema(
    {
        "description": Spec(Kind.STRING, nullable=True, code="invalid_dynamic_search_rule_description"),
        "precedence": Spec(Kind.POSITIVE_INTEGER, nullable=True, code="invalid_dynamic_search_rule_priority"),
        "active": Spec(Kind.BOOLEAN, nullable=True, code="invalid_dynamic_search_rule_active"),
        "conditions": Spec(
            Kind.OBJECT, nullable=True, code="invalid_dynamic_search_rule_conditions", schema=_CONDITIONS
        ),
        "actions": Spec(
            Kind.ARRAY, nullable=True, code=_ACTIONS_CODE, items=Spec(Kind.OBJECT, schema=_ACTION)
        ),
    }
)
LIST = Schema(
    {
        "offset": Spec(Kind.POSITIVE_INTEGER, code="invalid_dynamic_search_rule_offset"),
        "limit": Spec(Kind.POSITIVE_INTEGER, code="invalid_dynamic_search_rule_limit"),
        "filter": Spec(
            Kind.OBJECT,
            nullable=True,
            code="invalid_dynamic_search_rule_filter",
            schema=Schema(
                {
                    "query": Spec(
                        Kind.STRING, nullable=True, code="invalid_dynamic_search_rule_filter_query"
                    ),
                    "active": Spec(
                        Kind.BOOLEAN, nullable=True, code="invalid_dynamic_search_rule_filter_active"
                    ),
                }
            ),
        ),
    }
)


def validate_patch(body: Any) -> dict[str, Any]:
    """A PATCH body as sent (its nulls kept), actions checked against their ``type`` tag."""
    patch = PATCH.validate(body)
    _check_conditions(patch.get("conditions") or {})
    for position, entry in enumerate(patch.get("actions") or []):
        _validate_action(entry["action"], f".actions[{position}].action")
    return patch


def _check_conditions(conditions: dict[str, Any]) -> None:
    """What the reference refuses once the shapes are right (``bad_request``): a query condition
    naming both ``isEmpty`` and ``words``, a time window ending before it starts."""
    query = conditions.get("query") or {}
    if query.get("isEmpty") is not None and query.get("words") is not None:
        raise ApiError(
            "bad_request",
            "Invalid value at `.conditions.query`: either `isEmpty` or `words` can be used, not both at once",
        )
    window = conditions.get("time") or {}
    start, end = window.get("start"), window.get("end")
    if start is not None and end is not None and instant(end) < instant(start):
        raise ApiError(
            "bad_request",
            f"Invalid value at `.conditions.time`: `end` (`{_shown(end)}`) should be later than"
            f" `start` (`{_shown(start)}`)",
        )


def instant(value: str) -> datetime:
    """A date the PATCH validation accepted, as an aware datetime."""
    return datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))


def _shown(value: str) -> str:
    """A date as the reference's messages print it: ``2021-03-04 5:06:07.123 +00:00:00`` (hour
    unpadded, the fraction's significant digits or 0, the offset with seconds)."""
    moment = instant(value)
    fraction = re.search(r"[.,](\d+)", value.split("T", 1)[-1].split("t", 1)[-1])
    digits = (fraction[1].rstrip("0") if fraction else "") or "0"
    offset = moment.utcoffset()
    seconds = 0 if offset is None else int(offset.total_seconds())
    sign = "-" if seconds < 0 else "+"
    hours, rest = divmod(abs(seconds), 3600)
    return (
        f"{moment:%Y-%m-%d} {moment.hour}:{moment:%M:%S}.{digits}"
        f" {sign}{hours:02}:{rest // 60:02}:{rest % 60:02}"
    )


def _validate_action(action: dict[str, Any], path: str) -> None:
    """The ``type`` tag picks the action's schema (only ``pin`` exists)."""
    if "type" not in action:
        raise ApiError(_ACTIONS_CODE, f"Missing field `type` inside `{path}`")
    validate(Spec(Kind.STRING, code=_ACTIONS_CODE), action["type"], f"{path}.type")
    schema = _TAGS.get(action["type"])
    if schema is None:
        raise ApiError(_ACTIONS_CODE, f"Invalid value at `{path}`: Incorrect tag value")
    rest = {key: value for key, value in action.items() if key != "type"}
    validate(Spec(Kind.OBJECT, schema=schema, code=_ACTIONS_CODE), rest, path)


def apply_patch(
    rule: dict[str, Any] | None, uid: str, patch: dict[str, Any], updated_at: str
) -> dict[str, Any]:
    """The rule after a PATCH (a missing rule is created with the defaults), fields in contract order."""
    merged = dict(rule) if rule is not None else {"uid": uid, **_DEFAULTS}
    for name, value in patch.items():
        if value is None:
            merged.pop(name, None)
            if name in _DEFAULTS:
                merged[name] = _DEFAULTS[name]
        else:
            merged[name] = value
    merged["lastUpdatedAt"] = updated_at
    return {name: merged[name] for name in _FIELD_ORDER if name in merged}


_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return [word.casefold() for word in _WORD.findall(text)]


def matches_filter(rule: dict[str, Any], rule_filter: dict[str, Any] | None) -> bool:
    """``active`` compares; ``query`` searches descriptions as the reference does: the ``last``
    matching strategy without typos or prefixes, so a rule is kept when its description holds the
    query's first word (``black zzz`` finds "Black Friday", ``zzz black`` does not)."""
    if not rule_filter:
        return True
    active = rule_filter.get("active")
    if active is not None and rule["active"] != active:
        return False
    words = _words(rule_filter.get("query") or "")
    return not words or words[0] in _words(rule.get("description") or "")

"""Declarative validation of decoded JSON bodies with deserr's error wording and error-code rules.

Rules mirrored from deserr (core.md §1.10): keys are checked in the order the client sent them and the first
problem wins (wrong type, unknown or immutable field); missing required fields are reported afterwards, in
schema order. A value's errors carry its own code, or the code of the nearest enclosing value that has one
(``bad_request`` at the root), and that inherited code also covers unknown and missing fields inside it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Any

from common.errors import ERROR_CODES, ApiError
from common.validation.describe import Kind, accepts, describe_found, describe_kinds, did_you_mean, ticked

Check = Callable[[Any], str | None]
"""Semantic check of a well-typed, non-null value (after its inner values were validated): returns the
problem, reported as ``Invalid value at `.path`: {problem}``, or None."""


@dataclass(frozen=True)
class Spec:
    """What one JSON value must look like: a field's value, an array element or a map value."""

    kinds: Kind
    _: KW_ONLY
    code: str | None = None
    """Code of errors about this value and, unless they set their own, about the values inside it."""
    required: bool = False
    missing_code: str | None = None
    """Code when a required field is absent; defaults to the enclosing object's code."""
    nullable: bool = False
    """Accept null without listing it among the expected kinds (deserr's ``Option<T>``)."""
    choices: tuple[str, ...] = ()
    """Allowed string values, in the order the error message lists them."""
    schema: Schema | None = None
    """Known fields of an object value."""
    items: Spec | None = None
    """Elements of an array value."""
    values: Spec | None = None
    """Values of an object with free-form keys (e.g. headers, synonyms)."""
    check: Check | None = None

    def __post_init__(self) -> None:
        for code in (self.code, self.missing_code):
            if code is not None and code not in ERROR_CODES:
                raise ValueError(f"unknown error code {code!r}")
        if (self.schema or self.values) and Kind.OBJECT not in self.kinds:
            raise ValueError("`schema` and `values` need Kind.OBJECT")
        if self.schema and self.values:
            raise ValueError("an object has either known fields or free-form keys")
        if self.items and Kind.ARRAY not in self.kinds:
            raise ValueError("`items` needs Kind.ARRAY")
        if self.choices and Kind.STRING not in self.kinds:
            raise ValueError("`choices` needs Kind.STRING")


class Schema:
    """The fields of a JSON object; field order is the order of "expected one of" lists."""

    def __init__(
        self,
        fields: Mapping[str, Spec],
        *,
        immutable: Mapping[str, str] | None = None,
        ignore_unknown: bool = False,
    ) -> None:
        """``immutable`` maps a refused field name to its ``immutable_*`` code.

        ``ignore_unknown`` drops unknown fields silently instead of failing (the facet-search route).
        """
        self.fields = dict(fields)
        self.immutable = dict(immutable or {})
        self.ignore_unknown = ignore_unknown
        for code in self.immutable.values():
            if code not in ERROR_CODES:
                raise ValueError(f"unknown error code {code!r}")

    def validate(self, value: object, code: str = "bad_request") -> dict[str, Any]:
        """Validate a whole body whose root must be an object; returns the fields that were present."""
        result: dict[str, Any] = validate(Spec(Kind.OBJECT, schema=self, code=code), value)
        return result


def validate(spec: Spec, value: object, path: str = "") -> Any:
    """Validate a decoded JSON body against ``spec``; raises the first problem as an ``ApiError``.

    Returns the value with objects reduced to their known, present fields. ``path`` places a value
    checked on its own (e.g. after a tag chose its schema) where it sits in the body.
    """
    return _value(spec, value, path, spec.code or "bad_request")


def _at(path: str) -> str:
    return f" at `{path}`" if path else ""


def _inside(path: str) -> str:
    return f" inside `{path}`" if path else ""


def _value(spec: Spec, value: object, path: str, inherited: str) -> Any:
    code = spec.code or inherited
    if value is None and spec.nullable:
        return None
    if not accepts(spec.kinds, value):
        raise ApiError(
            code,
            f"Invalid value type{_at(path)}: expected {describe_kinds(spec.kinds)}, "
            f"but found {describe_found(value)}",
        )
    result: Any = value
    if isinstance(value, int) and not isinstance(value, bool) and not spec.kinds & Kind.INTEGER:
        result = float(value)  # accepted as a number: hand over the float type the field declares
    if isinstance(value, str) and spec.choices and value not in spec.choices:
        raise ApiError(
            code,
            f"Unknown value `{value}`{_at(path)}: {did_you_mean(value, spec.choices)}"
            f"expected one of {ticked(spec.choices)}",
        )
    if isinstance(value, dict):
        if spec.schema is not None:
            result = _object(spec.schema, value, path, code)
        elif spec.values is not None:
            result = {key: _value(spec.values, item, f"{path}.{key}", code) for key, item in value.items()}
    elif isinstance(value, list) and spec.items is not None:
        result = [_value(spec.items, item, f"{path}[{index}]", code) for index, item in enumerate(value)]
    if spec.check is not None and value is not None:
        problem = spec.check(result)
        if problem is not None:
            raise ApiError(code, f"Invalid value{_at(path)}: {problem}")
    return result


def _object(schema: Schema, value: dict[str, Any], path: str, code: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, item in value.items():
        spec = schema.fields.get(key)
        if spec is not None:
            result[key] = _value(spec, item, f"{path}.{key}", code)
        elif key in schema.immutable:
            raise ApiError(
                schema.immutable[key], f"Immutable field `{key}`: expected one of {ticked(schema.fields)}"
            )
        elif not schema.ignore_unknown:
            raise ApiError(
                code,
                f"Unknown field `{key}`{_inside(path)}: {did_you_mean(key, list(schema.fields))}"
                f"expected one of {ticked(schema.fields)}",
            )
    for name, spec in schema.fields.items():
        if spec.required and name not in value:
            raise ApiError(spec.missing_code or code, f"Missing field `{name}`{_inside(path)}")
    return result

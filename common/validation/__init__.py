"""Request validation shared by the gateway and the scheduler: JSON bodies and query strings.

Every failure is an ``ApiError`` carrying the contract's code and deserr-style wording (core.md §1.9-§1.10).
"""

from common.validation.body import Check, Schema, Spec, validate
from common.validation.describe import Kind
from common.validation.json_body import parse_json_body
from common.validation.query import STAR, Param, QueryKind, QuerySchema

__all__ = [
    "STAR",
    "Check",
    "Kind",
    "Param",
    "QueryKind",
    "QuerySchema",
    "Schema",
    "Spec",
    "parse_json_body",
    "validate",
]

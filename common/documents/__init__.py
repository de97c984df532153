"""Document payloads (JSON, NDJSON, CSV) and document ids, as pure functions for the gateway and shards."""

from common.documents.payload import ACCEPTED_CONTENT_TYPES, Document, PayloadFormat, parse_payload
from common.documents.primary_key import (
    DocumentError,
    extract_document_id,
    infer_primary_key,
    invalid_document_id_error,
    is_valid_document_id,
)

__all__ = [
    "ACCEPTED_CONTENT_TYPES",
    "Document",
    "DocumentError",
    "PayloadFormat",
    "extract_document_id",
    "infer_primary_key",
    "invalid_document_id_error",
    "is_valid_document_id",
    "parse_payload",
]

from common.rpc import health_pb2 as _health_pb2
from common.rpc import json_pb2 as _json_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SearchCall(_message.Message):
    __slots__ = ("call_id", "request")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    request: SearchRequest
    def __init__(self, call_id: _Optional[int] = ..., request: _Optional[_Union[SearchRequest, _Mapping]] = ...) -> None: ...

class SearchAnswer(_message.Message):
    __slots__ = ("call_id", "reply", "failure")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    reply: SearchReply
    failure: str
    def __init__(self, call_id: _Optional[int] = ..., reply: _Optional[_Union[SearchReply, _Mapping]] = ..., failure: _Optional[str] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("index_uid", "query_json")
    INDEX_UID_FIELD_NUMBER: _ClassVar[int]
    QUERY_JSON_FIELD_NUMBER: _ClassVar[int]
    index_uid: str
    query_json: bytes
    def __init__(self, index_uid: _Optional[str] = ..., query_json: _Optional[bytes] = ...) -> None: ...

class SearchReply(_message.Message):
    __slots__ = ("hits_json", "candidates", "index_found", "error_json", "max_total_hits", "facets_json", "steps_json", "hit_documents", "rule_groups_json", "deduplicated", "work_ns", "pinned_ids", "semantic_hits_json", "semantic_hit_documents", "union_candidates", "union_facets_json", "capped_typos_json", "degraded")
    HITS_JSON_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    INDEX_FOUND_FIELD_NUMBER: _ClassVar[int]
    ERROR_JSON_FIELD_NUMBER: _ClassVar[int]
    MAX_TOTAL_HITS_FIELD_NUMBER: _ClassVar[int]
    FACETS_JSON_FIELD_NUMBER: _ClassVar[int]
    STEPS_JSON_FIELD_NUMBER: _ClassVar[int]
    HIT_DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    RULE_GROUPS_JSON_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    WORK_NS_FIELD_NUMBER: _ClassVar[int]
    PINNED_IDS_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_HITS_JSON_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_HIT_DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    UNION_CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    UNION_FACETS_JSON_FIELD_NUMBER: _ClassVar[int]
    CAPPED_TYPOS_JSON_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    hits_json: bytes
    candidates: int
    index_found: bool
    error_json: bytes
    max_total_hits: int
    facets_json: bytes
    steps_json: bytes
    hit_documents: _containers.RepeatedScalarFieldContainer[bytes]
    rule_groups_json: bytes
    deduplicated: bool
    work_ns: int
    pinned_ids: _containers.RepeatedScalarFieldContainer[str]
    semantic_hits_json: bytes
    semantic_hit_documents: _containers.RepeatedScalarFieldContainer[bytes]
    union_candidates: int
    union_facets_json: bytes
    capped_typos_json: bytes
    degraded: bool
    def __init__(self, hits_json: _Optional[bytes] = ..., candidates: _Optional[int] = ..., index_found: _Optional[bool] = ..., error_json: _Optional[bytes] = ..., max_total_hits: _Optional[int] = ..., facets_json: _Optional[bytes] = ..., steps_json: _Optional[bytes] = ..., hit_documents: _Optional[_Iterable[bytes]] = ..., rule_groups_json: _Optional[bytes] = ..., deduplicated: _Optional[bool] = ..., work_ns: _Optional[int] = ..., pinned_ids: _Optional[_Iterable[str]] = ..., semantic_hits_json: _Optional[bytes] = ..., semantic_hit_documents: _Optional[_Iterable[bytes]] = ..., union_candidates: _Optional[int] = ..., union_facets_json: _Optional[bytes] = ..., capped_typos_json: _Optional[bytes] = ..., degraded: _Optional[bool] = ...) -> None: ...

class ApplyBatchRequest(_message.Message):
    __slots__ = ("batch_uid", "operations_json", "abortable", "prepare", "skip_tasks")
    BATCH_UID_FIELD_NUMBER: _ClassVar[int]
    OPERATIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    ABORTABLE_FIELD_NUMBER: _ClassVar[int]
    PREPARE_FIELD_NUMBER: _ClassVar[int]
    SKIP_TASKS_FIELD_NUMBER: _ClassVar[int]
    batch_uid: int
    operations_json: bytes
    abortable: bool
    prepare: bool
    skip_tasks: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, batch_uid: _Optional[int] = ..., operations_json: _Optional[bytes] = ..., abortable: _Optional[bool] = ..., prepare: _Optional[bool] = ..., skip_tasks: _Optional[_Iterable[int]] = ...) -> None: ...

class ApplyBatchReply(_message.Message):
    __slots__ = ("result_json", "aborted", "prepared")
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    ABORTED_FIELD_NUMBER: _ClassVar[int]
    PREPARED_FIELD_NUMBER: _ClassVar[int]
    result_json: bytes
    aborted: bool
    prepared: bool
    def __init__(self, result_json: _Optional[bytes] = ..., aborted: _Optional[bool] = ..., prepared: _Optional[bool] = ...) -> None: ...

class AbortBatchRequest(_message.Message):
    __slots__ = ("batch_uid",)
    BATCH_UID_FIELD_NUMBER: _ClassVar[int]
    batch_uid: int
    def __init__(self, batch_uid: _Optional[int] = ...) -> None: ...

class AbortBatchReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SearchCalls(_message.Message):
    __slots__ = ("calls",)
    CALLS_FIELD_NUMBER: _ClassVar[int]
    calls: _containers.RepeatedCompositeFieldContainer[SearchCall]
    def __init__(self, calls: _Optional[_Iterable[_Union[SearchCall, _Mapping]]] = ...) -> None: ...

class SearchAnswers(_message.Message):
    __slots__ = ("answers",)
    ANSWERS_FIELD_NUMBER: _ClassVar[int]
    answers: _containers.RepeatedCompositeFieldContainer[SearchAnswer]
    def __init__(self, answers: _Optional[_Iterable[_Union[SearchAnswer, _Mapping]]] = ...) -> None: ...

from typing import ClassVar as _ClassVar

from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message

DESCRIPTOR: _descriptor.FileDescriptor

class SearchRequest(_message.Message):
    __slots__ = ("index_uid", "query_json")
    INDEX_UID_FIELD_NUMBER: _ClassVar[int]
    QUERY_JSON_FIELD_NUMBER: _ClassVar[int]
    index_uid: str
    query_json: bytes
    def __init__(self, index_uid: str | None = ..., query_json: bytes | None = ...) -> None: ...

class SearchReply(_message.Message):
    __slots__ = ("candidates", "hits_json")
    HITS_JSON_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    hits_json: bytes
    candidates: int
    def __init__(self, hits_json: bytes | None = ..., candidates: int | None = ...) -> None: ...

from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class JsonRequest(_message.Message):
    __slots__ = ("json",)
    JSON_FIELD_NUMBER: _ClassVar[int]
    json: bytes
    def __init__(self, json: _Optional[bytes] = ...) -> None: ...

class JsonReply(_message.Message):
    __slots__ = ("json", "error_json")
    JSON_FIELD_NUMBER: _ClassVar[int]
    ERROR_JSON_FIELD_NUMBER: _ClassVar[int]
    json: bytes
    error_json: bytes
    def __init__(self, json: _Optional[bytes] = ..., error_json: _Optional[bytes] = ...) -> None: ...

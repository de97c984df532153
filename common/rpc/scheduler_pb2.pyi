from common.rpc import health_pb2 as _health_pb2
from common.rpc import json_pb2 as _json_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class RegisterTaskRequest(_message.Message):
    __slots__ = ("type", "index_uid", "params_json", "payload", "custom_metadata", "task_id", "dry_run")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    INDEX_UID_FIELD_NUMBER: _ClassVar[int]
    PARAMS_JSON_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_METADATA_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    type: str
    index_uid: str
    params_json: bytes
    payload: bytes
    custom_metadata: str
    task_id: int
    dry_run: bool
    def __init__(self, type: _Optional[str] = ..., index_uid: _Optional[str] = ..., params_json: _Optional[bytes] = ..., payload: _Optional[bytes] = ..., custom_metadata: _Optional[str] = ..., task_id: _Optional[int] = ..., dry_run: _Optional[bool] = ...) -> None: ...

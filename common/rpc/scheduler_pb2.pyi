from google.protobuf import descriptor as _descriptor

DESCRIPTOR: _descriptor.FileDescriptor

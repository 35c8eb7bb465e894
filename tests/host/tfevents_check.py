#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Reads a TensorBoard event file independently of libwsemetrics.

Usage: tfevents_check.py EVENTFILE

Checks the TFRecord framing and both masked CRC32Cs of every record,
parses each record as a tensorflow.Event with Debian's python3-protobuf
(the descriptors are built here at run time, no protoc), checks that
protobuf reserializes it to the very same bytes, and prints, one per line:

    file_version<TAB>VERSION<TAB>WALL_TIME
    scalar<TAB>TAG<TAB>STEP<TAB>VALUE<TAB>WALL_TIME

VALUE and WALL_TIME are repr() of Python floats, which read back exactly.
Exits 1 on any error, 77 when google.protobuf is missing (tests skip).
"""
import struct
import sys

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError as exc:
    print(f"tfevents_check: google.protobuf is missing ({exc}); "
          "install python3-protobuf", file=sys.stderr)
    sys.exit(77)

F = descriptor_pb2.FieldDescriptorProto


def crc32c(data):
    """CRC32C, bit by bit: slow, and as unlike the C nibble table as can be."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def add_field(msg, name, number, ftype, label=F.LABEL_OPTIONAL, type_name=None,
              oneof=None):
    field = msg.field.add(name=name, number=number, type=ftype, label=label)
    if type_name:
        field.type_name = type_name
    if oneof is not None:
        field.oneof_index = oneof


def event_class():
    """tensorflow.Event and Summary, the fields a scalar event uses, with the
    numbers and oneofs of event.proto and summary.proto."""
    proto = descriptor_pb2.FileDescriptorProto(
        name="wse_tfevents_check.proto", package="tensorflow", syntax="proto3")

    summary = proto.message_type.add(name="Summary")
    value = summary.nested_type.add(name="Value")
    value.oneof_decl.add(name="value")
    add_field(value, "tag", 1, F.TYPE_STRING)
    add_field(value, "simple_value", 2, F.TYPE_FLOAT, oneof=0)
    add_field(summary, "value", 1, F.TYPE_MESSAGE, F.LABEL_REPEATED,
              ".tensorflow.Summary.Value")

    event = proto.message_type.add(name="Event")
    event.oneof_decl.add(name="what")
    add_field(event, "wall_time", 1, F.TYPE_DOUBLE)
    add_field(event, "step", 2, F.TYPE_INT64)
    add_field(event, "file_version", 3, F.TYPE_STRING, oneof=0)
    add_field(event, "summary", 5, F.TYPE_MESSAGE,
              type_name=".tensorflow.Summary", oneof=0)

    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    desc = pool.FindMessageTypeByName("tensorflow.Event")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


def records(data):
    """Yields (offset, payload) for each record; raises ValueError."""
    at = 0
    while at < len(data):
        if len(data) - at < 12:
            raise ValueError(f"offset {at}: truncated record header")
        length_bytes = data[at:at + 8]
        (length,) = struct.unpack("<Q", length_bytes)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        if length_crc != masked_crc(length_bytes):
            raise ValueError(f"offset {at}: length CRC mismatch")
        if length > len(data) - at - 16:
            raise ValueError(f"offset {at}: record of {length} bytes runs past the end")
        payload = data[at + 12:at + 12 + length]
        (data_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        if data_crc != masked_crc(payload):
            raise ValueError(f"offset {at}: data CRC mismatch")
        yield at, payload
        at += 16 + length


def main():
    if len(sys.argv) != 2:
        print("usage: tfevents_check.py EVENTFILE", file=sys.stderr)
        return 2
    event_type = event_class()
    sys.stdout.reconfigure(encoding="utf-8")  # tags are UTF-8 whatever the locale
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    try:
        for index, (at, payload) in enumerate(records(data)):
            event = event_type()
            event.ParseFromString(payload)
            if event.SerializeToString() != payload:
                raise ValueError(f"offset {at}: protobuf reserializes the event differently")
            what = event.WhichOneof("what")
            if index == 0 and what != "file_version":
                raise ValueError("the first event holds no file_version")
            if what == "file_version":
                print(f"file_version\t{event.file_version}\t{event.wall_time!r}")
            elif what == "summary":
                for value in event.summary.value:
                    if value.WhichOneof("value") != "simple_value":
                        raise ValueError(f"offset {at}: a value without simple_value")
                    print(f"scalar\t{value.tag}\t{event.step}\t{value.simple_value!r}"
                          f"\t{event.wall_time!r}")
            else:
                raise ValueError(f"offset {at}: an event with neither file_version nor summary")
    except Exception as exc:  # parse errors come as several types
        print(f"tfevents_check: {sys.argv[1]}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

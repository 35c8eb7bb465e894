#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Reads a TensorBoard event file independently of libwsemetrics.

Usage: tfevents_check.py [--schema SCHEMA.desc] EVENTFILE

Checks the TFRecord framing and both masked CRC32Cs of every record,
parses each record as a tensorflow.Event with Debian's python3-protobuf
(the schema is lib/metrics/tfevent.proto, as the descriptor set protoc-c
made of it at build time: build/gen/tfevent.desc of the tree this script
is in, unless --schema names another), checks that protobuf reserializes
it to the very same bytes, and prints, one per line:

    file_version<TAB>VERSION<TAB>WALL_TIME
    scalar<TAB>TAG<TAB>STEP<TAB>VALUE<TAB>WALL_TIME

VALUE and WALL_TIME are repr() of Python floats, which read back exactly.
Exits 1 on any error, 77 when google.protobuf is missing (tests skip).
"""
import os
import struct
import sys

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
except ImportError as exc:
    print(f"tfevents_check: google.protobuf is missing ({exc}); "
          "install python3-protobuf", file=sys.stderr)
    sys.exit(77)


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


def event_class(desc_path):
    """tensorflow.Event from the schema's descriptor set."""
    files = descriptor_pb2.FileDescriptorSet()
    with open(desc_path, "rb") as f:
        files.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for proto in files.file:
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
    args = sys.argv[1:]
    schema = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                          "build", "gen", "tfevent.desc")
    if len(args) == 3 and args[0] == "--schema":
        schema, args = args[1], args[2:]
    if len(args) != 1:
        print("usage: tfevents_check.py [--schema SCHEMA.desc] EVENTFILE", file=sys.stderr)
        return 2
    path = args[0]
    try:
        event_type = event_class(schema)
    except OSError as exc:
        print(f"tfevents_check: the schema's descriptor set: {exc} (run make)", file=sys.stderr)
        return 1
    sys.stdout.reconfigure(encoding="utf-8")  # tags are UTF-8 whatever the locale
    with open(path, "rb") as f:
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
        print(f"tfevents_check: {path}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

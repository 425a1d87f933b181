"""TW_RecordWriter and TW_RecordReader: records round-trip byte for byte in
TensorFlow's TFRecord framing, and every bad file or call is a clean error
(missing file, damaged length or data, truncation, a closed writer, an
unsupported compression), never a crash."""

import gzip
import struct
import zlib

import pytest
from capi_helpers import CODES


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def framed(record):
    """A record as TensorFlow's RecordWriter frames it."""
    length = struct.pack("<Q", len(record))
    return (
        length
        + struct.pack("<I", masked_crc(length))
        + record
        + struct.pack("<I", masked_crc(record))
    )


RECORDS = [b"first", b"", b"\x00\xff" * 300, bytes(range(256))]


def write(api, path, records=RECORDS, compression=b""):
    lib = api.lib
    writer = api.call(lib.TW_NewRecordWriter, str(path).encode(), compression)
    try:
        for record in records:
            api.call(lib.TW_RecordWriterWrite, writer, record, len(record))
        api.call(lib.TW_RecordWriterClose, writer)
    finally:
        lib.TW_DeleteRecordWriter(writer)


def read_all(api, path):
    """The records of `path`, then the (code, message) that ended reading."""
    lib, ffi = api.lib, api.ffi
    reader = api.call(lib.TW_NewRecordReader, str(path).encode(), ffi.NULL)
    status = lib.TF_NewStatus()
    records = []
    try:
        for _ in range(1000):
            buffer = lib.TW_RecordReaderReadNext(reader, status)
            if buffer == ffi.NULL:
                return records, (api.code(status), api.message(status))
            records.append(bytes(ffi.buffer(buffer.data, buffer.length)))
            lib.TF_DeleteBuffer(buffer)
        raise AssertionError("reading never ended")
    finally:
        lib.TF_DeleteStatus(status)
        lib.TW_DeleteRecordReader(reader)


@pytest.mark.covers("TW_NewRecordWriter", "TW_RecordWriterWrite", "TW_RecordWriterClose")
def test_records_are_framed_as_tensorflow_frames_them(api, tmp_path):
    path = tmp_path / "data.tfrecord"
    write(api, path)
    assert path.read_bytes() == b"".join(framed(r) for r in RECORDS)


@pytest.mark.covers("TW_NewRecordReader", "TW_RecordReaderReadNext", "TW_DeleteRecordReader")
def test_records_read_back_then_out_of_range(api, tmp_path):
    path = tmp_path / "data.tfrecord"
    write(api, path)
    records, (code, _) = read_all(api, path)
    assert records == RECORDS
    assert code == CODES["OUT_OF_RANGE"]


def test_reader_sees_records_appended_after_the_end(api, tmp_path):
    path = tmp_path / "data.tfrecord"
    write(api, path, RECORDS[:1])
    lib, ffi = api.lib, api.ffi
    reader = api.call(lib.TW_NewRecordReader, str(path).encode(), b"")
    status = lib.TF_NewStatus()
    try:
        lib.TF_DeleteBuffer(api.call(lib.TW_RecordReaderReadNext, reader))
        assert lib.TW_RecordReaderReadNext(reader, status) == ffi.NULL
        assert api.code(status) == CODES["OUT_OF_RANGE"]
        with open(path, "ab") as f:
            f.write(framed(b"later"))
        buffer = api.call(lib.TW_RecordReaderReadNext, reader)
        assert bytes(ffi.buffer(buffer.data, buffer.length)) == b"later"
        lib.TF_DeleteBuffer(buffer)
    finally:
        lib.TF_DeleteStatus(status)
        lib.TW_DeleteRecordReader(reader)


@pytest.mark.parametrize(
    "damage",
    ["length_crc", "data", "data_crc", "truncated_data", "truncated_header", "huge_length"],
)
@pytest.mark.covers("TW_RecordReaderReadNext")
def test_damaged_files_are_data_loss(api, tmp_path, damage):
    good = framed(b"intact") + framed(b"payload bytes")
    second = len(framed(b"intact"))
    data = bytearray(good)
    if damage == "length_crc":
        data[second + 9] ^= 1
    elif damage == "data":
        data[second + 12] ^= 1
    elif damage == "data_crc":
        data[-1] ^= 1
    elif damage == "truncated_data":
        data = data[:-6]
    elif damage == "truncated_header":
        data = data[: second + 5]
    else:  # a length of 2^60 with a valid checksum: nothing may be allocated for it
        length = struct.pack("<Q", 1 << 60)
        data = data[:second] + length + struct.pack("<I", masked_crc(length)) + b"xx"
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(bytes(data))
    records, (code, message) = read_all(api, path)
    assert records == [b"intact"]
    assert code == CODES["DATA_LOSS"], message
    assert f"offset {second}" in message


@pytest.mark.covers("TW_NewRecordReader", "TW_NewRecordWriter")
def test_missing_file_and_directory(api, tmp_path):
    lib = api.lib
    status = lib.TF_NewStatus()
    try:
        missing = str(tmp_path / "absent").encode()
        assert lib.TW_NewRecordReader(missing, b"", status) == api.ffi.NULL
        assert api.code(status) == CODES["NOT_FOUND"]
        no_dir = str(tmp_path / "absent" / "f.tfrecord").encode()
        assert lib.TW_NewRecordWriter(no_dir, b"", status) == api.ffi.NULL
        assert api.code(status) == CODES["NOT_FOUND"]
        assert lib.TW_NewRecordReader(str(tmp_path).encode(), b"", status) == api.ffi.NULL
        assert api.code(status) == CODES["FAILED_PRECONDITION"]
        assert lib.TW_NewRecordWriter(api.ffi.NULL, b"", status) == api.ffi.NULL
        assert api.code(status) == CODES["INVALID_ARGUMENT"]
    finally:
        lib.TF_DeleteStatus(status)


@pytest.mark.parametrize("compression", [b"GZIP", b"ZLIB"])
@pytest.mark.covers("TW_NewRecordWriter", "TW_NewRecordReader", "TW_RecordReaderReadNext")
def test_compressed_files_are_one_zlib_stream_of_framed_records(api, tmp_path, compression):
    path = tmp_path / "c.tfrecord"
    write(api, path, compression=compression)
    data = path.read_bytes()
    if compression == b"GZIP":
        raw = gzip.decompress(data)
    else:
        raw = zlib.decompress(data)
    assert raw == b"".join(framed(r) for r in RECORDS)
    lib, ffi = api.lib, api.ffi
    reader = api.call(lib.TW_NewRecordReader, str(path).encode(), compression)
    status = lib.TF_NewStatus()
    try:
        records = []
        while (buffer := lib.TW_RecordReaderReadNext(reader, status)) != ffi.NULL:
            records.append(bytes(ffi.buffer(buffer.data, buffer.length)))
            lib.TF_DeleteBuffer(buffer)
            assert len(records) <= len(RECORDS)
        assert records == RECORDS
        assert api.code(status) == CODES["OUT_OF_RANGE"]
    finally:
        lib.TF_DeleteStatus(status)
        lib.TW_DeleteRecordReader(reader)


@pytest.mark.covers("TW_RecordReaderReadNext")
def test_damaged_compressed_stream_is_data_loss(api, tmp_path):
    path = tmp_path / "c.tfrecord"
    path.write_bytes(gzip.compress(framed(b"one") + framed(b"two"))[:-12] + b"\xff" * 12)
    lib, ffi = api.lib, api.ffi
    reader = api.call(lib.TW_NewRecordReader, str(path).encode(), b"GZIP")
    status = lib.TF_NewStatus()
    try:
        codes = []
        for _ in range(3):
            buffer = lib.TW_RecordReaderReadNext(reader, status)
            codes.append(api.code(status))
            if buffer == ffi.NULL:
                break
            lib.TF_DeleteBuffer(buffer)
        assert codes[-1] == CODES["DATA_LOSS"], api.message(status)
    finally:
        lib.TF_DeleteStatus(status)
        lib.TW_DeleteRecordReader(reader)


@pytest.mark.covers("TW_NewRecordWriter")
def test_unknown_compression_type_is_invalid_argument(api, tmp_path):
    lib = api.lib
    status = lib.TF_NewStatus()
    try:
        path = str(tmp_path / "c.tfrecord").encode()
        assert lib.TW_NewRecordWriter(path, b"LZ4", status) == api.ffi.NULL
        assert api.code(status) == CODES["INVALID_ARGUMENT"]
        assert lib.TW_NewRecordReader(path, b"gzip", status) == api.ffi.NULL
        assert api.code(status) == CODES["INVALID_ARGUMENT"]
    finally:
        lib.TF_DeleteStatus(status)
    write(api, tmp_path / "none.tfrecord", [b"x"], compression=b"NONE")


@pytest.mark.covers(
    "TW_RecordWriterWrite",
    "TW_RecordWriterFlush",
    "TW_RecordWriterClose",
    "TW_DeleteRecordWriter",
    "TW_DeleteRecordReader",
)
def test_write_after_close_fails_and_close_twice_is_a_no_op(api, tmp_path):
    lib = api.lib
    writer = api.call(lib.TW_NewRecordWriter, str(tmp_path / "w").encode(), b"")
    status = lib.TF_NewStatus()
    try:
        api.call(lib.TW_RecordWriterWrite, writer, b"a", 1)
        api.call(lib.TW_RecordWriterFlush, writer)
        assert (tmp_path / "w").read_bytes() == framed(b"a")
        api.call(lib.TW_RecordWriterClose, writer)
        api.call(lib.TW_RecordWriterClose, writer)
        lib.TW_RecordWriterWrite(writer, b"b", 1, status)
        assert api.code(status) == CODES["FAILED_PRECONDITION"]
        lib.TW_RecordWriterFlush(writer, status)
        assert api.code(status) == CODES["FAILED_PRECONDITION"]
        lib.TW_RecordWriterWrite(writer, api.ffi.NULL, 3, status)
        assert api.code(status) == CODES["INVALID_ARGUMENT"]
    finally:
        lib.TF_DeleteStatus(status)
        lib.TW_DeleteRecordWriter(writer)
    lib.TW_DeleteRecordWriter(api.ffi.NULL)
    lib.TW_DeleteRecordReader(api.ffi.NULL)

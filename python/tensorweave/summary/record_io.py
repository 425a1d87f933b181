"""TFRecord files from Python: the framing (length, masked CRC-32C) is the
runtime's (runtime/util/record_io.h), reached through TW_RecordWriter and
TW_RecordReader in the C API, so event files and tf.io.TFRecordWriter files
are written by one implementation.

    with tf.io.TFRecordWriter("/tmp/data.tfrecord") as writer:
        writer.write(example_bytes)
    for record in tf.io.tf_record_iterator("/tmp/data.tfrecord"):
        ...
"""

import os

from tensorweave import pywrap_tensorweave as _pywrap
from tensorweave.errors import OutOfRangeError
from tensorweave.framework.api_export import tf_export


@tf_export("io.TFRecordCompressionType", "python_io.TFRecordCompressionType")
class TFRecordCompressionType:
    """The compression of a whole record file."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_COMPRESSION_NAMES = {
    None: "",
    "": "",
    TFRecordCompressionType.NONE: "",
    TFRecordCompressionType.ZLIB: "ZLIB",
    TFRecordCompressionType.GZIP: "GZIP",
    "NONE": "",
    "ZLIB": "ZLIB",
    "GZIP": "GZIP",
}


@tf_export("io.TFRecordOptions", "python_io.TFRecordOptions")
class TFRecordOptions:
    """Options of a record file: its compression type (None, "", "NONE",
    "ZLIB", "GZIP" or a TFRecordCompressionType). A compressed file is one
    zlib or gzip stream holding the framed records, as TensorFlow's. zlib's
    tuning options (level, window, buffer sizes) are accepted and ignored:
    any setting reads back the same."""

    def __init__(self, compression_type=None, **unused_zlib_options):
        if isinstance(compression_type, TFRecordOptions):
            compression_type = compression_type.compression_type
        if compression_type not in _COMPRESSION_NAMES:
            raise ValueError(f"Unsupported compression type: {compression_type!r}")
        self.compression_type = compression_type

    @classmethod
    def get_compression_type_string(cls, options):
        if options is None:
            return ""
        if not isinstance(options, TFRecordOptions):
            options = cls(options)
        return _COMPRESSION_NAMES[options.compression_type]


def _compression_name(options):
    return TFRecordOptions.get_compression_type_string(options)


@tf_export("io.TFRecordWriter", "python_io.TFRecordWriter")
class TFRecordWriter:
    """Writes records (bytes) to a TFRecord file, creating or truncating it."""

    def __init__(self, path, options=None):
        self._path = os.fspath(path)
        self._writer = _pywrap.TW_NewRecordWriter(self._path, _compression_name(options))

    def __enter__(self):
        return self

    def __exit__(self, *unused):
        self.close()

    def write(self, record):
        if isinstance(record, str):
            record = record.encode("utf-8")
        _pywrap.TW_RecordWriterWrite(self._live_writer(), bytes(record))

    def flush(self):
        _pywrap.TW_RecordWriterFlush(self._live_writer())

    def close(self):
        """Flushes and closes the file; closing twice is a no-op."""
        if self._writer is None:
            return
        writer, self._writer = self._writer, None
        try:
            _pywrap.TW_RecordWriterClose(writer)
        finally:
            _pywrap.TW_DeleteRecordWriter(writer)

    def _live_writer(self):
        if self._writer is None:
            raise ValueError(f"The record writer of {self._path} has been closed")
        return self._writer

    def __del__(self):
        writer = getattr(self, "_writer", None)
        if writer is not None:
            self._writer = None
            _pywrap.TW_DeleteRecordWriter(writer)


@tf_export("io.tf_record_iterator", "python_io.tf_record_iterator")
def tf_record_iterator(path, options=None):
    """Yields the records of a TFRecord file as bytes. A truncated or
    corrupted record raises DataLossError (as TensorFlow's does)."""
    reader = _pywrap.TW_NewRecordReader(os.fspath(path), _compression_name(options))
    try:
        while True:
            try:
                record = _pywrap.TW_RecordReaderReadNext(reader)
            except OutOfRangeError:
                return
            yield record
    finally:
        _pywrap.TW_DeleteRecordReader(reader)

// TFRecord files: the framing TensorFlow's event files (events.out.tfevents.*)
// and tf.io.TFRecordWriter use. Each record is
//   uint64 length (little-endian) · uint32 masked CRC-32C of those 8 bytes
//   · length bytes of data · uint32 masked CRC-32C of the data,
// so a reader finds a torn or damaged record instead of misreading it.
//
//   std::unique_ptr<RecordWriter> writer;
//   TW_RETURN_IF_ERROR(RecordWriter::Open("/tmp/events.out.tfevents.1", &writer));
//   TW_RETURN_IF_ERROR(writer->WriteRecord(event.SerializeAsString()));
//   TW_RETURN_IF_ERROR(writer->Close());   // flushes and syncs
//
//   std::unique_ptr<RecordReader> reader;
//   TW_RETURN_IF_ERROR(RecordReader::Open(path, &reader));
//   std::string record;
//   Status status;
//   while ((status = reader->ReadRecord(&record)).ok()) { ... }
//   // OUT_OF_RANGE at a clean end of file; DATA_LOSS for a truncated or
//   // corrupted record (the message gives its offset).
//
// Neither class is thread-safe; callers serialize their calls.
#ifndef TENSORWEAVE_UTIL_RECORD_IO_H_
#define TENSORWEAVE_UTIL_RECORD_IO_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "runtime/framework/status.h"
#include "runtime/util/zlib_stream.h"

namespace tensorweave {

// The compression of a whole record file, by TensorFlow's names: "" or
// "NONE" for none, "ZLIB" or "GZIP" for one zlib or gzip stream holding the
// framed records. Any other name is INVALID_ARGUMENT, as in TensorFlow.
enum class RecordCompression { kNone, kZlib, kGzip };
Status ParseRecordCompression(const std::string& compression_type, RecordCompression* out);

class RecordWriter {
 public:
  // Creates (or truncates) `path`. NOT_FOUND when its directory is missing,
  // PERMISSION_DENIED when it cannot be written.
  static Status Open(const std::string& path, const std::string& compression_type,
                     std::unique_ptr<RecordWriter>* writer);
  ~RecordWriter();  // closes the file, ignoring errors (call Close to see them)

  Status WriteRecord(const std::string& data) { return WriteRecord(data.data(), data.size()); }
  Status WriteRecord(const void* data, size_t length);
  // Hands the records written so far to the operating system and syncs them
  // to disk, so a reader (TensorBoard) sees them.
  Status Flush();
  // Flushes and closes; later writes fail with FAILED_PRECONDITION. Closing
  // twice is a no-op.
  Status Close();

  const std::string& path() const { return path_; }

 private:
  RecordWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  Status Put(const void* data, size_t length);
  // fflush and fsync.
  Status SyncFile();

  std::string path_;
  std::FILE* file_;                     // null once closed
  std::unique_ptr<Deflater> deflater_;  // null for an uncompressed file
};

class RecordReader {
 public:
  static Status Open(const std::string& path, const std::string& compression_type,
                     std::unique_ptr<RecordReader>* reader);
  ~RecordReader();

  // The next record into *record. OUT_OF_RANGE at the end of the file;
  // DATA_LOSS when the file ends inside a record, a length is larger than
  // what is left of the file (nothing is allocated for it beyond the bytes
  // actually there), or a CRC does not match. In an uncompressed file a
  // record is read anew at each call, so a file still being written (an
  // event file) can be read on from where the last whole record ended.
  Status ReadRecord(std::string* record);

  // Bytes of the file consumed by the records read so far.
  uint64_t offset() const { return offset_; }

 private:
  RecordReader(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  // Reads up to `length` bytes at `position` (of the uncompressed records);
  // *read is less than `length` only at the end of the file.
  Status ReadAt(uint64_t position, size_t length, char* out, size_t* read);
  // The `length` bytes of data and footer after a header at offset_: a
  // pread for an uncompressed file (checked against its size first), from
  // the inflater in pieces otherwise, so memory follows the bytes present.
  Status ReadBody(uint64_t length, std::string* body, bool* complete);

  std::string path_;
  int fd_;
  uint64_t offset_ = 0;
  std::unique_ptr<Inflater> inflater_;  // null for an uncompressed file
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_UTIL_RECORD_IO_H_

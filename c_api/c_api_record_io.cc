// TW_RecordWriter and TW_RecordReader: the C face of runtime/util/record_io.h.
// Translation only; the framing and its checks are the runtime's.
#include <memory>
#include <string>

#include "c_api/c_api_internal.h"
#include "runtime/util/record_io.h"

using tensorweave::RecordReader;
using tensorweave::RecordWriter;
using tensorweave::Status;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

struct TW_RecordWriter {
  std::unique_ptr<RecordWriter> writer;
};

struct TW_RecordReader {
  std::unique_ptr<RecordReader> reader;
};

TW_RecordWriter* TW_NewRecordWriter(const char* filename, const char* compression_type,
                                    TF_Status* status) {
  return c_api::Guard(status, static_cast<TW_RecordWriter*>(nullptr), [&] {
    if (filename == nullptr) {
      c_api::Set(status, errors::InvalidArgument("TW_NewRecordWriter needs a file name"));
      return static_cast<TW_RecordWriter*>(nullptr);
    }
    auto result = std::make_unique<TW_RecordWriter>();
    Status opened =
        RecordWriter::Open(filename, compression_type ? compression_type : "", &result->writer);
    c_api::Set(status, opened);
    return opened.ok() ? result.release() : nullptr;
  });
}

void TW_RecordWriterWrite(TW_RecordWriter* writer, const void* record, size_t record_len,
                          TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (record == nullptr && record_len > 0) {
      c_api::Set(status, errors::InvalidArgument("TW_RecordWriterWrite: NULL record"));
      return;
    }
    c_api::Set(status, writer->writer->WriteRecord(record, record_len));
  });
}

void TW_RecordWriterFlush(TW_RecordWriter* writer, TF_Status* status) {
  c_api::GuardVoid(status, [&] { c_api::Set(status, writer->writer->Flush()); });
}

void TW_RecordWriterClose(TW_RecordWriter* writer, TF_Status* status) {
  c_api::GuardVoid(status, [&] { c_api::Set(status, writer->writer->Close()); });
}

void TW_DeleteRecordWriter(TW_RecordWriter* writer) { delete writer; }

TW_RecordReader* TW_NewRecordReader(const char* filename, const char* compression_type,
                                    TF_Status* status) {
  return c_api::Guard(status, static_cast<TW_RecordReader*>(nullptr), [&] {
    if (filename == nullptr) {
      c_api::Set(status, errors::InvalidArgument("TW_NewRecordReader needs a file name"));
      return static_cast<TW_RecordReader*>(nullptr);
    }
    auto result = std::make_unique<TW_RecordReader>();
    Status opened =
        RecordReader::Open(filename, compression_type ? compression_type : "", &result->reader);
    c_api::Set(status, opened);
    return opened.ok() ? result.release() : nullptr;
  });
}

TF_Buffer* TW_RecordReaderReadNext(TW_RecordReader* reader, TF_Status* status) {
  return c_api::Guard(status, static_cast<TF_Buffer*>(nullptr), [&] {
    std::string record;
    Status read = reader->reader->ReadRecord(&record);
    if (!read.ok()) {
      c_api::Set(status, std::move(read));
      return static_cast<TF_Buffer*>(nullptr);
    }
    TF_Buffer* buffer = TF_NewBufferFromString(record.data(), record.size());
    c_api::Set(status, buffer != nullptr
                           ? Status::OK()
                           : errors::ResourceExhausted("Out of memory for a record of ",
                                                       record.size(), " bytes"));
    return buffer;
  });
}

void TW_DeleteRecordReader(TW_RecordReader* reader) { delete reader; }

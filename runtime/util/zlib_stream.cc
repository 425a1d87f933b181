// See zlib_stream.h.
#include "runtime/util/zlib_stream.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tensorweave {
namespace {

// zlib's window bits: 15, plus 16 for a gzip header and trailer.
int WindowBits(ZlibFormat format) {
  return format == ZlibFormat::kGzip ? MAX_WBITS + 16 : MAX_WBITS;
}

}  // namespace

// ---- Deflater ----------------------------------------------------------------

Status Deflater::Create(ZlibFormat format, std::FILE* file, std::unique_ptr<Deflater>* out) {
  std::unique_ptr<Deflater> deflater(new Deflater(file));
  if (deflateInit2(&deflater->stream_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, WindowBits(format), 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return errors::ResourceExhausted("Cannot start a zlib stream");
  }
  deflater->started_ = true;
  *out = std::move(deflater);
  return Status::OK();
}

Deflater::~Deflater() {
  if (started_) deflateEnd(&stream_);
}

Status Deflater::Deflate(const void* data, size_t length, int flush) {
  if (finished_) return errors::FailedPrecondition("The zlib stream has ended");
  stream_.next_in = static_cast<Bytef*>(const_cast<void*>(data));
  stream_.avail_in = static_cast<uInt>(length);
  // Runs until zlib has taken all the input and, for a flush, has room to
  // spare in its output (then everything asked for has been emitted).
  while (true) {
    stream_.next_out = output_.data();
    stream_.avail_out = static_cast<uInt>(output_.size());
    const int result = deflate(&stream_, flush);
    if (result == Z_STREAM_ERROR) return errors::Internal("zlib deflate failed");
    const size_t produced = output_.size() - stream_.avail_out;
    if (produced > 0 && std::fwrite(output_.data(), 1, produced, file_) != produced) {
      return errors::Internal("Cannot write compressed record file: ", std::strerror(errno));
    }
    if (flush == Z_FINISH ? result == Z_STREAM_END
                          : stream_.avail_in == 0 && stream_.avail_out != 0) {
      return Status::OK();
    }
  }
}

Status Deflater::Write(const void* data, size_t length) {
  // zlib counts input in uInt, so a huge record goes in in pieces.
  const char* bytes = static_cast<const char*>(data);
  constexpr size_t kPiece = size_t{1} << 30;
  do {
    const size_t piece = length < kPiece ? length : kPiece;
    TW_RETURN_IF_ERROR(Deflate(bytes, piece, Z_NO_FLUSH));
    bytes += piece;
    length -= piece;
  } while (length > 0);
  return Status::OK();
}

Status Deflater::Flush() { return Deflate(nullptr, 0, Z_SYNC_FLUSH); }

Status Deflater::Finish() {
  Status status = Deflate(nullptr, 0, Z_FINISH);
  finished_ = true;
  return status;
}

// ---- Inflater ----------------------------------------------------------------

Status Inflater::Create(ZlibFormat format, int fd, std::unique_ptr<Inflater>* out) {
  std::unique_ptr<Inflater> inflater(new Inflater(fd));
  if (inflateInit2(&inflater->stream_, WindowBits(format)) != Z_OK) {
    return errors::ResourceExhausted("Cannot start a zlib stream");
  }
  inflater->started_ = true;
  *out = std::move(inflater);
  return Status::OK();
}

Inflater::~Inflater() {
  if (started_) inflateEnd(&stream_);
}

Status Inflater::Read(char* out, size_t length, size_t* read) {
  *read = 0;
  while (*read < length && !ended_) {
    if (stream_.avail_in == 0) {
      const ssize_t n = ::read(fd_, input_.data(), input_.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return errors::Internal("Cannot read record file: ", std::strerror(errno));
      if (n == 0) return Status::OK();  // the file ends (maybe still being written)
      stream_.next_in = input_.data();
      stream_.avail_in = static_cast<uInt>(n);
    }
    const size_t want = length - *read;
    stream_.next_out = reinterpret_cast<Bytef*>(out + *read);
    stream_.avail_out = static_cast<uInt>(want < (size_t{1} << 30) ? want : (size_t{1} << 30));
    const uInt before = stream_.avail_out;
    const int result = inflate(&stream_, Z_NO_FLUSH);
    *read += before - stream_.avail_out;
    if (result == Z_STREAM_END) {
      ended_ = true;
    } else if (result != Z_OK && result != Z_BUF_ERROR) {
      return errors::DataLoss("Damaged compressed record file: ",
                              stream_.msg != nullptr ? stream_.msg : "zlib error");
    }
  }
  return Status::OK();
}

}  // namespace tensorweave

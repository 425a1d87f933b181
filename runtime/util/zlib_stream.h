// zlib streams for compressed record files (record_io.h): TensorFlow's
// "ZLIB" files are one zlib stream and its "GZIP" files one gzip stream
// (zlib's default level, 15-bit window), the records framed inside.
//
//   std::unique_ptr<Deflater> deflater;
//   TW_RETURN_IF_ERROR(Deflater::Create(ZlibFormat::kGzip, file, &deflater));
//   TW_RETURN_IF_ERROR(deflater->Write(data, n));
//   TW_RETURN_IF_ERROR(deflater->Finish());   // the stream's end; then fclose
//
//   std::unique_ptr<Inflater> inflater;
//   TW_RETURN_IF_ERROR(Inflater::Create(ZlibFormat::kGzip, fd, &inflater));
//   size_t got;
//   TW_RETURN_IF_ERROR(inflater->Read(buffer, n, &got));  // got < n: the end
//
// A damaged stream is DATA_LOSS.
#ifndef TENSORWEAVE_UTIL_ZLIB_STREAM_H_
#define TENSORWEAVE_UTIL_ZLIB_STREAM_H_

#include <zlib.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "runtime/framework/status.h"

namespace tensorweave {

enum class ZlibFormat { kZlib, kGzip };

// Compresses into a FILE* the caller owns (and closes after Finish).
class Deflater {
 public:
  static Status Create(ZlibFormat format, std::FILE* file, std::unique_ptr<Deflater>* out);
  ~Deflater();

  Status Write(const void* data, size_t length);
  // Ends the current deflate block so a reader can inflate everything
  // written so far (zlib's Z_SYNC_FLUSH).
  Status Flush();
  // Ends the stream; later calls fail.
  Status Finish();

 private:
  explicit Deflater(std::FILE* file) : file_(file) {}
  Status Deflate(const void* data, size_t length, int flush);

  std::FILE* file_;
  z_stream stream_{};
  bool started_ = false;
  bool finished_ = false;
  std::vector<unsigned char> output_ = std::vector<unsigned char>(64 * 1024);
};

// Decompresses from a file descriptor the caller owns, from its start.
class Inflater {
 public:
  static Status Create(ZlibFormat format, int fd, std::unique_ptr<Inflater>* out);
  ~Inflater();

  // Up to `length` decompressed bytes into `out`; *read < length only at the
  // end of the stream (or of the file, for a stream still being written).
  Status Read(char* out, size_t length, size_t* read);

 private:
  explicit Inflater(int fd) : fd_(fd) {}

  int fd_;
  z_stream stream_{};
  bool started_ = false;
  bool ended_ = false;
  std::vector<unsigned char> input_ = std::vector<unsigned char>(64 * 1024);
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_UTIL_ZLIB_STREAM_H_

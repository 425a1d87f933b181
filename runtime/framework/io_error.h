// A failed system call's errno as a Status, with TensorFlow's code for each
// errno value (its ErrnoToCode) and its message layout "<context>; <strerror>".
//
//   if (::open(path, O_RDONLY) < 0) return IOError(StrCat("open ", path), errno);
//   // ENOENT -> NOT_FOUND "open /x; No such file or directory"
//
// errno 0 is OK. TF_SetStatusFromIOError is this function's C face.
#ifndef TENSORWEAVE_FRAMEWORK_IO_ERROR_H_
#define TENSORWEAVE_FRAMEWORK_IO_ERROR_H_

#include <string>

#include "runtime/framework/status.h"

namespace tensorweave {

// TensorFlow's canonical code for `error_number` (UNKNOWN for values it does
// not map, e.g. EIO).
Code ErrnoToCode(int error_number);

Status IOError(const std::string& context, int error_number);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_IO_ERROR_H_

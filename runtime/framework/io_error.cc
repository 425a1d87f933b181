#include "runtime/framework/io_error.h"

#include <cerrno>
#include <cstring>

#include "runtime/framework/str_util.h"

namespace tensorweave {

Code ErrnoToCode(int error_number) {
  switch (error_number) {
    case 0:
      return Code::OK;
    case EINVAL:
    case ENAMETOOLONG:
    case E2BIG:
    case EDESTADDRREQ:
    case EDOM:
    case EFAULT:
    case EILSEQ:
    case ENOPROTOOPT:
    case ENOSTR:
    case ENOTSOCK:
    case ENOTTY:
    case EPROTOTYPE:
    case ESPIPE:
      return Code::INVALID_ARGUMENT;
    case ETIMEDOUT:
    case ETIME:
      return Code::DEADLINE_EXCEEDED;
    case ENODEV:
    case ENOENT:
    case ENXIO:
    case ESRCH:
      return Code::NOT_FOUND;
    case EEXIST:
    case EADDRNOTAVAIL:
    case EALREADY:
      return Code::ALREADY_EXISTS;
    case EPERM:
    case EACCES:
    case EROFS:
      return Code::PERMISSION_DENIED;
    case ENOTEMPTY:
    case EISDIR:
    case ENOTDIR:
    case EADDRINUSE:
    case EBADF:
    case EBUSY:
    case ECHILD:
    case EISCONN:
    case ENOTBLK:
    case ENOTCONN:
    case EPIPE:
    case ESHUTDOWN:
    case ETXTBSY:
      return Code::FAILED_PRECONDITION;
    case ENOSPC:
    case EDQUOT:
    case EMFILE:
    case EMLINK:
    case ENFILE:
    case ENOBUFS:
    case ENODATA:
    case ENOMEM:
    case ENOSR:
    case EUSERS:
      return Code::RESOURCE_EXHAUSTED;
    case EFBIG:
    case EOVERFLOW:
    case ERANGE:
      return Code::OUT_OF_RANGE;
    case ENOSYS:
    case ENOTSUP:  // EOPNOTSUPP is the same number on Linux
    case EAFNOSUPPORT:
    case EPFNOSUPPORT:
    case EPROTONOSUPPORT:
    case ESOCKTNOSUPPORT:
    case EXDEV:
      return Code::UNIMPLEMENTED;
    case EAGAIN:  // EWOULDBLOCK is the same number on Linux
    case ECONNREFUSED:
    case ECONNABORTED:
    case ECONNRESET:
    case EINTR:
    case EHOSTDOWN:
    case EHOSTUNREACH:
    case ENETDOWN:
    case ENETRESET:
    case ENETUNREACH:
    case ENOLCK:
    case ENOLINK:
    case ENONET:
      return Code::UNAVAILABLE;
    case EDEADLK:
    case ESTALE:
      return Code::ABORTED;
    case ECANCELED:
      return Code::CANCELLED;
    default:
      // EIO, EBADMSG, ELOOP, ENOEXEC, EPROTO, ...: TensorFlow leaves these
      // UNKNOWN too.
      return Code::UNKNOWN;
  }
}

Status IOError(const std::string& context, int error_number) {
  const Code code = ErrnoToCode(error_number);
  if (code == Code::OK) return Status::OK();
  return Status(code, StrCat(context, "; ", std::strerror(error_number)));
}

}  // namespace tensorweave

/*
 * TF_TString: one element of a TF_STRING tensor, as in TensorFlow 2.x
 * (tensorflow/c/tf_tstring.h). Included by c_api.h; a program may also
 * include it alone.
 *
 *   // Build a scalar string tensor, feed it, then free it.
 *   TF_Tensor* t = TF_AllocateTensor(TF_STRING, NULL, 0, sizeof(TF_TString));
 *   TF_TString* s = (TF_TString*)TF_TensorData(t);
 *   TF_StringInit(s);
 *   TF_StringCopy(s, "hello", 5);
 *   ... TF_SessionRun(..., &t, ...) ...
 *   TF_DeleteTensor(t);  // deallocates the elements too (see c_api.h)
 *
 *   // Read a fetched string tensor element by element.
 *   const TF_TString* out = (const TF_TString*)TF_TensorData(fetched);
 *   for (int64_t i = 0; i < TF_TensorElementCount(fetched); ++i)
 *     fwrite(TF_StringGetDataPointer(&out[i]), 1, TF_StringGetSize(&out[i]), stdout);
 *
 * The struct is 24 bytes with TensorFlow's layout (little-endian hosts), so
 * arrays and stack objects a program made for TensorFlow mean the same here.
 * The low two bits of the first byte say which of four forms an element has:
 *   SMALL   up to 22 bytes kept inside the struct: byte 0 is size << 2, the
 *           bytes follow, then a NUL;
 *   LARGE   a malloc'ed buffer the element owns: size << 2 | 1, capacity
 *           (usable bytes, a NUL follows them), pointer;
 *   OFFSET  bytes at a distance from the element's own address (uint32
 *           size << 2 | 2, uint32 offset, uint32 count): how TensorFlow lays
 *           out serialized tensors; read-only;
 *   VIEW    bytes the element does not own: size << 2 | 3, pointer;
 *           read-only, the caller keeps them alive.
 * An all-zero element is the empty SMALL string, so zeroed memory holds
 * valid elements.
 */
#ifndef TENSORWEAVE_C_API_TF_TSTRING_H_
#define TENSORWEAVE_C_API_TF_TSTRING_H_

#include <stddef.h>
#include <stdint.h>

#ifndef TF_CAPI_EXPORT
#if defined(__GNUC__)
#define TF_CAPI_EXPORT __attribute__((visibility("default")))
#else
#define TF_CAPI_EXPORT
#endif
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "TF_TString's layout is defined here for little-endian hosts only"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The form of an element: the low two bits of its first byte. */
typedef enum TF_TString_Type {
  TF_TSTR_SMALL = 0x00,
  TF_TSTR_LARGE = 0x01,
  TF_TSTR_OFFSET = 0x02,
  TF_TSTR_VIEW = 0x03,
  TF_TSTR_TYPE_MASK = 0x03
} TF_TString_Type;

typedef struct TF_TString_Large {
  size_t size; /* size << 2 | TF_TSTR_LARGE */
  size_t cap;  /* usable bytes at ptr, not counting the NUL after them */
  char* ptr;   /* malloc'ed; freed by TF_StringDealloc */
} TF_TString_Large;

typedef struct TF_TString_Offset {
  uint32_t size;   /* size << 2 | TF_TSTR_OFFSET */
  uint32_t offset; /* from the element's own address to its bytes */
  uint32_t count;  /* unused here; TensorFlow's serialized form sets it */
} TF_TString_Offset;

typedef struct TF_TString_View {
  size_t size;     /* size << 2 | TF_TSTR_VIEW */
  const char* ptr; /* not owned */
} TF_TString_View;

typedef struct TF_TString_Raw {
  uint8_t raw[24];
} TF_TString_Raw;

/* Bytes a SMALL element holds: 24 minus the size byte and the NUL. */
enum { TF_TString_SmallCapacity = 22 };

typedef struct TF_TString_Small {
  uint8_t size; /* size << 2 | TF_TSTR_SMALL */
  char str[TF_TString_SmallCapacity + 1];
} TF_TString_Small;

typedef struct TF_TString {
  union {
    TF_TString_Small smll; /* TensorFlow's spelling: "small" is a macro on Windows */
    TF_TString_Large large;
    TF_TString_Offset offset;
    TF_TString_View view;
    TF_TString_Raw raw;
  } u;
} TF_TString;

/* Makes `t` the empty string. Call it on memory that does not hold an
 * element yet (TF_AllocateTensor's memory is already zeroed: empty strings). */
TF_CAPI_EXPORT extern void TF_StringInit(TF_TString* t);

/* Sets `dst` to a copy of `src[0, size)`: SMALL when size <= 22, else LARGE
 * (a LARGE `dst` keeps its buffer when it has room). What `dst` owned before
 * is released. `src` may be NULL when size is 0. */
TF_CAPI_EXPORT extern void TF_StringCopy(TF_TString* dst, const char* src, size_t size);

/* Makes `dst` a VIEW of `src[0, size)` without copying: the caller keeps
 * `src` alive while `dst` (or a tensor holding it) may be read. What `dst`
 * owned before is released. */
TF_CAPI_EXPORT extern void TF_StringAssignView(TF_TString* dst, const char* src, size_t size);

/* The first byte of `tstr`'s string (NUL-terminated for SMALL and LARGE; for
 * OFFSET and VIEW as the owner wrote them). Owned by `tstr` or its owner. */
TF_CAPI_EXPORT extern const char* TF_StringGetDataPointer(const TF_TString* tstr);

/* The form of `str`. */
TF_CAPI_EXPORT extern TF_TString_Type TF_StringGetType(const TF_TString* str);

/* The number of bytes of `tstr`'s string. */
TF_CAPI_EXPORT extern size_t TF_StringGetSize(const TF_TString* tstr);

/* Bytes `str` can hold without reallocating: 22 for SMALL, the buffer's for
 * LARGE, 0 for the read-only OFFSET and VIEW forms. */
TF_CAPI_EXPORT extern size_t TF_StringGetCapacity(const TF_TString* str);

/* Frees a LARGE element's buffer and leaves the empty string; other forms are
 * left as they are. Calling it twice is harmless. */
TF_CAPI_EXPORT extern void TF_StringDealloc(TF_TString* tstr);

/* TensorFlow's ctstring.h spellings of the same operations, for programs
 * that call them directly. */
static inline void TF_TString_Init(TF_TString* str) { TF_StringInit(str); }
static inline void TF_TString_Dealloc(TF_TString* str) { TF_StringDealloc(str); }
static inline TF_TString_Type TF_TString_GetType(const TF_TString* str) {
  return TF_StringGetType(str);
}
static inline size_t TF_TString_GetSize(const TF_TString* str) { return TF_StringGetSize(str); }
static inline size_t TF_TString_GetCapacity(const TF_TString* str) {
  return TF_StringGetCapacity(str);
}
static inline const char* TF_TString_GetDataPointer(const TF_TString* str) {
  return TF_StringGetDataPointer(str);
}
static inline void TF_TString_Copy(TF_TString* dst, const char* src, size_t size) {
  TF_StringCopy(dst, src, size);
}
static inline void TF_TString_AssignView(TF_TString* dst, const char* src, size_t size) {
  TF_StringAssignView(dst, src, size);
}

#ifdef __cplusplus
} /* end extern "C" */
#endif

#endif /* TENSORWEAVE_C_API_TF_TSTRING_H_ */

/*
 * tensorweave C API: the one public header of libtensorweave.so.
 *
 * The names, types, enum values, argument order and ownership rules follow
 * TensorFlow's C API, so a C program written against TensorFlow's c_api.h
 * builds against this header and links against libtensorweave.so. The few
 * additions that are ours carry a TW_ prefix.
 *
 * This header is a contract: every declaration below says what it does, what
 * each argument is (in, out or in/out), and who owns every argument and result
 * on success and on failure. It compiles as C99 and as C++.
 *
 * ============================================================================
 * Lifecycle, step by step
 * ============================================================================
 *
 * 1. Make a graph:           TF_Graph* graph = TF_NewGraph();
 *
 * 2. Add operations. Each one is built in three moves: TF_NewOperation names
 *    the op type and the node; TF_AddInput / TF_AddInputList /
 *    TF_AddControlInput wire its inputs and TF_SetAttr* sets its attributes;
 *    TF_FinishOperation checks it, infers its output shapes and adds it to the
 *    graph. Type attributes such as "T" may be left out when an input
 *    determines them, as in TensorFlow.
 *
 * 3. Open a session on the graph:
 *                            TF_Session* session = TF_NewSession(graph, options, status);
 *
 * 4. Run it as often as needed with TF_SessionRun, feeding TF_Tensors to
 *    TF_Outputs and fetching TF_Outputs into new TF_Tensors that the caller
 *    deletes. Operations may be added to the graph between runs; the next run
 *    sends them to the session first.
 *
 * 5. Close the session:      TF_CloseSession(session, status);
 *
 * 6. Delete everything:      TF_DeleteSession(session, status);
 *                            TF_DeleteGraph(graph); TF_DeleteStatus(status); ...
 *
 * Every fallible call takes a trailing TF_Status*: on success its code is
 * TF_OK, on failure it holds the error code and a message, and the call has
 * not changed anything the caller can observe (unless its documentation says
 * otherwise). A short program computing y = x * 2:
 *
 *   TF_Status* status = TF_NewStatus();
 *   TF_Graph* graph = TF_NewGraph();
 *
 *   TF_OperationDescription* d = TF_NewOperation(graph, "Placeholder", "x");
 *   TF_SetAttrType(d, "dtype", TF_FLOAT);
 *   TF_Operation* x = TF_FinishOperation(d, status);
 *
 *   float two_value = 2.0f;
 *   TF_Tensor* two_tensor = TF_AllocateTensor(TF_FLOAT, NULL, 0, sizeof(float));
 *   memcpy(TF_TensorData(two_tensor), &two_value, sizeof(float));
 *   d = TF_NewOperation(graph, "Const", "two");
 *   TF_SetAttrTensor(d, "value", two_tensor, status);
 *   TF_SetAttrType(d, "dtype", TF_FLOAT);
 *   TF_Operation* two = TF_FinishOperation(d, status);
 *   TF_DeleteTensor(two_tensor);
 *
 *   d = TF_NewOperation(graph, "Mul", "y");
 *   TF_Output mul_x = {x, 0}, mul_two = {two, 0};
 *   TF_AddInput(d, mul_x);
 *   TF_AddInput(d, mul_two);
 *   TF_Operation* y = TF_FinishOperation(d, status);
 *
 *   TF_SessionOptions* options = TF_NewSessionOptions();
 *   TF_Session* session = TF_NewSession(graph, options, status);
 *   TF_DeleteSessionOptions(options);
 *
 *   int64_t dims[1] = {3};
 *   TF_Tensor* feed = TF_AllocateTensor(TF_FLOAT, dims, 1, 3 * sizeof(float));
 *   ... fill TF_TensorData(feed) ...
 *   TF_Output feed_at = {x, 0}, fetch_at = {y, 0};
 *   TF_Tensor* result = NULL;
 *   TF_SessionRun(session, NULL, &feed_at, &feed, 1, &fetch_at, &result, 1,
 *                 NULL, 0, NULL, status);
 *   if (TF_GetCode(status) != TF_OK) fprintf(stderr, "%s\n", TF_Message(status));
 *   ... read TF_TensorData(result) ...
 *
 *   TF_DeleteTensor(result);
 *   TF_DeleteTensor(feed);
 *   TF_CloseSession(session, status);
 *   TF_DeleteSession(session, status);
 *   TF_DeleteGraph(graph);
 *   TF_DeleteStatus(status);
 *
 * A GraphDef serialized elsewhere (by TensorFlow, say) can either be imported
 * into a TF_Graph with TF_GraphImportGraphDef, or run through the older
 * name-based API: TF_NewDeprecatedSession, TF_ExtendGraph, TF_Run.
 *
 * ============================================================================
 * Conventions
 * ============================================================================
 *
 * - Every TF_NewX / TF_AllocateX has a matching TF_DeleteX (TF_NewOperation's is
 *   TF_FinishOperation), and every TF_DeleteX accepts NULL and does nothing.
 * - Strings passed in are NUL-terminated and copied; the caller keeps them.
 * - Strings returned (operation names, messages, device names) belong to the
 *   object they came from and stay valid until it is modified or deleted.
 * - Threads: a TF_Status, TF_Tensor or TF_OperationDescription must not be used
 *   by two threads at once. TF_Graph* calls lock the graph. TF_Operation*
 *   calls do not (an operation never changes once added), except that the
 *   edges they report grow while operations are added: read consumers and
 *   control outputs while no other thread adds to the same graph.
 *   TF_SessionRun and TW_SessionRunCallable may be called on one session from
 *   several threads at once.
 * - No call aborts the process because of its arguments' values or of a graph's
 *   contents; the error comes back in the TF_Status, and out of memory is
 *   TF_RESOURCE_EXHAUSTED. Passing NULL where an object is required (other than
 *   to a TF_DeleteX or where a parameter says NULL is allowed), or a dangling
 *   pointer, is undefined behaviour, as everywhere in C.
 */
#ifndef TENSORWEAVE_C_API_C_API_H_
#define TENSORWEAVE_C_API_C_API_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef TF_CAPI_EXPORT
#if defined(__GNUC__)
#define TF_CAPI_EXPORT __attribute__((visibility("default")))
#else
#define TF_CAPI_EXPORT
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ========================================================================== */
/* Version                                                                    */
/* ========================================================================== */

/* The version of this library, e.g. "0.1.0". The string is static: never free
 * it. */
TF_CAPI_EXPORT extern const char* TF_Version(void);

/* ========================================================================== */
/* Data types                                                                 */
/* ========================================================================== */

/* Element types, numbered as TensorFlow's DataType so the numbers cross both
 * this API and the GraphDef wire format unchanged. The runtime holds tensors
 * of FLOAT, DOUBLE, INT8/16/32/64, UINT8/16/32/64, BOOL and STRING; the other
 * values exist so programs written for TensorFlow compile, and using them in a
 * tensor is an error. */
typedef enum TF_DataType {
  TF_FLOAT = 1,
  TF_DOUBLE = 2,
  TF_INT32 = 3, /* int32_t */
  TF_UINT8 = 4,
  TF_INT16 = 5,
  TF_INT8 = 6,
  TF_STRING = 7, /* byte strings; see "String tensors" below */
  TF_COMPLEX64 = 8,
  TF_COMPLEX = 8, /* old name of TF_COMPLEX64 */
  TF_INT64 = 9,
  TF_BOOL = 10, /* one byte per element, 0 or 1 */
  TF_QINT8 = 11,
  TF_QUINT8 = 12,
  TF_QINT32 = 13,
  TF_BFLOAT16 = 14,
  TF_QINT16 = 15,
  TF_QUINT16 = 16,
  TF_UINT16 = 17,
  TF_COMPLEX128 = 18,
  TF_HALF = 19,
  TF_RESOURCE = 20,
  TF_VARIANT = 21,
  TF_UINT32 = 22,
  TF_UINT64 = 23,
  /* TensorFlow 2.x's narrow types: named so programs compile; the runtime
   * holds no tensor of them (TF_DataTypeSize still gives TensorFlow's size). */
  TF_FLOAT8_E5M2 = 24,
  TF_FLOAT8_E4M3FN = 25,
  TF_FLOAT8_E4M3FNUZ = 26,
  TF_FLOAT8_E4M3B11FNUZ = 27,
  TF_FLOAT8_E5M2FNUZ = 28,
  TF_INT4 = 29,
  TF_UINT4 = 30,
  TF_INT2 = 31,
  TF_UINT2 = 32,
  TF_FLOAT4_E2M1FN = 33,
  /* Not types: these two make every int a valid TF_DataType value, so a
   * number outside the list above reaches the library as itself and is
   * refused there (TF_AllocateTensor returns NULL, TF_DataTypeSize 0). */
  TF_DATA_TYPE_RANGE_MIN_ = -0x7FFFFFFF - 1,
  TF_DATA_TYPE_RANGE_MAX_ = 0x7FFFFFFF
} TF_DataType;

/* Bytes per element of `dt` in TensorFlow, also for the types this runtime
 * cannot compute with (TF_COMPLEX64: 8, TF_QINT32: 4, TF_FLOAT8_*: 1, ...);
 * 0 for TF_STRING (variable length), TF_RESOURCE, TF_VARIANT and numbers
 * outside the enum. */
TF_CAPI_EXPORT extern size_t TF_DataTypeSize(TF_DataType dt);

/* ========================================================================== */
/* Status                                                                     */
/* ========================================================================== */

/* Error codes, numbered as TensorFlow's (and gRPC's) canonical codes. */
typedef enum TF_Code {
  TF_OK = 0,
  TF_CANCELLED = 1,
  TF_UNKNOWN = 2,
  TF_INVALID_ARGUMENT = 3,
  TF_DEADLINE_EXCEEDED = 4,
  TF_NOT_FOUND = 5,
  TF_ALREADY_EXISTS = 6,
  TF_PERMISSION_DENIED = 7,
  TF_RESOURCE_EXHAUSTED = 8,
  TF_FAILED_PRECONDITION = 9,
  TF_ABORTED = 10,
  TF_OUT_OF_RANGE = 11,
  TF_UNIMPLEMENTED = 12,
  TF_INTERNAL = 13,
  TF_UNAVAILABLE = 14,
  TF_DATA_LOSS = 15,
  TF_UNAUTHENTICATED = 16,
  /* Not codes: they make every int a valid TF_Code value; TF_SetStatus
   * records a number outside the list above as TF_UNKNOWN. */
  TF_CODE_RANGE_MIN_ = -0x7FFFFFFF - 1,
  TF_CODE_RANGE_MAX_ = 0x7FFFFFFF
} TF_Code;

/* The outcome of a call: a code and, unless the code is TF_OK, a message. A
 * status is reused from call to call; each call taking one overwrites it. */
typedef struct TF_Status TF_Status;

/* A new status holding TF_OK. Returns NULL only when out of memory. The caller
 * owns the result and frees it with TF_DeleteStatus. */
TF_CAPI_EXPORT extern TF_Status* TF_NewStatus(void);

/* Frees `s`. NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteStatus(TF_Status* s);

/* Sets `s` to `code` with message `msg` (copied; NULL reads as ""). With
 * TF_OK the message is dropped and `s` reads as success; a number that is not
 * one of the codes above is recorded as TF_UNKNOWN. */
TF_CAPI_EXPORT extern void TF_SetStatus(TF_Status* s, TF_Code code, const char* msg);

/* The code held by `s`. */
TF_CAPI_EXPORT extern TF_Code TF_GetCode(const TF_Status* s);

/* The message held by `s`: "" when the code is TF_OK. The string belongs to
 * `s` and stays valid until `s` is next written or deleted. */
TF_CAPI_EXPORT extern const char* TF_Message(const TF_Status* s);

/* Attaches the string `value` under `key` to the non-OK status `s` (a key
 * set again is replaced and moves to the end); nothing happens when `s` is
 * OK. Any later change of the status drops every payload, as in TensorFlow. */
TF_CAPI_EXPORT extern void TF_SetPayload(TF_Status* s, const char* key, const char* value);

/* Called as visitor(key, value, capture) for each payload of `s`, in order. */
typedef void (*TF_PayloadVisitor)(const char* key, const char* value, void* capture);

/* Calls `visitor` once per payload of `s`; the strings are valid during the
 * call only. */
TF_CAPI_EXPORT extern void TF_ForEachPayload(const TF_Status* s, TF_PayloadVisitor visitor,
                                             void* capture);

/* Sets `s` from a system call's errno `error_code` as TensorFlow does: the
 * code TensorFlow maps it to (ENOENT: TF_NOT_FOUND, EACCES:
 * TF_PERMISSION_DENIED, ENOSPC: TF_RESOURCE_EXHAUSTED, ..., unmapped values
 * such as EIO: TF_UNKNOWN) and the message "<context>; <strerror text>".
 * errno 0 gives TF_OK. */
TF_CAPI_EXPORT extern void TF_SetStatusFromIOError(TF_Status* s, int error_code,
                                                   const char* context);

/* ========================================================================== */
/* Buffers: bytes handed across the API (serialized protos)                   */
/* ========================================================================== */

/* A byte range with an optional deallocator. TF_DeleteBuffer calls
 * `data_deallocator(data, length)` when it is not NULL, so a buffer may point
 * at memory the caller owns (leave the deallocator NULL) or memory it hands
 * over. Calls that fill a buffer (TF_GraphToGraphDef, ...) require an empty
 * one (data == NULL) and set all three fields. */
typedef struct TF_Buffer {
  const void* data;
  size_t length;
  void (*data_deallocator)(void* data, size_t length);
} TF_Buffer;

/* A buffer holding a copy of `proto[0, proto_len)`. Returns NULL only when out
 * of memory. The caller owns the result; free it with TF_DeleteBuffer. */
TF_CAPI_EXPORT extern TF_Buffer* TF_NewBufferFromString(const void* proto, size_t proto_len);

/* An empty buffer (data NULL, length 0, no deallocator), ready to be filled.
 * Returns NULL only when out of memory. Free it with TF_DeleteBuffer. */
TF_CAPI_EXPORT extern TF_Buffer* TF_NewBuffer(void);

/* Calls the buffer's deallocator (if any) on its data, then frees the buffer
 * itself. NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteBuffer(TF_Buffer* buffer);

/* A copy of the struct `*buffer`. The bytes are not copied: the result points
 * into `buffer` and is valid while `buffer` is. */
TF_CAPI_EXPORT extern TF_Buffer TF_GetBuffer(TF_Buffer* buffer);

/* ========================================================================== */
/* Tensors                                                                    */
/* ========================================================================== */

/* An n-dimensional array: a data type, dimensions and a byte buffer holding
 * the elements in row-major order. Tensors returned by any call belong to the
 * caller, who frees each with TF_DeleteTensor. */
typedef struct TF_Tensor TF_Tensor;

/* A tensor over memory the caller provides.
 *   dtype         in   element type
 *   dims          in   `num_dims` dimension sizes, each >= 0 (read, not kept;
 *                      may be NULL when num_dims is 0: a scalar)
 *   data, len     in   the elements; `len` must equal the product of the dims
 *                      times TF_DataTypeSize(dtype) (for TF_STRING: one
 *                      TF_TString per element, see "String tensors" below)
 *   deallocator   in   called exactly once as deallocator(data, len,
 *                      deallocator_arg) when the data is no longer needed
 *                      (may be NULL: nothing is called)
 * On success the tensor owns `data` until it calls the deallocator: that
 * happens when the tensor and every runtime value sharing its memory are gone,
 * which may be after TF_DeleteTensor returns (a session may keep a fed value),
 * or right away when `data` is not at a multiple of the element size (say a
 * float at an odd address), in which case the elements are first copied into
 * memory the tensor allocates. Free the result with TF_DeleteTensor.
 * On failure (unsupported dtype, negative or overflowing dims, `len` not
 * matching) the deallocator is called before returning and the result is
 * NULL. */
TF_CAPI_EXPORT extern TF_Tensor* TF_NewTensor(
    TF_DataType dtype, const int64_t* dims, int num_dims, void* data, size_t len,
    void (*deallocator)(void* data, size_t len, void* arg), void* deallocator_arg);

/* A tensor with `len` bytes of fresh, uninitialized, 64-byte aligned memory
 * for the caller to fill through TF_TensorData. The arguments and the rule on
 * `len` are those of TF_NewTensor. Returns NULL on the same errors and when
 * out of memory. Free the result with TF_DeleteTensor.
 * For TF_STRING the memory is zeroed (every element the empty TF_TString),
 * and TF_DeleteTensor deallocates the elements (TF_StringDealloc) when the
 * memory goes, so the caller need not (calling TF_StringDealloc first, as
 * TensorFlow programs do, is harmless). */
TF_CAPI_EXPORT extern TF_Tensor* TF_AllocateTensor(TF_DataType dtype, const int64_t* dims,
                                                   int num_dims, size_t len);

/* Frees `t` (see TF_NewTensor for when its memory goes). NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteTensor(TF_Tensor* t);

/* The element type of `t`. */
TF_CAPI_EXPORT extern TF_DataType TF_TensorType(const TF_Tensor* t);

/* The number of dimensions of `t` (0 for a scalar). */
TF_CAPI_EXPORT extern int TF_NumDims(const TF_Tensor* t);

/* The size of dimension `dim_index` of `t`; -1 when `dim_index` is not in
 * [0, TF_NumDims(t)). */
TF_CAPI_EXPORT extern int64_t TF_Dim(const TF_Tensor* t, int dim_index);

/* The number of bytes TF_TensorData(t) holds. */
TF_CAPI_EXPORT extern size_t TF_TensorByteSize(const TF_Tensor* t);

/* The elements of `t`, owned by `t`: valid until `t` is deleted. A tensor
 * fetched by a run never shares memory with the session, so writing to it
 * cannot change a later run. A tensor that was fed may share its memory with
 * a value the session kept (a variable assigned from it, say); write to a fed
 * tensor only if that is intended. */
TF_CAPI_EXPORT extern void* TF_TensorData(const TF_Tensor* t);

/* The number of elements of `t`: the product of its dims (1 for a scalar). */
TF_CAPI_EXPORT extern int64_t TF_TensorElementCount(const TF_Tensor* t);

/* `t` itself when nothing else shares its memory (not a session's variable,
 * not another tensor), so the caller may take it over; NULL otherwise (the
 * caller copies instead). `t` stays the caller's either way. */
TF_CAPI_EXPORT extern TF_Tensor* TF_TensorMaybeMove(TF_Tensor* t);

/* Makes `to` share `from`'s memory as a tensor of `type` and dims
 * `new_dims[0, num_new_dims)`. The byte counts must agree and both types
 * must have a fixed size the runtime holds; otherwise TF_INVALID_ARGUMENT
 * ("input and output shapes/data type sizes are not compatible") and `to`
 * is unchanged. */
TF_CAPI_EXPORT extern void TF_TensorBitcastFrom(const TF_Tensor* from, TF_DataType type,
                                                TF_Tensor* to, const int64_t* new_dims,
                                                int num_new_dims, TF_Status* status);

/* Gives `tensor` the dims `dims[0, num_dims)`. Unlike TensorFlow, a shape
 * whose element count differs from the tensor's (which its memory could not
 * hold) is ignored. */
TF_CAPI_EXPORT extern void TF_SetShape(TF_Tensor* tensor, const int64_t* dims, int num_dims);

/* Whether TF_TensorData(t) is at a multiple of TF_TensorDefaultAlignment(). */
TF_CAPI_EXPORT extern bool TF_TensorIsAligned(const TF_Tensor* t);

/* The alignment of the memory TF_AllocateTensor gives: 64 bytes. */
TF_CAPI_EXPORT extern size_t TF_TensorDefaultAlignment(void);

/* Replaces the contents of `to` with the tensor the serialized TensorProto
 * `from` holds. TF_INVALID_ARGUMENT (and `to` unchanged) when it does not
 * parse or describe a valid tensor. */
TF_CAPI_EXPORT extern void TF_TensorFromProto(const TF_Buffer* from, TF_Tensor* to,
                                              TF_Status* status);

/* ========================================================================== */
/* String tensors                                                             */
/* ========================================================================== */

/* A TF_STRING tensor of n elements holds n TF_TStrings (24 bytes each;
 * tf_tstring.h, included below), as in TensorFlow 2.x: make one with
 * TF_AllocateTensor(TF_STRING, dims, num_dims, n * sizeof(TF_TString)) and
 * set each element with TF_StringCopy or TF_StringAssignView; a fetched
 * TF_STRING tensor's TF_TensorData is such an array, read with
 * TF_StringGetDataPointer and TF_StringGetSize, and owned by the tensor.
 * TF_NewTensor over the caller's TF_TString array leaves the elements to the
 * caller's deallocator, as in TensorFlow.
 *
 * TensorFlow 1.x laid string tensors out as n uint64_t offsets followed by
 * varint-prefixed strings (the functions below still encode and decode
 * that). Such a buffer is not accepted as a TF_STRING tensor, as in
 * TensorFlow 2.x: the two layouts cannot be told apart reliably (a 1.x
 * buffer of one 15-byte string is 24 bytes and also reads as one valid, empty
 * TF_TString), so a program must build TF_TStrings (and must not write that
 * layout into TF_AllocateTensor's memory: the tensor deallocates its
 * elements as TF_TStrings). A TF_STRING tensor whose buffer is smaller than
 * its elements, or holding an impossible element (a SMALL size over 22, a
 * LARGE size over its capacity, a NULL pointer with a nonzero size, an
 * OFFSET reaching outside the buffer), is reported as TF_INVALID_ARGUMENT by
 * the call that reads it, such as TF_SessionRun. */

/* TensorFlow 1.x's string encoding, for old programs (TensorFlow 2.x keeps
 * these functions too): a base-128 varint length, low 7-bit groups first,
 * then the bytes.
 * Encodes `src[0, src_len)` into `dst[0, dst_len)`. Returns the number of
 * bytes written, TF_StringEncodedSize(src_len). When `dst_len` is too small
 * nothing is written, `status` gets TF_INVALID_ARGUMENT and 0 is returned. */
TF_CAPI_EXPORT extern size_t TF_StringEncode(const char* src, size_t src_len, char* dst,
                                             size_t dst_len, TF_Status* status);

/* Decodes one encoded string starting at `src`, reading at most `src_len`
 * bytes. On success `*dst` points at the string's bytes inside `src` (no copy:
 * valid while `src` is), `*dst_len` is its length, and the return value is the
 * number of bytes consumed. When the encoding is malformed or does not fit in
 * `src_len`, `status` gets TF_INVALID_ARGUMENT, the outputs are untouched and
 * 0 is returned. */
TF_CAPI_EXPORT extern size_t TF_StringDecode(const char* src, size_t src_len, const char** dst,
                                             size_t* dst_len, TF_Status* status);

/* The number of bytes TF_StringEncode writes for a string of `len` bytes. */
TF_CAPI_EXPORT extern size_t TF_StringEncodedSize(size_t len);

/* ========================================================================== */
/* Session options                                                            */
/* ========================================================================== */

/* What a session is created with: a target and a configuration. */
typedef struct TF_SessionOptions TF_SessionOptions;

/* Options with target "" (an in-process session) and the default
 * configuration. Returns NULL only when out of memory. Free the result with
 * TF_DeleteSessionOptions. */
TF_CAPI_EXPORT extern TF_SessionOptions* TF_NewSessionOptions(void);

/* Sets the session target. "" is an in-process session; "grpc://host:port"
 * a remote one, whose graph lives in the master at host:port (a tensorweave
 * server, see TF_NewServer, or a TensorFlow one): TF_NewSession connects
 * lazily, and an unreachable master makes the first run fail with
 * TF_UNAVAILABLE. Any other target makes TF_NewSession fail with
 * TF_NOT_FOUND naming the targets it accepts; a grpc:// target that is not
 * host:port fails with TF_INVALID_ARGUMENT. `target` is copied. */
TF_CAPI_EXPORT extern void TF_SetTarget(TF_SessionOptions* options, const char* target);

/* Sets the configuration from `proto[0, proto_len)`, a serialized ConfigProto
 * (TensorFlow's wire format; fields this runtime does not use are ignored).
 * Bytes that do not parse give TF_INVALID_ARGUMENT and leave `options`
 * unchanged. The bytes are read, not kept. */
TF_CAPI_EXPORT extern void TF_SetConfig(TF_SessionOptions* options, const void* proto,
                                        size_t proto_len, TF_Status* status);

/* Frees `options`. Sessions already created from them are unaffected. NULL is
 * a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteSessionOptions(TF_SessionOptions* options);

/* ========================================================================== */
/* Graphs and operations                                                      */
/* ========================================================================== */

/* A dataflow graph: operations joined by tensors. Calls on one graph may come
 * from several threads; each takes the graph's lock. */
typedef struct TF_Graph TF_Graph;

/* An operation (a node) being built; see TF_NewOperation. */
typedef struct TF_OperationDescription TF_OperationDescription;

/* An operation in a graph. It belongs to the graph and lives as long as the
 * graph does; never free it. */
typedef struct TF_Operation TF_Operation;

/* Input `index` of operation `oper`. */
typedef struct TF_Input {
  TF_Operation* oper;
  int index;
} TF_Input;

/* Output `index` of operation `oper`: a tensor of the graph. */
typedef struct TF_Output {
  TF_Operation* oper;
  int index;
} TF_Output;

/* An empty graph. Returns NULL only when out of memory. Free it with
 * TF_DeleteGraph. */
TF_CAPI_EXPORT extern TF_Graph* TF_NewGraph(void);

/* Frees `graph` and its operations. Sessions created on it keep it alive:
 * then it goes when the last of them is deleted. NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteGraph(TF_Graph* graph);

/* Narrows the known shape of `output` to `dims[0, num_dims)` (-1 for an
 * unknown dimension; num_dims -1 for an unknown rank, dims then unused). The
 * new shape is merged with what shape inference already knows; a shape that
 * contradicts it gives TF_INVALID_ARGUMENT and changes nothing; an `output`
 * whose index is out of range gives TF_OUT_OF_RANGE. Only the graph's shape
 * bookkeeping changes: operations added later see the narrowed shape;
 * sessions do not. */
TF_CAPI_EXPORT extern void TF_GraphSetTensorShape(TF_Graph* graph, TF_Output output,
                                                  const int64_t* dims, const int num_dims,
                                                  TF_Status* status);

/* The rank of `output` as far as shape inference knows: -1 when unknown. An
 * index out of range gives TF_OUT_OF_RANGE and returns -1. */
TF_CAPI_EXPORT extern int TF_GraphGetTensorNumDims(TF_Graph* graph, TF_Output output,
                                                   TF_Status* status);

/* Writes the known shape of `output` into `dims[0, num_dims)`, -1 for each
 * unknown dimension. `num_dims` must be the rank TF_GraphGetTensorNumDims
 * reports (TF_INVALID_ARGUMENT otherwise, `dims` untouched); an unknown rank
 * gives TF_INVALID_ARGUMENT unless num_dims is -1, when nothing is written. */
TF_CAPI_EXPORT extern void TF_GraphGetTensorShape(TF_Graph* graph, TF_Output output, int64_t* dims,
                                                  int num_dims, TF_Status* status);

/* Starts building an operation of type `op_type` named `oper_name` in
 * `graph` (both strings are copied). Nothing is checked yet: an unknown op
 * type or a name already used is reported by TF_FinishOperation. Returns NULL
 * only when out of memory. The description must be passed to
 * TF_FinishOperation exactly once, which frees it whatever the outcome; until
 * then `graph` must not be deleted. */
TF_CAPI_EXPORT extern TF_OperationDescription* TF_NewOperation(TF_Graph* graph, const char* op_type,
                                                               const char* oper_name);

/* Asks for the operation to run on `device` (e.g. "/device:CPU:0"; copied). */
TF_CAPI_EXPORT extern void TF_SetDevice(TF_OperationDescription* desc, const char* device);

/* Adds the next input: one tensor, for an op input declared as a single
 * tensor. Inputs are added in the order the op declares them. */
TF_CAPI_EXPORT extern void TF_AddInput(TF_OperationDescription* desc, TF_Output input);

/* Adds the next input: a list of `num_inputs` tensors (read, not kept), for an
 * op input declared as a list ("N * T" or a type list, as AddN's). */
TF_CAPI_EXPORT extern void TF_AddInputList(TF_OperationDescription* desc, const TF_Output* inputs,
                                           int num_inputs);

/* Makes the operation run only after `input` has run (a control input). */
TF_CAPI_EXPORT extern void TF_AddControlInput(TF_OperationDescription* desc, TF_Operation* input);

/* Attribute setters. Each sets attribute `attr_name` (copied) of the
 * operation being built, replacing an earlier value; all data is copied, the
 * caller keeps its arguments. Whether the attribute exists for the op and
 * has the right type is checked by TF_FinishOperation. The setters without a
 * status record a malformed value (such as a negative list length) and
 * TF_FinishOperation reports it. */

/* A string attr: the `length` bytes at `value` (not NUL-terminated). */
TF_CAPI_EXPORT extern void TF_SetAttrString(TF_OperationDescription* desc, const char* attr_name,
                                            const void* value, size_t length);
/* A list(string) attr: string i is `values[i][0, lengths[i])`. */
TF_CAPI_EXPORT extern void TF_SetAttrStringList(TF_OperationDescription* desc,
                                                const char* attr_name, const void* const* values,
                                                const size_t* lengths, int num_values);
TF_CAPI_EXPORT extern void TF_SetAttrInt(TF_OperationDescription* desc, const char* attr_name,
                                         int64_t value);
TF_CAPI_EXPORT extern void TF_SetAttrIntList(TF_OperationDescription* desc, const char* attr_name,
                                             const int64_t* values, int num_values);
TF_CAPI_EXPORT extern void TF_SetAttrFloat(TF_OperationDescription* desc, const char* attr_name,
                                           float value);
TF_CAPI_EXPORT extern void TF_SetAttrFloatList(TF_OperationDescription* desc, const char* attr_name,
                                               const float* values, int num_values);
/* A bool attr: `value` 0 is false, anything else true. */
TF_CAPI_EXPORT extern void TF_SetAttrBool(TF_OperationDescription* desc, const char* attr_name,
                                          unsigned char value);
TF_CAPI_EXPORT extern void TF_SetAttrBoolList(TF_OperationDescription* desc, const char* attr_name,
                                              const unsigned char* values, int num_values);
TF_CAPI_EXPORT extern void TF_SetAttrType(TF_OperationDescription* desc, const char* attr_name,
                                          TF_DataType value);
TF_CAPI_EXPORT extern void TF_SetAttrTypeList(TF_OperationDescription* desc, const char* attr_name,
                                              const TF_DataType* values, int num_values);
/* A shape attr: `dims[0, num_dims)` with -1 for unknown dimensions, or
 * num_dims -1 for an unknown rank (dims unused). */
TF_CAPI_EXPORT extern void TF_SetAttrShape(TF_OperationDescription* desc, const char* attr_name,
                                           const int64_t* dims, int num_dims);
/* A list(shape) attr: shape i is `dims[i][0, num_dims[i])` (num_dims[i] -1:
 * unknown rank). */
TF_CAPI_EXPORT extern void TF_SetAttrShapeList(TF_OperationDescription* desc, const char* attr_name,
                                               const int64_t* const* dims, const int* num_dims,
                                               int num_shapes);
/* A shape attr from a serialized TensorShapeProto. Bytes that do not parse
 * give TF_INVALID_ARGUMENT and leave the attr unset. */
TF_CAPI_EXPORT extern void TF_SetAttrTensorShapeProto(TF_OperationDescription* desc,
                                                      const char* attr_name, const void* proto,
                                                      size_t proto_len, TF_Status* status);
/* A list(shape) attr from serialized TensorShapeProtos; errors as above. */
TF_CAPI_EXPORT extern void TF_SetAttrTensorShapeProtoList(TF_OperationDescription* desc,
                                                          const char* attr_name,
                                                          const void* const* protos,
                                                          const size_t* proto_lens, int num_shapes,
                                                          TF_Status* status);
/* A tensor attr holding a copy of `value`; the caller keeps `value`. A
 * malformed TF_STRING tensor gives TF_INVALID_ARGUMENT and leaves the attr
 * unset. */
TF_CAPI_EXPORT extern void TF_SetAttrTensor(TF_OperationDescription* desc, const char* attr_name,
                                            TF_Tensor* value, TF_Status* status);
/* A list(tensor) attr holding copies of `values[0, num_values)`. */
TF_CAPI_EXPORT extern void TF_SetAttrTensorList(TF_OperationDescription* desc,
                                                const char* attr_name, TF_Tensor* const* values,
                                                int num_values, TF_Status* status);
/* Any attr, from a serialized AttrValue. Bytes that do not parse give
 * TF_INVALID_ARGUMENT and leave the attr unset. */
TF_CAPI_EXPORT extern void TF_SetAttrValueProto(TF_OperationDescription* desc,
                                                const char* attr_name, const void* proto,
                                                size_t proto_len, TF_Status* status);

/* Sets attr `attr_name` to a placeholder naming the attr `placeholder` of an
 * enclosing function (for operations inside a function body). */
TF_CAPI_EXPORT extern void TF_SetAttrPlaceholder(TF_OperationDescription* desc,
                                                 const char* attr_name, const char* placeholder);

/* Sets the func attr `attr_name` to the function named `value[0, length)`,
 * with no attrs of its own. */
TF_CAPI_EXPORT extern void TF_SetAttrFuncName(TF_OperationDescription* desc, const char* attr_name,
                                              const char* value, size_t length);

/* Asks for the operation to be placed with `op`: TF_FinishOperation gives it
 * the "_class" attr listing "loc:@<name of op>" for every such call, sorted
 * (replacing a "_class" set directly), as TensorFlow does. */
TF_CAPI_EXPORT extern void TF_ColocateWith(TF_OperationDescription* desc, TF_Operation* op);

/* Checks the description against its op (the op type exists, the name is new,
 * attributes and inputs match the op's declaration; type and length attrs
 * not set are taken from the inputs), runs the op's shape inference with the
 * shapes of its inputs (and the values of inputs that come straight from
 * Const operations), and adds the operation to the graph.
 * On success returns the new operation, owned by the graph.
 * On failure returns NULL, `status` says why, and the graph is unchanged.
 * Either way `desc` is freed and must not be used again. */
TF_CAPI_EXPORT extern TF_Operation* TF_FinishOperation(TF_OperationDescription* desc,
                                                       TF_Status* status);

/* TF_NewOperation and TF_FinishOperation for callers that already hold the
 * graph's lock (TensorFlow's Python binding). No C program can hold it, so
 * C programs use the unlocked forms; TF_FinishOperationLocked adds the
 * operation without taking the lock. */
TF_CAPI_EXPORT extern TF_OperationDescription* TF_NewOperationLocked(TF_Graph* graph,
                                                                     const char* op_type,
                                                                     const char* oper_name);
TF_CAPI_EXPORT extern TF_Operation* TF_FinishOperationLocked(TF_OperationDescription* desc,
                                                             TF_Status* status);

/* Update edge, switch input/ output in a node: input `dst` of an operation
 * already in the graph takes `new_src` instead of what it took so far. This
 * is how a while loop's Merge, built with its Enter twice, gets the
 * NextIteration back edge:
 *
 *   TF_UpdateEdge(graph, (TF_Output){next_iteration, 0},
 *                 (TF_Input){merge, 1}, status);
 *
 * The new source must have the input's dtype and a shape compatible with the
 * old source's (TF_INVALID_ARGUMENT otherwise); an index out of range is
 * TF_OUT_OF_RANGE. The operation's output shapes are inferred again from
 * its new inputs. On error the graph is unchanged. */
TF_CAPI_EXPORT extern void TF_UpdateEdge(TF_Graph* graph, TF_Output new_src, TF_Input dst,
                                         TF_Status* status);

/* Changing operations already in the graph (TensorFlow's Python binding
 * uses these). A session that already received the operation does not see
 * the change. */

/* Makes `op` run after `input` (a control input; an existing one is not
 * added twice). */
TF_CAPI_EXPORT extern void TF_AddOperationControlInput(TF_Graph* graph, TF_Operation* op,
                                                       TF_Operation* input);

/* Removes every control input of `op`. */
TF_CAPI_EXPORT extern void TF_RemoveAllControlInputs(TF_Graph* graph, TF_Operation* op);

/* Sets the device `op` asks for (TF_OperationDevice), "" for none. */
TF_CAPI_EXPORT extern void TF_SetRequestedDevice(TF_Graph* graph, TF_Operation* op,
                                                 const char* device);

/* Replaces the attr `attr_name` of `op` with the serialized AttrValue in
 * `attr_value_proto`, or adds it. The operation's input and output types are
 * worked out again from its attrs, so growing a While's "T" makes room for
 * TF_AddWhileInputHack. TF_INVALID_ARGUMENT, changing nothing, when the
 * proto does not parse, the op's OpDef rejects the new attrs, or an existing
 * edge of `op` would no longer fit its types. */
TF_CAPI_EXPORT extern void TF_SetAttr(TF_Graph* graph, TF_Operation* op, const char* attr_name,
                                      TF_Buffer* attr_value_proto, TF_Status* status);

/* Removes the attr `attr_name` of `op` (nothing when it has none). An attr
 * the OpDef gives a default goes back to that default; removing one without
 * a default is TF_INVALID_ARGUMENT and changes nothing. */
TF_CAPI_EXPORT extern void TF_ClearAttr(TF_Graph* graph, TF_Operation* op, const char* attr_name,
                                        TF_Status* status);

/* Sets the NodeDef's experimental_type field of `op` to the serialized
 * FullTypeDef in `full_type_proto`. The graph only records it (it appears in
 * TF_GraphToGraphDef and TF_OperationToNodeDef); a proto that does not parse
 * changes nothing, there being no status to say so. */
TF_CAPI_EXPORT extern void TF_SetFullType(TF_Graph* graph, TF_Operation* op,
                                          const TF_Buffer* full_type_proto);

/* Whether operations whose op has no shape function are refused when added
 * (TF_INVALID_ARGUMENT naming the op). On by default, as in TensorFlow;
 * every op tensorweave registers and every function has one, so only ops
 * from a loaded library can lack it. */
TF_CAPI_EXPORT extern void TF_SetRequireShapeInferenceFns(TF_Graph* graph, bool require);

/* What is known of the values behind the resource or variant handle that
 * `output` produces, as a serialized CppShapeInferenceResult.HandleData
 * (TensorFlow's message: is_set, then one dtype and shape per value). The
 * graph works it out for VarHandleOp from its dtype and shape attrs and
 * carries it through Identity, IdentityN and the control-flow ops; a
 * ReadVariableOp's output takes the variable's shape. An empty buffer when
 * nothing is known, or when `output` is not an output of the graph. The
 * caller frees the buffer with TF_DeleteBuffer. */
TF_CAPI_EXPORT extern TF_Buffer* TF_GetHandleShapeAndType(TF_Graph* graph, TF_Output output);

/* Records the serialized CppShapeInferenceResult.HandleData in `proto` as
 * what `output`'s handle holds, replacing what was known; operations added
 * later that read or forward it see it. TF_INVALID_ARGUMENT when the proto
 * does not parse or holds an invalid shape, TF_OUT_OF_RANGE for an output
 * the operation does not have. */
TF_CAPI_EXPORT extern void TF_SetHandleShapeAndType(TF_Graph* graph, TF_Output output,
                                                    const void* proto, size_t proto_len,
                                                    TF_Status* status);

/* Wires `new_src` to the first unconnected input of `dst`, a While or
 * StatelessWhile op whose "T" the caller already grew with TF_SetAttr (how
 * TensorFlow's Python builds while-loop gradients). TF_INTERNAL when `dst`
 * is another op, TF_INVALID_ARGUMENT when it has no free input or the types
 * differ. */
TF_CAPI_EXPORT extern void TF_AddWhileInputHack(TF_Graph* graph, TF_Output new_src,
                                                TF_Operation* dst, TF_Status* status);

/* ---- Inspecting operations. Returned strings belong to the graph. ---- */

/* The operation's name, e.g. "dense/MatMul". */
TF_CAPI_EXPORT extern const char* TF_OperationName(TF_Operation* oper);

/* The operation's type, e.g. "MatMul". */
TF_CAPI_EXPORT extern const char* TF_OperationOpType(TF_Operation* oper);

/* The device the operation asked for with TF_SetDevice (or its NodeDef); ""
 * when none. */
TF_CAPI_EXPORT extern const char* TF_OperationDevice(TF_Operation* oper);

/* The number of outputs (list outputs counted element by element). */
TF_CAPI_EXPORT extern int TF_OperationNumOutputs(TF_Operation* oper);

/* The element type of `oper_out`. An index out of range returns 0, which is
 * no TF_DataType. */
TF_CAPI_EXPORT extern TF_DataType TF_OperationOutputType(TF_Output oper_out);

/* The number of data inputs (list inputs counted element by element). */
TF_CAPI_EXPORT extern int TF_OperationNumInputs(TF_Operation* oper);

/* The element type input `oper_in` expects. An index out of range returns 0. */
TF_CAPI_EXPORT extern TF_DataType TF_OperationInputType(TF_Input oper_in);

/* The tensor that feeds `oper_in`. An index out of range returns
 * {NULL, -1}. */
TF_CAPI_EXPORT extern TF_Output TF_OperationInput(TF_Input oper_in);

/* How many inputs of other operations `oper_out` feeds. */
TF_CAPI_EXPORT extern int TF_OperationOutputNumConsumers(TF_Output oper_out);

/* Writes up to `max_consumers` of the inputs that `oper_out` feeds into
 * `consumers` (caller-allocated), in no particular order. Returns the total
 * number of consumers, which may exceed `max_consumers`. */
TF_CAPI_EXPORT extern int TF_OperationOutputConsumers(TF_Output oper_out, TF_Input* consumers,
                                                      int max_consumers);

/* The number of control inputs: operations that must run before `oper`. */
TF_CAPI_EXPORT extern int TF_OperationNumControlInputs(TF_Operation* oper);

/* Writes up to `max_control_inputs` control inputs of `oper` into
 * `control_inputs` (caller-allocated). Returns the total number, which may
 * exceed `max_control_inputs`. */
TF_CAPI_EXPORT extern int TF_OperationGetControlInputs(TF_Operation* oper,
                                                       TF_Operation** control_inputs,
                                                       int max_control_inputs);

/* The number of operations that have `oper` as a control input. */
TF_CAPI_EXPORT extern int TF_OperationNumControlOutputs(TF_Operation* oper);

/* Writes up to `max_control_outputs` of the operations that have `oper` as a
 * control input into `control_outputs`. Returns the total number. */
TF_CAPI_EXPORT extern int TF_OperationGetControlOutputs(TF_Operation* oper,
                                                        TF_Operation** control_outputs,
                                                        int max_control_outputs);

/* ---- Reading attributes ---- */

/* The kind of value an attribute holds. */
typedef enum TF_AttrType {
  TF_ATTR_STRING = 0,
  TF_ATTR_INT = 1,
  TF_ATTR_FLOAT = 2,
  TF_ATTR_BOOL = 3,
  TF_ATTR_TYPE = 4,
  TF_ATTR_SHAPE = 5,
  TF_ATTR_TENSOR = 6,
  TF_ATTR_PLACEHOLDER = 7,
  TF_ATTR_FUNC = 8
} TF_AttrType;

/* What TF_OperationGetAttrMetadata reports about one attribute. */
typedef struct TF_AttrMetadata {
  /* 1 when the value is a list, else 0. */
  unsigned char is_list;
  /* The list's length; -1 when not a list. */
  int64_t list_size;
  /* The element kind. For an empty list, whatever kind it was declared with
   * if known, else TF_ATTR_STRING. */
  TF_AttrType type;
  /* For a string: its length in bytes; for a shape: its rank (-1 when
   * unknown); for a list of strings or shapes: the sum of those; -1 for
   * everything else. */
  int64_t total_size;
} TF_AttrMetadata;

/* Describes attribute `attr_name` of `oper`. An attribute the operation does
 * not have gives TF_INVALID_ARGUMENT; the result is then all zeros. */
TF_CAPI_EXPORT extern TF_AttrMetadata TF_OperationGetAttrMetadata(TF_Operation* oper,
                                                                  const char* attr_name,
                                                                  TF_Status* status);

/* The getters below copy attribute `attr_name` of `oper` into
 * caller-provided storage. An absent attribute, or one holding another kind
 * of value, gives TF_INVALID_ARGUMENT and leaves the storage untouched. */

/* Copies up to `max_length` bytes of a string attr into `value` (no NUL is
 * added; TF_OperationGetAttrMetadata gives the full length). */
TF_CAPI_EXPORT extern void TF_OperationGetAttrString(TF_Operation* oper, const char* attr_name,
                                                     void* value, size_t max_length,
                                                     TF_Status* status);
TF_CAPI_EXPORT extern void TF_OperationGetAttrInt(TF_Operation* oper, const char* attr_name,
                                                  int64_t* value, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OperationGetAttrFloat(TF_Operation* oper, const char* attr_name,
                                                    float* value, TF_Status* status);
/* Writes 1 for true, 0 for false. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrBool(TF_Operation* oper, const char* attr_name,
                                                   unsigned char* value, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OperationGetAttrType(TF_Operation* oper, const char* attr_name,
                                                   TF_DataType* value, TF_Status* status);
/* Writes the first min(num_dims, rank) dims of a shape attr into `value`
 * (-1 for unknown dims), as TensorFlow does; TF_OperationGetAttrMetadata
 * gives the rank (-1, and nothing written, for an unknown rank). */
TF_CAPI_EXPORT extern void TF_OperationGetAttrShape(TF_Operation* oper, const char* attr_name,
                                                    int64_t* value, int num_dims,
                                                    TF_Status* status);
/* Sets `*value` to a new tensor holding a tensor attr, which the caller owns
 * and frees with TF_DeleteTensor. On failure `*value` is untouched. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrTensor(TF_Operation* oper, const char* attr_name,
                                                     TF_Tensor** value, TF_Status* status);
/* Fills the empty buffer `output_attr_value` with the attribute as a
 * serialized AttrValue. A non-empty buffer gives TF_INVALID_ARGUMENT. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrValueProto(TF_Operation* oper, const char* attr_name,
                                                         TF_Buffer* output_attr_value,
                                                         TF_Status* status);

/* List attrs. Each copies the first min(max_values, list length) elements
 * (TF_OperationGetAttrMetadata gives the length); an attr that is not a list
 * of that kind gives TF_INVALID_ARGUMENT (an empty list is every kind). */

/* Strings: their bytes go one after another into `storage[0, storage_size)`
 * (no NULs); `values[i]` points at string i there and `lengths[i]` is its
 * length. TF_INVALID_ARGUMENT when `storage` is too small (the sum of the
 * lengths, TF_AttrMetadata.total_size, always fits). */
TF_CAPI_EXPORT extern void TF_OperationGetAttrStringList(TF_Operation* oper, const char* attr_name,
                                                         void** values, size_t* lengths,
                                                         int max_values, void* storage,
                                                         size_t storage_size, TF_Status* status);
TF_CAPI_EXPORT extern void TF_OperationGetAttrIntList(TF_Operation* oper, const char* attr_name,
                                                      int64_t* values, int max_values,
                                                      TF_Status* status);
TF_CAPI_EXPORT extern void TF_OperationGetAttrFloatList(TF_Operation* oper, const char* attr_name,
                                                        float* values, int max_values,
                                                        TF_Status* status);
/* Writes 1 for true, 0 for false. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrBoolList(TF_Operation* oper, const char* attr_name,
                                                       unsigned char* values, int max_values,
                                                       TF_Status* status);
TF_CAPI_EXPORT extern void TF_OperationGetAttrTypeList(TF_Operation* oper, const char* attr_name,
                                                       TF_DataType* values, int max_values,
                                                       TF_Status* status);
/* Shapes: `num_dims[i]` is shape i's rank (-1 when unknown, with `dims[i]`
 * NULL); its dims go into `storage[0, storage_size)` one shape after another
 * and `dims[i]` points at them. TF_INVALID_ARGUMENT when `storage` is too
 * small (TF_AttrMetadata.total_size always fits). */
TF_CAPI_EXPORT extern void TF_OperationGetAttrShapeList(TF_Operation* oper, const char* attr_name,
                                                        int64_t** dims, int* num_dims,
                                                        int num_shapes, int64_t* storage,
                                                        int storage_size, TF_Status* status);
/* Tensors: `values[i]` gets a new tensor the caller frees with
 * TF_DeleteTensor; on failure none is made. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrTensorList(TF_Operation* oper, const char* attr_name,
                                                         TF_Tensor** values, int max_values,
                                                         TF_Status* status);
/* A shape attr as a serialized TensorShapeProto in the empty buffer `value`. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrTensorShapeProto(TF_Operation* oper,
                                                               const char* attr_name,
                                                               TF_Buffer* value, TF_Status* status);
/* A list(shape) attr: `values[i]` gets a new buffer (freed by the caller with
 * TF_DeleteBuffer) holding shape i as a serialized TensorShapeProto. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrTensorShapeProtoList(TF_Operation* oper,
                                                                   const char* attr_name,
                                                                   TF_Buffer** values,
                                                                   int max_values,
                                                                   TF_Status* status);

/* The number of attrs `oper` has (defaults included). Attr i, for i in
 * [0, TF_OperationGetNumAttrs), is the i-th in name order (TensorFlow uses
 * its map's order, which no program can rely on either). */
TF_CAPI_EXPORT extern int TF_OperationGetNumAttrs(TF_Operation* oper);
/* The length of attr i's name; -1 when i is out of range. */
TF_CAPI_EXPORT extern int TF_OperationGetAttrNameLength(TF_Operation* oper, int i);
/* Copies attr i's name into `output` (TF_OperationGetAttrNameLength bytes, no
 * NUL added). TF_OUT_OF_RANGE when i is out of range. */
TF_CAPI_EXPORT extern void TF_OperationGetAttrName(TF_Operation* oper, int i, char* output,
                                                   TF_Status* status);

/* How many tensors the input (output) arg `arg_name` of `oper`'s op stands
 * for: 1 for a single tensor, N for "N * T" or a list(type) arg. An arg the
 * op does not declare gives TF_INVALID_ARGUMENT and -1. */
TF_CAPI_EXPORT extern int TF_OperationInputListLength(TF_Operation* oper, const char* arg_name,
                                                      TF_Status* status);
TF_CAPI_EXPORT extern int TF_OperationOutputListLength(TF_Operation* oper, const char* arg_name,
                                                       TF_Status* status);

/* Writes the first min(max_inputs, TF_OperationNumInputs) data inputs of
 * `oper` (the outputs that feed them) into `inputs`. */
TF_CAPI_EXPORT extern void TF_OperationAllInputs(TF_Operation* oper, TF_Output* inputs,
                                                 int max_inputs);

/* Fills the empty buffer `output_node_def` with the operation as a serialized
 * NodeDef (name, op, inputs, device, every attr including defaults). The
 * buffer's deallocator frees the bytes; the caller frees the buffer with
 * TF_DeleteBuffer. A non-empty buffer gives TF_INVALID_ARGUMENT. */
TF_CAPI_EXPORT extern void TF_OperationToNodeDef(TF_Operation* oper, TF_Buffer* output_node_def,
                                                 TF_Status* status);

/* ---- Walking and serializing a graph ---- */

/* The operation named `oper_name` in `graph`, or NULL when there is none. */
TF_CAPI_EXPORT extern TF_Operation* TF_GraphOperationByName(TF_Graph* graph, const char* oper_name);

/* Iterates over the operations of `graph` in the order they were added.
 * Start with `*pos` = 0; each call returns the next operation and advances
 * `*pos` (in/out), and NULL once all have been seen. Operations added during
 * the walk are visited too. */
TF_CAPI_EXPORT extern TF_Operation* TF_GraphNextOperation(TF_Graph* graph, size_t* pos);

/* Fills the empty buffer `output_graph_def` with the graph as a serialized
 * GraphDef (TensorFlow's wire format), operations in the order they were
 * added. A non-empty buffer gives TF_INVALID_ARGUMENT. The caller frees the
 * buffer with TF_DeleteBuffer. */
TF_CAPI_EXPORT extern void TF_GraphToGraphDef(TF_Graph* graph, TF_Buffer* output_graph_def,
                                              TF_Status* status);

/* Fills the empty buffer `output_op_def` with the serialized OpDef of the op
 * (or function of the graph) named `op_name`; TF_NOT_FOUND when there is
 * none. */
TF_CAPI_EXPORT extern void TF_GraphGetOpDef(TF_Graph* graph, const char* op_name,
                                            TF_Buffer* output_op_def, TF_Status* status);

/* Fills the empty buffer `output_version_def` with the graph's serialized
 * VersionDef (producer, min_consumer). */
TF_CAPI_EXPORT extern void TF_GraphVersions(TF_Graph* graph, TF_Buffer* output_version_def,
                                            TF_Status* status);

/* Evaluates `output` when its value depends on no feed and no state (Consts
 * and stateless ops over them): returns 1 and sets `*result` to a new tensor
 * the caller frees. Returns 0 with `*result` NULL when the value is not
 * constant (a placeholder, a variable, a random op or v1 control flow among
 * its ancestors, or more than 1000 of them), TF_OK either way; an error of
 * the evaluation itself is reported in `status` (0 returned). */
TF_CAPI_EXPORT extern unsigned char TF_TryEvaluateConstant(TF_Graph* graph, TF_Output output,
                                                           TF_Tensor** result, TF_Status* status);

/* ---- Importing a GraphDef ---- */

/* How TF_GraphImportGraphDef maps a GraphDef into an existing graph. */
typedef struct TF_ImportGraphDefOptions TF_ImportGraphDefOptions;

/* Options that import every node under its own name. Returns NULL only when
 * out of memory. Free with TF_DeleteImportGraphDefOptions. */
TF_CAPI_EXPORT extern TF_ImportGraphDefOptions* TF_NewImportGraphDefOptions(void);

/* Frees `opts`. NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteImportGraphDefOptions(TF_ImportGraphDefOptions* opts);

/* Imported node "n" becomes "prefix/n" (`prefix` copied; "" for none). */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsSetPrefix(TF_ImportGraphDefOptions* opts,
                                                             const char* prefix);

/* Imported inputs that read output `src_index` of the GraphDef's node
 * `src_name` read `dst`, an output already in the graph, instead. `dst.oper`
 * must belong to the graph imported into. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsAddInputMapping(TF_ImportGraphDefOptions* opts,
                                                                   const char* src_name,
                                                                   int src_index, TF_Output dst);

/* Imported control inputs "^src_name" wait for `dst`, an operation already in
 * the graph, instead. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsRemapControlDependency(
    TF_ImportGraphDefOptions* opts, const char* src_name, TF_Operation* dst);

/* Every imported operation runs after `oper`, an operation already in the
 * graph: the imported operations with no input from another imported
 * operation get `oper` as a control input. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsAddControlDependency(
    TF_ImportGraphDefOptions* opts, TF_Operation* oper);

/* Asks for output `index` of the GraphDef's node `oper_name` back from
 * TF_GraphImportGraphDefWithReturnOutputs (`oper_name` copied). The import
 * fails, adding nothing, unless the node and the output exist. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsAddReturnOutput(TF_ImportGraphDefOptions* opts,
                                                                   const char* oper_name,
                                                                   int index);

/* How many return outputs `opts` asks for (0 for NULL). */
TF_CAPI_EXPORT extern int TF_ImportGraphDefOptionsNumReturnOutputs(
    const TF_ImportGraphDefOptions* opts);

/* Adds every node of the serialized GraphDef `graph_def` to `graph`, checking
 * each against its op (unknown op, bad attr, missing input, cycle, duplicate
 * name: errors naming the node) and inferring output shapes. `options` may be
 * NULL for the defaults. Bytes that do not parse give TF_INVALID_ARGUMENT.
 * On failure nothing is added. The caller keeps `graph_def` and `options`. */
TF_CAPI_EXPORT extern void TF_GraphImportGraphDef(TF_Graph* graph, const TF_Buffer* graph_def,
                                                  const TF_ImportGraphDefOptions* options,
                                                  TF_Status* status);

/* TF_GraphImportGraphDef, then writes the graph's counterpart of each return
 * output of `options` into `return_outputs` (an array of
 * `num_return_outputs`, which must equal
 * TF_ImportGraphDefOptionsNumReturnOutputs(options)): the imported
 * operation's output, or the output an input mapping put in its place. On
 * failure nothing is added and `return_outputs` is untouched. */
TF_CAPI_EXPORT extern void TF_GraphImportGraphDefWithReturnOutputs(
    TF_Graph* graph, const TF_Buffer* graph_def, const TF_ImportGraphDefOptions* options,
    TF_Output* return_outputs, int num_return_outputs, TF_Status* status);

/* Imported operations whose NodeDef names no device get `device` (copied;
 * "" for none, the default). */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsSetDefaultDevice(TF_ImportGraphDefOptions* opts,
                                                                    const char* device);

/* When nonzero and no prefix is set, an imported node whose name the graph
 * already has is renamed name_1 (or name_2, ..., the first free name) and
 * the inputs, input mappings and return outputs naming it follow; when 0
 * (the default) such a name is an error (TF_ALREADY_EXISTS). */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsSetUniquifyNames(TF_ImportGraphDefOptions* opts,
                                                                    unsigned char uniquify_names);

/* When nonzero, a prefix the graph already uses (as a node name or a scope)
 * becomes prefix_1 (prefix_2, ...). */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsSetUniquifyPrefix(TF_ImportGraphDefOptions* opts,
                                                                     unsigned char uniquify_prefix);

/* Asks for the GraphDef's node `oper_name` back as an operation from
 * TF_GraphImportGraphDefWithResults (`oper_name` copied). The import fails,
 * adding nothing, unless the GraphDef has that node. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefOptionsAddReturnOperation(
    TF_ImportGraphDefOptions* opts, const char* oper_name);

/* How many return operations `opts` asks for (0 for NULL). */
TF_CAPI_EXPORT extern int TF_ImportGraphDefOptionsNumReturnOperations(
    const TF_ImportGraphDefOptions* opts);

/* What an import with results produced; free with
 * TF_DeleteImportGraphDefResults. The arrays the accessors below hand out
 * belong to it. */
typedef struct TF_ImportGraphDefResults TF_ImportGraphDefResults;

/* TF_GraphImportGraphDef returning its results: NULL on failure (nothing
 * added), else a new TF_ImportGraphDefResults the caller frees. */
TF_CAPI_EXPORT extern TF_ImportGraphDefResults* TF_GraphImportGraphDefWithResults(
    TF_Graph* graph, const TF_Buffer* graph_def, const TF_ImportGraphDefOptions* options,
    TF_Status* status);

/* As TF_GraphImportGraphDefWithResults, but `graph_def->data` points at a
 * GraphDef message object (the runtime's C++ class, tensorweave::GraphDef),
 * not at its bytes, as in TensorFlow (where it is TensorFlow's class): for
 * C++ callers built against this library only. */
TF_CAPI_EXPORT extern TF_ImportGraphDefResults* TF_GraphImportGraphDefWithResultsNoSerialization(
    TF_Graph* graph, const TF_Buffer* graph_def, const TF_ImportGraphDefOptions* options,
    TF_Status* status);

/* The return outputs, one per TF_ImportGraphDefOptionsAddReturnOutput call:
 * `*outputs` points at `*num_outputs` of them, owned by `results`. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefResultsReturnOutputs(TF_ImportGraphDefResults* results,
                                                                 int* num_outputs,
                                                                 TF_Output** outputs);

/* The return operations, one per TF_ImportGraphDefOptionsAddReturnOperation
 * call, owned by `results`. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefResultsReturnOperations(
    TF_ImportGraphDefResults* results, int* num_opers, TF_Operation*** opers);

/* The input mappings (TF_ImportGraphDefOptionsAddInputMapping) that no input
 * of the GraphDef used: `(*src_names)[i]`, `(*src_indexes)[i]` for i below
 * `*num_missing_unused_input_mappings`, owned by `results`. */
TF_CAPI_EXPORT extern void TF_ImportGraphDefResultsMissingUnusedInputMappings(
    TF_ImportGraphDefResults* results, int* num_missing_unused_input_mappings,
    const char*** src_names, int** src_indexes);

/* Frees `results` and the arrays its accessors handed out. NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteImportGraphDefResults(TF_ImportGraphDefResults* results);

/* ---- Functions ---- */

/* A function: a FunctionDef (runtime/proto/function.proto, TensorFlow's
 * wire format) held by the caller until TF_DeleteFunction. */
typedef struct TF_Function TF_Function;

/* Reserved for options of TF_GraphToFunction; pass NULL. */
typedef struct TF_FunctionOptions TF_FunctionOptions;

/* Adds a copy of `func` to the function library of `g`, and when `grad` is
 * not NULL a copy of `grad` too, registered as `func`'s gradient. Afterwards
 * operations of `g` may call the function by its name (TF_NewOperation(g,
 * TF_FunctionName(func), ...)) or through PartitionedCall's `f` attr, and
 * sessions on `g` run them. A function identical to one `g` holds is
 * skipped; a different function of the same name, or one whose body does
 * not check (see TF_GraphImportGraphDef), gives TF_INVALID_ARGUMENT and adds
 * nothing. A NULL `func` is TF_INVALID_ARGUMENT. */
TF_CAPI_EXPORT extern void TF_GraphCopyFunction(TF_Graph* g, const TF_Function* func,
                                                const TF_Function* grad, TF_Status* status);

/* How many functions the library of `g` holds. */
TF_CAPI_EXPORT extern int TF_GraphNumFunctions(TF_Graph* g);

/* Writes up to `max_func` new TF_Functions, copies of the library's
 * functions in the order they were added, to `funcs` and returns how many it
 * wrote (-1 on error). The caller deletes each with TF_DeleteFunction. */
TF_CAPI_EXPORT extern int TF_GraphGetFunctions(TF_Graph* g, TF_Function** funcs, int max_func,
                                               TF_Status* status);

/* ---- While loops (TensorFlow 1.x control flow) ---- */

/* What TF_NewWhile returns: the caller fills `cond_output` and
 * `body_outputs` by adding operations to `cond_graph` and `body_graph`, then
 * calls TF_FinishWhile (or TF_AbortWhile to give up). */
typedef struct TF_WhileParams {
  /* How many loop variables (inputs, body inputs/outputs and outputs). */
  const int ninputs;
  /* The condition: it reads `cond_inputs` (one per loop variable, owned by
   * cond_graph) and the caller sets `cond_output` to a scalar bool of it. */
  TF_Graph* const cond_graph;
  const TF_Output* const cond_inputs;
  TF_Output cond_output;
  /* The body: it reads `body_inputs` and the caller writes the next value of
   * each loop variable to `body_outputs` (arrays of `ninputs`; the outputs
   * must have the inputs' dtypes). */
  TF_Graph* const body_graph;
  const TF_Output* const body_inputs;
  TF_Output* const body_outputs;
  /* The prefix of the loop's operation names in the parent graph; the
   * caller may point it at its own string before TF_FinishWhile (default
   * "while"). */
  const char* name;
} TF_WhileParams;

/* Starts a while loop over the `ninputs` loop variables `inputs` of `g`.
 * Returns params whose cond_graph and body_graph are new graphs, each with
 * one Placeholder per loop variable. Only those graphs may be changed until
 * TF_FinishWhile or TF_AbortWhile; operations there may not read operations
 * of `g` (use loop variables instead). On error (no inputs, an input not in
 * `g`) `status` says why and the returned params must not be finished. */
TF_CAPI_EXPORT extern TF_WhileParams TF_NewWhile(TF_Graph* g, TF_Output* inputs, int ninputs,
                                                 TF_Status* status);

/* Builds the loop described by `params` in the parent graph under the name
 * prefix params->name (Enter, Merge, Switch, LoopCond, NextIteration and
 * Exit operations, TensorFlow's v1 while loop, and copies of the cond and
 * body operations), writes the `ninputs` loop results (the Exit outputs) to
 * `outputs`, and frees the cond and body graphs, also on error. Errors
 * (TF_INVALID_ARGUMENT): the cond output is not a bool scalar, a body output
 * is unset or has another dtype than its loop variable, an operation of the
 * cond or body reads a tensor of another graph. On error the parent graph is
 * unchanged. */
TF_CAPI_EXPORT extern void TF_FinishWhile(const TF_WhileParams* params, TF_Status* status,
                                          TF_Output* outputs);

/* Frees the cond and body graphs of `params` without building the loop. */
TF_CAPI_EXPORT extern void TF_AbortWhile(const TF_WhileParams* params);

/* ---- Gradients ---- */

/* Adds operations to compute the partial derivatives of the sum of the `ny`
 * tensors `y` with respect to the `nx` tensors `x`, i.e.
 * d(y_1 + y_2 + ...)/dx_1, d(y_1 + y_2 + ...)/dx_2, ..., and writes them to
 * `dy`, which the caller allocates with `nx` entries.
 *
 * `dx`, when not NULL, holds `ny` initial gradients (the symbolic partial
 * derivatives of some loss L with respect to `y`); NULL means OnesLike of
 * each y. The new operations are named gradients/..., or gradients_1/...,
 * gradients_2/... when that prefix is taken.
 *
 * An x that no gradient reaches (every path to y passes an operation with no
 * gradient, such as Shape) gets dy = {NULL, -1}. Errors: TF_INVALID_ARGUMENT
 * when an x is unreachable from y ("Cannot compute the partial derivative
 * for node 'x' as it's unreachable from the output node(s).") or a tensor is
 * not an operation of `g`; TF_NOT_FOUND ("No gradient defined for op: T")
 * when a gradient must pass an operation of type T with no registered
 * gradient. On error `g` is unchanged.
 *
 * Gradients are defined for the arithmetic, reduction, array, activation,
 * softmax, loss, convolution and pooling operations, and through while loops
 * built with TF_NewWhile (not nested ones: TF_UNIMPLEMENTED). A loop's
 * gradient adds an iteration counter (and, for values its body gradient
 * reads, stack pushes) to the forward loop. */
TF_CAPI_EXPORT extern void TF_AddGradients(TF_Graph* g, TF_Output* y, int ny, TF_Output* x, int nx,
                                           TF_Output* dx, TF_Status* status, TF_Output* dy);

/* TF_AddGradients with the operations named `prefix`/...; `prefix` must be
 * unused in `g`, neither an operation's name nor its scope, else
 * TF_INVALID_ARGUMENT ("prefix [p] conflicts with existing node in the graph
 * named [n]"). A NULL `prefix` is TF_AddGradients. */
TF_CAPI_EXPORT extern void TF_AddGradientsWithPrefix(TF_Graph* g, const char* prefix, TF_Output* y,
                                                     int ny, TF_Output* x, int nx, TF_Output* dx,
                                                     TF_Status* status, TF_Output* dy);

/* ---- Graphs as functions ---- */

/* Makes a function named `fn_name` of operations of `fn_body`. `inputs`
 * (`ninputs` of them, each at most once) become the function's arguments in
 * order and `outputs` (`noutputs`) its results; a result may be an argument.
 * The body is `opers` (`num_opers` operations), or with `num_opers` = -1
 * every operation of `fn_body` except those `inputs` read, each of which
 * must then have a single output. The body must be closed: every input of a
 * body operation, data or control, comes from the body or from `inputs`
 * (TF_INVALID_ARGUMENT naming the tensor otherwise).
 *
 * `output_names`: NULL, or `noutputs` distinct names for the results (the
 * default: the result operations' names, made identifiers). With
 * `append_hash_to_fn_name` = 1 the name becomes `fn_name` + "_" + a hash of
 * the function, so different bodies get different names. `opts` must be
 * NULL. `description` (may be NULL) is copied into the signature. The
 * function copies what it needs; `fn_body` may change or go afterwards.
 * Returns NULL on error. */
TF_CAPI_EXPORT extern TF_Function* TF_GraphToFunction(
    const TF_Graph* fn_body, const char* fn_name, unsigned char append_hash_to_fn_name,
    int num_opers, const TF_Operation* const* opers, int ninputs, const TF_Output* inputs,
    int noutputs, const TF_Output* outputs, const char* const* output_names,
    const TF_FunctionOptions* opts, const char* description, TF_Status* status);

/* TF_GraphToFunction with control outputs: `control_outputs` are
 * (`ncontrol_outputs`) body operations that run whenever the function runs,
 * though no result depends on them, named `control_output_names` (NULL for
 * their operations' names). */
TF_CAPI_EXPORT extern TF_Function* TF_GraphToFunctionWithControlOutputs(
    const TF_Graph* fn_body, const char* fn_name, unsigned char append_hash_to_fn_name,
    int num_opers, const TF_Operation* const* opers, int ninputs, const TF_Output* inputs,
    int noutputs, const TF_Output* outputs, const char* const* output_names, int ncontrol_outputs,
    const TF_Operation* const* control_outputs, const char* const* control_output_names,
    const TF_FunctionOptions* opts, const char* description, TF_Status* status);

/* The function's name; valid while `func` lives. */
TF_CAPI_EXPORT extern const char* TF_FunctionName(TF_Function* func);

/* Fills the empty buffer `output_func_def` with `func` as a serialized
 * FunctionDef. */
TF_CAPI_EXPORT extern void TF_FunctionToFunctionDef(TF_Function* func, TF_Buffer* output_func_def,
                                                    TF_Status* status);

/* A function from the serialized FunctionDef `proto` (`proto_len` bytes),
 * or NULL with TF_INVALID_ARGUMENT when the bytes do not parse. The body is
 * checked when the function is copied into a graph. */
TF_CAPI_EXPORT extern TF_Function* TF_FunctionImportFunctionDef(const void* proto, size_t proto_len,
                                                                TF_Status* status);

/* Sets the function attr `attr_name` (such as "_noinline") to the
 * serialized AttrValue `proto`; TF_INVALID_ARGUMENT when it does not
 * parse. */
TF_CAPI_EXPORT extern void TF_FunctionSetAttrValueProto(TF_Function* func, const char* attr_name,
                                                        const void* proto, size_t proto_len,
                                                        TF_Status* status);

/* Fills the empty buffer `output_attr_value` with the function attr
 * `attr_name` as a serialized AttrValue; TF_INVALID_ARGUMENT when `func` has
 * no such attr. */
TF_CAPI_EXPORT extern void TF_FunctionGetAttrValueProto(TF_Function* func, const char* attr_name,
                                                        TF_Buffer* output_attr_value,
                                                        TF_Status* status);

/* Frees `func`. NULL is a no-op. Graphs it was copied into keep their copy. */
TF_CAPI_EXPORT extern void TF_DeleteFunction(TF_Function* func);

/* ========================================================================== */
/* Registered ops                                                             */
/* ========================================================================== */

/* Every op this library can run, as a serialized OpList (TensorFlow's
 * tensorflow/core/framework/op_def.proto, field for field; ours is
 * runtime/proto/op_def.proto): for each op its inputs, outputs, attrs with
 * their defaults and allowed values, and its doc line. Internal ops, whose
 * names start with "_", are included. The caller owns the result; free it
 * with TF_DeleteBuffer. Returns NULL only when out of memory. */
TF_CAPI_EXPORT extern TF_Buffer* TF_GetAllOpList(void);

/* ---- ApiDefs: how ops are presented to client languages ----
 * An ApiDefMap holds, for every op of an OpList, TensorFlow's ApiDef message
 * (runtime/proto/api_def.proto, field for field): its endpoints, argument
 * names and order, attr defaults and docs, first as the OpDefs say and then
 * as ApiDefs text merged in with TF_ApiDefMapPut overrides them, as
 * TensorFlow's op generators use it:
 *
 *   TF_Buffer* ops = TF_GetAllOpList();
 *   TF_ApiDefMap* map = TF_NewApiDefMap(ops, status);
 *   TF_ApiDefMapPut(map, text, strlen(text), status);
 *   TF_Buffer* api_def = TF_ApiDefMapGet(map, "AddV2", 5, status);
 *   ... parse api_def as an ApiDef; TF_DeleteBuffer(api_def) ...
 *   TF_DeleteApiDefMap(map); TF_DeleteBuffer(ops); */
typedef struct TF_ApiDefMap TF_ApiDefMap;

/* A map of the ops in `op_list_buffer`, a serialized OpList (the buffer is
 * not kept). Free it with TF_DeleteApiDefMap. NULL with TF_INVALID_ARGUMENT
 * ("Unparseable OpList") when the buffer does not parse. */
TF_CAPI_EXPORT extern TF_ApiDefMap* TF_NewApiDefMap(TF_Buffer* op_list_buffer, TF_Status* status);

/* Frees the map; NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteApiDefMap(TF_ApiDefMap* apimap);

/* Merges a text-format ApiDefs message (TensorFlow's "<<END ... END"
 * multi-line strings allowed) into the map: fields it sets replace the
 * ops' current ones; ops the map lacks are skipped. TF_FAILED_PRECONDITION
 * after TF_ApiDefMapGet was called, or for an override naming an argument
 * or attr the op lacks, as in TensorFlow; TF_INVALID_ARGUMENT for text that
 * does not parse (TensorFlow ignores such text). */
TF_CAPI_EXPORT extern void TF_ApiDefMapPut(TF_ApiDefMap* api_def_map, const char* text,
                                           size_t text_len, TF_Status* status);

/* The serialized ApiDef of op `name` (`name_len` bytes), in a new buffer the
 * caller frees with TF_DeleteBuffer. The first call renames backticked
 * argument and attr names in the docs to their new names; no TF_ApiDefMapPut
 * is allowed after it. NULL with TF_NOT_FOUND for an op the map lacks
 * (TensorFlow returns NULL with its status untouched). */
TF_CAPI_EXPORT extern TF_Buffer* TF_ApiDefMapGet(TF_ApiDefMap* api_def_map, const char* name,
                                                 size_t name_len, TF_Status* status);

/* ---- Op libraries, kernels, log listeners, filesystem plugins ---- */

/* A shared library of ops loaded by TF_LoadLibrary. */
typedef struct TF_Library TF_Library;

/* Loads the shared library `library_filename`, whose static initializers
 * register ops and kernels with this runtime (a library built against
 * TensorFlow's C++ framework cannot register here). Returns a handle the
 * caller frees with TF_DeleteLibraryHandle (the library itself stays loaded,
 * as in TensorFlow), or NULL: TF_NOT_FOUND with the loader's message when
 * the file cannot be loaded. Loading the same name again returns a handle
 * with the same op list. */
TF_CAPI_EXPORT extern TF_Library* TF_LoadLibrary(const char* library_filename, TF_Status* status);

/* The ops the library registered, as a serialized OpList. The bytes belong
 * to `lib_handle` (no deallocator). */
TF_CAPI_EXPORT extern TF_Buffer TF_GetOpList(TF_Library* lib_handle);

/* Frees the handle, not the library. NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteLibraryHandle(TF_Library* lib_handle);

/* Every registered kernel as a serialized KernelList
 * (runtime/proto/kernel_def.proto, TensorFlow's fields), in a new buffer the
 * caller frees with TF_DeleteBuffer. */
TF_CAPI_EXPORT extern TF_Buffer* TF_GetAllRegisteredKernels(TF_Status* status);

/* The kernels of the op `name` (an empty list for an op without kernels or
 * an unknown op, as in TensorFlow). */
TF_CAPI_EXPORT extern TF_Buffer* TF_GetRegisteredKernelsForOp(const char* name, TF_Status* status);

/* Adds `listener`, called with the text of every message the runtime logs
 * (the Print op's lines, PrintV2 to a log(...) stream) from whatever thread
 * logs it; it cannot be removed. */
TF_CAPI_EXPORT extern void TF_RegisterLogListener(void (*listener)(const char*));

/* TensorFlow loads a filesystem plugin here; this runtime has no filesystem
 * layer to plug it into (it reads local paths only), so this always gives
 * TF_UNIMPLEMENTED. */
TF_CAPI_EXPORT extern void TF_RegisterFilesystemPlugin(const char* plugin_filename,
                                                       TF_Status* status);

/* ========================================================================== */
/* Sessions                                                                   */
/* ========================================================================== */

/* Runs the operations of one TF_Graph. */
typedef struct TF_Session TF_Session;

/* A session that runs `graph` with `opts` (target and config are copied; the
 * caller keeps `opts`). The session keeps `graph` alive: the graph may be
 * TF_DeleteGraph'ed before the session, and goes when both are deleted.
 * Operations already in the graph and those added later are sent to the
 * session by TF_SessionRun. On failure (e.g. TF_NOT_FOUND when no session
 * implementation accepts the target) returns NULL. Free the result with
 * TF_DeleteSession. */
TF_CAPI_EXPORT extern TF_Session* TF_NewSession(TF_Graph* graph, const TF_SessionOptions* opts,
                                                TF_Status* status);

/* Runs one step.
 *   run_options    in   a serialized RunOptions (trace_level, timeout_in_ms
 *                       and output_partition_graphs are honoured), or NULL;
 *                       bytes that do not parse: TF_INVALID_ARGUMENT
 *   inputs, input_values, ninputs
 *                  in   feed `input_values[i]` into tensor `inputs[i]`; the
 *                       caller keeps ownership of the feed tensors (the
 *                       session may still share their memory after the call;
 *                       see TF_NewTensor)
 *   outputs, noutputs
 *                  in   the tensors to fetch
 *   output_values  out  caller-allocated array of `noutputs` pointers; on
 *                       success `output_values[i]` is a new tensor holding
 *                       the value of `outputs[i]`, owned by the caller (free
 *                       each with TF_DeleteTensor); on failure every entry is
 *                       set to NULL
 *   target_opers, ntargets
 *                  in   operations to run whose outputs are not fetched
 *   run_metadata   out  NULL, or an empty buffer (data == NULL; otherwise
 *                       TF_INVALID_ARGUMENT) that receives a serialized
 *                       RunMetadata, also when the run fails: step_stats for
 *                       a traced run, partition_graphs when asked for; free
 *                       it with TF_DeleteBuffer
 * Before running, the operations added to the graph since the session last
 * saw it are sent to the session; if they are rejected the run fails with
 * that error and they are offered again on the next run.
 * At least one output or target is required (TF_INVALID_ARGUMENT otherwise).
 * Feeding or fetching an output index the operation does not have is
 * TF_OUT_OF_RANGE; a feed whose type differs from the tensor's is
 * TF_INVALID_ARGUMENT; feeding a tensor twice or feeding and fetching the same
 * one is TF_INVALID_ARGUMENT; an error inside the graph comes back with its
 * code and a message naming the operation; a closed session gives
 * TF_CANCELLED. Several threads may run one session at once. */
TF_CAPI_EXPORT extern void TF_SessionRun(TF_Session* session, const TF_Buffer* run_options,
                                         const TF_Output* inputs, TF_Tensor* const* input_values,
                                         int ninputs, const TF_Output* outputs,
                                         TF_Tensor** output_values, int noutputs,
                                         const TF_Operation* const* target_opers, int ntargets,
                                         TF_Buffer* run_metadata, TF_Status* status);

/* Closes `session`: steps in flight end with TF_CANCELLED and later runs fail.
 * Closing twice is fine. The session must still be deleted. A NULL session is
 * TF_INVALID_ARGUMENT. */
TF_CAPI_EXPORT extern void TF_CloseSession(TF_Session* session, TF_Status* status);

/* Frees `session` (closing it first if needed) and releases its hold on its
 * graph. NULL is a no-op; `status` reports an error from the implicit close. */
TF_CAPI_EXPORT extern void TF_DeleteSession(TF_Session* session, TF_Status* status);

/* Sends the operations added to the session's graph since its last run to
 * the session now (TF_SessionRun does it anyway; this reports the errors of
 * that step on its own). */
TF_CAPI_EXPORT extern void TF_ExtendSession(TF_Session* session, TF_Status* status);

/* Counters of one session, for tests and benchmarks (a tensorweave
 * addition). */
typedef struct TW_SessionStats {
  int64_t runs;            /* runs that reached execution */
  int64_t executors_built; /* feed/fetch/target signatures compiled */
  int64_t cache_hits;      /* runs that reused compiled executors */
} TW_SessionStats;

/* Writes the current counters of `session` into `*out` (zeros for a NULL
 * session; nothing for a NULL `out`). */
TF_CAPI_EXPORT extern void TW_SessionGetStats(TF_Session* session, TW_SessionStats* out);

/* ---- Devices ---- */

/* A snapshot of the devices a session runs on. */
typedef struct TF_DeviceList TF_DeviceList;

/* The devices of `session`. On success the caller owns the result and frees
 * it with TF_DeleteDeviceList; on failure (a NULL session among them) returns
 * NULL. */
TF_CAPI_EXPORT extern TF_DeviceList* TF_SessionListDevices(TF_Session* session, TF_Status* status);

/* Frees `list`. NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteDeviceList(TF_DeviceList* list);

/* The number of devices in `list`. */
TF_CAPI_EXPORT extern int TF_DeviceListCount(const TF_DeviceList* list);

/* The full name of device `index`, e.g.
 * "/job:localhost/replica:0/task:0/device:CPU:0", owned by `list`. An index
 * out of range gives TF_INVALID_ARGUMENT and returns NULL. */
TF_CAPI_EXPORT extern const char* TF_DeviceListName(const TF_DeviceList* list, int index,
                                                    TF_Status* status);

/* The type of device `index`, e.g. "CPU", owned by `list`. An index out of
 * range gives TF_INVALID_ARGUMENT and returns NULL. */
TF_CAPI_EXPORT extern const char* TF_DeviceListType(const TF_DeviceList* list, int index,
                                                    TF_Status* status);

/* The memory of device `index` in bytes (0 when not limited). An index out of
 * range gives TF_INVALID_ARGUMENT and returns -1. */
TF_CAPI_EXPORT extern int64_t TF_DeviceListMemoryBytes(const TF_DeviceList* list, int index,
                                                       TF_Status* status);

/* The incarnation of device `index`: a random nonzero number drawn when the
 * device was created, so a restarted device (a server's new process) is told
 * apart from the old one. An index out of range gives TF_INVALID_ARGUMENT
 * and returns 0. */
TF_CAPI_EXPORT extern uint64_t TF_DeviceListIncarnation(const TF_DeviceList* list, int index,
                                                        TF_Status* status);

/* ========================================================================== */
/* Prepared runs (callables; a tensorweave addition)                          */
/* ========================================================================== */

/* A step run many times can be prepared once: its feeds, fetches and targets
 * are named (and the step compiled) when the callable is made, and each run
 * passes only the feed values, with no name lookup and no graph lock. These
 * are TensorFlow's TF_SessionMakeCallable / RunCallable / ReleaseCallable
 * (which TensorFlow keeps in its Python-only tf_session_helper) as C calls.
 *
 *   CallableOptions (runtime/proto/config.proto) with feed "x:0", fetch "y:0",
 *   serialized into options_bytes[0, options_len):
 *   TF_Buffer* options = TF_NewBufferFromString(options_bytes, options_len);
 *   int64_t handle;
 *   TW_SessionMakeCallable(session, options, &handle, status);
 *   TF_DeleteBuffer(options);
 *   TF_Tensor* y = NULL;
 *   TW_SessionRunCallable(session, handle, &x, 1, &y, 1, status);
 *   ...
 *   TW_SessionReleaseCallable(session, handle, status); */

/* Prepares the step `callable_options` describes and writes its handle to
 * `*handle`.
 *   session           in   the session; operations added to its graph since
 *                          it last saw them are sent to it first, as by
 *                          TF_SessionRun
 *   callable_options  in   a serialized CallableOptions, owned by the caller
 *                          (read during the call only); feed and fetch are
 *                          tensor names "op:index", target operation names;
 *                          run_options.timeout_in_ms applies to every run
 *   handle            out  written on success only
 * Errors: bytes that do not parse, no fetch and no target, a tensor fed twice
 * or both fed and fetched: TF_INVALID_ARGUMENT; an unknown name: TF_NOT_FOUND;
 * tensor_connection, feed_devices or fetch_devices set: TF_UNIMPLEMENTED; a
 * closed session: TF_CANCELLED. The handle lives until released or until the
 * session is deleted. */
TF_CAPI_EXPORT extern void TW_SessionMakeCallable(TF_Session* session,
                                                  const TF_Buffer* callable_options,
                                                  int64_t* handle, TF_Status* status);

/* Runs the step of `handle` once. Never extends the session's graph and never
 * locks the TF_Graph. Several threads may run callables (and TF_SessionRun)
 * on one session at once.
 *   input_values, ninputs
 *                  in   the values of the callable's feeds, in the order of
 *                       CallableOptions.feed; the caller keeps ownership (the
 *                       session may still share their memory after the call;
 *                       see TF_NewTensor)
 *   output_values  out  caller-allocated array of `noutputs` pointers; on
 *                       success `output_values[i]` is a new tensor holding
 *                       the value of CallableOptions.fetch[i], owned by the
 *                       caller (free each with TF_DeleteTensor); on failure
 *                       every entry is set to NULL
 *   noutputs       in   must equal the number of fetches of the callable
 * Errors: an unknown or released handle, or `ninputs` other than the number
 * of feeds: TF_INVALID_ARGUMENT before anything runs; a feed of the wrong
 * type or shape, an error in the graph, a timeout or a closed session: as
 * TF_SessionRun; `noutputs` other than the number of fetches:
 * TF_INVALID_ARGUMENT after the step has run (its fetched values are
 * freed). */
TF_CAPI_EXPORT extern void TW_SessionRunCallable(TF_Session* session, int64_t handle,
                                                 TF_Tensor* const* input_values, int ninputs,
                                                 TF_Tensor** output_values, int noutputs,
                                                 TF_Status* status);

/* Forgets `handle`: later runs of it are TF_INVALID_ARGUMENT; runs in flight
 * finish normally. Releasing a handle twice is fine; a value never returned
 * by TW_SessionMakeCallable on `session` is TF_INVALID_ARGUMENT. Works on a
 * closed session too. TF_DeleteSession releases every handle left. */
TF_CAPI_EXPORT extern void TW_SessionReleaseCallable(TF_Session* session, int64_t handle,
                                                     TF_Status* status);

/* ========================================================================== */
/* The deprecated, GraphDef-based session API                                 */
/* ========================================================================== */

/* A session fed serialized GraphDefs and addressed by tensor names
 * ("node:index", or "node" for output 0) instead of TF_Graph handles. */
typedef struct TF_DeprecatedSession TF_DeprecatedSession;

/* A session with no graph yet. On failure returns NULL. Free the result with
 * TF_DeleteDeprecatedSession. */
TF_CAPI_EXPORT extern TF_DeprecatedSession* TF_NewDeprecatedSession(const TF_SessionOptions* opts,
                                                                    TF_Status* status);

/* Closes `session` as TF_CloseSession does. */
TF_CAPI_EXPORT extern void TF_CloseDeprecatedSession(TF_DeprecatedSession* session,
                                                     TF_Status* status);

/* Frees `session`, closing it first if needed. NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteDeprecatedSession(TF_DeprecatedSession* session,
                                                      TF_Status* status);

/* Adds the nodes of the serialized GraphDef `proto[0, proto_len)` to the
 * session's graph; their inputs may name nodes added earlier. The nodes are
 * checked exactly as TF_GraphImportGraphDef checks them, shape functions
 * included: bytes that do not parse give TF_INVALID_ARGUMENT; a node that
 * fails validation or shape inference, or reuses a name, gives an error naming
 * it. On failure nothing is added. The caller keeps `proto`. */
TF_CAPI_EXPORT extern void TF_ExtendGraph(TF_DeprecatedSession* session, const void* proto,
                                          size_t proto_len, TF_Status* status);

/* Runs one step, as TF_SessionRun, with tensors and operations named by
 * strings.
 *   input_names, inputs, ninputs
 *                  in   feed `inputs[i]` into the tensor named
 *                       `input_names[i]`. The caller keeps the input
 *                       tensors and deletes them, whatever the outcome (as
 *                       in TensorFlow 1.15 and 2.x; TensorFlow 1.0 took
 *                       them, and a program written for that leaks here).
 *   output_names, outputs, noutputs
 *                  in/out  fetch the tensors named `output_names[i]` into
 *                       `outputs[i]` (caller-allocated array); on success each
 *                       is a new tensor owned by the caller, on failure each
 *                       entry is set to NULL
 *   target_names, ntargets
 *                  in   names of operations to run without fetching
 *   run_options, run_metadata: as for TF_SessionRun.
 * A name that is not in the graph gives TF_NOT_FOUND; the other errors are
 * those of TF_SessionRun. */
TF_CAPI_EXPORT extern void TF_Run(TF_DeprecatedSession* session, const TF_Buffer* run_options,
                                  const char** input_names, TF_Tensor** inputs, int ninputs,
                                  const char** output_names, TF_Tensor** outputs, int noutputs,
                                  const char** target_names, int ntargets, TF_Buffer* run_metadata,
                                  TF_Status* status);

/* The devices of `session`, as TF_SessionListDevices. */
TF_CAPI_EXPORT extern TF_DeviceList* TF_DeprecatedSessionListDevices(TF_DeprecatedSession* session,
                                                                     TF_Status* status);

/* The counters of `session`, as TW_SessionGetStats (a tensorweave
 * addition). */
TF_CAPI_EXPORT extern void TW_DeprecatedSessionGetStats(TF_DeprecatedSession* session,
                                                        TW_SessionStats* out);

/* ========================================================================== */
/* Reading checkpoints                                                        */
/* ========================================================================== */

/* The names, dtypes, shapes and values of the tensors in one checkpoint, as
 * tf.train.Saver wrote it (the file format is docs/checkpoint_format.md).
 * TensorFlow declares these in c_api_experimental.h. A reader never changes
 * once opened: its calls may come from several threads at once, and a save
 * that replaces the file meanwhile does not disturb it. */
typedef struct TF_CheckpointReader TF_CheckpointReader;

/* Opens the checkpoint `filename`: the prefix a save was given
 * ("ckpt/model-100"), whose files are TensorFlow's V2 bundle
 * (model-100.index and model-100.data-NNNNN-of-NNNNN) or, for checkpoints of
 * older tensorweave builds, model-100.twckpt (whose own path is accepted
 * too); copied, the caller keeps it. Opening reads and checks the index
 * (or header and table of contents, checksums included); each
 * TF_CheckpointReaderGetTensor checks the bytes it reads.
 * On success returns a new reader, which the caller frees with
 * TF_DeleteCheckpointReader. On failure returns NULL: TF_NOT_FOUND for a
 * missing file (the message names the path), TF_DATA_LOSS for a truncated,
 * damaged or foreign file, TF_UNIMPLEMENTED for a format version this build
 * does not read, TF_INVALID_ARGUMENT for a NULL `filename` or a path that is
 * not a regular file. */
TF_CAPI_EXPORT extern TF_CheckpointReader* TF_NewCheckpointReader(const char* filename,
                                                                  TF_Status* status);

/* Closes the file and frees `reader`; names it returned become invalid.
 * Tensors it returned stay valid. NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteCheckpointReader(TF_CheckpointReader* reader);

/* 1 when the checkpoint holds a tensor named `name`, else 0 (also for a NULL
 * `name`). */
TF_CAPI_EXPORT extern int TF_CheckpointReaderHasTensor(TF_CheckpointReader* reader,
                                                       const char* name);

/* The name of tensor `index` (0 <= index < TF_CheckpointReaderSize), in
 * byte-wise sorted order. The string belongs to `reader` and stays valid until
 * it is deleted. An index out of range returns NULL. */
TF_CAPI_EXPORT extern const char* TF_CheckpointReaderGetVariable(TF_CheckpointReader* reader,
                                                                 int index);

/* The number of tensors in the checkpoint. */
TF_CAPI_EXPORT extern int TF_CheckpointReaderSize(TF_CheckpointReader* reader);

/* The element type of tensor `name`; 0 (no TF_DataType) when the checkpoint
 * has no such tensor. */
TF_CAPI_EXPORT extern TF_DataType TF_CheckpointReaderGetVariableDataType(
    TF_CheckpointReader* reader, const char* name);

/* Writes the dims of tensor `name` into `dims[0, num_dims)` (caller-allocated;
 * may be NULL when `num_dims` is 0). `num_dims` must be the tensor's rank, as
 * TF_CheckpointReaderGetVariableNumDims gives it: otherwise
 * TF_INVALID_ARGUMENT. A name the checkpoint does not hold is TF_NOT_FOUND.
 * On failure `dims` is untouched. */
TF_CAPI_EXPORT extern void TF_CheckpointReaderGetVariableShape(TF_CheckpointReader* reader,
                                                               const char* name, int64_t* dims,
                                                               int num_dims, TF_Status* status);

/* The rank of tensor `name` (0 for a scalar); -1 when the checkpoint has no
 * such tensor. */
TF_CAPI_EXPORT extern int TF_CheckpointReaderGetVariableNumDims(TF_CheckpointReader* reader,
                                                                const char* name);

/* Reads tensor `name` from the file. On success returns a new tensor of the
 * stored dtype and shape, owned by the caller (free it with TF_DeleteTensor).
 * On failure returns NULL: TF_NOT_FOUND for a name the checkpoint does not
 * hold (or NULL), TF_DATA_LOSS when the tensor's bytes are damaged or the file
 * was cut short (the message names the file and the tensor),
 * TF_RESOURCE_EXHAUSTED when the tensor does not fit in memory. */
TF_CAPI_EXPORT extern TF_Tensor* TF_CheckpointReaderGetTensor(TF_CheckpointReader* reader,
                                                              const char* name, TF_Status* status);

/* ========================================================================== */
/* Servers                                                                    */
/* ========================================================================== */

/* An in-process server of TensorFlow's distributed protocol: one task of a
 * cluster, which sessions elsewhere reach with a "grpc://host:port" target.
 * TensorFlow declares these in c_api_experimental.h. Lifecycle:
 *
 *   TF_Server* server = TF_NewServer(server_def, server_def_len, status);
 *   TF_ServerStart(server, status);        // serving; TF_ServerTarget(server)
 *   ... TF_ServerJoin(server, status) blocks until another thread calls ...
 *   TF_ServerStop(server, status);         // a real stop, unlike TensorFlow's
 *   TF_DeleteServer(server);
 *
 * The transport is TensorFlow-compatible and insecure (no TLS, no token); a
 * task whose address in the cluster is "localhost:<port>" listens on the
 * loopback interface only. */
typedef struct TF_Server TF_Server;

/* A server for the task `proto[0, proto_len)` describes: a serialized
 * ServerDef (cluster, job_name, task_index, default_session_config,
 * protocol "grpc"). It will listen on the task's address in the cluster;
 * a port of 0 is replaced by a free one now, so TF_ServerTarget names the
 * real port from the start. Nothing listens until TF_ServerStart. On
 * success returns a new server, which the caller frees with TF_DeleteServer.
 * On failure returns NULL: TF_INVALID_ARGUMENT for bytes that do not parse,
 * a task the job does not have or an address without a port; TF_INTERNAL
 * for a job the cluster does not have; TF_NOT_FOUND for a protocol other
 * than "grpc". The caller keeps `proto`. */
TF_CAPI_EXPORT extern TF_Server* TF_NewServer(const void* proto, size_t proto_len,
                                              TF_Status* status);

/* Starts serving. TF_UNAVAILABLE when the address cannot be bound (in use,
 * or not an interface of this machine); TF_FAILED_PRECONDITION when the
 * server is serving already or was stopped (or joined before it started). */
TF_CAPI_EXPORT extern void TF_ServerStart(TF_Server* server, TF_Status* status);

/* Stops serving: calls in flight get a grace period of a second, then are
 * cancelled; returns once the server has stopped and TF_ServerJoin callers
 * have been released. Stopping a stopped or unstarted server is a no-op. */
TF_CAPI_EXPORT extern void TF_ServerStop(TF_Server* server, TF_Status* status);

/* Blocks until the server has stopped (TF_ServerStop from another thread).
 * On an unstarted server returns at once, and the server can no longer
 * start (as in TensorFlow). */
TF_CAPI_EXPORT extern void TF_ServerJoin(TF_Server* server, TF_Status* status);

/* "grpc://host:port", the target sessions use to reach this server (the
 * port picked at TF_NewServer when the ServerDef said 0).
 * The string belongs to `server` and stays valid until it is deleted. NULL
 * for a NULL server. */
TF_CAPI_EXPORT extern const char* TF_ServerTarget(TF_Server* server);

/* Stops the server if it is serving, then frees it. NULL is a no-op. */
TF_CAPI_EXPORT extern void TF_DeleteServer(TF_Server* server);

/* Clears the resource containers `containers[0, ncontainers)` (all when
 * ncontainers is 0) of the sessions `opt`'s target reaches: for a
 * "grpc://" target the master's (a TensorFlow master also closes every
 * session it holds); for "" the variables of every in-process session,
 * which become uninitialized. Errors as TF_NewSession's for the target, and
 * those of the master. The caller keeps `opt` and `containers`. */
TF_CAPI_EXPORT extern void TF_Reset(const TF_SessionOptions* opt, const char** containers,
                                    int ncontainers, TF_Status* status);

/* ---- Record files (issue 11 part 3: TensorBoard event files) -------------
 * TFRecord files, the framing of TensorFlow's event files
 * (events.out.tfevents.*) and of tf.io.TFRecordWriter: each record carries
 * its length and masked CRC-32C checksums. Python's tf.summary.FileWriter
 * and tf.io.TFRecordWriter write through these, summary_iterator and
 * tf_record_iterator read through them.
 *
 *   TW_RecordWriter* writer = TW_NewRecordWriter("/tmp/f.tfrecord", "", status);
 *   TW_RecordWriterWrite(writer, bytes, nbytes, status);
 *   TW_RecordWriterClose(writer, status);   (flushes; errors show here)
 *   TW_DeleteRecordWriter(writer);
 *
 * compression_type: "" or "NONE" (NULL means "") for none, "ZLIB" or "GZIP"
 * for one zlib or gzip stream holding the records, as TensorFlow writes
 * them; any other name is TF_INVALID_ARGUMENT. */
typedef struct TW_RecordWriter TW_RecordWriter;

/* Creates (or truncates) `filename`. The result must be freed with
 * TW_DeleteRecordWriter. On failure returns NULL: TF_NOT_FOUND when the
 * directory is missing, TF_PERMISSION_DENIED when it cannot be written. */
TF_CAPI_EXPORT extern TW_RecordWriter* TW_NewRecordWriter(const char* filename,
                                                          const char* compression_type,
                                                          TF_Status* status);

/* Appends one record of `record_len` bytes (copied; the caller keeps
 * `record`). TF_FAILED_PRECONDITION after TW_RecordWriterClose. */
TF_CAPI_EXPORT extern void TW_RecordWriterWrite(TW_RecordWriter* writer, const void* record,
                                                size_t record_len, TF_Status* status);

/* Hands the records written so far to the file system and syncs them. */
TF_CAPI_EXPORT extern void TW_RecordWriterFlush(TW_RecordWriter* writer, TF_Status* status);

/* Flushes and closes the file; a second close is a no-op. */
TF_CAPI_EXPORT extern void TW_RecordWriterClose(TW_RecordWriter* writer, TF_Status* status);

/* Closes the file if open (errors are dropped) and frees the writer. NULL is
 * a no-op. */
TF_CAPI_EXPORT extern void TW_DeleteRecordWriter(TW_RecordWriter* writer);

typedef struct TW_RecordReader TW_RecordReader;

/* Opens `filename` for reading from its first record. Free the result with
 * TW_DeleteRecordReader. NULL on failure (TF_NOT_FOUND for a missing file). */
TF_CAPI_EXPORT extern TW_RecordReader* TW_NewRecordReader(const char* filename,
                                                          const char* compression_type,
                                                          TF_Status* status);

/* The next record, in a new buffer the caller frees with TF_DeleteBuffer.
 * NULL with TF_OUT_OF_RANGE at the end of the file (a later call reads
 * records appended since), TF_DATA_LOSS for a truncated or corrupted record. */
TF_CAPI_EXPORT extern TF_Buffer* TW_RecordReaderReadNext(TW_RecordReader* reader,
                                                         TF_Status* status);

/* Closes the file and frees the reader. NULL is a no-op. */
TF_CAPI_EXPORT extern void TW_DeleteRecordReader(TW_RecordReader* reader);

/* ---- TSTRING (issue 11 part 4): TF_TString, TensorFlow 2.x's string
 * element, and the functions of TensorFlow's tf_tstring.h. ---- */
#include "tf_tstring.h"

/* ---- SavedModel (TensorFlow's SavedModel directories) ---------------------
 *
 *   const char* tags[] = {"serve"};
 *   TF_Graph* graph = TF_NewGraph();
 *   TF_Buffer* meta_graph = TF_NewBuffer();        (optional: NULL skips it)
 *   TF_Session* session = TF_LoadSessionFromSavedModel(
 *       options, NULL, "export/1", tags, 1, graph, meta_graph, status);
 *   ... look up the signature's tensors with TF_GraphOperationByName(graph, ...)
 *   ... and run them with TF_SessionRun(session, ...)
 *   TF_DeleteSession(session, status); TF_DeleteGraph(graph); TF_DeleteBuffer(meta_graph);
 *
 * A SavedModel directory (written by tf.saved_model.builder or simple_save,
 * in TensorFlow or tensorweave) holds saved_model.pb, the checkpoint
 * variables/variables and the assets/ directory. */

/* Loads the meta graph of `export_dir` whose tags are exactly the set
 * `tags[0, tags_len)` into a new session: creates the session over its
 * graph (with `session_options`), runs the saver's restore op with the
 * variables' checkpoint fed, then the init op (main op or legacy init op)
 * with each asset tensor fed its file's path; `run_options` (a serialized
 * RunOptions, or NULL) applies to those runs. The same graph is imported
 * into `graph`, which must be empty, so its operations can be found by name
 * and run with TF_SessionRun. When `meta_graph_def` is not NULL it must be
 * empty and receives the serialized MetaGraphDef (its signature_def map
 * names the tensors to feed and fetch).
 * On success returns a new session, freed with TF_DeleteSession (`graph`
 * then lives until both are deleted, as for TF_NewSession). On failure
 * returns NULL and `graph` is unchanged: TF_INVALID_ARGUMENT for a graph
 * that is not empty, a non-empty `meta_graph_def` buffer, unparseable
 * `run_options` or a NULL argument; TF_NOT_FOUND for a directory without
 * saved_model.pb(txt) or with no meta graph of these tags; TF_DATA_LOSS for
 * a saved_model.pb that does not parse; and the restore or init op's own
 * error (TF_NOT_FOUND for a missing checkpoint, say). The caller keeps every
 * argument. */
TF_CAPI_EXPORT extern TF_Session* TF_LoadSessionFromSavedModel(
    const TF_SessionOptions* session_options, const TF_Buffer* run_options, const char* export_dir,
    const char* const* tags, int tags_len, TF_Graph* graph, TF_Buffer* meta_graph_def,
    TF_Status* status);

/* ---- Run metadata and partial runs (issue 11: RUNMETA) ------------------ */

/* TW_SessionRunCallable that also reports what the callable's
 * run_options ask for (trace_level: step_stats; output_partition_graphs:
 * partition_graphs).
 *   run_metadata  out  NULL (then exactly TW_SessionRunCallable), or an
 *                      empty buffer (data == NULL; otherwise
 *                      TF_INVALID_ARGUMENT) that receives a serialized
 *                      RunMetadata, also when the run fails; free it with
 *                      TF_DeleteBuffer
 * Everything else as TW_SessionRunCallable. */
TF_CAPI_EXPORT extern void TW_SessionRunCallableWithMetadata(TF_Session* session, int64_t handle,
                                                             TF_Tensor* const* input_values,
                                                             int ninputs, TF_Tensor** output_values,
                                                             int noutputs, TF_Buffer* run_metadata,
                                                             TF_Status* status);

/* Partial runs: one step whose feeds are given, and fetches taken, over
 * several calls, as in TensorFlow; on local sessions and on grpc:// targets
 * alike (there the master keeps the step's partitions running on their
 * workers between calls, with TensorFlow's MasterService protocol, so a
 * TensorFlow server serves them too).
 *
 *   const char* handle = NULL;
 *   TF_SessionPRunSetup(session, feeds, 2, fetches, 2, NULL, 0, &handle, status);
 *   TF_SessionPRun(session, handle, &feeds[0], &a, 1, &fetches[0], &c, 1, NULL, 0, status);
 *   TF_SessionPRun(session, handle, &feeds[1], &b, 1, &fetches[1], &d, 1, NULL, 0, status);
 *   TF_DeletePRunHandle(handle);
 *
 * Declares every feed (inputs), fetch (outputs) and target operation of the
 * step and starts it; operations added to the graph since the session last
 * saw it are sent first, as by TF_SessionRun.
 *   handle  out  on success a new string naming the step, owned by the
 *                caller (free it with TF_DeletePRunHandle)
 * Errors: as TF_SessionRun for the names (TF_NOT_FOUND for an unknown one,
 * TF_INVALID_ARGUMENT for a tensor fed twice or fed and fetched); no output
 * and no target: TF_INVALID_ARGUMENT; a closed session: TF_CANCELLED. */
TF_CAPI_EXPORT extern void TF_SessionPRunSetup(TF_Session* session, const TF_Output* inputs,
                                               int ninputs, const TF_Output* outputs, int noutputs,
                                               const TF_Operation* const* target_opers,
                                               int ntargets, const char** handle,
                                               TF_Status* status);

/* Feeds `input_values` (the caller keeps them) into some of the declared
 * feeds and fetches some of the declared outputs into `output_values` (new
 * tensors owned by the caller; all NULL on failure), waiting for them.
 * target_opers are ignored (targets are declared at setup). Once every
 * declared feed was fed and every output fetched, waits for the step's
 * targets and ends the step; the handle then names nothing.
 * Errors (TF_INVALID_ARGUMENT, as in TensorFlow): an unknown or finished
 * handle ("Must run 'setup' before performing partial runs!"); a feed or
 * fetch not declared at setup ("... was not specified in
 * partial_run_setup."); one fed or fetched before ("... has already been
 * fed." / "... fetched."); a fetch that needs a declared feed not fed yet
 * ("Fetch ... can't be computed from the feeds that have been fed so
 * far."); a feed of the wrong type or shape. An error inside the graph comes
 * back as from TF_SessionRun and ends the step. */
TF_CAPI_EXPORT extern void TF_SessionPRun(TF_Session* session, const char* handle,
                                          const TF_Output* inputs, TF_Tensor* const* input_values,
                                          int ninputs, const TF_Output* outputs,
                                          TF_Tensor** output_values, int noutputs,
                                          const TF_Operation* const* target_opers, int ntargets,
                                          TF_Status* status);

/* Frees a handle from TF_SessionPRunSetup or TF_PRunSetup. NULL is a no-op.
 * A step not finished keeps running until the session is closed. */
TF_CAPI_EXPORT extern void TF_DeletePRunHandle(const char* handle);

/* Deprecated (TF_DeprecatedSession): TF_SessionPRunSetup with tensor names
 * ("op:index") and target operation names. */
TF_CAPI_EXPORT extern void TF_PRunSetup(TF_DeprecatedSession* session, const char** input_names,
                                        int ninputs, const char** output_names, int noutputs,
                                        const char** target_oper_names, int ntargets,
                                        const char** handle, TF_Status* status);

/* Deprecated (TF_DeprecatedSession): TF_SessionPRun with tensor names. The
 * caller keeps the input tensors, as in TensorFlow 1.15 and 2.x. */
TF_CAPI_EXPORT extern void TF_PRun(TF_DeprecatedSession* session, const char* handle,
                                   const char** input_names, TF_Tensor** inputs, int ninputs,
                                   const char** output_names, TF_Tensor** outputs, int noutputs,
                                   const char** target_oper_names, int ntargets, TF_Status* status);

/* ---- end of run metadata and partial runs ---- */

#ifdef __cplusplus
} /* end extern "C" */
#endif

#endif /* TENSORWEAVE_C_API_C_API_H_ */

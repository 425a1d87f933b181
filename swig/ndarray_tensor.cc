#include "swig/ndarray_tensor.h"

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tensorweave_ARRAY_API
#include <numpy/arrayobject.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace tensorweave {
namespace {

constexpr const char kTensorCapsule[] = "tensorweave.TF_Tensor";

struct StatusDeleter {
  void operator()(TF_Status* status) const { TF_DeleteStatus(status); }
};

// Deallocator of a tensor wrapping a fed array: the runtime may drop the
// last reference on any thread, with or without the GIL, so take it here.
// During interpreter shutdown the array is leaked: decref'ing then is unsafe.
void ReleaseArray(void* /*data*/, size_t /*len*/, void* array) {
  if (!InterpreterAlive()) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(array));
  PyGILState_Release(gil);
}

void DeleteTensorCapsule(PyObject* capsule) {
  TF_DeleteTensor(static_cast<TF_Tensor*>(PyCapsule_GetPointer(capsule, kTensorCapsule)));
}

// numpy has no bfloat16: ml_dtypes (TensorFlow's source of it too)
// registers one, whose type number is known only once it is imported.
// -1 when ml_dtypes is not installed. Called with the GIL held.
int Bfloat16TypeNumber() {
  static const int type_number = [] {
    PyRef module(PyImport_ImportModule("ml_dtypes"));
    PyRef type(module ? PyObject_GetAttrString(module.get(), "bfloat16") : nullptr);
    PyArray_Descr* descr = nullptr;
    if (!type || !PyArray_DescrConverter(type.get(), &descr)) {
      PyErr_Clear();
      return -1;
    }
    const int number = descr->type_num;
    Py_DECREF(descr);
    return number;
  }();
  return type_number;
}

// numpy's C-level integer types alias differently across platforms (int64 is
// `long` here, `long long` elsewhere), so integers map by signedness and size.
bool NumpyToTFType(PyArrayObject* array, TF_DataType* out) {
  const int item_size = PyArray_ITEMSIZE(array);
  if (PyArray_TYPE(array) >= NPY_USERDEF && PyArray_TYPE(array) == Bfloat16TypeNumber()) {
    *out = TF_BFLOAT16;
    return true;
  }
  switch (PyArray_TYPE(array)) {
    case NPY_BOOL:
      *out = TF_BOOL;
      return true;
    case NPY_HALF:
      *out = TF_HALF;
      return true;
    case NPY_FLOAT:
      *out = TF_FLOAT;
      return true;
    case NPY_DOUBLE:
      *out = TF_DOUBLE;
      return true;
    case NPY_CFLOAT:
      *out = TF_COMPLEX64;
      return true;
    case NPY_CDOUBLE:
      *out = TF_COMPLEX128;
      return true;
    case NPY_BYTE:
    case NPY_SHORT:
    case NPY_INT:
    case NPY_LONG:
    case NPY_LONGLONG:
      switch (item_size) {
        case 1:
          *out = TF_INT8;
          return true;
        case 2:
          *out = TF_INT16;
          return true;
        case 4:
          *out = TF_INT32;
          return true;
        case 8:
          *out = TF_INT64;
          return true;
      }
      return false;
    case NPY_UBYTE:
    case NPY_USHORT:
    case NPY_UINT:
    case NPY_ULONG:
    case NPY_ULONGLONG:
      switch (item_size) {
        case 1:
          *out = TF_UINT8;
          return true;
        case 2:
          *out = TF_UINT16;
          return true;
        case 4:
          *out = TF_UINT32;
          return true;
        case 8:
          *out = TF_UINT64;
          return true;
      }
      return false;
    default:
      return false;
  }
}

int TFToNumpyType(TF_DataType dtype) {
  switch (dtype) {
    case TF_FLOAT:
      return NPY_FLOAT32;
    case TF_DOUBLE:
      return NPY_FLOAT64;
    case TF_INT32:
      return NPY_INT32;
    case TF_UINT8:
      return NPY_UINT8;
    case TF_INT16:
      return NPY_INT16;
    case TF_INT8:
      return NPY_INT8;
    case TF_COMPLEX64:
      return NPY_COMPLEX64;
    case TF_INT64:
      return NPY_INT64;
    case TF_BOOL:
      return NPY_BOOL;
    case TF_UINT16:
      return NPY_UINT16;
    case TF_COMPLEX128:
      return NPY_COMPLEX128;
    case TF_HALF:
      return NPY_FLOAT16;
    case TF_BFLOAT16:
      return Bfloat16TypeNumber();
    case TF_UINT32:
      return NPY_UINT32;
    case TF_UINT64:
      return NPY_UINT64;
    default:
      return -1;
  }
}

bool IsStringArray(PyArrayObject* array) {
  const int type = PyArray_TYPE(array);
  return type == NPY_OBJECT || type == NPY_STRING || type == NPY_UNICODE;
}

// Dimensions as the C API wants them (int64_t, not npy_intp).
std::vector<int64_t> DimsOf(PyArrayObject* array) {
  const npy_intp* dims = PyArray_DIMS(array);
  return std::vector<int64_t>(dims, dims + PyArray_NDIM(array));
}

// The bytes of one element of a string array: bytes as they are, str as UTF-8.
bool StringElement(PyObject* item, const char** data, Py_ssize_t* size) {
  if (PyBytes_Check(item)) {
    *data = PyBytes_AS_STRING(item);
    *size = PyBytes_GET_SIZE(item);
    return true;
  }
  if (PyUnicode_Check(item)) {
    *data = PyUnicode_AsUTF8AndSize(item, size);
    return *data != nullptr;
  }
  PyErr_Format(PyExc_TypeError, "Expected bytes or str in a string feed, got %s",
               Py_TYPE(item)->tp_name);
  return false;
}

// A TF_STRING tensor holds one TF_TString per element (TensorFlow 2.x's
// layout); each element gets a copy of the item's bytes.
TF_Tensor* StringArrayToTensor(PyArrayObject* array) {
  PyRef contiguous(PyArray_FROM_OF(reinterpret_cast<PyObject*>(array), NPY_ARRAY_C_CONTIGUOUS));
  if (!contiguous) return nullptr;
  auto* flat = reinterpret_cast<PyArrayObject*>(contiguous.get());
  const npy_intp count = PyArray_SIZE(flat);
  std::vector<int64_t> dims = DimsOf(array);
  TF_Tensor* tensor =
      TF_AllocateTensor(TF_STRING, dims.data(), dims.size(), count * sizeof(TF_TString));
  if (tensor == nullptr) {
    PyErr_SetString(PyExc_ValueError, "Could not allocate a string tensor for a feed");
    return nullptr;
  }
  auto* elements = static_cast<TF_TString*>(TF_TensorData(tensor));
  char* element = static_cast<char*>(PyArray_DATA(flat));
  for (npy_intp i = 0; i < count; ++i, element += PyArray_ITEMSIZE(flat)) {
    PyRef item(PyArray_GETITEM(flat, element));
    const char* data;
    Py_ssize_t size;
    if (!item || !StringElement(item.get(), &data, &size)) {
      TF_DeleteTensor(tensor);
      return nullptr;
    }
    TF_StringCopy(&elements[i], data, size);
    if (TF_StringGetSize(&elements[i]) != static_cast<size_t>(size)) {
      TF_DeleteTensor(tensor);
      PyErr_NoMemory();
      return nullptr;
    }
  }
  return tensor;
}

PyObject* StringTensorToNdarray(TF_Tensor* tensor) {
  const int64_t count = TF_TensorElementCount(tensor);
  if (TF_TensorByteSize(tensor) / sizeof(TF_TString) < static_cast<uint64_t>(count)) {
    PyErr_SetString(PyExc_ValueError, "Malformed string tensor fetched");
    return nullptr;
  }
  const auto* elements = static_cast<const TF_TString*>(TF_TensorData(tensor));
  std::vector<npy_intp> dims(TF_NumDims(tensor));
  for (size_t i = 0; i < dims.size(); ++i) dims[i] = TF_Dim(tensor, i);
  PyRef array(PyArray_SimpleNew(dims.size(), dims.data(), NPY_OBJECT));
  if (!array) return nullptr;
  auto** slots =
      static_cast<PyObject**>(PyArray_DATA(reinterpret_cast<PyArrayObject*>(array.get())));
  for (int64_t i = 0; i < count; ++i) {
    PyObject* item = PyBytes_FromStringAndSize(TF_StringGetDataPointer(&elements[i]),
                                               TF_StringGetSize(&elements[i]));
    if (item == nullptr) return nullptr;
    Py_XSETREF(slots[i], item);
  }
  if (dims.empty()) {  // a scalar string comes back as bytes, as in TensorFlow
    PyObject* item = slots[0];
    Py_INCREF(item);
    return item;
  }
  return array.release();
}

// A scalar DT_RESOURCE tensor holds one serialized ResourceHandleProto
// (the C API's TF_RESOURCE layout). TensorFlow's Python hands it back as a
// 1-D array of its bytes whose dtype is the struct [("resource", uint8, 1)]
// (TF_TensorToPyArray; `array.tobytes()` is the proto). Only scalars exist:
// the C API refuses to fetch any other resource tensor.
PyObject* ResourceTensorToNdarray(TF_Tensor* tensor) {
  if (TF_NumDims(tensor) != 0) {
    PyErr_SetString(PyExc_ValueError, "Fetching of non-scalar resource tensors is not supported.");
    return nullptr;
  }
  PyRef fields(Py_BuildValue("[(sOi)]", "resource",
                             reinterpret_cast<PyObject*>(PyArray_TypeObjectFromType(NPY_UBYTE)),
                             1));
  if (!fields) return nullptr;
  PyArray_Descr* descr = nullptr;  // PyArray_Empty steals this reference
  if (PyArray_DescrConverter(fields.get(), &descr) != NPY_SUCCEED) return nullptr;
  npy_intp size = static_cast<npy_intp>(TF_TensorByteSize(tensor));
  PyRef array(PyArray_Empty(1, &size, descr, 0));
  if (!array) return nullptr;
  if (size > 0) {
    std::memcpy(PyArray_DATA(reinterpret_cast<PyArrayObject*>(array.get())), TF_TensorData(tensor),
                size);
  }
  return array.release();
}

}  // namespace

bool InterpreterAlive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

bool InitNumpy() { return _import_array() >= 0; }

TF_Tensor* NdarrayToTensor(PyObject* value) {
  PyRef array(PyArray_Check(value) ? (Py_INCREF(value), value)
                                   : PyArray_FromAny(value, nullptr, 0, 0, 0, nullptr));
  if (!array) return nullptr;
  auto* as_array = reinterpret_cast<PyArrayObject*>(array.get());
  if (IsStringArray(as_array)) return StringArrayToTensor(as_array);
  TF_DataType dtype;
  if (!NumpyToTFType(as_array, &dtype)) {
    PyErr_Format(PyExc_TypeError, "Cannot feed a numpy array of dtype %R",
                 reinterpret_cast<PyObject*>(PyArray_DESCR(as_array)));
    return nullptr;
  }
  if (!PyArray_ISCARRAY_RO(as_array) || !PyArray_ISNOTSWAPPED(as_array)) {
    // Strided, misaligned or byte-swapped: one copy into a plain array.
    PyArray_Descr* native = PyArray_DescrFromType(PyArray_TYPE(as_array));
    array.reset(PyArray_FromArray(as_array, native, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_ENSURECOPY));
    if (!array) return nullptr;
    as_array = reinterpret_cast<PyArrayObject*>(array.get());
  }
  std::vector<int64_t> dims = DimsOf(as_array);
  // The tensor takes our reference; ReleaseArray drops it (already on failure).
  PyObject* owner = array.release();
  TF_Tensor* tensor = TF_NewTensor(dtype, dims.data(), dims.size(), PyArray_DATA(as_array),
                                   PyArray_NBYTES(as_array), ReleaseArray, owner);
  if (tensor == nullptr) {
    PyErr_SetString(PyExc_ValueError, "Could not make a tensor from a fed array");
  }
  return tensor;
}

PyObject* TensorToNdarray(TF_Tensor* tensor) {
  const TF_DataType dtype = TF_TensorType(tensor);
  if (dtype == TF_STRING || dtype == TF_RESOURCE) {
    PyObject* result =
        dtype == TF_STRING ? StringTensorToNdarray(tensor) : ResourceTensorToNdarray(tensor);
    TF_DeleteTensor(tensor);
    return result;
  }
  const int type = TFToNumpyType(dtype);
  if (type < 0) {
    TF_DeleteTensor(tensor);
    PyErr_Format(PyExc_TypeError, "Cannot convert a fetched tensor of type %d to numpy",
                 static_cast<int>(dtype));
    return nullptr;
  }
  const int rank = TF_NumDims(tensor);
  if (rank == 0) {  // TensorFlow hands scalars back as numpy scalars
    PyArray_Descr* descr = PyArray_DescrFromType(type);
    PyObject* scalar = PyArray_Scalar(TF_TensorData(tensor), descr, nullptr);
    Py_DECREF(descr);
    TF_DeleteTensor(tensor);
    return scalar;
  }
  std::vector<npy_intp> dims(rank);
  for (int i = 0; i < rank; ++i) dims[i] = TF_Dim(tensor, i);
  if (TF_TensorElementCount(tensor) == 0) {  // nothing to share; the buffer may be NULL
    TF_DeleteTensor(tensor);
    return PyArray_SimpleNew(rank, dims.data(), type);
  }
  PyObject* owner = PyCapsule_New(tensor, kTensorCapsule, DeleteTensorCapsule);
  if (owner == nullptr) {
    TF_DeleteTensor(tensor);
    return nullptr;
  }
  PyObject* array = PyArray_SimpleNewFromData(rank, dims.data(), type, TF_TensorData(tensor));
  if (array == nullptr) {
    Py_DECREF(owner);
    return nullptr;
  }
  // The array now keeps the tensor (through the capsule) alive.
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(array), owner) < 0) {
    Py_DECREF(array);
    return nullptr;
  }
  return array;
}

}  // namespace tensorweave

"""tf.py_func and tf.numpy_function: a Python function as a graph op.

    def clip(x):
        return np.clip(x, 0, 1).astype(np.float32)
    y = tf.py_func(clip, [x], tf.float32)

Each call registers `func` under a new token ("pyfunc_N") and adds a PyFunc
(PyFuncStateless when stateful=False) node carrying that token. When the
node runs, its kernel (runtime/kernels/py_func_op.cc) calls back into this
process through the binding (swig/py_func_helper.cc), which takes the GIL
and calls `_py_funcs(token, arrays)`. The registry holds functions weakly;
the graph the op was added to holds them strongly, so a function lives as
long as a graph that can run it, as in TensorFlow.
"""

import functools
import threading
import weakref

import numpy as np

from tensorweave import pywrap_tensorweave
from tensorweave.framework import dtypes, ops
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.gradient_registry import NotDifferentiable
from tensorweave.proto import attr_value_pb2


class FuncRegistry:
    """Tokens ("pyfunc_0", "pyfunc_1", ...) to the Python functions they run."""

    def __init__(self):
        self._lock = threading.Lock()
        self._next_id = 0
        self._funcs = weakref.WeakValueDictionary()

    def insert(self, func):
        """Registers `func` and returns its new token."""
        with self._lock:
            token = f"pyfunc_{self._next_id}"
            self._next_id += 1
        self._funcs[token] = func
        return token

    def remove(self, token):
        self._funcs.pop(token, None)

    def get(self, token, default=None):
        return self._funcs.get(token, default)

    def size(self):
        return len(self._funcs)

    @staticmethod
    def _convert(value):
        """An ndarray for one result. Strings become object arrays of bytes:
        numpy's fixed-width string dtypes would pad with zeros."""
        result = np.asarray(value, order="C")
        if result.dtype.char == "S" and result is not value:
            return np.asarray(value, order="C", dtype=object)
        if result.dtype.char == "U" and result is not value:
            encoded = np.vectorize(lambda text: text.encode("utf8"), otypes=[object])(value)
            return np.asarray(encoded, order="C", dtype=object)
        if result.dtype.char == "U":
            return result.astype(np.bytes_)
        return result

    def __call__(self, token, args):
        """Runs the function of `token` on `args`: what the PyFunc kernel calls."""
        func = self.get(token)
        if func is None:
            raise ValueError(f"Could not find callback with key={token} in the registry.")
        result = func(*args)
        # A bytes result is one string, not a sequence of outputs.
        if isinstance(result, bytes):
            result = [result]
        if isinstance(result, (tuple, list)):
            return [self._convert(item) for item in result]
        return self._convert(result)


_py_funcs = FuncRegistry()
pywrap_tensorweave.TW_SetPyFuncDispatcher(_py_funcs)


def _type_list(types):
    """A list(type) attr, set even when empty."""
    attr = attr_value_pb2.AttrValue()
    attr.list.SetInParent()
    attr.list.type.extend(t.as_datatype_enum for t in types)
    return attr


def _create(graph, op_type, inputs, attrs, name):
    with ops.name_scope(name, op_type, inputs) as scope:
        return graph.create_op(op_type, [inputs], attrs=attrs, name=scope)


def _internal_py_func(func, inp, Tout, stateful, name):
    if not callable(func):  # TensorFlow's error type here is ValueError
        raise ValueError(  # noqa: TRY004
            f"Expected func to be callable. Received func={func} of type {type(func)}."
        )
    is_list_or_tuple = isinstance(Tout, (list, tuple))
    output_types = [dtypes.as_dtype(t) for t in (Tout if is_list_or_tuple else [Tout])]
    inputs = [ops.convert_to_tensor(value) for value in inp]
    graph = ops._graph_of(inputs) or ops.get_default_graph()
    token = _py_funcs.insert(func)
    # The graph keeps the function alive; the registry only refers to it.
    if not hasattr(graph, "_py_funcs_used_in_graph"):
        graph._py_funcs_used_in_graph = []
    graph._py_funcs_used_in_graph.append(func)
    attrs = {
        "token": token,
        "Tin": _type_list(t.dtype.base_dtype for t in inputs),
        "Tout": _type_list(output_types),
    }
    if stateful:
        op = _create(graph, "PyFunc", inputs, attrs, name)
    else:
        op = _create(graph, "PyFuncStateless", inputs, attrs, name)
    if not output_types:
        return op
    return list(op.outputs) if is_list_or_tuple else op.outputs[0]


@tf_export("py_func")
def py_func(func, inp, Tout, stateful=True, name=None):
    """Wraps `func`, which takes and returns numpy arrays, as an op.

    func: called with one ndarray per tensor of `inp` (a numpy scalar for a
      scalar, bytes for a string scalar); returns an ndarray or a list of
      them, one per type of `Tout`.
    Tout: a dtype (the op's one output is returned) or a list of dtypes (a
      list of outputs; the op itself when the list is empty).
    stateful: False lets the runtime treat `func` as a pure function.
    """
    return _internal_py_func(func, inp, Tout, stateful, name)


@tf_export("numpy_function")
def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):
    """tf.py_func under its TensorFlow 2.x name. Without `func` it is a
    decorator: `@tf.numpy_function(Tout=tf.float32)` makes the function
    build the op when called on tensors."""
    if func is None:
        if inp is not None:
            raise TypeError("tf.numpy_function: a decorator takes no inp")

        def decorator(wrapped):
            @functools.wraps(wrapped)
            def call(*args):
                return _internal_py_func(wrapped, list(args), Tout, stateful, name)

            return call

        return decorator
    return _internal_py_func(func, inp, Tout, stateful, name)


# TensorFlow gives py_func no gradient: the function is opaque to the graph.
NotDifferentiable("PyFunc")
NotDifferentiable("PyFuncStateless")

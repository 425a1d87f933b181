"""tf.TensorArray: TensorFlow 1.x's graph-mode TensorArray over the TensorArrayV3 ops.

    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, x0).write(1, x1).write(2, x2)
    stacked = ta.stack()                      # [3] + x0's shape

The array lives in the runtime (in the step's container, so it is made anew
by every run). A TensorArray object is a handle plus a `flow`, a float
scalar threaded through every op: each write, scatter, unstack or split
returns a new TensorArray whose flow comes out of that op, and reads take
the flow they are called on as input, which is how the graph orders the
operations on one array. Use the returned object:

    ta = ta.write(0, x)   # not: ta.write(0, x) on its own

As in TensorFlow the element shape is inferred from what is written
(`infer_shape=True`): every element must then have one shape, and reads
and stacks get that static shape; stack() of an array whose element shape
is fully known returns zeros for elements never written.
"""

import contextlib
import logging

import numpy as np

from tensorweave.framework import dtypes, ops, tensor_shape, tensor_util
from tensorweave.framework.api_export import tf_export
from tensorweave.ops import array_ops
from tensorweave.ops.op_builder import make_op

_logger = logging.getLogger(__name__)


def _constant_value(tensor):
    """The numpy value of a Python value or a Const tensor, else None."""
    if not isinstance(tensor, ops.Tensor):
        try:
            value = np.asarray(tensor)
        except (TypeError, ValueError):
            return None
        # Anything else (a Variable, a list of tensors) is not a constant.
        return value if np.issubdtype(value.dtype, np.number) else None
    if tensor.op.type != "Const":
        return None
    return tensor_util.make_ndarray(tensor.op.get_attr("value"))


def _check_dtypes(value, dtype):
    """TensorFlow only logs a mismatch here; the op fails when it runs
    ("TensorArray dtype is float but Op is trying to write dtype int32.")."""
    if value.dtype.base_dtype != dtype:
        _logger.error(
            "Error: Input value %s has dtype %s, but expected dtype %s.",
            value,
            value.dtype.base_dtype.name,
            dtype.name,
        )


def _int_tensor(value, dtype, name):
    return ops.convert_to_tensor(value, dtype=dtype, name=name)


@tf_export("TensorArray")
class TensorArray:
    """A list of tensors of one dtype, written and read by index inside a graph
    (TensorFlow 1.x's tf.TensorArray, graph mode)."""

    def __init__(
        self,
        dtype,
        size=None,
        dynamic_size=None,
        clear_after_read=None,
        tensor_array_name=None,
        handle=None,
        flow=None,
        infer_shape=True,
        element_shape=None,
        colocate_with_first_write_call=True,
        name=None,
    ):
        if handle is not None and tensor_array_name:
            raise ValueError(
                "Cannot provide both `handle` and `tensor_array_name` arguments at the same time."
            )
        if handle is not None and not isinstance(handle, ops.Tensor):
            raise TypeError(
                f"Expected `handle` to be a Tensor, but got `{handle}` of type "
                f"`{type(handle)}` instead."
            )
        if handle is None and size is None:
            raise ValueError("Argument `size` must be provided if handle is not provided.")
        if handle is not None and size is not None:
            raise ValueError(
                "Cannot provide both a `handle` and `size` arguments at the same time."
            )
        if handle is not None and element_shape is not None:
            raise ValueError(
                "Cannot provide both `handle` and `element_shape` arguments at the same time."
            )
        if handle is not None and dynamic_size is not None:
            raise ValueError(
                "Cannot provide both `handle` and `dynamic_size` arguments at the same time."
            )
        if handle is not None and clear_after_read is not None:
            raise ValueError(
                "Cannot provide both `handle` and `clear_after_read` arguments at the same time."
            )
        if clear_after_read is None:
            clear_after_read = True
        self._dynamic_size = bool(dynamic_size)
        self._dtype = dtypes.as_dtype(dtype).base_dtype
        self._colocate_with_first_write_call = colocate_with_first_write_call
        self._colocate_with = [] if colocate_with_first_write_call else None
        # A one-element list shared by every TensorArray of the same array
        # (each write returns a new object), so what one infers all see.
        self._element_shape = [tensor_shape.as_shape(element_shape)]
        self._infer_shape = infer_shape
        self._size = size
        with ops.name_scope(name, "TensorArray", [handle, size, flow]) as scope:
            if handle is not None:
                if flow is None:
                    raise ValueError("flow must not be None if handle is not None.")
                self._handle = handle
                self._flow = flow
                return
            attrs = {
                "dtype": self._dtype,
                "element_shape": self._element_shape[0],
                "identical_element_shapes": bool(infer_shape),
                "dynamic_size": self._dynamic_size,
                "clear_after_read": bool(clear_after_read),
                "tensor_array_name": tensor_array_name or "",
            }
            size = _int_tensor(size, dtypes.int32, "size")

            def create():
                graph = ops.get_default_graph()
                op = graph.create_op("TensorArrayV3", [size], attrs=attrs, name=scope)
                return op.outputs[0], op.outputs[1]

            if colocate_with_first_write_call:
                with ops.device(None), ops.colocate_with(None, ignore_existing=True):
                    self._handle, self._flow = create()
            else:
                self._handle, self._flow = create()

    # --- Properties ------------------------------------------------------

    @property
    def flow(self):
        """The float scalar that orders the ops on this array."""
        return self._flow

    @property
    def dtype(self):
        return self._dtype

    @property
    def handle(self):
        """The DT_RESOURCE handle of the array."""
        return self._handle

    @property
    def dynamic_size(self):
        """True when writes beyond the size grow the array."""
        return self._dynamic_size

    @property
    def element_shape(self):
        """The static shape every element has (as far as known)."""
        return self._element_shape[0]

    def _check_element_shape(self, shape):
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {self.element_shape} ")
        if self._infer_shape:
            self._element_shape[0] = self.element_shape.merge_with(shape)

    @contextlib.contextmanager
    def _maybe_colocate_with(self, value):
        """The first write decides where the array's ops run (with its value)."""
        if not self._colocate_with_first_write_call:
            yield
            return
        if not self._colocate_with:
            self._colocate_with.append(value)
        with ops.colocate_with(self._colocate_with[0]):
            yield

    def _with_flow(self, flow):
        """A TensorArray of the same array whose ops come after `flow`."""
        new = TensorArray(
            dtype=self._dtype,
            handle=self._handle,
            flow=flow,
            infer_shape=self._infer_shape,
            colocate_with_first_write_call=self._colocate_with_first_write_call,
        )
        new._dynamic_size = self._dynamic_size
        new._size = self._size
        new._colocate_with = self._colocate_with
        new._element_shape = self._element_shape  # shared
        return new

    # --- Ops ---------------------------------------------------------------

    def identity(self):
        """The same array, its flow through an Identity (for control dependencies)."""
        return self._with_flow(array_ops.identity(self._flow))

    def grad(self, source, flow=None, name=None):
        """The gradient array of this one for `source` (TensorArrayGradV3)."""
        if flow is None:
            flow = self.flow
        with (
            ops.name_scope(name, "TensorArrayGrad", [self._handle]),
            ops.colocate_with(self._handle),
        ):
            op = ops.get_default_graph().create_op(
                "TensorArrayGradV3",
                [self._handle, flow],
                attrs={"source": source},
                name="TensorArrayGradV3",  # inside the scope, as TensorFlow names it
            )
            g_handle = op.outputs[0]
            with ops.control_dependencies([g_handle]):
                flow = array_ops.identity(flow, name="gradient_flow")
            g = TensorArray(
                dtype=self._dtype,
                handle=g_handle,
                flow=flow,
                infer_shape=self._infer_shape,
                colocate_with_first_write_call=False,
            )
            g._element_shape = self._element_shape
            return g

    def read(self, index, name=None):
        """The element at `index`."""
        with ops.name_scope(name, "TensorArrayReadV3", [self._handle, index]) as scope:
            index = _int_tensor(index, dtypes.int32, "index")
            value = make_op(
                "TensorArrayReadV3",
                [self._handle, index, self._flow],
                {"dtype": self._dtype},
                scope,
            )
        value.set_shape(self.element_shape)
        return value

    def write(self, index, value, name=None):
        """A TensorArray with `value` written at `index`."""
        with ops.name_scope(name, "TensorArrayWrite", [self._handle, index, value]):
            value = ops.convert_to_tensor(value, dtype=_preferred(value, self._dtype), name="value")
            _check_dtypes(value, self._dtype)
            self._check_element_shape(value.shape)
            index = _int_tensor(index, dtypes.int32, "index")
            with self._maybe_colocate_with(value):
                flow_out = make_op(
                    "TensorArrayWriteV3",
                    [self._handle, index, value, self._flow],
                    {"T": value.dtype.base_dtype},
                    "TensorArrayWriteV3",  # inside the scope, as TensorFlow names it
                )
            return self._with_flow(flow_out)

    def stack(self, name=None):
        """Every element, stacked along a new first dimension."""
        with (
            ops.colocate_with(self._handle),
            ops.name_scope(name, "TensorArrayStack", [self._handle]),
        ):
            value = self.gather(array_ops.range(0, self.size()), name=name)
            if self.element_shape and not self._dynamic_size and self._size is not None:
                size = _constant_value(self._size)
                dim0 = None if size is None or np.ndim(size) != 0 else int(size)
                value.set_shape(tensor_shape.TensorShape([dim0]).concatenate(self.element_shape))
            return value

    def gather(self, indices, name=None):
        """The elements at `indices`, stacked along a new first dimension."""
        with ops.name_scope(name, "TensorArrayGatherV3", [self._handle, indices]) as scope:
            indices = _int_tensor(indices, dtypes.int32, "indices")
            value = make_op(
                "TensorArrayGatherV3",
                [self._handle, indices, self._flow],
                {"dtype": self._dtype, "element_shape": self.element_shape},
                scope,
            )
        if self.element_shape:
            value.set_shape(tensor_shape.TensorShape([None]).concatenate(self.element_shape))
        return value

    def concat(self, name=None):
        """Every element concatenated along its first dimension."""
        element_shape = self.element_shape
        except0 = (
            tensor_shape.unknown_shape()
            if element_shape.ndims is None or element_shape.ndims == 0
            else tensor_shape.TensorShape(element_shape.dims[1:])
        )
        with ops.name_scope(name, "TensorArrayConcatV3", [self._handle]) as scope:
            op = ops.get_default_graph().create_op(
                "TensorArrayConcatV3",
                [self._handle, self._flow],
                attrs={"dtype": self._dtype, "element_shape_except0": except0},
                name=scope,
            )
        value = op.outputs[0]
        if element_shape and element_shape.ndims:
            dim0 = None
            if self._infer_shape:
                size = _constant_value(self.size())
                first = element_shape.dims[0]
                first = first.value if hasattr(first, "value") else first
                if size is not None and first is not None:
                    dim0 = int(size) * first
            value.set_shape(tensor_shape.TensorShape([dim0]).concatenate(except0))
        return value

    def unstack(self, value, name=None):
        """A TensorArray holding value[i] at index i."""
        with ops.name_scope(name, "TensorArrayUnstack", [self._handle, value]):
            value = ops.convert_to_tensor(value, dtype=_preferred(value, self._dtype), name="value")
            num_elements = array_ops.shape(value)[0]
            return self.scatter(indices=array_ops.range(0, num_elements), value=value, name=name)

    def scatter(self, indices, value, name=None):
        """A TensorArray holding value[i] at indices[i]."""
        with ops.name_scope(name, "TensorArrayScatter", [self._handle, value, indices]):
            value = ops.convert_to_tensor(value, dtype=_preferred(value, self._dtype), name="value")
            _check_dtypes(value, self._dtype)
            if value.shape.ndims is not None and value.shape.ndims >= 1:
                self._check_element_shape(tensor_shape.TensorShape(value.shape.dims[1:]))
            indices = _int_tensor(indices, dtypes.int32, "indices")
            with self._maybe_colocate_with(value):
                flow_out = make_op(
                    "TensorArrayScatterV3",
                    [self._handle, indices, value, self._flow],
                    {"T": value.dtype.base_dtype},
                    "TensorArrayScatterV3",  # inside the scope, as TensorFlow names it
                )
            return self._with_flow(flow_out)

    def split(self, value, lengths, name=None):
        """A TensorArray holding the pieces of `value` (along dimension 0) of `lengths`."""
        with ops.name_scope(name, "TensorArraySplit", [self._handle, value, lengths]):
            value = ops.convert_to_tensor(value, dtype=self._dtype, name="value")
            with self._maybe_colocate_with(value):
                lengths_64 = array_ops.cast(lengths, dtypes.int64)
                clengths = _constant_value(lengths)
                if value.shape.ndims is not None and clengths is not None:
                    clengths = np.asarray(clengths)
                    if clengths.shape and clengths.size and clengths.max() == clengths.min():
                        self._check_element_shape(
                            tensor_shape.TensorShape([int(clengths[0])]).concatenate(
                                tensor_shape.TensorShape(value.shape.dims[1:])
                            )
                        )
                flow_out = make_op(
                    "TensorArraySplitV3",
                    [self._handle, value, lengths_64, self._flow],
                    {"T": value.dtype.base_dtype},
                    "TensorArraySplitV3",  # inside the scope, as TensorFlow names it
                )
            return self._with_flow(flow_out)

    def size(self, name=None):
        """The number of elements (a constant unless the array is dynamic)."""
        if not self._dynamic_size and self._size is not None:
            return ops.convert_to_tensor(self._size, dtype=dtypes.int32)
        with ops.name_scope(name, "TensorArraySizeV3", [self._handle]) as scope:
            return make_op("TensorArraySizeV3", [self._handle, self.flow], {}, scope)

    def close(self, name=None):
        """Frees the elements; the array cannot be used afterwards."""
        with ops.name_scope(name, "TensorArrayCloseV3", [self._handle]) as scope:
            return make_op("TensorArrayCloseV3", [self._handle], {}, scope)


def _preferred(value, dtype):
    """The dtype a Python value converts to: the array's (as TensorFlow's
    preferred_dtype); a Tensor keeps its own, so a mismatch is reported."""
    return None if isinstance(value, ops.Tensor) else dtype


def _register_as_control_flow_value():
    """A TensorArray crosses tf.cond and tf.while_loop as its flow tensor
    and comes back as the same array with the new flow, as in TensorFlow.
    The control-flow modules are a separate piece (issue 9 part 3); until
    they are present there is nothing to register with."""
    try:
        from tensorweave.ops import control_flow_context
    except ImportError:
        return
    control_flow_context.register_flow_type(
        TensorArray, lambda ta: ta.flow, lambda ta, flow: ta._with_flow(flow)
    )


_register_as_control_flow_value()

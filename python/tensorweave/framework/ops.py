"""Graph, Operation and Tensor: the Python side of a TF_Graph.

The Python Graph owns a TF_Graph and creates every op through the C API
(TF_NewOperation → TF_AddInput/attrs → TF_FinishOperation), so validation
and shape inference happen once, in C++. The Python objects add what only
the front end needs: name scopes, control-dependency and device scopes,
collections, and stable Python handles for operations and tensors.
"""

import contextlib
import re
import threading

from tensorweave import pywrap_tensorweave as c_api
from tensorweave.framework import attr_value, dtypes, errors, tensor_shape
from tensorweave.framework import device as device_lib

# TensorFlow's name rules, used with fullmatch: `$` alone would also accept
# a name ending in a newline.
_VALID_SCOPE_NAME = re.compile(r"[A-Za-z0-9_.\-/>]*")
_VALID_OP_NAME = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_.\-/>]*")


class Tensor:
    """One output of an Operation: a symbolic value computed by `Session.run`."""

    # Numpy must defer to our reflected operators (np_array * tensor).
    __array_priority__ = 100

    __slots__ = ("__weakref__", "_dtype", "_op", "_shape", "_tf_output", "_value_index")

    def __init__(self, op, value_index, dtype):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = None
        self._tf_output = (op._c_op, value_index)

    @property
    def op(self):
        return self._op

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def graph(self):
        return self._op._graph

    @property
    def name(self):
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self):
        return self._op.device

    @property
    def shape(self):
        """The static shape C++ shape inference computed (TF_GraphGetTensorShape)."""
        if self._shape is None:
            dims = c_api.TW_GraphGetTensorShape(self._op._graph._c_graph, self._tf_output)
            self._shape = tensor_shape.TensorShape(
                None if dims is None else [None if d < 0 else d for d in dims]
            )
        return self._shape

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """Narrows the static shape; ValueError when it contradicts what is known."""
        merged = self.shape.merge_with(shape)
        c_api.TF_GraphSetTensorShape(
            self._op._graph._c_graph, self._tf_output, merged._as_attr_dims()
        )
        self._shape = merged

    def consumers(self):
        return [op for op in self._op._graph.get_operations() if any(t is self for t in op.inputs)]

    def eval(self, feed_dict=None, session=None):
        """The value of this tensor in `session` (default: the default session)."""
        return _run_using_default_session(self, feed_dict, self.graph, session)

    def _as_tf_output(self):
        return self._tf_output

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self.shape} dtype={self._dtype.name}>"

    def __str__(self):
        return (
            f'Tensor("{self.name}"'
            + (f", shape={self.shape}" if self.shape.ndims is not None else "")
            + f", dtype={self._dtype.name})"
        )

    def __bool__(self):
        raise TypeError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. "
            "Use `if t is not None:` instead of `if t:` to test if a tensor is "
            "defined, and use TensorFlow ops such as tf.cond to execute "
            "subgraphs conditioned on the value of a tensor."
        )

    def __iter__(self):
        raise TypeError("'Tensor' object is not iterable.")

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(
            f"Cannot convert a symbolic Tensor ({self.name}) to a numpy array."
        )

    def __len__(self):
        raise TypeError(
            "len is not well defined for symbolic Tensors. "
            f"({self.name}) Please call `x.shape` rather than `len(x)` "
            "for shape information."
        )

    # Operators are attached by tensorweave.ops.math_ops (which owns the ops).
    @classmethod
    def _override_operator(cls, operator, func):
        setattr(cls, operator, func)


class Operation:
    """A node of the graph; created by Graph.create_op or by import."""

    def __init__(self, graph, c_op):
        self._graph = graph
        self._c_op = c_op
        self._name = c_api.TF_OperationName(c_op)
        self._type = c_api.TF_OperationOpType(c_op)
        # One call for all output types: an op is wrapped once per creation.
        self._outputs = [
            Tensor(self, i, dtypes.as_dtype(dtype))
            for i, dtype in enumerate(c_api.TW_OperationOutputTypes(c_op))
        ]
        self._inputs = None
        self._control_inputs = None
        self._gradient_op_type = None  # set by Graph.gradient_override_map
        # The tf.cond branch or tf.while_loop body the op was built in (None
        # at the top level); tensorweave.ops.control_flow_context.
        self._control_flow_context = None

    @property
    def name(self):
        return self._name

    @property
    def type(self):
        return self._type

    @property
    def graph(self):
        return self._graph

    @property
    def outputs(self):
        # The list itself, as in TensorFlow: callers index it per output
        # (gradients, Split with 100,000 pieces), so a copy per call would
        # make those loops quadratic.
        return self._outputs

    def values(self):
        return tuple(self._outputs)

    @property
    def inputs(self):
        # Inputs never change once the op exists, so they are read from C once.
        if self._inputs is None:
            by_name = self._graph._nodes_by_name
            self._inputs = tuple(
                by_name[name]._outputs[index]
                for name, index in c_api.TW_OperationInputs(self._c_op)
            )
        return self._inputs

    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, context):
        self._control_flow_context = context

    def _update_input(self, index, tensor):
        """Input `index` now reads `tensor` (TF_UpdateEdge): how a while
        loop's Merge gets its NextIteration back edge."""
        self._graph._own(tensor)
        with self._graph._lock:
            try:
                c_api.TF_UpdateEdge(self._graph._c_graph, tensor._tf_output, (self._c_op, index))
            except errors.InvalidArgumentError as error:
                raise ValueError(error.message) from None
            self._inputs = None
            for output in self._outputs:
                output._shape = None

    @property
    def control_inputs(self):
        if self._control_inputs is None:
            by_name = self._graph._nodes_by_name
            self._control_inputs = [
                by_name[name] for name in c_api.TW_OperationControlInputs(self._c_op)
            ]
        return list(self._control_inputs)

    @property
    def device(self):
        return c_api.TF_OperationDevice(self._c_op)

    @property
    def node_def(self):
        from tensorweave.proto import node_def_pb2

        node_def = node_def_pb2.NodeDef()
        node_def.ParseFromString(c_api.TW_OperationToNodeDef(self._c_op))
        return node_def

    def colocation_groups(self):
        """["loc:@<op>", ...]: the ops this one must share a device with (its
        `_class` attr), else itself."""
        try:
            groups = [g.decode() if isinstance(g, bytes) else g for g in self.get_attr("_class")]
        except ValueError:
            groups = []
        groups = [g for g in groups if g.startswith("loc:@")]
        return groups or [f"loc:@{self.name}"]

    def get_attr(self, name):
        """An attr's value (bytes, int, float, bool, DType, shape/tensor proto, list)."""
        from tensorweave.proto import attr_value_pb2

        try:
            serialized = c_api.TW_OperationGetAttrValueProto(self._c_op, name)
        except errors.OpError as error:
            raise ValueError(str(error)) from None
        attr = attr_value_pb2.AttrValue()
        attr.ParseFromString(serialized)
        return attr_value.from_attr_value(attr)

    def _set_attr(self, attr_name, attr_value):
        """Replaces (or adds) attr `attr_name` with the AttrValue proto
        `attr_value`, as TensorFlow's private Operation._set_attr does
        (TF_SetAttr). A value the op's OpDef or its wired inputs and outputs
        do not accept raises InvalidArgumentError and changes nothing."""
        with self._graph._lock:
            c_api.TW_SetAttrValueProto(
                self._graph._c_graph, self._c_op, attr_name, attr_value.SerializeToString()
            )

    def _clear_attr(self, attr_name):
        """Removes attr `attr_name` (TF_ClearAttr); one the OpDef gives a
        default goes back to it."""
        with self._graph._lock:
            c_api.TF_ClearAttr(self._graph._c_graph, self._c_op, attr_name)

    def run(self, feed_dict=None, session=None):
        """Runs this operation in `session` (default: the default session)."""
        _run_using_default_session(self, feed_dict, self.graph, session)

    def __repr__(self):
        return f"<tf.Operation '{self._name}' type={self._type}>"

    def __str__(self):
        return str(self.node_def)


def _run_using_default_session(fetch, feed_dict, graph, session):
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError(
                "Cannot evaluate tensor using `eval()`: No default session is "
                "registered. Use `with sess.as_default()` or pass an explicit "
                "session to `eval(session=sess)`"
            )
    if session.graph is not graph:
        raise ValueError(
            "Cannot use the given session to evaluate tensor: the tensor's "
            "graph is different from the session's graph."
        )
    return session.run(fetch, feed_dict)


class GraphKeys:
    """Standard collection names."""

    GLOBAL_VARIABLES = "variables"
    VARIABLES = GLOBAL_VARIABLES
    LOCAL_VARIABLES = "local_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MODEL_VARIABLES = "model_variables"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SUMMARIES = "summaries"
    TRAIN_OP = "train_op"
    INIT_OP = "init_op"
    GLOBAL_STEP = "global_step"
    # The Scaffold's parts and the default Saver (tf.train.MonitoredSession).
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    LOCAL_INIT_OP = "local_init_op"
    SUMMARY_OP = "summary_op"
    SAVERS = "savers"


class _ControlDependencies:
    """One `control_dependencies` scope; remembers the ops created inside it so
    an op whose input already depends on the scope gets no redundant edge."""

    def __init__(self, graph, control_inputs):
        self._graph = graph
        self._control_inputs = control_inputs  # None clears outer scopes
        self._seen = set()
        self._saved_stack = None

    def __enter__(self):
        if self._control_inputs is None:
            # As in TensorFlow, None also leaves any tf.cond / tf.while_loop
            # context: the ops made inside belong to the top level.
            self._saved_stack = self._graph._control_dependencies_stack
            self._graph._control_dependencies_stack = []
            self._saved_context = self._graph._control_flow_context
            self._graph._control_flow_context = None
        else:
            self._graph._control_dependencies_stack.append(self)

    def __exit__(self, *unused):
        if self._control_inputs is None:
            self._graph._control_dependencies_stack = self._saved_stack
            self._graph._control_flow_context = self._saved_context
        else:
            self._graph._control_dependencies_stack.remove(self)


class Graph:
    """A dataflow graph: operations and the tensors flowing between them."""

    def __init__(self):
        self._c_graph = c_api.TF_NewGraph()
        # As TensorFlow's Python: ops of a loaded library without a shape
        # function are accepted, their outputs of unknown shape.
        c_api.TF_SetRequireShapeInferenceFns(self._c_graph, False)
        self._lock = threading.RLock()
        self._nodes_by_name = {}
        self._operations = []
        self._names_in_use = {}
        self._collections = {}
        self._finalized = False
        self._scopes = threading.local()
        self._gradient_override_map = {}
        self._unfetchable_ops = set()
        self._unfeedable_tensors = set()
        self._container = ""
        self._control_flow_context = None  # innermost tf.cond / tf.while_loop being built
        self.seed = None

    def __del__(self):
        # The C API defers the delete while sessions still use the graph.
        c_graph, self._c_graph = getattr(self, "_c_graph", None), None
        if c_graph is not None and c_api is not None and c_api.TF_DeleteGraph is not None:
            c_api.TF_DeleteGraph(c_graph)

    # Scopes are per thread, as in TensorFlow: two threads building one graph
    # do not see each other's name or device scopes.
    @property
    def _name_stack(self):
        return getattr(self._scopes, "name_stack", "")

    @_name_stack.setter
    def _name_stack(self, value):
        self._scopes.name_stack = value

    @property
    def _control_dependencies_stack(self):
        if not hasattr(self._scopes, "control_dependencies"):
            self._scopes.control_dependencies = []
        return self._scopes.control_dependencies

    @_control_dependencies_stack.setter
    def _control_dependencies_stack(self, value):
        self._scopes.control_dependencies = value

    @property
    def _device_stack(self):
        if not hasattr(self._scopes, "devices"):
            self._scopes.devices = []
        return self._scopes.devices

    @_device_stack.setter
    def _device_stack(self, value):
        self._scopes.devices = value

    @property
    def _colocation_stack(self):
        if not hasattr(self._scopes, "colocation"):
            self._scopes.colocation = []
        return self._scopes.colocation

    @_colocation_stack.setter
    def _colocation_stack(self, value):
        self._scopes.colocation = value

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        """Ops created inside share `op`'s device, as in TensorFlow: they get
        a `_class` attr "loc:@<op>" (which the placer honours) and `op`'s
        device; the device scopes opened outside no longer apply.
        `ignore_existing` drops the outer colocations; `op` None with it
        clears them all."""
        if op is None and not ignore_existing:
            raise ValueError(
                "Trying to reset colocation (op is None) but ignore_existing is not True"
            )
        if op is not None:
            if hasattr(op, "_as_graph_element") and not isinstance(op, (Tensor, Operation)):
                op = op._as_graph_element()
            if isinstance(op, Tensor):
                op = op.op
            if not isinstance(op, Operation):
                raise TypeError(f"colocate_with expects an Operation, Tensor or Variable: {op!r}")
        saved_devices, saved_colocation = self._device_stack, self._colocation_stack
        self._device_stack = []
        self._colocation_stack = ([] if ignore_existing else list(saved_colocation)) + (
            [op] if op is not None else []
        )
        try:
            yield
        finally:
            self._device_stack, self._colocation_stack = saved_devices, saved_colocation

    @contextlib.contextmanager
    def container(self, container_name):
        """Stateful ops created inside (variables) keep their state in the
        resource container `container_name`, as in TensorFlow: their
        `container` attr is set unless given; Session.reset(target,
        [container_name]) clears just that container."""
        saved = self._container
        self._container = container_name
        try:
            yield self._container
        finally:
            self._container = saved

    # --- building -------------------------------------------------------------

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """Ops of the mapped types created inside differentiate with the gradient
        registered under the mapped name: {"Square": "MySquareGrad"}."""
        if not isinstance(op_type_map, dict):
            raise TypeError("op_type_map must be a dictionary mapping strings to strings")
        for op_type, override in op_type_map.items():
            if not isinstance(op_type, str) or not isinstance(override, str):
                raise TypeError("op_type_map must be a dictionary mapping strings to strings")
        saved = self._gradient_override_map
        self._gradient_override_map = {**saved, **op_type_map}
        try:
            yield
        finally:
            self._gradient_override_map = saved

    @property
    def finalized(self):
        return self._finalized

    def finalize(self):
        """Makes the graph read-only: creating an op afterwards is a RuntimeError."""
        self._finalized = True

    def _unsafe_unfinalize(self):
        self._finalized = False

    @property
    def version(self):
        return len(self._operations)

    def as_default(self):
        return _default_graph_stack.get_controller(self)

    def unique_name(self, name, mark_as_used=True):
        """`name` under the current name scope, with `_N` appended if taken."""
        if self._name_stack:
            name = f"{self._name_stack}/{name}"
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{count}"
                count += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{count - 1}"
        return name

    def get_name_scope(self):
        return self._name_stack

    def name_scope(self, name):
        """Yields "scope/"; a name ending in "/" reenters that exact scope and
        None or "" goes back to the top level."""
        return _NameScope(self, name, make_default=False)

    def control_dependencies(self, control_inputs):
        """Ops created inside run after `control_inputs` (None clears outer scopes)."""
        if control_inputs is None:
            return _ControlDependencies(self, None)
        ops = []
        for item in control_inputs:
            if hasattr(item, "_as_graph_element") and not isinstance(item, (Tensor, Operation)):
                item = item._as_graph_element()
            if isinstance(item, Tensor):
                item = item.op
            if not isinstance(item, Operation):
                raise TypeError(f"Control input must be Operation or Tensor: {item!r}")
            if item.graph is not self:
                raise ValueError(f"Control input {item.name} must be from the same graph.")
            ops.append(item)
        return _ControlDependencies(self, ops)

    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Ops created inside are placed on this device (None clears outer scopes)."""
        stack = self._device_stack
        stack.append(device_name_or_function)
        try:
            yield
        finally:
            stack.pop()

    def _get_control_flow_context(self):
        return self._control_flow_context

    def _set_control_flow_context(self, context):
        self._control_flow_context = context

    def _device_for(self, op_type, name):
        """TensorFlow's order: the innermost scope decides first. A device
        string fills in the fields inner scopes left unset; a device function
        sees the op with the device inner scopes gave it and returns its new
        device (so it may keep, merge or override them); None ends the search."""
        stack = self._device_stack
        if not stack:
            return ""  # most ops: no device scope, nothing to ask
        pending = _PendingOp(op_type, name)
        for entry in reversed(stack):
            if entry is None:
                break
            if callable(entry):
                pending.device = device_lib.canonical(entry(pending) or "")
            else:
                pending.device = device_lib.merge(entry, pending.device)
        return pending.device

    def _control_inputs_for(self, input_ops):
        found = []
        for scope in self._control_dependencies_stack:
            if any(op in scope._seen for op in input_ops):
                continue  # an input already runs after this scope's ops
            for op in scope._control_inputs:
                if op not in found and op not in input_ops:
                    found.append(op)
        return found

    def create_op(
        self,
        op_type,
        inputs,
        dtypes_unused=None,
        input_types=None,
        name=None,
        attrs=None,
        op_def=None,
        compute_shapes=True,
        compute_device=True,
        control_inputs=(),
    ):
        """Creates an op through the C API. An entry of `inputs` that is a list
        is a list input (e.g. AddN's); `attrs` maps names to Python values."""
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        name = op_type if name is None else name
        name = name[:-1] if name.endswith("/") else self.unique_name(name)
        if not _VALID_OP_NAME.fullmatch(name):
            raise ValueError(f"'{name}' is not a valid node name")
        input_ops = [
            self._own(t).op
            for item in inputs
            for t in (item if isinstance(item, (list, tuple)) else [item])
        ]
        with self._lock:
            controls = list(control_inputs) + self._control_inputs_for(input_ops)
            context = self._control_flow_context
            if context is not None or any(op._control_flow_context is not None for op in input_ops):
                # tf.cond / tf.while_loop (ops/control_flow_context.py): values
                # from outside a context come in through its Switch or Enter,
                # and a value from inside a loop is refused outside it.
                from tensorweave.ops import control_flow_context

                inputs, controls = control_flow_context.prepare_op(
                    context, op_type, name, inputs, controls
                )
            c_inputs = [
                [t._tf_output for t in item] if isinstance(item, (list, tuple)) else item._tf_output
                for item in inputs
            ]
            device = self._device_for(op_type, name) if compute_device else ""
            if self._container and attrs and "container" in attrs and not attrs["container"]:
                attrs = dict(attrs, container=self._container)
            if self._colocation_stack:
                groups = sorted({g for c in self._colocation_stack for g in c.colocation_groups()})
                attrs = dict(attrs or {}, _class=groups)
                device = next((c.device for c in self._colocation_stack if c.device), device)
            serialized = [
                (attr_name, attr_value.serialize(value))
                for attr_name, value in (attrs or {}).items()
            ]
            try:
                c_op = c_api.TW_CreateOperation(
                    self._c_graph,
                    op_type,
                    name,
                    c_inputs,
                    [op._c_op for op in controls],
                    device,
                    serialized,
                )
            except errors.InvalidArgumentError as error:
                # Building is not running: TensorFlow reports bad graphs as ValueError.
                raise ValueError(error.message) from None
            op = self._add_op(c_op)
            if context is not None:
                op._control_flow_context = context
                context._add_op(op)
            # Kept per op, as TensorFlow's _gradient_op_type attr: the mapping
            # applies to ops created inside the scope, whenever they are differentiated.
            if op_type in self._gradient_override_map:
                op._gradient_op_type = self._gradient_override_map[op_type]
            for scope in self._control_dependencies_stack:
                scope._seen.add(op)
            return op

    def _own(self, tensor):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Expected a Tensor as op input, got {tensor!r}")
        if tensor.graph is not self:
            raise ValueError(
                f"Tensor {tensor.name} must be from the same graph as the op it feeds."
            )
        return tensor

    def _add_op(self, c_op):
        op = Operation(self, c_op)
        self._nodes_by_name[op.name] = op
        self._operations.append(op)
        return op

    def _add_ops_created_in_c(self):
        """Wraps ops the C API added behind our back (import_graph_def)."""
        with self._lock:
            # Every wrapper is made before any is registered, so a failure
            # leaves the Python side as it was.
            added = []
            for name in c_api.TW_GraphOperationNames(self._c_graph):
                if name not in self._nodes_by_name:
                    c_op = c_api.TF_GraphOperationByName(self._c_graph, name)
                    if c_op is None:  # the C graph names nodes we cannot look up
                        raise ValueError(f"Imported operation {name!r} cannot be found by name")
                    added.append(Operation(self, c_op))
            for op in added:
                self._nodes_by_name[op.name] = op
                self._operations.append(op)
                self._names_in_use.setdefault(op.name.lower(), 1)
            return added

    # --- lookup ---------------------------------------------------------------

    def get_operations(self):
        return list(self._operations)

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name)}.")
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name)}.")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        """The Tensor or Operation `obj` (an object or a name) refers to."""
        if hasattr(obj, "_as_graph_element") and not isinstance(obj, (Tensor, Operation)):
            obj = obj._as_graph_element()
        kinds = " or ".join(
            k for k, ok in (("Tensor", allow_tensor), ("Operation", allow_operation)) if ok
        )
        if isinstance(obj, str):
            return self._element_by_name(obj, allow_tensor, allow_operation, kinds)
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj!r} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj!r} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {kinds}.")

    def _element_by_name(self, name, allow_tensor, allow_operation, kinds):
        if ":" in name and allow_tensor:
            op_name, _, index_text = name.rpartition(":")
            try:
                index = int(index_text)
            except ValueError:
                raise ValueError(
                    f"The name {name!r} looks a like a Tensor name, but is not a "
                    "valid one. Tensor names must be of the form "
                    '"<op_name>:<output_index>".'
                ) from None
            op = self._nodes_by_name.get(op_name)
            if op is None:
                raise KeyError(
                    f"The name {name!r} refers to a Tensor which does not exist. "
                    f"The operation, {op_name!r}, does not exist in the graph."
                )
            if not 0 <= index < len(op._outputs):
                raise KeyError(
                    f"The name {name!r} refers to a Tensor which does not exist. "
                    f"The operation, {op_name!r}, exists but only has "
                    f"{len(op._outputs)} outputs."
                )
            return op._outputs[index]
        if ":" in name:
            raise ValueError(f"Name {name!r} appears to refer to a Tensor, not a {kinds}.")
        if not allow_operation:
            if name in self._nodes_by_name:
                raise ValueError(
                    f"The name {name!r} refers to an Operation, not a {kinds}. "
                    "Tensor names must be of the form "
                    '"<op_name>:<output_index>".'
                )
            raise ValueError(
                f"The name {name!r} looks like an (invalid) Operation name, not a {kinds}."
            )
        op = self._nodes_by_name.get(name)
        if op is None:
            raise KeyError(f"The name {name!r} refers to an Operation not in the graph.")
        return op

    def as_graph_def(self, from_version=None, add_shapes=False):
        """The graph as a GraphDef message (serialized by the C API). With
        add_shapes, each node with outputs gets TensorFlow's `_output_shapes`
        attr (TensorBoard's graph view labels edges with it)."""
        from tensorweave.proto import graph_pb2

        graph_def = graph_pb2.GraphDef()
        graph_def.ParseFromString(c_api.TW_GraphToGraphDef(self._c_graph))
        if add_shapes:
            for node in graph_def.node:
                op = self._nodes_by_name.get(node.name)
                if op is not None and op.outputs:
                    shapes = node.attr["_output_shapes"].list.shape
                    for output in op.outputs:
                        shapes.add().CopyFrom(output.get_shape().as_proto())
        return graph_def

    @property
    def graph_def_versions(self):
        return self.as_graph_def().versions

    # --- collections ----------------------------------------------------------

    # --- what a session may fetch and feed ----------------------------------

    def prevent_fetching(self, op):
        """`op` may not be fetched (an op inside a cond branch or loop body,
        which runs once per iteration or not at all)."""
        self._unfetchable_ops.add(op)

    def is_fetchable(self, tensor_or_op):
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self._unfetchable_ops

    def prevent_feeding(self, tensor):
        """`tensor` may not be fed (a value inside a loop body)."""
        self._unfeedable_tensors.add(tensor)

    def is_feedable(self, tensor):
        return tensor not in self._unfeedable_tensors

    def add_to_collection(self, name, value):
        with self._lock:
            self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        for name in [names] if isinstance(names, str) else set(names):
            self.add_to_collection(name, value)

    def get_collection_ref(self, name):
        with self._lock:
            return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None):
        """A copy of the collection; with `scope`, the items whose name matches it."""
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [item for item in items if hasattr(item, "name") and pattern.match(item.name)]

    def get_all_collection_keys(self):
        return [key for key, items in self._collections.items() if isinstance(key, str)]

    def clear_collection(self, name):
        with self._lock:
            self._collections.pop(name, None)


class _PendingOp:
    """What a device function sees: the op is not created until its device is
    known. Device functions written for TensorFlow read `op.type`, `op.name`,
    `op.device` or `op.node_def` (its `op`, `name` and `device` fields)."""

    def __init__(self, op_type, name):
        self.type = op_type
        self.name = name
        self.device = ""

    @property
    def node_def(self):
        from tensorweave.proto import node_def_pb2

        return node_def_pb2.NodeDef(name=self.name, op=self.type, device=self.device)


# --- default graph and default session ----------------------------------------


class _DefaultStack(threading.local):
    """A per-thread stack of defaults entered with `with x.as_default():`."""

    def __init__(self):
        super().__init__()
        self.stack = []

    def get_default(self):
        return self.stack[-1] if self.stack else None

    @contextlib.contextmanager
    def get_controller(self, default):
        self.push(default)
        try:
            yield default
        finally:
            self.remove(default)

    def push(self, default):
        self.stack.append(default)

    def remove(self, default):
        # Entries may be removed out of order by a failing nested block.
        if self.stack and self.stack[-1] is default:
            self.stack.pop()
        elif default in self.stack:
            self.stack.remove(default)


class _DefaultGraphStack(_DefaultStack):
    """The graph stack falls back to one process-wide graph, shared by threads."""

    _global_graph = None
    _global_lock = threading.Lock()

    def get_default(self):
        if self.stack:
            return self.stack[-1]
        with self._global_lock:
            if _DefaultGraphStack._global_graph is None:
                _DefaultGraphStack._global_graph = Graph()
            return _DefaultGraphStack._global_graph

    def reset(self):
        if self.stack:
            raise AssertionError(
                "Do not use tf.reset_default_graph() to clear nested graphs. "
                "If you need a cleared graph, exit the nesting and create a "
                "new graph."
            )
        _DefaultGraphStack._global_graph = None


_default_graph_stack = _DefaultGraphStack()
_default_session_stack = _DefaultStack()


def get_default_graph():
    return _default_graph_stack.get_default()


def reset_default_graph():
    """Replaces the global default graph with a new one."""
    _default_graph_stack.reset()


def get_default_session():
    return _default_session_stack.get_default()


def default_session(session):
    return _default_session_stack.get_controller(session)


# --- conversion ----------------------------------------------------------------

_conversion_functions = []  # (type, function(value, dtype, name, as_ref))


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """Teaches convert_to_tensor about `base_type` (Variable registers itself)."""
    _conversion_functions.append((base_type, conversion_func))


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, as_ref=False):
    """A Tensor for `value`: Tensors pass through (dtype checked), registered types
    convert themselves, and Python/numpy values become a Const."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and not dtype.is_compatible_with(value.dtype):
            raise ValueError(
                f"Tensor conversion requested dtype {dtype.name} for Tensor with "
                f"dtype {value.dtype.name}: {value!r}"
            )
        return value
    for base_type, function in _conversion_functions:
        if isinstance(value, base_type):
            return function(value, dtype=dtype, name=name, as_ref=as_ref)
    if isinstance(value, Operation):
        raise TypeError(
            f"Can't convert Operation '{value.name}' to Tensor (target "
            f"dtype={dtype}, name={name!r}, as_ref={as_ref})"
        )
    from tensorweave.ops import array_ops, constant_op

    if isinstance(value, (list, tuple)):
        # Lists holding tensors (at any depth) become Pack ops.
        packed = array_ops._autopack(value, dtype, name)
        if packed is not None:
            return packed

    if dtype is None and preferred_dtype is not None:
        try:
            return constant_op.constant(value, dtype=preferred_dtype, name=name or "Const")
        except (TypeError, ValueError):
            pass
    return constant_op.constant(value, dtype=dtype, name=name or "Const")


def convert_n_to_tensor(values, dtype=None, name=None):
    return [
        convert_to_tensor(v, dtype=dtype, name=None if name is None else f"{name}_{i}")
        for i, v in enumerate(values)
    ]


def _graph_of(values):
    """The graph the graph elements among `values` belong to (they must agree)."""
    found = None
    for value in values or ():
        if hasattr(value, "_as_graph_element") and not isinstance(value, (Tensor, Operation)):
            value = value._as_graph_element()
        if isinstance(value, (Tensor, Operation)):
            if found is None:
                found = value.graph
            elif value.graph is not found:
                raise ValueError(f"{value!r} must be from the same graph as the other inputs.")
    return found


def name_scope(name, default_name=None, values=None):
    """TensorFlow 1.x `tf.name_scope(name, default_name, values)`: enters the
    graph of `values` (or the default graph) and yields the scope string."""
    name = default_name if name is None else name
    return _NameScope(_graph_of(values) or get_default_graph(), name, make_default=True)


class _NameScope:
    """Graph.name_scope and tf.name_scope (which also makes the graph the
    default while inside). A class rather than nested generator context
    managers: every op wrapper enters one, and the generators cost a sixth
    of building an op."""

    __slots__ = ("_graph", "_make_default", "_name", "_old_stack")

    def __init__(self, graph, name, make_default):
        self._graph = graph
        self._name = name
        self._make_default = make_default

    def __enter__(self):
        graph, name = self._graph, self._name
        if self._make_default:
            _default_graph_stack.push(graph)
        try:
            if name and not _VALID_SCOPE_NAME.fullmatch(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            self._old_stack = graph._name_stack
            if not name:
                new = ""
            elif name.endswith("/"):
                new = name[:-1]
            else:
                new = graph.unique_name(name)
        except BaseException:
            if self._make_default:
                _default_graph_stack.remove(graph)
            raise
        graph._name_stack = new
        return f"{new}/" if new else ""

    def __exit__(self, *unused):
        self._graph._name_stack = self._old_stack
        if self._make_default:
            _default_graph_stack.remove(self._graph)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def colocate_with(op, ignore_existing=False):
    return get_default_graph().colocate_with(op, ignore_existing)


def container(container_name):
    return get_default_graph().container(container_name)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)

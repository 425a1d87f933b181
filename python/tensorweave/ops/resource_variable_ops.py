"""Resource variables: tf.Variable(..., use_resource=True) and
tf.get_variable(..., use_resource=True), as TensorFlow 1.x builds them.

    v = tf.get_variable("v", [2, 3], use_resource=True)   # a ResourceVariable
    loss = tf.reduce_sum(v * v)                            # reads v (ReadVariableOp)
    train = tf.train.AdamOptimizer(0.1).minimize(loss)     # ResourceApplyAdam

A ResourceVariable named "v" is the ops TensorFlow makes: `v` (VarHandleOp,
whose output is the DT_RESOURCE handle), `v/IsInitialized/
VarIsInitializedOp`, `v/Assign` (AssignVariableOp, the initializer) and
`v/Read/ReadVariableOp` (what fetching the variable runs). Unlike a
reference variable, every use reads the variable anew: converting it to a
tensor adds a ReadVariableOp, so reads order with assignments through
control dependencies only, as in TensorFlow.
"""

from tensorweave.framework import dtypes, ops, tensor_shape
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.gradient_registry import NotDifferentiable, RegisterGradient
from tensorweave.ops import array_ops, variables
from tensorweave.ops.op_builder import make_op

# --- the raw ops -------------------------------------------------------------------------


def var_handle_op(dtype, shape, container="", shared_name="", name=None):
    with ops.name_scope(name, "VarHandleOp") as scope:
        return make_op(
            "VarHandleOp",
            [],
            {
                "dtype": dtypes.as_dtype(dtype).base_dtype,
                "shape": tensor_shape.as_shape(shape),
                "container": container,
                "shared_name": shared_name,
            },
            scope,
        )


def read_variable_op(resource, dtype, name=None):
    with ops.name_scope(name, "ReadVariableOp", [resource]) as scope:
        return make_op("ReadVariableOp", [resource], {"dtype": dtypes.as_dtype(dtype)}, scope)


def assign_variable_op(resource, value, validate_shape=False, name=None):
    with ops.name_scope(name, "AssignVariableOp", [resource, value]) as scope:
        value = ops.convert_to_tensor(value, name="value")
        return make_op(
            "AssignVariableOp",
            [resource, value],
            {"dtype": value.dtype.base_dtype, "validate_shape": bool(validate_shape)},
            scope,
        )


def _update_variable_op(op_type, resource, value, name):
    with ops.name_scope(name, op_type, [resource, value]) as scope:
        value = ops.convert_to_tensor(value, name="value")
        return make_op(op_type, [resource, value], {"dtype": value.dtype.base_dtype}, scope)


def assign_add_variable_op(resource, value, name=None):
    return _update_variable_op("AssignAddVariableOp", resource, value, name)


def assign_sub_variable_op(resource, value, name=None):
    return _update_variable_op("AssignSubVariableOp", resource, value, name)


def var_is_initialized_op(resource, name=None):
    with ops.name_scope(name, "VarIsInitializedOp", [resource]) as scope:
        return make_op("VarIsInitializedOp", [resource], {}, scope)


def destroy_resource_op(resource, ignore_lookup_error=True, name=None):
    with ops.name_scope(name, "DestroyResourceOp", [resource]) as scope:
        return make_op(
            "DestroyResourceOp",
            [resource],
            {"ignore_lookup_error": bool(ignore_lookup_error)},
            scope,
        )


def variable_shape(resource, out_type=dtypes.int32, name=None):
    with ops.name_scope(name, "VariableShape", [resource]) as scope:
        return make_op("VariableShape", [resource], {"out_type": dtypes.as_dtype(out_type)}, scope)


def resource_gather(resource, indices, dtype, batch_dims=0, validate_indices=True, name=None):
    with ops.name_scope(name, "ResourceGather", [resource, indices]) as scope:
        indices = ops.convert_to_tensor(indices, name="indices")
        return make_op(
            "ResourceGather",
            [resource, indices],
            {
                "dtype": dtypes.as_dtype(dtype),
                "Tindices": indices.dtype.base_dtype,
                "batch_dims": int(batch_dims),
                "validate_indices": bool(validate_indices),
            },
            scope,
        )


def _scatter(op_type, resource, indices, updates, dtype, name):
    with ops.name_scope(name, op_type, [resource, indices, updates]) as scope:
        indices = ops.convert_to_tensor(indices, name="indices")
        updates = ops.convert_to_tensor(updates, dtype=dtype, name="updates")
        return make_op(
            op_type,
            [resource, indices, updates],
            {"dtype": updates.dtype.base_dtype, "Tindices": indices.dtype.base_dtype},
            scope,
        )


def resource_scatter_add(resource, indices, updates, name=None):
    return _scatter("ResourceScatterAdd", resource, indices, updates, None, name)


def resource_scatter_update(resource, indices, updates, name=None):
    return _scatter("ResourceScatterUpdate", resource, indices, updates, None, name)


# --- the variable ------------------------------------------------------------------------


class ResourceVariable(variables.Variable):
    """A variable reached through a resource handle (TensorFlow's
    ResourceVariable in graph mode). Made by tf.Variable and tf.get_variable
    when use_resource is true (or resource variables are enabled)."""

    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(
        self,
        initial_value=None,
        trainable=True,
        collections=None,
        validate_shape=True,
        caching_device=None,
        name=None,
        variable_def=None,
        dtype=None,
        expected_shape=None,
        import_scope=None,
        constraint=None,
        use_resource=None,
        synchronization=None,
        aggregation=None,
        shape=None,
    ):
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_proto(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if collections is None:
            collections = [ops.GraphKeys.GLOBAL_VARIABLES]
        if trainable and ops.GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections = list(collections) + [ops.GraphKeys.TRAINABLE_VARIABLES]
        self._trainable = trainable
        init_from_fn = callable(initial_value)
        # Outside any control dependencies of the caller, as TensorFlow's
        # init_scope: the initializer must not run a training step.
        with (
            ops.control_dependencies(None),
            ops.name_scope(name, "Variable", [] if init_from_fn else [initial_value]) as scope,
        ):
            handle_name = scope.removesuffix("/")
            with ops.name_scope("Initializer"):
                self._initial_value = ops.convert_to_tensor(
                    initial_value() if init_from_fn else initial_value,
                    dtype=dtype,
                    name="initial_value",
                )
            value_shape = self._initial_value.shape
            if shape is not None:
                value_shape = value_shape.merge_with(shape)
            if validate_shape and not value_shape.is_fully_defined():
                raise ValueError(
                    f"initial_value must have a shape specified: {self._initial_value}"
                )
            self._shape = value_shape if validate_shape else tensor_shape.unknown_shape()
            self._dtype = self._initial_value.dtype.base_dtype
            self._handle = var_handle_op(
                self._dtype, self._shape, shared_name=handle_name, name=scope
            )
            with ops.name_scope("IsInitialized"):
                self._is_initialized_op = var_is_initialized_op(self._handle)
            with ops.name_scope("Assign") as assign_scope:
                self._initializer_op = assign_variable_op(
                    self._handle, self._initial_value, name=assign_scope
                )
            with ops.name_scope("Read"):
                self._graph_element = self._read_variable_op()
        graph = self._handle.graph
        for key in collections:
            graph.add_to_collection(key, self)

    def _init_from_proto(self, variable_def, import_scope=None):
        """The ResourceVariable whose ops the default graph already holds (see
        Variable._init_from_proto): its dtype and shape are its VarHandleOp's."""
        element = variables.imported_graph_element
        self._handle = element(variable_def.variable_name, import_scope)
        if self._handle.op.type != "VarHandleOp":
            raise ValueError(
                f"VariableDef of a resource variable names {self._handle.op.name}, "
                f"a {self._handle.op.type} op, not a VarHandleOp"
            )
        self._dtype = dtypes.as_dtype(self._handle.op.get_attr("dtype"))
        self._shape = tensor_shape.as_shape(self._handle.op.get_attr("shape"))
        self._initializer_op = element(variable_def.initializer_name, import_scope)
        self._graph_element = None
        if variable_def.snapshot_name:
            self._graph_element = element(variable_def.snapshot_name, import_scope)
        self._initial_value = None
        if variable_def.initial_value_name:
            self._initial_value = element(variable_def.initial_value_name, import_scope)
        self._trainable = variable_def.trainable

    @staticmethod
    def from_proto(variable_def, import_scope=None):
        return ResourceVariable(variable_def=variable_def, import_scope=import_scope)

    # --- identity -----------------------------------------------------------------

    @property
    def handle(self):
        return self._handle

    @property
    def name(self):
        return self._handle.name

    @property
    def op(self):
        return self._handle.op

    @property
    def graph(self):
        return self._handle.graph

    @property
    def device(self):
        return self._handle.device

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def _as_graph_element(self):
        return self._graph_element

    def _ref(self):
        """What tf.gradients differentiates with respect to: the handle."""
        return self._handle

    # --- values ---------------------------------------------------------------------

    def _read_variable_op(self):
        result = read_variable_op(self._handle, self._dtype)
        result.set_shape(self._shape)
        return result

    def value(self):
        """A new read of the variable (a ReadVariableOp)."""
        return self._read_variable_op()

    def read_value(self):
        """A new read of the variable, through an Identity, as TensorFlow builds it."""
        with ops.name_scope("Read"):
            value = self._read_variable_op()
        return array_ops.identity(value)

    def sparse_read(self, indices, name=None):
        """Rows `indices` of the variable (ResourceGather)."""
        with ops.name_scope("Gather" if name is None else name) as scope:
            result = resource_gather(self._handle, indices, dtype=self._dtype, name=scope)
        return result

    def eval(self, session=None):
        return self._graph_element.eval(session=session)

    def initialized_value(self):
        with ops.control_dependencies(None), ops.control_dependencies([self._initializer_op]):
            return self._read_variable_op()

    def is_initialized(self, name=None):
        return var_is_initialized_op(self._handle, name=name)

    def _lazy_read(self, update_op):
        return _UnreadVariable(self, update_op)

    def assign(self, value, use_locking=None, name=None, read_value=True):
        value = ops.convert_to_tensor(value, dtype=self._dtype)
        self._shape.assert_is_compatible_with(value.shape)
        update = assign_variable_op(self._handle, value, validate_shape=True, name=name)
        return self._lazy_read(update) if read_value else update

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        delta = ops.convert_to_tensor(delta, dtype=self._dtype)
        update = assign_add_variable_op(self._handle, delta, name=name)
        return self._lazy_read(update) if read_value else update

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        delta = ops.convert_to_tensor(delta, dtype=self._dtype)
        update = assign_sub_variable_op(self._handle, delta, name=name)
        return self._lazy_read(update) if read_value else update

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        """Adds sparse_delta (an object with .indices and .values) to rows."""
        update = resource_scatter_add(
            self._handle, sparse_delta.indices, sparse_delta.values, name=name
        )
        return self._lazy_read(update)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        update = resource_scatter_update(
            self._handle, sparse_delta.indices, sparse_delta.values, name=name
        )
        return self._lazy_read(update)


class _UnreadVariable(ResourceVariable):
    """What assign & co. return: the variable as it is once `parent_op` ran.
    Its reads wait for that op; fetching it runs the op and reads."""

    def __init__(self, variable, parent_op):
        self._trainable = False
        self._handle = variable._handle
        self._dtype = variable._dtype
        self._shape = variable._shape
        self._initial_value = variable._initial_value
        self._initializer_op = variable._initializer_op
        self._parent_op = parent_op
        self._graph_element = self._read_variable_op()

    @property
    def name(self):
        return self._parent_op.name

    @property
    def op(self):
        return self._parent_op

    def _read_variable_op(self):
        with ops.control_dependencies([self._parent_op]):
            return super()._read_variable_op()

    def read_value(self):
        return self._read_variable_op()

    def assign(self, *args, **kwargs):
        with ops.control_dependencies([self._parent_op]):
            return super().assign(*args, **kwargs)

    def assign_add(self, *args, **kwargs):
        with ops.control_dependencies([self._parent_op]):
            return super().assign_add(*args, **kwargs)

    def assign_sub(self, *args, **kwargs):
        with ops.control_dependencies([self._parent_op]):
            return super().assign_sub(*args, **kwargs)


@tf_export("is_resource_variable")
def is_resource_variable(var):
    return isinstance(var, ResourceVariable)


# --- gradients ---------------------------------------------------------------------------


@RegisterGradient("ReadVariableOp")
def _read_grad(op, grad):
    """The gradient of a read is the gradient with respect to the handle."""
    return grad


@RegisterGradient("ResourceGather")
def _gather_grad(op, grad):
    """IndexedSlices (TensorFlow's): the gathered rows' gradients at indices,
    in the variable's shape."""
    from tensorweave.framework import indexed_slices  # built on this module's imports

    if op.get_attr("batch_dims") != 0:
        raise NotImplementedError("The gradient of ResourceGather with batch_dims != 0")
    handle, indices = op.inputs
    params_shape = variable_shape(handle)
    size = array_ops.expand_dims(array_ops.size(indices), 0)
    values_shape = array_ops.concat([size, array_ops.slice(params_shape, [1], [-1])], 0)
    values = array_ops.reshape(indexed_slices.dense_without_warning(grad), values_shape)
    flat_indices = array_ops.reshape(indices, size)
    return indexed_slices.IndexedSlices(values, flat_indices, params_shape), None


for _op_type in (
    "VarHandleOp",
    "AssignVariableOp",
    "AssignAddVariableOp",
    "AssignSubVariableOp",
    "VarIsInitializedOp",
    "DestroyResourceOp",
    "DisableCopyOnRead",
    "VariableShape",
    "ResourceScatterAdd",
    "ResourceScatterUpdate",
    "ResourceApplyGradientDescent",
    "ResourceApplyMomentum",
    "ResourceApplyAdam",
    "ResourceApplyRMSProp",
    "ResourceApplyCenteredRMSProp",
    "ResourceApplyAdagrad",
    "ResourceSparseApplyMomentum",
    "ResourceSparseApplyAdagrad",
    "ResourceSparseApplyRMSProp",
    "ResourceSparseApplyCenteredRMSProp",
):
    NotDifferentiable(_op_type)

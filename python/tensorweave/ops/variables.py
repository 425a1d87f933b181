"""tf.Variable (TensorFlow 1.x's reference variables) and its initializers.

A Variable is four ops, named as TensorFlow names them: `v/initial_value`
(the value), `v` (VariableV2, whose output is a float32_ref tensor), `v/Assign`
(the initializer) and `v/read` (an Identity: what ops that use v read).
"""

from tensorweave.framework import ops
from tensorweave.framework.api_export import tf_export
from tensorweave.ops import array_ops, control_flow_ops, state_ops


def imported_graph_element(name, import_scope=None):
    """The operation or tensor `name` (as a VariableDef records it) of the
    default graph, under `import_scope` when the graph was imported there."""
    if import_scope:
        name = f"{import_scope.rstrip('/')}/{name}"
    return ops.get_default_graph().as_graph_element(name)


@tf_export("Variable", "VariableV1")
class Variable:
    """A mutable tensor that keeps its value across runs of one session.

    A reference variable (VariableV2) unless use_resource is true, or is None
    and the enclosing variable scope or tf.enable_resource_variables() asks
    for resource variables: then a ResourceVariable, as TensorFlow 1.x does.
    """

    # Where variable_def and use_resource sit among __init__'s positional parameters.
    _VARIABLE_DEF_POSITION = 6
    _USE_RESOURCE_POSITION = 11

    def __new__(cls, *args, **kwargs):
        if cls is Variable:
            if len(args) > Variable._USE_RESOURCE_POSITION:
                use_resource = args[Variable._USE_RESOURCE_POSITION]
            else:
                use_resource = kwargs.get("use_resource")
            # Imported here: both modules build on this one.
            from tensorweave.ops import resource_variable_ops, variable_scope

            if len(args) > Variable._VARIABLE_DEF_POSITION:
                variable_def = args[Variable._VARIABLE_DEF_POSITION]
            else:
                variable_def = kwargs.get("variable_def")
            if variable_def is not None:
                # An existing variable: its kind is the one the graph holds.
                use_resource = variable_def.is_resource
            elif use_resource is None:
                use_resource = variable_scope.default_use_resource()
            if use_resource:
                return object.__new__(resource_variable_ops.ResourceVariable)
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
        values = [] if callable(initial_value) else [initial_value]
        # A variable and its initializer never wait for the control
        # dependencies around its creation (TensorFlow's init_scope): running
        # the initializer must not run, say, a training step.
        with ops.name_scope(name, "Variable", values) as scope, ops.control_dependencies(None):
            if callable(initial_value):
                with ops.name_scope("Initializer"):
                    initial_value = initial_value()
            self._initial_value = ops.convert_to_tensor(
                initial_value, dtype=dtype, name="initial_value"
            )
            value_shape = self._initial_value.shape
            if shape is not None:
                value_shape = value_shape.merge_with(shape)
            if validate_shape and not value_shape.is_fully_defined():
                raise ValueError(
                    f"initial_value must have a shape specified: {self._initial_value}"
                )
            self._variable = state_ops.variable_op_v2(
                value_shape if value_shape.ndims is not None else [],
                self._initial_value.dtype,
                name=scope,
            )
            self._initializer_op = state_ops.assign(
                self._variable, self._initial_value, validate_shape=validate_shape, name="Assign"
            ).op
            # TensorFlow reads a variable where it lives (a ps, say), not
            # where the device scope around its creation points.
            with ops.colocate_with(self._variable.op):
                self._snapshot = array_ops.identity(self._variable, name="read")
        graph = self._variable.graph
        for key in collections:
            graph.add_to_collection(key, self)

    def _init_from_proto(self, variable_def, import_scope=None):
        """The Variable whose ops the default graph already holds, named by a
        VariableDef (as a meta graph's variable collections record it), with
        `import_scope` prepended to its names. Adds no ops and joins no
        collection: import_meta_graph puts it in the collections it came from."""
        self._variable = imported_graph_element(variable_def.variable_name, import_scope)
        self._initializer_op = imported_graph_element(variable_def.initializer_name, import_scope)
        self._snapshot = imported_graph_element(variable_def.snapshot_name, import_scope)
        self._initial_value = None
        if variable_def.initial_value_name:
            self._initial_value = imported_graph_element(
                variable_def.initial_value_name, import_scope
            )
        self._trainable = variable_def.trainable

    @staticmethod
    def from_proto(variable_def, import_scope=None):
        """A Variable (a ResourceVariable when variable_def.is_resource) over
        the ops a VariableDef names in the default graph."""
        return Variable(variable_def=variable_def, import_scope=import_scope)

    # --- identity -----------------------------------------------------------------

    @property
    def name(self):
        return self._variable.name

    @property
    def op(self):
        return self._variable.op

    @property
    def graph(self):
        return self._variable.graph

    @property
    def dtype(self):
        return self._variable.dtype

    @property
    def device(self):
        return self._variable.device

    @property
    def shape(self):
        return self._variable.shape

    def get_shape(self):
        return self.shape

    @property
    def trainable(self):
        return self._trainable

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    def _as_graph_element(self):
        return self._variable

    def _ref(self):
        return self._variable

    def __repr__(self):
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    # --- values ---------------------------------------------------------------------

    def value(self):
        """The tensor ops read (`v/read`)."""
        return self._snapshot

    def read_value(self):
        """A fresh read of the variable (a new Identity op)."""
        with ops.name_scope(self.op.name + "/"):
            return array_ops.identity(self._variable, name="read")

    def eval(self, session=None):
        return self._variable.eval(session=session)

    def initialized_value(self):
        with ops.control_dependencies(None), ops.control_dependencies([self._initializer_op]):
            return array_ops.identity(self._variable)

    def assign(self, value, use_locking=False, name=None, read_value=True):
        result = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return result if read_value else result.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        result = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return result if read_value else result.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        result = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return result if read_value else result.op

    def is_initialized(self, name=None):
        return state_ops.is_variable_initialized(self._variable, name=name)

    def load(self, value, session=None):
        """Stores `value` into the variable by running its initializer with the
        initial value fed (no new ops)."""
        session = session or ops.get_default_session()
        if session is None:
            raise ValueError(
                "Either session argument should be provided or default session "
                "should be established"
            )
        session.run(self._initializer_op, {self._initial_value: value})

    # Operators act on the variable's value, as on a Tensor. They are looked
    # up on Tensor when called, so operators other modules add later work too.
    _OPERATORS = (
        "__add__",
        "__radd__",
        "__sub__",
        "__rsub__",
        "__mul__",
        "__rmul__",
        "__truediv__",
        "__rtruediv__",
        "__floordiv__",
        "__rfloordiv__",
        "__mod__",
        "__rmod__",
        "__pow__",
        "__rpow__",
        "__matmul__",
        "__rmatmul__",
        "__neg__",
        "__abs__",
        "__invert__",
        "__and__",
        "__rand__",
        "__or__",
        "__ror__",
        "__xor__",
        "__rxor__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__getitem__",
    )

    @staticmethod
    def _overload_operators():
        def delegate(operator):
            def method(self, *args):
                tensor_operator = getattr(ops.Tensor, operator, None)
                if tensor_operator is None:
                    if operator == "__getitem__":
                        raise TypeError(
                            "Indexing a Variable needs Tensor indexing "
                            "(tf.strided_slice), which is not available"
                        )
                    return NotImplemented
                return tensor_operator(self.value(), *args)

            method.__name__ = operator
            return method

        for operator in Variable._OPERATORS:
            setattr(Variable, operator, delegate(operator))

    __array_priority__ = 100


def _to_tensor(variable, dtype=None, name=None, as_ref=False):
    if dtype is not None and not dtype.is_compatible_with(variable.dtype):
        raise ValueError(
            f"Incompatible type conversion requested to type '{dtype.name}' for "
            f"variable of type '{variable.dtype.name}'"
        )
    return variable._ref() if as_ref else variable.value()


ops.register_tensor_conversion_function(Variable, _to_tensor)
# math_ops installs Tensor's operators; Variable borrows them.
from tensorweave.ops import math_ops  # noqa: F401

Variable._overload_operators()


VariableV1 = Variable


@tf_export("all_variables", "global_variables")
def global_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


@tf_export("trainable_variables")
def trainable_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES, scope)


@tf_export("local_variables")
def local_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.LOCAL_VARIABLES, scope)


@tf_export("model_variables")
def model_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.MODEL_VARIABLES, scope)


@tf_export("initialize_variables", "variables_initializer")
def variables_initializer(var_list, name="init"):
    """One op that runs the initializers of `var_list`."""
    if var_list:
        return control_flow_ops.group(*[v.initializer for v in var_list], name=name)
    return control_flow_ops.no_op(name=name)


initialize_variables = variables_initializer


@tf_export("global_variables_initializer", "initialize_all_variables")
def global_variables_initializer():
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


@tf_export("initialize_local_variables", "local_variables_initializer")
def local_variables_initializer():
    return variables_initializer(local_variables())


initialize_local_variables = local_variables_initializer


def _default_var_list(var_list):
    if var_list is None:
        var_list = global_variables() + local_variables()
    return list(var_list)


@tf_export("report_uninitialized_variables")
def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor: the names of the variables of `var_list` (default:
    global and local) that are not initialized, in order."""
    import tensorweave as tf  # the array and math families provide the ops used

    var_list = _default_var_list(var_list)
    with ops.name_scope(name) as scope:
        if not var_list:
            # Nothing to check: an empty vector, as TensorFlow returns.
            return tf.constant([], dtype=tf.string, name=scope)
        missing = [fn for fn in ("stack", "gather") if not hasattr(tf, fn)]
        if missing:
            raise NotImplementedError(
                "report_uninitialized_variables needs tf." + " and tf.".join(missing)
            )
        initialized = tf.stack([state_ops.is_variable_initialized(v) for v in var_list])
        names = tf.constant([v.op.name for v in var_list], name="variable_names")
        # The positions of the uninitialized ones ([k, 1] from Where), then their names.
        positions = tf.reshape(tf.where(tf.logical_not(initialized)), [-1])
        return tf.gather(names, positions, name=scope)


@tf_export("assert_variables_initialized")
def assert_variables_initialized(var_list=None):
    """An op that fails with FailedPreconditionError naming the first variable
    of `var_list` (default: global and local) that is not initialized."""
    var_list = _default_var_list(var_list)
    if not var_list:
        return None
    with ops.name_scope("assert_variables_initialized"):
        reads = [array_ops.identity(v.value()) for v in var_list]
        return control_flow_ops.group(*reads, name="assert")

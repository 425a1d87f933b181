"""tf.variable_scope and tf.get_variable: variables shared by name.

Each graph keeps a store of the variables tf.get_variable made, keyed by
full name ("mlp/dense/kernel"). A variable scope prefixes those names and
says whether get_variable may create (reuse=False), must find (reuse=True)
or does whichever applies (tf.AUTO_REUSE). Variable names depend only on
variable scopes; the ops' names follow the name scope opened alongside.
"""

import contextlib
import inspect
import traceback

from tensorweave.framework import dtypes, ops, tensor_shape
from tensorweave.framework.api_export import export_value, tf_export
from tensorweave.ops import init_ops, variables

REGULARIZATION_LOSSES = "regularization_losses"

# Whether variables are resource variables when nothing says otherwise
# (TensorFlow 1.x's default: reference variables).
_default_use_resource = False


@tf_export("enable_resource_variables")
def enable_resource_variables():
    """From now on tf.Variable and tf.get_variable make resource variables
    unless told otherwise (use_resource=False)."""
    global _default_use_resource
    _default_use_resource = True


@tf_export("disable_resource_variables")
def disable_resource_variables():
    """From now on variables are reference variables unless use_resource=True."""
    global _default_use_resource
    _default_use_resource = False


@tf_export("resource_variables_enabled")
def resource_variables_enabled():
    return _default_use_resource


def default_use_resource():
    """What use_resource=None means here: the current variable scope's
    use_resource, else the global default."""
    scope_default = get_variable_scope().use_resource
    return _default_use_resource if scope_default is None else scope_default


class _ReuseMode:
    def __repr__(self):
        return "tf.AUTO_REUSE"


# get_variable creates the variable if it does not exist, else returns it.
AUTO_REUSE = export_value(_ReuseMode(), "AUTO_REUSE")


class _VariableStore:
    """Per graph: the variables get_variable made, where each was defined, and
    how often each variable scope name was opened (for default names)."""

    def __init__(self):
        self.variables = {}
        self.defined_at = {}
        self.scope_counts = {}
        self.current_scope = VariableScope(False)

    def open_scope(self, name):
        self.scope_counts[name] = self.scope_counts.get(name, 0) + 1

    def close_subscopes(self, name):
        # Leaving a scope forgets how often its subscopes were opened, so
        # reentering it gives the same default names (layers reuse relies on it).
        prefix = name + "/" if name else ""
        for key in self.scope_counts:
            if key.startswith(prefix):
                self.scope_counts[key] = 0


def _store(graph=None):
    graph = graph or ops.get_default_graph()
    store = getattr(graph, "_variable_store", None)
    if store is None:
        store = _VariableStore()
        graph._variable_store = store
    return store


def _where_defined():
    """The user code line that created a variable (for "already exists" errors)."""
    for frame in reversed(traceback.extract_stack()[:-3]):
        if "/tensorweave/" not in frame.filename:
            return (
                f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}\n    {frame.line}'
            )
    return "  (unknown)"


@tf_export("VariableScope")
class VariableScope:
    """A variable scope: its name, reuse mode and defaults for get_variable."""

    def __init__(
        self,
        reuse,
        name="",
        initializer=None,
        regularizer=None,
        caching_device=None,
        partitioner=None,
        custom_getter=None,
        name_scope="",
        dtype=dtypes.float32,
        use_resource=None,
        constraint=None,
    ):
        self._name = name
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtypes.as_dtype(dtype)
        self._use_resource = use_resource
        self._constraint = constraint

    @property
    def name(self):
        return self._name

    @property
    def original_name_scope(self):
        return self._name_scope

    @property
    def reuse(self):
        return self._reuse

    @property
    def initializer(self):
        return self._initializer

    @property
    def regularizer(self):
        return self._regularizer

    @property
    def dtype(self):
        return self._dtype

    @property
    def caching_device(self):
        return self._caching_device

    @property
    def partitioner(self):
        return self._partitioner

    @property
    def use_resource(self):
        return self._use_resource

    def set_use_resource(self, use_resource):
        self._use_resource = use_resource

    @property
    def custom_getter(self):
        return self._custom_getter

    @property
    def constraint(self):
        return self._constraint

    def reuse_variables(self):
        """From now on get_variable in this scope finds existing variables."""
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def set_dtype(self, dtype):
        self._dtype = dtypes.as_dtype(dtype)

    def get_variable(
        self,
        name,
        shape=None,
        dtype=None,
        initializer=None,
        regularizer=None,
        reuse=None,
        trainable=None,
        collections=None,
        caching_device=None,
        partitioner=None,
        validate_shape=True,
        use_resource=None,
        custom_getter=None,
        constraint=None,
        synchronization=None,
        aggregation=None,
    ):
        full_name = f"{self._name}/{name}" if self._name else name
        reuse = self._reuse if reuse is None else reuse
        getter = _get_single_variable
        custom_getter = _first(custom_getter, self._custom_getter)
        arguments = {
            "name": full_name,
            "shape": shape,
            "dtype": _first(dtype, self._dtype),
            "initializer": _first(initializer, self._initializer),
            "regularizer": _first(regularizer, self._regularizer),
            "reuse": reuse,
            "trainable": trainable,
            "collections": collections,
            "validate_shape": validate_shape,
        }
        use_resource = _first(use_resource, self._use_resource)
        if use_resource is not None:
            arguments["use_resource"] = use_resource
        # Variable names depend on variable scopes only: create at top level.
        with ops.name_scope(None):
            if custom_getter is not None:
                return custom_getter(getter, **arguments)
            return getter(**arguments)

    def __repr__(self):
        return f"<tf.VariableScope '{self._name}' reuse={self._reuse}>"


def _first(value, default):
    """`value` unless None (initializers may be Tensors, which have no truth value)."""
    return default if value is None else value


def _call_initializer(initializer, shape, dtype):
    """TensorFlow passes partition_info to initializers that accept it."""
    try:
        parameters = inspect.signature(initializer).parameters
    except (TypeError, ValueError):
        parameters = {}
    accepts = "partition_info" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )
    if accepts:
        return initializer(shape, dtype=dtype, partition_info=None)
    return initializer(shape, dtype=dtype)


def _default_initializer(name, dtype):
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_bool:
        return init_ops.zeros_initializer()
    raise ValueError(f"An initializer for variable {name} of {dtype.name} is required")


def _get_single_variable(
    name,
    shape=None,
    dtype=dtypes.float32,
    initializer=None,
    regularizer=None,
    reuse=None,
    trainable=None,
    collections=None,
    validate_shape=True,
    use_resource=None,
    **unused,
):
    store = _store()
    dtype = dtypes.as_dtype(dtype).base_dtype
    if shape is not None:
        shape = tensor_shape.as_shape(shape)
    found = store.variables.get(name)
    if found is not None:
        if reuse is not True and reuse is not AUTO_REUSE:
            raise ValueError(
                f"Variable {name} already exists, disallowed. Did you mean to set reuse=True "
                f"or reuse=tf.AUTO_REUSE in VarScope? Originally defined at:\n\n"
                f"{store.defined_at.get(name, '  (unknown)')}"
            )
        if shape is not None and not shape.is_compatible_with(found.shape):
            raise ValueError(
                f"Trying to share variable {name}, but specified shape {shape} "
                f"and found shape {found.shape}."
            )
        if dtype != found.dtype.base_dtype:
            raise ValueError(
                f"Trying to share variable {name}, but specified dtype "
                f"{dtype.name} and found dtype {found.dtype.base_dtype.name}."
            )
        return found
    if reuse is True:
        raise ValueError(
            f"Variable {name} does not exist, or was not created with "
            "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in "
            "VarScope?"
        )

    if initializer is None:
        initializer = _default_initializer(name, dtype)
    if callable(initializer) and not isinstance(initializer, ops.Tensor):
        if shape is None or not shape.is_fully_defined():
            raise ValueError(
                f"Shape of a new variable ({name}) must be fully defined, but instead was {shape}."
            )
        shape_list = shape.as_list()

        def initial_value():
            return _call_initializer(initializer, shape_list, dtype)
    else:
        # A tensor or a value: it is the initial value, and gives the shape.
        if shape is not None:
            raise ValueError("If initializer is a constant, do not specify shape.")

        def initial_value():
            if isinstance(initializer, ops.Tensor):
                return initializer  # its own dtype, as in TensorFlow
            return ops.convert_to_tensor(initializer, dtype=dtype)

    variable = variables.Variable(
        initial_value=initial_value,
        name=name,
        trainable=True if trainable is None else trainable,
        collections=collections,
        validate_shape=validate_shape,
        dtype=None,
        use_resource=use_resource,
    )
    if variable.op.name != name:
        raise ValueError(
            f"Variable {name} cannot be created: the graph already has an op "
            f"named {name}, so the variable would be named {variable.op.name}."
        )
    if shape is not None and not shape.is_compatible_with(variable.shape):
        raise ValueError(f"The initializer of {name} gave shape {variable.shape}, not {shape}")
    store.variables[name] = variable
    store.defined_at[name] = _where_defined()
    if regularizer is not None:
        with ops.name_scope(f"{name}/Regularizer/"):
            loss = regularizer(variable)
        if loss is not None:
            ops.add_to_collection(REGULARIZATION_LOSSES, loss)
    return variable


@tf_export("get_variable_scope")
def get_variable_scope():
    """The current VariableScope of the default graph."""
    return _store().current_scope


@tf_export("get_variable")
def get_variable(
    name,
    shape=None,
    dtype=None,
    initializer=None,
    regularizer=None,
    trainable=None,
    collections=None,
    caching_device=None,
    partitioner=None,
    validate_shape=True,
    use_resource=None,
    custom_getter=None,
    constraint=None,
    synchronization=None,
    aggregation=None,
):
    """The variable `name` of the current variable scope: created with
    `initializer` (default: the scope's, else glorot_uniform for floats, zeros
    for integers) or found, as the scope's reuse mode allows."""
    return get_variable_scope().get_variable(
        name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        trainable=trainable,
        collections=collections,
        caching_device=caching_device,
        partitioner=partitioner,
        validate_shape=validate_shape,
        use_resource=use_resource,
        custom_getter=custom_getter,
        constraint=constraint,
    )


@tf_export("get_local_variable")
def get_local_variable(
    name,
    shape=None,
    dtype=None,
    initializer=None,
    regularizer=None,
    trainable=False,
    collections=None,
    **kwargs,
):
    """get_variable into LOCAL_VARIABLES (not saved, not trained)."""
    collections = list(collections or []) + [ops.GraphKeys.LOCAL_VARIABLES]
    return get_variable(
        name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        trainable=False,
        collections=collections,
        **kwargs,
    )


def _unique_default_name(store, prefix):
    """prefix, prefix_1, ... : the first not yet opened under the current scope."""
    parent = store.current_scope.name
    full = f"{parent}/{prefix}" if parent else prefix
    if store.scope_counts.get(full, 0) == 0:
        return prefix
    index = 1
    while store.scope_counts.get(f"{full}_{index}", 0) > 0:
        index += 1
    return f"{prefix}_{index}"


@tf_export("variable_scope")
@contextlib.contextmanager
def variable_scope(
    name_or_scope,
    default_name=None,
    values=None,
    initializer=None,
    regularizer=None,
    caching_device=None,
    partitioner=None,
    custom_getter=None,
    reuse=None,
    dtype=None,
    use_resource=None,
    constraint=None,
    auxiliary_name_scope=True,
):
    """Opens a variable scope (and a name scope for the ops created inside).

    `name_or_scope` is a name, relative to the current scope, or a
    VariableScope to reenter; without it, `default_name` is made unique.
    reuse=None inherits the enclosing scope's mode; True and AUTO_REUSE stay
    on in nested scopes.
    """
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    if reuse is False:
        reuse = None  # TensorFlow 1.x: False means "inherit", like None
    if name_or_scope is None and reuse is True:
        raise ValueError("reuse=True cannot be used without a name_or_scope")
    if not (reuse is None or reuse is True or reuse is AUTO_REUSE):
        raise ValueError(f"reuse must be None, False, True or tf.AUTO_REUSE, got {reuse!r}")
    graph = ops._graph_of(values) or ops.get_default_graph()
    with graph.as_default():
        store = _store(graph)
        old = store.current_scope
        if isinstance(name_or_scope, VariableScope):
            full_name = name_or_scope.name
            template = name_or_scope
            name_scope_name = name_or_scope.original_name_scope or None
            if name_scope_name and not name_scope_name.endswith("/"):
                name_scope_name += "/"
        else:
            if name_or_scope is not None:
                if not isinstance(name_or_scope, str):
                    raise TypeError(
                        "VariableScope: name_or_scope must be a string or "
                        f"VariableScope, got {type(name_or_scope).__name__}"
                    )
                relative = name_or_scope
            else:
                relative = _unique_default_name(store, default_name)
            full_name = f"{old.name}/{relative}" if old.name else relative
            template = old
            name_scope_name = relative
        # Reuse is inherited by subscopes; a reentered scope keeps its own.
        inherited = name_or_scope.reuse if isinstance(name_or_scope, VariableScope) else old.reuse
        new_reuse = reuse if reuse is not None else (inherited or False)
        if isinstance(name_or_scope, VariableScope):
            saved_counts = dict(store.scope_counts)
        store.open_scope(full_name)
        name_scope = (
            graph.name_scope(name_scope_name)
            if auxiliary_name_scope
            else contextlib.nullcontext(old.original_name_scope)
        )
        with name_scope as opened_name_scope:
            scope = VariableScope(
                new_reuse,
                name=full_name,
                initializer=_first(initializer, template.initializer),
                regularizer=_first(regularizer, template.regularizer),
                caching_device=_first(caching_device, template.caching_device),
                partitioner=_first(partitioner, template.partitioner),
                custom_getter=_first(custom_getter, template.custom_getter),
                name_scope=opened_name_scope
                if auxiliary_name_scope
                else template.original_name_scope,
                dtype=_first(dtype, template.dtype),
                use_resource=_first(use_resource, template.use_resource),
                constraint=_first(constraint, template.constraint),
            )
            store.current_scope = scope
            try:
                yield scope
            finally:
                store.current_scope = old
                if isinstance(name_or_scope, VariableScope):
                    store.scope_counts = saved_counts
                else:
                    store.close_subscopes(full_name)

"""The global step: one int64 scalar variable named "global_step" per graph,
found through the GLOBAL_STEP collection, that optimizers increment once per
training step (`minimize(loss, global_step=...)`)."""

import logging
import os

from google.protobuf import text_format

from tensorweave.framework import dtypes, ops
from tensorweave.ops import array_ops, init_ops, state_ops, variable_scope, variables
from tensorweave.train import checkpoint_management

__all__ = [
    "assert_global_step",
    "create_global_step",
    "get_global_step",
    "get_or_create_global_step",
    "global_step",
    "write_graph",
]

# The collection caching the tensor hooks fetch to read the global step
# (TensorFlow's name).
GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"

_log = logging.getLogger("tensorweave")


def global_step(sess, global_step_tensor):
    """The current value of the global step, as a Python int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor):
    """TypeError unless `global_step_tensor` is an integer scalar Variable or Tensor."""
    if not isinstance(global_step_tensor, (variables.Variable, ops.Tensor)):
        raise TypeError(
            f'Existing "global_step" must be a Variable or Tensor: {global_step_tensor}.'
        )
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError(
            f'Existing "global_step" does not have integer type: {global_step_tensor.dtype.name}'
        )
    shape = global_step_tensor.shape
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


def get_global_step(graph=None):
    """The graph's global step (from the GLOBAL_STEP collection, else the tensor
    named "global_step:0"), or None when there is none."""
    graph = graph or ops.get_default_graph()
    found = graph.get_collection(ops.GraphKeys.GLOBAL_STEP)
    if len(found) == 1:
        step = found[0]
    elif not found:
        try:
            step = graph.get_tensor_by_name("global_step:0")
        except (KeyError, ValueError):
            return None
    else:
        _log.error("Multiple tensors in global_step collection.")
        return None
    assert_global_step(step)
    return step


def create_global_step(graph=None):
    """Makes the global step (0, not trainable, in GLOBAL_VARIABLES and GLOBAL_STEP);
    ValueError when the graph already has one."""
    graph = graph or ops.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    # Outside the caller's name scope and control dependencies (its initializer
    # runs on its own); through get_variable, as in TensorFlow, so that
    # tf.get_variable("global_step") under reuse finds it.
    with graph.as_default(), ops.name_scope(None), ops.control_dependencies(None):
        return variable_scope.get_variable(
            ops.GraphKeys.GLOBAL_STEP,
            shape=[],
            dtype=dtypes.int64,
            initializer=init_ops.zeros_initializer(),
            trainable=False,
            collections=[ops.GraphKeys.GLOBAL_VARIABLES, ops.GraphKeys.GLOBAL_STEP],
        )


def get_or_create_global_step(graph=None):
    """The graph's global step, made first when there is none."""
    graph = graph or ops.get_default_graph()
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step


def _get_or_create_global_step_read(graph=None):
    """A tensor holding a copy of the global step's value, made once per graph
    (hooks fetch it beside the training op), or None without a global step."""
    graph = graph or ops.get_default_graph()
    cached = graph.get_collection(GLOBAL_STEP_READ_KEY)
    if cached:
        return cached[0]
    step = get_global_step(graph)
    if step is None:
        return None
    with (
        graph.as_default(),
        ops.name_scope(None),
        ops.control_dependencies(None),
        ops.name_scope(step.op.name + "/"),
    ):
        value = step.value() if isinstance(step, variables.Variable) else step
        read = array_ops.identity(value, name="read_for_hooks")
    graph.add_to_collection(GLOBAL_STEP_READ_KEY, read)
    return read


def _increment_global_step(increment, graph=None):
    """Adds `increment` to the global step after the hooks' copy of it is
    read, so that copy is always the value from before the run (TensorFlow's
    private helper of the same name, used by Estimator-style loops)."""
    graph = graph or ops.get_default_graph()
    step = get_global_step(graph)
    if step is None:
        raise ValueError(
            "Global step tensor should be created by tf.train.get_or_create_global_step "
            "before calling increment."
        )
    read = _get_or_create_global_step_read(graph)
    with (
        graph.as_default(),
        ops.name_scope(step.op.name + "/"),
        ops.control_dependencies([read]),
    ):
        return state_ops.assign_add(step, increment)


def write_graph(graph_or_graph_def, logdir, name, as_text=True):
    """Writes a GraphDef (or a Graph's) to `logdir/name`, as text by default;
    returns the path. Replaced atomically, like the checkpoint files."""
    graph_def = graph_or_graph_def
    if isinstance(graph_or_graph_def, ops.Graph):
        graph_def = graph_or_graph_def.as_graph_def()
    path = os.path.join(logdir, name)
    if logdir:
        os.makedirs(logdir, exist_ok=True)
    data = (
        text_format.MessageToString(graph_def).encode()
        if as_text
        else graph_def.SerializeToString()
    )
    checkpoint_management.atomic_write(path, data, durable=False)
    return path

"""Control-flow contexts: how ops built inside a tf.cond branch reach values
from outside it (TensorFlow 1.x's design).

While a branch is built, its CondContext is the graph's control-flow
context. Graph.create_op hands every new op's inputs to the context first
(`_route_inputs`): a tensor from outside the branch is replaced by the
output of a Switch on the predicate that lets it through only when the
branch is taken, made once per tensor per branch; an op without inputs runs
after the branch's pivot. Then the op remembers its context
(`op._control_flow_context`) and the context records its outputs
(`_add_op`). The same hooks route values into a while loop's body through
Enter ops (while_context.py).

    context = CondContext(pred, pivot, branch=1)
    context.enter()
    try:
        original, result = context.build_cond_branch(true_fn)
    finally:
        context.exit()
"""

from tensorweave.framework import ops
from tensorweave.ops import control_flow_nest as nest
from tensorweave.ops import control_flow_ops
from tensorweave.ops import control_flow_util as util

# Value types that travel through conds and loops as one tensor, their flow
# (tf.TensorArray does): (type, to_flow(value), from_flow(value, flow)).
_FLOW_TYPES = []


def register_flow_type(value_type, to_flow, from_flow):
    """Lets values of `value_type` be loop variables, branch results and
    loop results: tf.cond and tf.while_loop carry `to_flow(value)` (a
    Tensor) and hand back `from_flow(value, new_flow)`, a value like
    `value` whose flow is `new_flow` (TensorFlow does this for TensorArray)."""
    _FLOW_TYPES.append((value_type, to_flow, from_flow))


def to_flow(value):
    """The tensor a control-flow construct carries for `value`."""
    for value_type, convert, _ in _FLOW_TYPES:
        if isinstance(value, value_type):
            return convert(value)
    return value


def from_flow(original, flow):
    """What a control-flow construct hands back for `original` now carried
    as `flow`: `flow` itself unless `original` is of a registered type."""
    for value_type, _, rebuild in _FLOW_TYPES:
        if isinstance(original, value_type):
            return rebuild(original, flow)
    return flow


def prepare_op(context, op_type, op_name, inputs, control_inputs):
    """What Graph.create_op calls before creating an op in `context` (None at
    the top level) or reading a value made in one: checks every input may be
    used there, then lets the context route them. Returns (inputs, control
    inputs) to create the op with."""
    for item in inputs:
        for tensor in item if isinstance(item, (list, tuple)) else [item]:
            util.check_input_from_valid_context(op_type, op_name, context, tensor.op)
    if context is None:
        return inputs, control_inputs
    return context._route_inputs(op_type, inputs, control_inputs)


def map_inputs(inputs, function):
    """`function` applied to each tensor of an op's inputs, where an entry
    may be a list of tensors (a list input such as Merge's)."""
    return [
        [function(t) for t in item] if isinstance(item, (list, tuple)) else function(item)
        for item in inputs
    ]


def has_inputs(inputs):
    return any(item for item in inputs if isinstance(item, (list, tuple))) or any(
        not isinstance(item, (list, tuple)) for item in inputs
    )


class ControlFlowContext:
    """What every context keeps: its outer context, the names of the tensors
    seen inside it, and the tensor standing in for each outside value."""

    def __init__(self):
        self._graph = ops.get_default_graph()
        self._outer_context = self._graph._get_control_flow_context()
        self._nested_contexts = []
        if self._outer_context is not None:
            self._outer_context._nested_contexts.append(self)
        self._context_stack = []
        # Names of the tensors already available in this context.
        self._values = set()
        # Name of an outside tensor -> the tensor this context uses for it.
        self._external_values = {}

    @property
    def name(self):
        return self._name

    @property
    def outer_context(self):
        return self._outer_context

    def add_name(self, name):
        self._values.add(name)

    def enter(self):
        """Makes this the graph's context: new ops belong to it."""
        self._context_stack.append(self._graph._get_control_flow_context())
        self._graph._set_control_flow_context(self)

    def exit(self):
        self._graph._set_control_flow_context(self._context_stack.pop())

    def exit_result(self, result):
        """Makes the tensors of `result` known to the outer context."""
        if self._outer_context is not None:
            for tensor in nest.flatten(result):
                self._outer_context.add_name(tensor.name)

    def get_while_context(self):
        """The innermost while loop this context is in, or None."""
        if self._outer_context is not None:
            return self._outer_context.get_while_context()
        return None

    def get_control_pivot(self):
        return None

    def is_while_context(self):
        return False

    def is_cond_context(self):
        return False

    def add_inner_op(self, op):
        """Tells the outer contexts about an op made in an inner one."""
        if self._outer_context is not None:
            self._outer_context.add_inner_op(op)

    def _split_control_inputs(self, control_inputs):
        """(internal, external): a control input is internal when it is in
        the same while loop as this context (any, outside every loop)."""
        while_context = self.get_while_context()
        if while_context is None:
            return list(control_inputs), []
        internal, external = [], []
        for op in control_inputs:
            context = util.get_output_context(op)
            if context is not None and context.get_while_context() is while_context:
                internal.append(op)
            else:
                external.append(op)
        return internal, external

    def _mark_outputs(self, op):
        """Records `op`'s outputs as seen here and in every outer context."""
        names = [tensor.name for tensor in op.outputs]
        context = self
        while context is not None:
            context._values.update(names)
            context = context._outer_context

    def __str__(self):
        return self._name


class CondContext(ControlFlowContext):
    """One branch of a tf.cond: `pred` the predicate, `pivot` the tensor that
    is alive only when this branch is taken, `branch` 1 (true) or 0 (false)."""

    def __init__(self, pred, pivot, branch, name="cond_text"):
        self._name = ops.get_default_graph().unique_name(name)
        super().__init__()
        self._pred = pred
        self._pivot = pivot
        self._branch = branch
        self._values.add(pred.name)
        self._external_values[pred.name] = pred
        self._values.add(pivot.name)
        pivot.op._set_control_flow_context(self)

    @property
    def pred(self):
        return self._pred

    @property
    def pivot(self):
        return self._pivot

    @property
    def branch(self):
        return self._branch

    def get_control_pivot(self):
        return self._pivot

    def is_cond_context(self):
        return True

    def add_value(self, value):
        """The tensor this branch uses for `value`: `value` itself when it is
        made in the branch, else the output of a Switch on the predicate
        (made once; outer contexts route `value` first)."""
        if value.name in self._values:
            # For nested conds: the real value if it comes from outside.
            found = self._external_values.get(value.name)
            return value if found is None else found
        result = value
        self._values.add(value.name)
        if self._outer_context is not None:
            result = self._outer_context.add_value(value)
            self._values.add(result.name)
            self._external_values[result.name] = result
        with ops.control_dependencies(None):
            result = control_flow_ops._switch_ref_or_tensor(result, self._pred)[self._branch]
            if self._outer_context is not None:
                self._outer_context.add_inner_op(result.op)
        result.op._set_control_flow_context(self)
        self._mark_outputs(result.op)
        self._external_values[value.name] = result
        return result

    # --- the hooks Graph.create_op calls ------------------------------------------

    def _route_inputs(self, op_type, inputs, control_inputs):
        if not has_inputs(inputs):
            control_inputs, _ = self._split_control_inputs(control_inputs)
            # An op without inputs (a Const) must only run when the branch is taken.
            if not any(util.op_in_context(op, self) for op in control_inputs):
                control_inputs = control_inputs + [self._pivot.op]
            return inputs, control_inputs

        def route(tensor):
            # A while loop built in this branch: its Merge's back edge is
            # part of the loop, not a value from outside.
            if op_type in ("Merge", "RefMerge") and util.is_next_iteration(tensor.op):
                return tensor
            return self.add_value(tensor)

        inputs = map_inputs(inputs, route)
        control_inputs, _ = self._split_control_inputs(control_inputs)
        return inputs, control_inputs

    def _add_op(self, op):
        self._mark_outputs(op)
        # As TensorFlow: what a branch computes runs only when it is taken,
        # so a session may not fetch it.
        if self._outer_context is not None or not util.is_loop_exit(op):
            op.graph.prevent_fetching(op)
        if self._outer_context is not None:
            self._outer_context.add_inner_op(op)

    # --- building a branch -----------------------------------------------------------

    def _process_output_tensor(self, value):
        """The tensor the branch returns for `value`: a value from outside
        (`lambda: x`) goes through this branch's Switch."""
        if value.name not in self._values:
            self._values.add(value.name)
            real_value = value
            if self._outer_context is not None:
                real_value = self._outer_context.add_value(value)
                self._values.add(real_value.name)
                self._external_values[real_value.name] = real_value
            real_value = control_flow_ops._switch_ref_or_tensor(real_value, self._pred)[
                self._branch
            ]
            self._external_values[value.name] = real_value
            return real_value
        found = self._external_values.get(value.name)
        return value if found is None else found

    def _build_cond_tensor(self, value):
        if isinstance(value, ops.Operation):
            # An op stands for "ran": the pivot, once the op has run.
            return control_flow_ops.with_dependencies([value], self._pivot)
        return self._process_output_tensor(ops.convert_to_tensor(to_flow(value)))

    def build_cond_branch(self, branch_fn):
        """Calls `branch_fn` inside this context: (what it returned, the
        flat list of tensors standing for it in this branch)."""
        original = branch_fn()
        if original is None:
            return None, None
        result = nest.map_structure(self._build_cond_tensor, original)
        if not isinstance(result, (list, tuple)):
            result = [result]
        return original, result

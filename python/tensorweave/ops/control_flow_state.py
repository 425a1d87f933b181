"""What tf.gradients keeps while it differentiates through tf.while_loop
(TensorFlow 1.x's design).

For every forward loop on a path from the xs to the ys, one GradLoopState:
- a counter added to the forward loop (`f_count`) that counts iterations;
- a backprop WhileContext (the same frame name, made unique) that runs as
  many iterations as the forward loop did, counting down (`b_count`);
- for every forward value a gradient function reads inside the loop, a
  stack (StackV2, `f_acc`): the forward loop pushes the value each
  iteration (StackPushV2) and the backprop loop pops it (StackPopV2), so
  iteration i of the backprop loop sees the value of forward iteration
  n-1-i. A value that does not change in the loop (a loop constant) or a
  constant is not stacked: it enters the backprop loop once.

Pushes happen in iteration order: each waits for its iteration's counter
increment and the counter's next value waits for every push of the
iteration; the pops of a backprop loop with parallel iterations are
ordered the same way against the backprop counter. Nested loops get one
state per loop; an inner forward loop's iteration count is itself pushed by
the outer loop and popped to drive the inner backprop loop.

    state = maybe_create_control_flow_state(between_list, between_set)
    # tf.gradients enters state's grad contexts around each gradient
    # function (enter_grad_while_context / exit_grad_while_context) and
    # calls state.post_processing() once every gradient is built.
"""

from tensorweave.framework import dtypes, ops
from tensorweave.ops import array_ops, constant_op, control_flow_ops, data_flow_ops, list_ops
from tensorweave.ops import control_flow_util as util
from tensorweave.ops.op_builder import make_op

_IDENTITY_LIKE = frozenset(["Switch", "RefSwitch", "Identity", "RefIdentity"])


def is_loop_switch(op):
    """A Switch of a loop variable (not of a tf.cond inside the loop)."""
    if not util.is_switch(op):
        return False
    context = op._control_flow_context
    return context is not None and context.is_while_context()


def get_loop_constant_enter(value):
    """The constant Enter `value` is forwarded from through Identity and
    Switch ops, or None."""
    op = value.op
    while op.type in _IDENTITY_LIKE:
        op = op.inputs[0].op
    return op if util.is_loop_constant_enter(op) else None


def _constant_value(tensor):
    """The value of a Const op's output, or None."""
    if tensor.op.type != "Const":
        return None
    from tensorweave.framework import tensor_util

    return tensor_util.make_ndarray(tensor.op.get_attr("value"))


def zeros_shape_parts(value):
    """What zeros standing for the gradient of `value` are made from when
    its shape is known only at run time: its shape, or for a TensorList
    (a variant) its element shape and length. Every part is an int32
    tensor, so a loop can keep them per iteration in stacks."""
    if value.dtype.base_dtype == dtypes.variant:
        return [list_ops.tensor_list_element_shape(value), list_ops.tensor_list_length(value)]
    return [array_ops.shape(value)]


def zeros_from_shape_parts(parts, value):
    """Zeros for the gradient of `value` from its zeros_shape_parts. For a
    list: a list of its length whose elements are unset, which the list
    gradients read as zeros of the shape they give and which AddN of lists
    treats as adding nothing (TensorFlow's ZerosLike of the list, without
    keeping the list itself per iteration)."""
    if value.dtype.base_dtype == dtypes.variant:
        element_dtype = list_ops.element_dtype_of(value)
        if element_dtype is None:
            raise TypeError(
                f"Cannot make a zero gradient for the variant tensor {value.name} in a while "
                "loop: the graph does not say what its TensorList holds"
            )
        return list_ops.tensor_list_reserve(parts[0], parts[1], element_dtype)
    return array_ops.zeros(parts[0], value.dtype)


def _has_static_zeros(value):
    """Whether zeros for `value` can be a constant (its shape is known; a
    list's zeros always depend on the list)."""
    return value.dtype.base_dtype != dtypes.variant and value.shape.is_fully_defined()


def _outer_while_context(context):
    """The while loop enclosing `context` (not `context` itself), or None."""
    outer = context.outer_context
    return outer.get_while_context() if outer is not None else None


class GradLoopState:
    """The backprop side of one forward while loop (module doc)."""

    def __init__(self, forward_context, outer_grad_state):
        from tensorweave.ops.while_context import WhileContext

        self._outer_grad_state = outer_grad_state
        self._forward_context = forward_context
        # Forward tensor name -> the tensor standing for it in the backprop loop.
        self._history_map = {}
        # Loop Switch op -> the Merge of its gradient in the backprop loop.
        self._switch_map = {}
        self._unused_exits = []
        self._deferred_exits = []
        self._forward_loop_exits = list(forward_context.loop_exits)
        self._pending_exits_count = len(forward_context.loop_exits)
        # Ops a counter's next value must wait for, ordered by post_processing:
        # (op, may_be_dead) per loop.
        self._forward_sync_ops = []
        self._grad_sync_ops = []

        if outer_grad_state is not None:
            outer_forward_context = outer_grad_state.forward_context
        else:
            outer_forward_context = forward_context.outer_context

        if outer_forward_context is not None:
            outer_forward_context.enter()
        try:
            count, self._forward_index = forward_context.add_forward_loop_counter(outer_grad_state)
        finally:
            if outer_forward_context is not None:
                outer_forward_context.exit()
        # The counter's increment: pushes of an iteration run after it.
        self._forward_add_op = self._forward_index.op.inputs[0].op

        grad_args = {
            "maximum_iterations": forward_context.maximum_iterations,
            "parallel_iterations": forward_context.parallel_iterations,
            "back_prop": forward_context.back_prop,
            "swap_memory": forward_context.swap_memory,
            "name": forward_context.name,
            "grad_state": self,
        }
        if outer_grad_state is not None:
            # A nested loop runs once per outer iteration: the outer loop
            # keeps each run's iteration count and the outer backprop loop
            # hands them back in reverse.
            outer_forward_context.add_name(count.name)
            history_count = outer_grad_state.add_forward_accumulator(count)
            outer_grad_context = outer_grad_state.grad_context
            outer_grad_context.enter()
            try:
                self._grad_context = WhileContext(**grad_args)
                real_count = outer_grad_state.add_backprop_accumulated_value(history_count, count)
                self._grad_index = self._grad_context.add_backprop_loop_counter(
                    real_count, outer_grad_state
                )
            finally:
                outer_grad_context.exit()
        else:
            if outer_forward_context is not None:
                outer_forward_context.enter()
            try:
                self._grad_context = WhileContext(**grad_args)
                self._grad_index = self._grad_context.add_backprop_loop_counter(
                    count, outer_grad_state
                )
            finally:
                if outer_forward_context is not None:
                    outer_forward_context.exit()

    # --- accessors ---------------------------------------------------------------

    @property
    def outer_grad_state(self):
        return self._outer_grad_state

    @property
    def forward_context(self):
        return self._forward_context

    @property
    def forward_index(self):
        """The forward counter's NextIteration (its value for the next iteration)."""
        return self._forward_index

    @property
    def forward_add_op(self):
        return self._forward_add_op

    @property
    def grad_context(self):
        return self._grad_context

    @property
    def grad_index(self):
        return self._grad_index

    @property
    def history_map(self):
        return self._history_map

    @property
    def switch_map(self):
        return self._switch_map

    @property
    def unused_exits(self):
        return self._unused_exits

    @property
    def deferred_exits(self):
        return self._deferred_exits

    @property
    def forward_loop_exits(self):
        return self._forward_loop_exits

    @property
    def pending_exits_count(self):
        return self._pending_exits_count

    @pending_exits_count.setter
    def pending_exits_count(self, count):
        self._pending_exits_count = count

    def order_before_grad_index(self, op):
        """`op` must run before the backprop counter moves to the next
        iteration. Everything the backprop counter waits for goes through a
        ControlTrigger (as TensorFlow's b_sync): a pop guarded by a cond or a
        nested backprop loop whose run was on the side of a cond not taken
        is dead, and must not stop the counter."""
        self._grad_sync_ops.append((op, True))

    # --- the stacks ------------------------------------------------------------------

    def add_forward_accumulator(self, value, dead_branch=False):
        """A stack the forward loop pushes `value` onto every iteration;
        returns its handle. Called in the context tf.gradients runs in (the
        stack is made there, once per run). With `dead_branch`, `value` is
        made for the side of a tf.cond that is not taken (zeros_like)."""
        graph = value.graph
        current = graph._get_control_flow_context()
        with ops.control_dependencies(None):
            if current is not None:
                current.enter()
            try:
                with ops.colocate_with(value):
                    max_size = constant_op.constant(-1, dtypes.int32)
                    stack = data_flow_ops.stack_v2(
                        max_size=max_size, elem_type=value.dtype.base_dtype, name="f_acc"
                    )
            finally:
                if current is not None:
                    current.exit()

            entered_stack = self._forward_context.add_value(stack)
            swap = self._forward_context.swap_memory
            value_context = util.get_output_context(value.op)
            # Each push runs after its iteration's counter increment.
            with ops.control_dependencies([self._forward_add_op]):
                if value_context is self._forward_context:
                    self._forward_context.enter()
                    try:
                        push = data_flow_ops.stack_push_v2(entered_stack, value, swap_memory=swap)
                    finally:
                        self._forward_context.exit()
                    may_be_dead = False
                else:
                    if value_context is None or not value_context.is_cond_context():
                        raise TypeError(f"value_ctxt is not a CondContext: {value_context}")
                    if dead_branch:
                        # Built next to the cond so that it sees the Switch of
                        # the side not taken, but counted as the cond's.
                        value_context.outer_context.enter()
                        try:
                            push = data_flow_ops.stack_push_v2(
                                entered_stack, value, swap_memory=swap
                            )
                        finally:
                            value_context.outer_context.exit()
                        push.op._set_control_flow_context(value_context)
                    else:
                        value_context.enter()
                        try:
                            push = data_flow_ops.stack_push_v2(
                                entered_stack, value, swap_memory=swap
                            )
                        finally:
                            value_context.exit()
                    may_be_dead = True
        self._forward_sync_ops.append((push.op, may_be_dead))
        return stack

    def add_backprop_accumulated_value(self, history_value, value, dead_branch=False):
        """The pop, in the backprop loop, of the stack `history_value` that
        keeps `value`. A value made in a tf.cond was pushed only when its
        branch ran, so the pop is guarded by the (replayed) predicate."""
        history_context = history_value.op._control_flow_context
        cond_context = None
        value_context = value.op._control_flow_context
        while value_context is not None and value_context is not history_context:
            if value_context.is_cond_context():
                cond_context = value_context
                break
            value_context = value_context.outer_context
        with ops.control_dependencies(None):
            self._grad_context.enter()
            try:
                if cond_context is not None:
                    pred = None
                    grad_state = self
                    while pred is None and grad_state is not None:
                        pred = grad_state.history_map.get(cond_context.pred.name)
                        grad_state = grad_state.outer_grad_state
                    if pred is None:
                        pred = cond_context.pred
                    branch = (1 - cond_context.branch) if dead_branch else cond_context.branch
                    history_value = control_flow_ops._switch_ref_or_tensor(history_value, pred)[
                        branch
                    ]
                pop = data_flow_ops.stack_pop_v2(history_value, value.dtype.base_dtype)
                pop.set_shape(value.shape)
            finally:
                self._grad_context.exit()
        if self._grad_context.parallel_iterations > 1:
            # Pops run in iteration order too.
            self.order_before_grad_index(pop.op)
        return pop

    def get_real_value(self, value):
        """The tensor the backprop loop uses for the forward tensor `value`
        (made in this state's forward loop): a pop of its history, or the
        value itself when it is the same in every iteration."""
        real_value = self._history_map.get(value.name)
        if real_value is not None:
            return real_value
        current_value = value
        current_state = self
        history_value = None
        while True:
            enter_op = get_loop_constant_enter(current_value)
            if enter_op is not None:
                # A loop constant: look at what entered it, one loop out.
                current_value = enter_op.inputs[0]
                current_state = current_state.outer_grad_state
                if current_state is None:
                    # Outside every loop of this gradient: no history needed.
                    real_value = self._grad_context.add_value(current_value)
                    break
            elif _constant_value(current_value) is not None:
                # A constant is cheaper to copy than to stack.
                real_value = constant_op.constant(
                    _constant_value(current_value), dtype=current_value.dtype
                )
                break
            else:
                self._grad_context.exit()
                try:
                    history_value = current_state.add_forward_accumulator(current_value)
                finally:
                    self._grad_context.enter()
                break
        if real_value is None:
            real_value = current_state.add_backprop_accumulated_value(history_value, current_value)
            if current_state is not self:
                real_value = self._grad_context.add_value(real_value)
        self._history_map[value.name] = real_value
        return real_value

    # --- ordering ----------------------------------------------------------------------

    @staticmethod
    def _gate_next_iteration(next_iteration, context, sync_ops, name):
        """Makes `next_iteration`'s value wait for `sync_ops`: its input goes
        through an Identity with them as control inputs (ops that may be dead,
        inside a tf.cond, go through a ControlTrigger, which never is)."""
        if not sync_ops:
            return
        live = [op for op, may_be_dead in sync_ops if not may_be_dead]
        maybe_dead = [op for op, may_be_dead in sync_ops if may_be_dead]
        graph = next_iteration.graph
        with ops.control_dependencies(None):
            context.enter()
            try:
                controls = list(live)
                if maybe_dead:
                    with ops.control_dependencies(maybe_dead):
                        trigger = make_op("ControlTrigger", [], {}, name)
                    controls.append(trigger)
                with graph.control_dependencies(controls):
                    gated = array_ops.identity(next_iteration.op.inputs[0], name=name)
            finally:
                context.exit()
        next_iteration.op._update_input(0, gated)

    def finish_ordering(self):
        self._gate_next_iteration(
            self._forward_index, self._forward_context, self._forward_sync_ops, "f_sync"
        )
        self._gate_next_iteration(
            self._grad_index, self._grad_context, self._grad_sync_ops, "b_sync"
        )
        self._forward_sync_ops = []
        self._grad_sync_ops = []


class ControlFlowState:
    """The GradLoopStates of one tf.gradients call, by forward loop."""

    def __init__(self):
        self._map = {}

    def get_grad_state(self, op, before):
        """The state of the loop `op` is in (for an Exit before its gradient
        is built: of the loop around it)."""
        if before and util.is_loop_exit(op):
            forward_context = _outer_while_context(op._control_flow_context)
        else:
            forward_context = util.get_while_context(op)
        if forward_context is not None:
            return self._map.get(forward_context)
        return None

    def process_unused_loop_exits(self, pending_count, to_ops_set):
        """Exits no y depends on. When every exit of a loop is accounted for
        this way, they enter the backprop loop with zeros (returned) if some
        other exit of the loop has a gradient. A loop's Enters are counted as
        pending so they wait for the backprop loop."""
        loop_exits = []
        for grad_state in self._map.values():
            for y in grad_state.forward_loop_exits:
                if pending_count[y.op] == 0:
                    grad_state.pending_exits_count -= 1
                    if y.op not in to_ops_set:
                        grad_state.unused_exits.append(y)
                    if grad_state.pending_exits_count == 0:
                        loop_exits.extend(grad_state.unused_exits)
            for y in grad_state.forward_context.loop_enters:
                if pending_count[y.op] == 0:
                    pending_count[y.op] = 1
        return loop_exits

    def enter_grad_while_context(self, op, before):
        grad_state = self.get_grad_state(op, before)
        if grad_state is not None:
            grad_state.grad_context.enter()

    def exit_grad_while_context(self, op, before):
        grad_state = self.get_grad_state(op, before)
        if grad_state is not None:
            grad_state.grad_context.exit()

    def add_while_context(self, op, between_op_list, between_ops):
        """Makes the state of the loop of the Exit `op` (once); every exit of
        the loop takes part in the backprop."""
        forward_context = util.get_while_context(op)
        if forward_context in self._map:
            return
        outer_forward_context = _outer_while_context(forward_context)
        outer_grad_state = None
        if outer_forward_context is not None:
            outer_grad_state = self._map.get(outer_forward_context)
        grad_state = GradLoopState(forward_context, outer_grad_state)
        self._map[forward_context] = grad_state
        for loop_exit in grad_state.forward_loop_exits:
            if loop_exit.op not in between_ops:
                between_ops.add(loop_exit.op)
                between_op_list.append(loop_exit.op)

    def zeros_like_for_exit(self, value):
        """Zeros for an Exit output no y uses while another exit of its loop
        has a gradient (built where tf.gradients runs, or in the backprop
        loop of the loop around it)."""
        forward_context = value.op._control_flow_context
        outer_forward_context = _outer_while_context(forward_context)
        outer_grad_state = None
        if outer_forward_context is not None:
            outer_grad_state = self._map.get(outer_forward_context)
        if outer_grad_state is None:
            if _has_static_zeros(value):
                return array_ops.zeros(value.shape.dims, value.dtype)
            return array_ops.zeros_like(value, optimize=False)
        if _has_static_zeros(value):
            outer_grad_state.grad_context.enter()
            try:
                return array_ops.zeros(value.shape.dims, value.dtype)
            finally:
                outer_grad_state.grad_context.exit()
        # The shape is known when the loop ran: keep it per outer iteration.
        forward_context.outer_context.enter()
        try:
            parts = zeros_shape_parts(value)
        finally:
            forward_context.outer_context.exit()
        histories = [outer_grad_state.add_forward_accumulator(part) for part in parts]
        outer_grad_state.grad_context.enter()
        try:
            real_parts = [
                outer_grad_state.add_backprop_accumulated_value(history, part)
                for history, part in zip(histories, parts)
            ]
            return zeros_from_shape_parts(real_parts, value)
        finally:
            outer_grad_state.grad_context.exit()

    def zeros_like(self, op, index):
        """Zeros for output `index` of `op` when nothing flows back into it;
        called in the backprop loop of `op`'s loop. None for a loop Switch
        (its gradient is assembled from both outputs)."""
        if is_loop_switch(op):
            return None
        dead_branch = util.is_switch(op)
        grad_state = self._map.get(util.get_while_context(op))
        if grad_state is None:
            # Not in a loop of this gradient: a ZerosLike of the output
            # (for a tf.cond's Switch, alive only when the other side ran).
            return array_ops.zeros_like(op.outputs[index])
        op_context = op._control_flow_context
        value = op.outputs[index]
        if _has_static_zeros(value):
            result = constant_op.constant(0, shape=value.shape.dims, dtype=value.dtype)
            if dead_branch:
                # The Switch of a tf.cond: zeros only when the other side ran.
                pred = grad_state.history_map.get(op_context.pred.name)
                if pred is None:
                    pred = grad_state.get_real_value(op_context.pred)
                result = control_flow_ops._switch_ref_or_tensor(result, pred)[1 - op_context.branch]
            return result
        # Shape known only at run time: keep it for every iteration.
        if dead_branch:
            op_context.outer_context.enter()
            try:
                side = control_flow_ops._switch_ref_or_tensor(op.inputs[0], op_context.pred)[
                    1 - op_context.branch
                ]
                parts = zeros_shape_parts(side)
            finally:
                op_context.outer_context.exit()
            side.op._set_control_flow_context(op_context)
            for part in parts:
                part.op._set_control_flow_context(op_context)
        else:
            op_context.enter()
            try:
                parts = zeros_shape_parts(value)
            finally:
                op_context.exit()
        grad_state.grad_context.exit()
        try:
            histories = [
                grad_state.add_forward_accumulator(part, dead_branch=dead_branch) for part in parts
            ]
        finally:
            grad_state.grad_context.enter()
        real_parts = [
            grad_state.add_backprop_accumulated_value(history, part, dead_branch)
            for history, part in zip(histories, parts)
        ]
        return zeros_from_shape_parts(real_parts, value)

    def post_processing(self):
        """Finishes the backprop graph: a loop variable whose next value does
        not depend on its current one gets zeros as its gradient for every
        backprop iteration after the first; the counters wait for their
        iterations' pushes and pops."""
        for grad_state in self._map.values():
            for b_merge in grad_state.switch_map.values():
                first, second = b_merge.op.inputs[0], b_merge.op.inputs[1]
                if first is not second and first.name != second.name:
                    continue
                if _has_static_zeros(first):
                    grad_state.grad_context.enter()
                    try:
                        zeros = constant_op.constant(
                            0, dtype=first.dtype.base_dtype, shape=first.shape.dims
                        )
                        next_zeros = control_flow_ops._next_iteration(zeros)
                    finally:
                        grad_state.grad_context.exit()
                else:
                    outer_grad_context = grad_state.grad_context.outer_context
                    if outer_grad_context is not None:
                        outer_grad_context.enter()
                    try:
                        entered_grad = first.op.inputs[0]
                        zeros = zeros_from_shape_parts(
                            zeros_shape_parts(entered_grad), entered_grad
                        )
                    finally:
                        if outer_grad_context is not None:
                            outer_grad_context.exit()
                    grad_state.grad_context.enter()
                    try:
                        next_zeros = control_flow_ops._next_iteration(zeros)
                    finally:
                        grad_state.grad_context.exit()
                b_merge.op._update_input(1, next_zeros)
        for grad_state in self._map.values():
            grad_state.finish_ordering()


def maybe_create_control_flow_state(between_op_list, between_ops):
    """A ControlFlowState when some op between the xs and ys is a loop's
    Exit, else None. Adds every exit of those loops to the between ops."""
    loop_state = None
    for op in between_op_list:
        if util.is_loop_exit(op):
            if loop_state is None:
                loop_state = ControlFlowState()
            loop_state.add_while_context(op, between_op_list, between_ops)
    return loop_state

"""WhileContext: the context of a tf.while_loop's condition and body
(TensorFlow 1.x's design; control_flow_context.py has the common part).

A loop is the frame `self.name`. Each loop variable goes in through an Enter,
meets its value from the previous iteration in a Merge (whose second input
is the NextIteration back edge, closed with TF_UpdateEdge once the body is
built), is tested by the condition (LoopCond) and split by a Switch: the true
side feeds the body, the false side leaves through an Exit. A tensor from
outside the loop that the condition or body uses comes in through a constant
Enter, made once per tensor; an op without inputs, or whose inputs are all
such constants, runs after the loop's pivot so it runs once per iteration.

    context = WhileContext(parallel_iterations=10)
    result = context.build_loop(cond, body, loop_vars, shape_invariants, False)

For tf.gradients (control_flow_state.py), a forward loop gets an iteration
counter (add_forward_loop_counter) and its backprop loop is a WhileContext
with a `grad_state`, driven by a counter counting down from the number of
forward iterations (add_backprop_loop_counter); a value of the forward loop
that an op of the backprop loop reads is replaced by its history (a stack
pop), and a loop constant's gradient is summed over the iterations
(add_backprop_accumulator).
"""

from tensorweave.framework import dtypes, ops, tensor_shape
from tensorweave.ops import array_ops, constant_op, control_flow_ops, control_flow_state, math_ops
from tensorweave.ops import control_flow_nest as nest
from tensorweave.ops import control_flow_util as util
from tensorweave.ops.control_flow_context import (
    ControlFlowContext,
    from_flow,
    has_inputs,
    map_inputs,
    to_flow,
)


def shape_less_than_or_equal(shape1, shape2):
    """True when `shape1` is at least as specific as `shape2`."""
    if shape2.dims is None:
        return True
    if shape1.ndims != shape2.ndims:
        return False
    return all(d2 is None or d1 == d2 for d1, d2 in zip(shape1.as_list(), shape2.as_list()))


class WhileContext(ControlFlowContext):
    """The context of one tf.while_loop."""

    def __init__(
        self,
        maximum_iterations=None,
        parallel_iterations=10,
        back_prop=True,
        swap_memory=False,
        name="while_context",
        grad_state=None,
    ):
        if not isinstance(parallel_iterations, int) or parallel_iterations <= 0:
            raise ValueError(
                f"'parallel_iterations' must be a positive integer: {parallel_iterations}"
            )
        self._name = ops.get_default_graph().unique_name(name)
        super().__init__()
        self._maximum_iterations = maximum_iterations
        self._parallel_iterations = parallel_iterations
        self._back_prop = back_prop
        self._swap_memory = swap_memory
        # Ops without inputs made by the condition (body) run after these.
        self._pivot_for_pred = None
        self._pivot_for_body = None
        self._pivot = None  # the LoopCond
        self._loop_exits = []
        self._loop_enters = []
        # Set for the backprop loop of a forward loop (control_flow_state.py).
        self._grad_state = grad_state

    @property
    def maximum_iterations(self):
        return self._maximum_iterations

    @property
    def parallel_iterations(self):
        return self._parallel_iterations

    @property
    def back_prop(self):
        return self._back_prop

    @property
    def swap_memory(self):
        return self._swap_memory

    @property
    def pivot(self):
        return self._pivot

    @property
    def loop_enters(self):
        return self._loop_enters

    @property
    def loop_exits(self):
        return self._loop_exits

    @property
    def grad_state(self):
        """The GradLoopState when this is a backprop loop, else None."""
        return self._grad_state

    def get_while_context(self):
        return self

    def is_while_context(self):
        return True

    def get_control_pivot(self):
        return self._pivot_for_body if self._pivot_for_body is not None else self._pivot_for_pred

    # --- values from outside -----------------------------------------------------

    def _kept_control_inputs(self, input_op):
        """The control inputs the open tf.control_dependencies scopes give an
        Enter of `input_op`'s value: those made in a context this loop is in
        (up to the enclosing loop), which run once per entry into the loop."""
        outer_while = (
            self._outer_context.get_while_context() if self._outer_context is not None else None
        )
        kept = []
        for op in self._graph._control_inputs_for([input_op]):
            op_context = util.get_output_context(op)
            context = self._outer_context
            keep = True
            while context is not op_context:
                if context is None or context is outer_while:
                    keep = False
                    break
                context = context.outer_context
            if keep:
                kept.append(op)
        return kept

    def _make_enter(self, value, is_constant, control_inputs, use_input_shape=True, name=None):
        """An Enter of `value` into this frame, belonging to this context."""
        with ops.control_dependencies(None), self._graph.control_dependencies(control_inputs):
            enter = control_flow_ops._enter(
                value,
                self._name,
                is_constant=is_constant,
                parallel_iterations=self._parallel_iterations,
                use_input_shape=use_input_shape,
                name=name,
            )
        enter.op._set_control_flow_context(self)
        # The open tf.control_dependencies scopes count it as theirs, so ops
        # reading it need no control input of their own.
        for scope in self._graph._control_dependencies_stack:
            scope._seen.add(enter.op)
        if self._outer_context is not None:
            self._outer_context.add_inner_op(enter.op)
        return enter

    def add_value(self, value):
        """The tensor the loop uses for `value`: `value` itself when made in
        the loop, else a constant Enter of it (made once)."""
        if value.name in self._values or value.op._control_flow_context is self:
            found = self._external_values.get(value.name)
            return value if found is None else found
        self._values.add(value.name)
        real_value = self._forward_value_in_backprop(value)
        if real_value is not None:
            self._external_values[value.name] = real_value
            return real_value
        result = value
        if self._outer_context is not None:
            result = self._outer_context.add_value(value)
        enter = self._make_enter(result, True, self._kept_control_inputs(result.op))
        self._values.add(enter.name)
        self._external_values[value.name] = enter
        return enter

    def _forward_value_in_backprop(self, value):
        """While a backprop loop is being built, a value of its forward loop
        (or an Exit of a loop inside it) is replaced by its history: the
        value the forward iteration being undone had. None otherwise."""
        current = self._graph._get_control_flow_context()
        grad_context = current.get_while_context() if current is not None else None
        if grad_context is None or grad_context.grad_state is None:
            return None
        forward_context = util.get_while_context(value.op)
        if util.is_loop_exit(value.op) and forward_context is not None:
            outer = forward_context.outer_context
            forward_context = outer.get_while_context() if outer is not None else None
        if forward_context is not grad_context.grad_state.forward_context:
            return None
        return grad_context.grad_state.get_real_value(value)

    # --- the hooks Graph.create_op calls ------------------------------------------

    def _route_inputs(self, op_type, inputs, control_inputs):
        if not has_inputs(inputs):
            internal, external = self._split_control_inputs(control_inputs)
            # Made once per iteration: it runs after the pivot.
            control_inputs = internal or [self.get_control_pivot().op]
        else:
            inputs = map_inputs(inputs, self.add_value)
            control_inputs, external = self._split_control_inputs(control_inputs)
            flat = [t for item in inputs for t in (item if isinstance(item, list) else [item])]
            if not control_inputs and all(util.is_loop_constant_enter(t.op) for t in flat):
                # Only loop constants in: without the pivot it would run once,
                # not once per iteration.
                control_inputs = [self.get_control_pivot().op]
        if external:
            # An outside op to wait for becomes an Identity of one of its
            # outputs, made inside the loop (so it enters through an Enter).
            with ops.control_dependencies(None):
                self.enter()
                try:
                    pulled = [array_ops.identity(op.outputs[0]).op for op in external if op.outputs]
                finally:
                    self.exit()
            control_inputs = control_inputs + pulled
        return inputs, control_inputs

    def _add_op(self, op):
        self._values.update(tensor.name for tensor in op.outputs)
        # As TensorFlow: a loop body's values exist once per iteration, so a
        # session may neither fetch nor feed them (the Exits of an outermost
        # loop are its results and stay fetchable).
        if self._outer_context is not None or not util.is_loop_exit(op):
            op.graph.prevent_fetching(op)
            for tensor in op.outputs:
                op.graph.prevent_feeding(tensor)
        if self._outer_context is not None:
            self._outer_context.add_inner_op(op)

    # --- building the loop -----------------------------------------------------------

    def _enforce_shape_invariant(self, merge_var, next_var):
        if not shape_less_than_or_equal(next_var.shape, merge_var.shape):
            entered = merge_var.op.inputs[0].op.inputs[0]
            raise ValueError(
                f"Input tensor '{entered.name}' enters the loop with shape {entered.shape}, "
                f"but has shape {next_var.shape} after one iteration. To allow the shape "
                "to vary across iterations, use the `shape_invariants` argument of "
                "tf.while_loop to specify a less-specific shape."
            )

    def _build_loop(
        self, pred, body, flat_original_vars, flat_loop_vars, loop_vars_structure, shape_invariants
    ):
        self._values = {x.name for x in flat_loop_vars}
        if self._outer_context is not None:
            real_vars = [self._outer_context.add_value(x) for x in flat_loop_vars]
        else:
            real_vars = flat_loop_vars

        # The nearest control pivot of the contexts this loop is in: a loop
        # variable coming from a loop constant must wait for it.
        outer, control_pivot = self._outer_context, None
        while outer is not None and control_pivot is None:
            control_pivot = outer.get_control_pivot()
            outer = outer.outer_context

        enter_vars = []
        for real_var, invariant in zip(real_vars, shape_invariants):
            if not shape_less_than_or_equal(real_var.shape, invariant):
                raise ValueError(
                    f"The shape invariant specified for {real_var.name} is not compatible "
                    "with the initial shape of the loop variable. It enters the loop with "
                    f"shape {real_var.shape}, but the specified shape invariant is {invariant}."
                )
            controls = self._kept_control_inputs(real_var.op)
            if control_pivot is not None and util.is_loop_constant_enter(real_var.op):
                controls.append(control_pivot.op)
            enter_var = self._make_enter(real_var, False, controls, use_input_shape=False)
            enter_var.set_shape(invariant)
            enter_vars.append(enter_var)
        self._values = {x.name for x in enter_vars}
        self._loop_enters = enter_vars

        merge_vars = [control_flow_ops.merge([x, x])[0] for x in enter_vars]
        self._pivot_for_pred = merge_vars[0]

        # Values carried as flows (tf.TensorArray) are rebuilt around them.
        packed_vars = nest.pack_sequence_as(
            loop_vars_structure, [from_flow(x, m) for x, m in zip(flat_original_vars, merge_vars)]
        )
        condition = ops.convert_to_tensor(pred(*packed_vars))
        self._pivot = control_flow_ops.loop_cond(condition, name="LoopCond")
        switch_vars = [control_flow_ops._switch_ref_or_tensor(x, self._pivot) for x in merge_vars]

        vars_for_body = [control_flow_ops._identity(x[1]) for x in switch_vars]
        self._pivot_for_body = vars_for_body[0]
        packed_vars_for_body = nest.pack_sequence_as(
            loop_vars_structure,
            [from_flow(x, v) for x, v in zip(flat_original_vars, vars_for_body)],
        )
        body_result = body(*packed_vars_for_body)
        if not nest.is_nested(body_result):
            body_result = [body_result]
        # The outer level is compared as lists: loop_vars are usually a list
        # and a body usually returns a tuple.
        nest.assert_same_structure(list(packed_vars_for_body), list(body_result))
        original_body_result = body_result
        result = [ops.convert_to_tensor(to_flow(x)) for x in nest.flatten(body_result)]
        if len(merge_vars) != len(result):
            raise ValueError(
                "Number of inputs and outputs of 'body' must match 'loop_vars'. Got "
                f"{len(merge_vars)} for the number of inputs/outputs, and {len(result)} "
                "for 'loop_vars'."
            )
        for merge_var, value in zip(merge_vars, result):
            next_var = control_flow_ops._next_iteration(value)
            self._enforce_shape_invariant(merge_var, next_var)
            merge_var.op._update_input(1, next_var)

        exit_vars = [control_flow_ops.exit(x[0]) for x in switch_vars]
        self._loop_exits = exit_vars
        self.exit_result(exit_vars)
        return original_body_result, exit_vars

    def build_loop(self, pred, body, loop_vars, shape_invariants, return_same_structure):
        """Builds the loop; returns the Exit tensors in the structure of the
        body's result."""
        flat_original_vars = nest.flatten(loop_vars)
        flat_loop_vars = [ops.convert_to_tensor(to_flow(x)) for x in flat_original_vars]
        if shape_invariants is None:
            flat_invariants = [x.shape for x in flat_loop_vars]
        else:
            nest.assert_same_structure(loop_vars, shape_invariants, check_types=False)
            flat_invariants = [
                x.shape if s is None else tensor_shape.as_shape(s)
                for x, s in zip(flat_loop_vars, nest.flatten(shape_invariants))
            ]
        self.enter()
        try:
            with self._graph._lock:
                original_body_result, exit_vars = self._build_loop(
                    pred, body, flat_original_vars, flat_loop_vars, loop_vars, flat_invariants
                )
        finally:
            self.exit()
        flat_result = nest.flatten(original_body_result)
        packed = nest.pack_sequence_as(
            original_body_result, [from_flow(x, e) for x, e in zip(flat_result, exit_vars)]
        )
        if return_same_structure:
            return packed
        return packed[0] if len(exit_vars) == 1 else packed

    # --- gradients (control_flow_state.py builds the backprop loop) ------------

    def add_forward_loop_counter(self, outer_grad_state):
        """Adds a counter of this loop's iterations as one more loop
        variable; returns (its Exit: the number of iterations, its
        NextIteration). Called in the context around this loop."""
        controls = []
        if outer_grad_state is not None:
            # Each run of an inner loop pushes after the previous run did.
            controls = [outer_grad_state.forward_add_op]
        with ops.control_dependencies(controls):
            start = constant_op.constant(0, name="f_count")
        self.enter()
        try:
            self.add_name(start.name)
            enter_count = self._make_enter(start, False, [], name="f_count")
            self._loop_enters.append(enter_count)
            merge_count = control_flow_ops.merge([enter_count, enter_count])[0]
            switch_count = control_flow_ops.switch(merge_count, self._pivot)
            index = math_ops.add(switch_count[1], 1)
            next_count = control_flow_ops._next_iteration(index)
            merge_count.op._update_input(1, next_count)
            total_iterations = control_flow_ops.exit(switch_count[0], name="f_count")
            self._loop_exits.append(total_iterations)
            self.exit_result([total_iterations])
        finally:
            self.exit()
        return total_iterations, next_count

    def add_backprop_loop_counter(self, count, outer_grad_state):
        """Builds this backprop loop's skeleton: a counter that starts at
        the forward loop's iteration count `count` and runs the loop while it
        is at least 1, counting down. Returns its NextIteration."""
        one = constant_op.constant(1, name="b_count")
        self.enter()
        try:
            self.add_name(count.name)
            enter_count = self._make_enter(count, False, [], name="b_count")
            self._loop_enters.append(enter_count)
            merge_count = control_flow_ops.merge([enter_count, enter_count])[0]
            self._pivot_for_pred = merge_count
            pred = math_ops.greater_equal(merge_count, one)
            self._pivot = control_flow_ops.loop_cond(pred, name="b_count")
            switch_count = control_flow_ops.switch(merge_count, self._pivot)
            index = math_ops.subtract(switch_count[1], one)
            self._pivot_for_body = index
            next_count = control_flow_ops._next_iteration(index)
            merge_count.op._update_input(1, next_count)
            final_zero = control_flow_ops.exit(switch_count[0], name="b_count")
            self._loop_exits.append(final_zero)
            if outer_grad_state is not None:
                # The outer backprop iteration moves on once this run ended.
                outer_grad_state.order_before_grad_index(final_zero.op)
            self.exit_result([final_zero])
        finally:
            self.exit()
        return next_count

    def add_backprop_accumulator(self, op, grad):
        """The sum over the backprop iterations of `grad`, the gradient
        reaching the loop constant Enter `op` in each: a loop variable of
        this backprop loop starting at zeros; returns its Exit. Called in
        this (backprop) context, and leaves it entered. A TensorList's
        gradients (variants) start from a list of unset elements as long as
        the list and are summed by AddN."""
        is_list = grad.dtype.base_dtype == dtypes.variant
        self.exit()
        try:
            zeros = self._backprop_accumulator_zeros(op, grad)
        except BaseException:
            # The caller's cleanup exits this context: leave it entered.
            self.enter()
            raise
        self.enter()
        self.add_name(zeros.name)
        enter_acc = self._make_enter(zeros, False, [], name="b_acc")
        self._loop_enters.append(enter_acc)
        merge_acc = control_flow_ops.merge([enter_acc, enter_acc], name="b_acc")[0]
        switch_false, switch_true = control_flow_ops.switch(merge_acc, self._pivot)
        if is_list:
            add_acc = math_ops.add_n([switch_true, grad])
        else:
            add_acc = math_ops.add(switch_true, grad)
        merge_acc.op._update_input(1, control_flow_ops._next_iteration(add_acc))
        result = control_flow_ops.exit(switch_false, name="b_acc")
        self._loop_exits.append(result)
        self.exit_result([result])
        return result

    def _backprop_accumulator_zeros(self, op, grad):
        """The starting value of add_backprop_accumulator's sum, built
        outside this context: zeros of `grad`'s shape, or for a shape known
        only at run time (or a TensorList) zeros shaped like what entered
        `op`, that shape kept per iteration of an enclosing loop."""
        shape = grad.shape
        is_list = grad.dtype.base_dtype == dtypes.variant
        if shape.is_fully_defined() and not is_list:
            if self._outer_context is not None:
                self._outer_context.enter()
            try:
                zeros = constant_op.constant(0, grad.dtype, shape=shape.dims, name="b_acc")
            finally:
                if self._outer_context is not None:
                    self._outer_context.exit()
        else:
            value = op.inputs[0]
            outer = self._outer_context
            if outer is not None and outer.is_while_context() and outer.grad_state is not None:
                # The shape of what entered, per run of the nested loop.
                forward_context = self._grad_state.forward_context
                forward_context.outer_context.enter()
                try:
                    parts = control_flow_state.zeros_shape_parts(value)
                finally:
                    forward_context.outer_context.exit()
                outer_grad_state = self._grad_state.outer_grad_state
                histories = [outer_grad_state.add_forward_accumulator(part) for part in parts]
                outer.enter()
                try:
                    real_parts = [
                        outer_grad_state.add_backprop_accumulated_value(history, part)
                        for history, part in zip(histories, parts)
                    ]
                    zeros = control_flow_state.zeros_from_shape_parts(real_parts, value)
                finally:
                    outer.exit()
            else:
                if outer is not None:
                    outer.enter()
                try:
                    zeros = control_flow_state.zeros_from_shape_parts(
                        control_flow_state.zeros_shape_parts(value), value
                    )
                finally:
                    if outer is not None:
                        outer.exit()
        return zeros

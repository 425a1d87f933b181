"""tf.nn.dynamic_rnn, static_rnn and their bidirectional forms (TensorFlow 1.x).

    cell = tf.nn.rnn_cell.LSTMCell(64)
    outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)

dynamic_rnn runs the cell in one tf.while_loop over time (inputs read from
and outputs written to TensorArrays); static_rnn unrolls one cell call per
element of a Python list. With `sequence_length`, a batch entry's outputs
are zeros and its state is copied through from the step its sequence ends,
as TensorFlow does. Scopes and variable names are TensorFlow's ("rnn/...",
"bidirectional_rnn/fw/...").
"""

import contextlib

from tensorweave.framework import dtypes, ops, tensor_shape
from tensorweave.framework.api_export import tf_export
from tensorweave.ops import array_ops, logging_ops, math_ops, tensor_array_ops, variable_scope
from tensorweave.ops import control_flow_nest as nest
from tensorweave.ops.cond import cond
from tensorweave.ops.reverse_ops import reverse, reverse_sequence
from tensorweave.ops.while_loop import while_loop


def _transpose_batch_time(value):
    """[batch, time, ...] <-> [time, batch, ...]."""
    value = ops.convert_to_tensor(value)
    rank = value.shape.ndims
    if rank is not None and rank < 2:
        return value
    if rank is None:
        perm = array_ops.concat([[1, 0], array_ops.range(2, array_ops.rank(value))], 0)
    else:
        perm = [1, 0] + list(range(2, rank))
    result = array_ops.transpose(value, perm)
    if rank is not None:
        dims = value.shape.as_list()
        result.set_shape([dims[1], dims[0]] + dims[2:])
    return result


def _best_effort_batch_size(flat_input, batch_axis=1):
    """The static batch size of the first input that knows it, else a tensor."""
    for value in flat_input:
        shape = value.shape
        if shape.ndims is None:
            continue
        if shape.ndims < 2:
            raise ValueError(f"Input tensor should have rank >= 2; got shape {shape}")
        if shape[batch_axis].value is not None:
            return shape[batch_axis].value
    return array_ops.shape(flat_input[0])[batch_axis]


def _infer_state_dtype(explicit_dtype, state):
    if explicit_dtype is not None:
        return explicit_dtype
    flat = nest.flatten(state)
    if not flat:
        raise ValueError("Unable to infer dtype from empty state.")
    first = flat[0].dtype
    if any(s.dtype != first for s in flat):
        raise ValueError(f"State has tensors of different inferred dtypes: {flat}")
    return first


def _size_dims(size):
    return size.as_list() if isinstance(size, tensor_shape.TensorShape) else [size]


def _initial_state(cell, initial_state, batch_size, dtype):
    if initial_state is not None:
        return initial_state
    if dtype is None:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    return cell.zero_state(batch_size, dtype)


def _copy_through(done, old, new):
    """Per batch row: `old` where the sequence has ended (`done`), else `new`."""
    if new.shape.ndims == 0:
        return new
    with ops.colocate_with(new):
        return math_ops.where(done, old, new)


def _finished_step(done, zero_output, state, new_output, new_state):
    """Outputs zeroed and state kept for the rows whose sequence has ended
    (`done`, a [batch] bool: time >= sequence_length)."""
    nest.assert_same_structure(state, new_state)
    flat_zero, flat_state = nest.flatten(zero_output), nest.flatten(state)
    flat_new_output, flat_new_state = nest.flatten(new_output), nest.flatten(new_state)
    outputs = [_copy_through(done, z, o) for z, o in zip(flat_zero, flat_new_output)]
    states = [_copy_through(done, s, n) for s, n in zip(flat_state, flat_new_state)]
    for output, zero in zip(outputs, flat_zero):
        output.set_shape(zero.shape)
    for new, old in zip(states, flat_state):
        new.set_shape(old.shape)
    return outputs, states


def _checked_sequence_length(sequence_length, batch_size):
    """sequence_length as int32, checked at run time to be [batch_size]."""
    sequence_length = array_ops.cast(sequence_length, dtypes.int32)
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError(
            "sequence_length must be a vector of length batch_size, "
            f"but saw shape: {sequence_length.shape}"
        )
    sequence_length = array_ops.identity(sequence_length, name="sequence_length")
    actual = array_ops.shape(sequence_length)
    expected = array_ops.stack([batch_size])
    check = logging_ops.Assert(
        math_ops.reduce_all(math_ops.equal(actual, expected)),
        [
            f"Expected shape for Tensor {sequence_length.name} is ",
            expected,
            " but saw shape: ",
            actual,
        ],
    )
    with ops.control_dependencies([check]):
        return array_ops.identity(sequence_length, name="CheckSeqLen")


def _dynamic_rnn_loop(
    cell, inputs, initial_state, parallel_iterations, swap_memory, sequence_length, dtype
):
    """The while loop over time of dynamic_rnn: time-major inputs in,
    time-major outputs and the final state out."""
    flat_input = nest.flatten(inputs)
    flat_output_size = nest.flatten(cell.output_size)
    time_steps = array_ops.shape(flat_input[0])[0]
    batch_size = _best_effort_batch_size(flat_input)
    got_shapes = [value.shape for value in flat_input]
    for shape in got_shapes:
        if shape.ndims is None or shape.ndims < 3:
            raise ValueError(f"Shape {shape} must have rank at least 3")
    const_time_steps = got_shapes[0][0].value
    const_batch_size = got_shapes[0][1].value
    for shape in got_shapes:
        if shape[2:].num_elements() is None:
            raise ValueError(
                "Input size (depth of inputs) must be accessible via shape inference,"
                " but saw value None."
            )
    state_dtype = _infer_state_dtype(dtype, initial_state)
    zero_output = nest.pack_sequence_as(
        cell.output_size,
        [
            array_ops.zeros(
                _zeros_shape(batch_size, _size_dims(size)), dtype=state_dtype, name="zeros"
            )
            for size in flat_output_size
        ],
    )
    if sequence_length is not None:
        max_sequence_length = math_ops.reduce_max(sequence_length)
    else:
        max_sequence_length = time_steps
    time = ops.convert_to_tensor(0, dtype=dtypes.int32, name="time")
    with ops.name_scope("dynamic_rnn") as base_name:
        pass

    output_tas = tuple(
        tensor_array_ops.TensorArray(
            dtype=state_dtype,
            size=time_steps,
            element_shape=tensor_shape.TensorShape([const_batch_size] + _size_dims(size)),
            tensor_array_name=base_name + f"output_{index}",
        )
        for index, size in enumerate(flat_output_size)
    )
    input_tas = tuple(
        tensor_array_ops.TensorArray(
            dtype=value.dtype,
            size=time_steps,
            element_shape=value.shape[1:],
            tensor_array_name=base_name + f"input_{index}",
        )
        for index, value in enumerate(flat_input)
    )
    input_tas = tuple(ta.unstack(value) for ta, value in zip(input_tas, flat_input))

    def time_step(time, output_tas, state):
        step_inputs = tuple(ta.read(time) for ta in input_tas)
        for value, shape in zip(step_inputs, got_shapes):
            value.set_shape(shape[1:])
        step_inputs = nest.pack_sequence_as(inputs, list(step_inputs))
        output, new_state = cell(step_inputs, state)
        if sequence_length is not None:
            flat_output, flat_state = _finished_step(
                time >= sequence_length, zero_output, state, output, new_state
            )
            new_state = nest.pack_sequence_as(state, flat_state)
        else:
            flat_output = nest.flatten(output)
        output_tas = tuple(ta.write(time, out) for ta, out in zip(output_tas, flat_output))
        return time + 1, output_tas, new_state

    loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, max_sequence_length))
    _, final_tas, final_state = while_loop(
        lambda time, *_: time < loop_bound,
        time_step,
        (time, output_tas, initial_state),
        parallel_iterations=parallel_iterations,
        maximum_iterations=time_steps,
        swap_memory=swap_memory,
    )
    final_outputs = []
    for ta, size in zip(final_tas, flat_output_size):
        stacked = ta.stack()
        stacked.set_shape([const_time_steps, const_batch_size] + _size_dims(size))
        final_outputs.append(stacked)
    return nest.pack_sequence_as(cell.output_size, final_outputs), final_state


def _zeros_shape(batch_size, dims):
    if isinstance(batch_size, ops.Tensor):
        return array_ops.stack([batch_size] + dims)
    return [batch_size] + dims


@tf_export("nn.dynamic_rnn")
def dynamic_rnn(
    cell,
    inputs,
    sequence_length=None,
    initial_state=None,
    dtype=None,
    parallel_iterations=None,
    swap_memory=False,
    time_major=False,
    scope=None,
):
    """Runs `cell` over the time axis of `inputs` ([batch, time, ...], or
    [time, batch, ...] with time_major) in a tf.while_loop.

    Returns (outputs, state): outputs in the inputs' layout; state the last
    step's (per batch entry, the state at its sequence_length).
    """
    if not callable(cell):
        raise TypeError("cell must be an instance of RNNCell")
    with _driver_scope(scope, "rnn"):
        flat_input = [ops.convert_to_tensor(value) for value in nest.flatten(inputs)]
        if not time_major:
            flat_input = [_transpose_batch_time(value) for value in flat_input]
        parallel_iterations = parallel_iterations or 32
        batch_size = _best_effort_batch_size(flat_input)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        if sequence_length is not None:
            sequence_length = _checked_sequence_length(sequence_length, batch_size)
        inputs = nest.pack_sequence_as(inputs, flat_input)
        outputs, final_state = _dynamic_rnn_loop(
            cell,
            inputs,
            state,
            parallel_iterations=parallel_iterations,
            swap_memory=swap_memory,
            sequence_length=sequence_length,
            dtype=dtype,
        )
        if not time_major:
            outputs = nest.map_structure(_transpose_batch_time, outputs)
        return outputs, final_state


def _reverse_time(value, lengths, seq_axis, batch_axis):
    if lengths is None:
        return reverse(value, axis=[seq_axis])
    return reverse_sequence(value, lengths, seq_axis=seq_axis, batch_axis=batch_axis)


@tf_export("nn.bidirectional_dynamic_rnn")
def bidirectional_dynamic_rnn(
    cell_fw,
    cell_bw,
    inputs,
    sequence_length=None,
    initial_state_fw=None,
    initial_state_bw=None,
    dtype=None,
    parallel_iterations=None,
    swap_memory=False,
    time_major=False,
    scope=None,
):
    """dynamic_rnn forward (scope fw) and over the time-reversed inputs
    (scope bw, each sequence reversed within its length); returns
    ((output_fw, output_bw), (state_fw, state_bw)), output_bw in input order."""
    with variable_scope.variable_scope(scope or "bidirectional_rnn"):
        with variable_scope.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw,
                inputs,
                sequence_length=sequence_length,
                initial_state=initial_state_fw,
                dtype=dtype,
                parallel_iterations=parallel_iterations,
                swap_memory=swap_memory,
                time_major=time_major,
                scope=fw_scope,
            )
        time_axis, batch_axis = (0, 1) if time_major else (1, 0)
        with variable_scope.variable_scope("bw") as bw_scope:
            reversed_inputs = nest.map_structure(
                lambda value: _reverse_time(value, sequence_length, time_axis, batch_axis), inputs
            )
            reversed_outputs, state_bw = dynamic_rnn(
                cell_bw,
                reversed_inputs,
                sequence_length=sequence_length,
                initial_state=initial_state_bw,
                dtype=dtype,
                parallel_iterations=parallel_iterations,
                swap_memory=swap_memory,
                time_major=time_major,
                scope=bw_scope,
            )
    output_bw = _reverse_time(reversed_outputs, sequence_length, time_axis, batch_axis)
    return (output_fw, output_bw), (state_fw, state_bw)


@contextlib.contextmanager
def _driver_scope(scope, default_name):
    """The variable scope of an RNN driver. A VariableScope passed in is
    re-entered as TensorFlow does: its ops go to a fresh name scope named
    after its last component (bidirectional_rnn/fw/fw/while/...)."""
    if isinstance(scope, variable_scope.VariableScope):
        with (
            variable_scope.variable_scope(scope, auxiliary_name_scope=False) as entered,
            ops.name_scope(scope.name.rsplit("/", 1)[-1]),
        ):
            yield entered
    else:
        with variable_scope.variable_scope(scope or default_name) as entered:
            yield entered


def _rnn_step_with_conds(
    time, sequence_length, min_sequence_length, max_sequence_length, zero_output, state, call_cell
):
    """static_rnn's step with sequence_length: skips the cell past the longest
    sequence and copies state through where some sequences have ended."""
    flat_state = nest.flatten(state)
    flat_zero = nest.flatten(zero_output)
    done = time >= sequence_length

    def step():
        new_output, new_state = call_cell()
        nest.assert_same_structure(state, new_state)
        flat_new_output, flat_new_state = nest.flatten(new_output), nest.flatten(new_state)

        def copy_some_through():
            outputs, states = _finished_step(done, zero_output, state, new_output, new_state)
            return outputs + states

        return cond(
            time < min_sequence_length,
            lambda: flat_new_output + flat_new_state,
            copy_some_through,
        )

    results = cond(time >= max_sequence_length, lambda: flat_zero + flat_state, step)
    results = list(results) if isinstance(results, (list, tuple)) else [results]
    outputs, states = results[: len(flat_zero)], results[len(flat_zero) :]
    for output, zero in zip(outputs, flat_zero):
        output.set_shape(zero.shape)
    for new, old in zip(states, flat_state):
        new.set_shape(old.shape)
    return (
        nest.pack_sequence_as(zero_output, outputs),
        nest.pack_sequence_as(state, states),
    )


@tf_export("nn.static_rnn")
def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Unrolls `cell` over `inputs`, a list of [batch, ...] tensors (one per
    step); returns (outputs list, final state)."""
    if not nest.is_nested(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    outputs = []
    with _driver_scope(scope, "rnn") as varscope:
        flat_first = [ops.convert_to_tensor(value) for value in nest.flatten(inputs[0])]
        batch_size = _best_effort_batch_size(flat_first, batch_axis=0)
        state = _initial_state(cell, initial_state, batch_size, dtype)
        if sequence_length is not None:
            sequence_length = array_ops.cast(sequence_length, dtypes.int32)
            sequence_length = array_ops.identity(sequence_length, name="sequence_length")
            state_dtype = _infer_state_dtype(dtype, state)
            zero_output = nest.pack_sequence_as(
                cell.output_size,
                [
                    array_ops.zeros(_zeros_shape(batch_size, _size_dims(size)), dtype=state_dtype)
                    for size in nest.flatten(cell.output_size)
                ],
            )
            min_sequence_length = math_ops.reduce_min(sequence_length)
            max_sequence_length = math_ops.reduce_max(sequence_length)
        for time, step_input in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()

            def call_cell(step_input=step_input, state=state):
                return cell(step_input, state)

            if sequence_length is not None:
                output, state = _rnn_step_with_conds(
                    time,
                    sequence_length,
                    min_sequence_length,
                    max_sequence_length,
                    zero_output,
                    state,
                    call_cell,
                )
            else:
                output, state = call_cell()
            outputs.append(output)
    return outputs, state


def _reverse_list(steps, lengths):
    """A list of per-step tensors in reverse time order, each batch entry
    reversed within its length when lengths are given."""
    if lengths is None:
        return list(reversed(steps))
    flat_steps = [nest.flatten(step) for step in steps]
    reversed_parts = []
    for parts in zip(*flat_steps):
        joined = array_ops.stack(list(parts))
        reversed_parts.append(
            array_ops.unstack(reverse_sequence(joined, lengths, seq_axis=0, batch_axis=1))
        )
    return [
        nest.pack_sequence_as(steps[0], [parts[time] for parts in reversed_parts])
        for time in range(len(steps))
    ]


@tf_export("nn.static_bidirectional_rnn")
def static_bidirectional_rnn(
    cell_fw,
    cell_bw,
    inputs,
    initial_state_fw=None,
    initial_state_bw=None,
    dtype=None,
    sequence_length=None,
    scope=None,
):
    """static_rnn forward and over the reversed inputs; returns (outputs, with
    each step's forward and backward outputs concatenated, state_fw, state_bw)."""
    if not nest.is_nested(inputs):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    with variable_scope.variable_scope(scope or "bidirectional_rnn"):
        with variable_scope.variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(
                cell_fw, inputs, initial_state_fw, dtype, sequence_length, scope=fw_scope
            )
        with variable_scope.variable_scope("bw") as bw_scope:
            reversed_inputs = _reverse_list(inputs, sequence_length)
            reversed_outputs, state_bw = static_rnn(
                cell_bw,
                reversed_inputs,
                initial_state_bw,
                dtype,
                sequence_length,
                scope=bw_scope,
            )
    output_bw = _reverse_list(reversed_outputs, sequence_length)
    outputs = [
        nest.pack_sequence_as(
            fw,
            [array_ops.concat([f, b], 1) for f, b in zip(nest.flatten(fw), nest.flatten(bw))],
        )
        for fw, bw in zip(output_fw, output_bw)
    ]
    return outputs, state_fw, state_bw

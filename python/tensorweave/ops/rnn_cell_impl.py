"""tf.nn.rnn_cell: TensorFlow 1.x's recurrent cells.

A cell maps (inputs, state) to (output, new_state) for one time step; the
drivers in rnn.py (tf.nn.dynamic_rnn, static_rnn, ...) call it per step.

    cell = tf.nn.rnn_cell.BasicLSTMCell(128)        # kernel [depth + 128, 512], gates i, j, f, o
    outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)   # rnn/basic_lstm_cell/kernel

A cell owns one variable scope, opened on its first call (its `name`, else
a unique default such as basic_lstm_cell, gru_cell_1, ... in the enclosing
scope) and re-entered with reuse on later calls, so every time step shares
the weights and the variables get TensorFlow 1.x's names and shapes:
checkpoints and GraphDefs written by TensorFlow line up.
"""

import collections
import numbers

from tensorweave.framework import dtypes, ops, tensor_shape
from tensorweave.ops import (
    array_ops,
    clip_ops,
    constant_op,
    init_ops,
    math_ops,
    nn_ops,
    variable_scope,
)
from tensorweave.ops import control_flow_nest as nest

_BIAS_VARIABLE_NAME = "bias"
_WEIGHTS_VARIABLE_NAME = "kernel"


def _snake_case(name):
    """BasicLSTMCell -> basic_lstm_cell, as TensorFlow names a layer's scope."""
    out = []
    for index, char in enumerate(name):
        if char.isupper() and index > 0:
            previous, following = name[index - 1], name[index + 1 : index + 2]
            if previous.islower() or previous.isdigit() or (following and following.islower()):
                out.append("_")
        out.append(char.lower())
    return "".join(out)


def _zero_state_tensors(state_size, batch_size, dtype):
    """Zeros of [batch_size] + size for each size in the (nested) state_size."""

    def zeros_of(size):
        dims = size.as_list() if isinstance(size, tensor_shape.TensorShape) else [size]
        if isinstance(batch_size, ops.Tensor):
            zeros = array_ops.zeros(array_ops.stack([batch_size] + dims), dtype=dtype)
            zeros.set_shape([None] + dims)
            return zeros
        return array_ops.zeros([batch_size] + dims, dtype=dtype)

    return nest.map_structure(zeros_of, state_size)


def _input_depth(inputs_shape, cell):
    inputs_shape = tensor_shape.as_shape(inputs_shape)
    if inputs_shape.ndims is None or inputs_shape[-1].value is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {inputs_shape}")
    return inputs_shape[-1].value


class RNNCell:
    """Abstract cell: subclasses give state_size, output_size, build and call."""

    def __init__(self, trainable=True, name=None, dtype=None, _reuse=None, **kwargs):
        if kwargs:
            raise TypeError(f"Keyword argument not understood: {', '.join(sorted(kwargs))}")
        self.trainable = trainable
        self._name_argument = name
        self._reuse = _reuse
        self.dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self._scope = None
        self.built = False
        self._trainable_weights = []
        self._non_trainable_weights = []

    @property
    def _base_name(self):
        return self._name_argument or _snake_case(type(self).__name__)

    @property
    def name(self):
        if self._scope is None:
            return self._base_name
        return self._scope.name.rsplit("/", 1)[-1]

    @property
    def state_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        raise NotImplementedError("Abstract method")

    @property
    def trainable_weights(self):
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self):
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    variables = weights
    trainable_variables = trainable_weights

    def add_variable(self, name, shape, dtype=None, initializer=None, trainable=True, **unused):
        """tf.get_variable in the cell's variable scope."""
        variable = variable_scope.get_variable(
            name,
            shape=shape,
            dtype=dtype or self.dtype or dtypes.float32,
            initializer=initializer,
            trainable=trainable and self.trainable,
        )
        weights = self._trainable_weights if trainable else self._non_trainable_weights
        if all(variable is not known for known in weights):
            weights.append(variable)
        return variable

    add_weight = add_variable

    def build(self, inputs_shape):
        self.built = True

    def call(self, inputs, state):
        raise NotImplementedError(f"{type(self).__name__} must define call()")

    def _first_scope(self, scope):
        if scope is not None:
            return variable_scope.variable_scope(scope, reuse=self._reuse)
        if self._reuse:
            return variable_scope.variable_scope(self._base_name, reuse=self._reuse)
        return variable_scope.variable_scope(None, default_name=self._base_name)

    def __call__(self, inputs, state, scope=None):
        """Runs one step in the cell's variable scope (created on the first
        call, then re-entered with reuse so each step shares the weights)."""
        if self._scope is None:
            with self._first_scope(scope) as captured:
                self._scope = captured
                return self._build_and_call(inputs, state)
        with (
            variable_scope.variable_scope(self._scope, reuse=True, auxiliary_name_scope=False),
            ops.name_scope(self._scope.original_name_scope),
        ):
            return self._build_and_call(inputs, state)

    def _build_and_call(self, inputs, state):
        if not self.built:
            first_input = nest.flatten(inputs)[0]
            if self.dtype is None:
                self.dtype = ops.convert_to_tensor(first_input).dtype.base_dtype
            self.build(ops.convert_to_tensor(first_input).shape)
            self.built = True
        return self.call(inputs, state)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            inputs = ops.convert_to_tensor(inputs)
            batch_size = inputs.shape[0].value
            if batch_size is None:
                batch_size = array_ops.shape(inputs)[0]
            dtype = inputs.dtype
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zeros of [batch_size, size] for each part of state_size."""
        with ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            return _zero_state_tensors(self.state_size, batch_size, dtype)


class _LayerRNNCell(RNNCell):
    """A cell whose variables are made by build() (TensorFlow's LayerRNNCell)."""


class BasicRNNCell(_LayerRNNCell):
    """output = new_state = activation(W [inputs, state] + b)."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        self._kernel = self.add_variable(
            _WEIGHTS_VARIABLE_NAME, shape=[depth + self._num_units, self._num_units]
        )
        self._bias = self.add_variable(
            _BIAS_VARIABLE_NAME,
            shape=[self._num_units],
            initializer=init_ops.zeros_initializer(dtype=self.dtype),
        )
        self.built = True

    def call(self, inputs, state):
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._kernel)
        output = self._activation(nn_ops.bias_add(gate_inputs, self._bias))
        return output, output


class GRUCell(_LayerRNNCell):
    """Gated recurrent unit: reset and update gates (variables gates/kernel,
    gates/bias initialized to 1) and a candidate (candidate/kernel, candidate/bias)."""

    def __init__(
        self,
        num_units,
        activation=None,
        reuse=None,
        kernel_initializer=None,
        bias_initializer=None,
        name=None,
        dtype=None,
        **kwargs,
    ):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = activation or math_ops.tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        units = self._num_units
        self._gate_kernel = self.add_variable(
            "gates/" + _WEIGHTS_VARIABLE_NAME,
            shape=[depth + units, 2 * units],
            initializer=self._kernel_initializer,
        )
        self._gate_bias = self.add_variable(
            "gates/" + _BIAS_VARIABLE_NAME,
            shape=[2 * units],
            initializer=self._bias_initializer
            if self._bias_initializer is not None
            else init_ops.constant_initializer(1.0, dtype=self.dtype),
        )
        self._candidate_kernel = self.add_variable(
            "candidate/" + _WEIGHTS_VARIABLE_NAME,
            shape=[depth + units, units],
            initializer=self._kernel_initializer,
        )
        self._candidate_bias = self.add_variable(
            "candidate/" + _BIAS_VARIABLE_NAME,
            shape=[units],
            initializer=self._bias_initializer
            if self._bias_initializer is not None
            else init_ops.zeros_initializer(dtype=self.dtype),
        )
        self.built = True

    def call(self, inputs, state):
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._gate_kernel)
        value = math_ops.sigmoid(nn_ops.bias_add(gate_inputs, self._gate_bias))
        reset, update = array_ops.split(value=value, num_or_size_splits=2, axis=1)
        candidate = math_ops.matmul(
            array_ops.concat([inputs, reset * state], 1), self._candidate_kernel
        )
        c = self._activation(nn_ops.bias_add(candidate, self._candidate_bias))
        new_h = update * state + (1 - update) * c
        return new_h, new_h


_LSTMStateTupleBase = collections.namedtuple("LSTMStateTuple", ("c", "h"))


class LSTMStateTuple(_LSTMStateTupleBase):
    """(c, h): an LSTM's cell state and output."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def _lstm_state_parts(state, num_units, second_size, state_is_tuple):
    """(c, h) of a tuple state or of a [batch, num_units + second_size] one."""
    if state_is_tuple:
        return state
    c = array_ops.slice(state, [0, 0], [-1, num_units])
    h = array_ops.slice(state, [0, num_units], [-1, second_size])
    return c, h


class BasicLSTMCell(_LayerRNNCell):
    """LSTM without peepholes or projection: gates i, j, f, o from one kernel
    [depth + units, 4 units]; forget_bias is added to f."""

    def __init__(
        self,
        num_units,
        forget_bias=1.0,
        state_is_tuple=True,
        activation=None,
        reuse=None,
        name=None,
        dtype=None,
        **kwargs,
    ):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh

    @property
    def state_size(self):
        if self._state_is_tuple:
            return LSTMStateTuple(self._num_units, self._num_units)
        return 2 * self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        units = self._num_units
        self._kernel = self.add_variable(_WEIGHTS_VARIABLE_NAME, shape=[depth + units, 4 * units])
        self._bias = self.add_variable(
            _BIAS_VARIABLE_NAME,
            shape=[4 * units],
            initializer=init_ops.zeros_initializer(dtype=self.dtype),
        )
        self.built = True

    def call(self, inputs, state):
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(value=state, num_or_size_splits=2, axis=1)
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, h], 1), self._kernel)
        gate_inputs = nn_ops.bias_add(gate_inputs, self._bias)
        i, j, f, o = array_ops.split(value=gate_inputs, num_or_size_splits=4, axis=1)
        forget_bias = constant_op.constant(self._forget_bias, dtype=f.dtype)
        new_c = math_ops.add(
            math_ops.multiply(c, math_ops.sigmoid(math_ops.add(f, forget_bias))),
            math_ops.multiply(math_ops.sigmoid(i), self._activation(j)),
        )
        new_h = math_ops.multiply(self._activation(new_c), math_ops.sigmoid(o))
        if self._state_is_tuple:
            new_state = LSTMStateTuple(new_c, new_h)
        else:
            new_state = array_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(_LayerRNNCell):
    """LSTM with optional peepholes (w_f_diag, w_i_diag, w_o_diag), cell
    clipping and an output projection (projection/kernel [units, num_proj])."""

    def __init__(
        self,
        num_units,
        use_peepholes=False,
        cell_clip=None,
        initializer=None,
        num_proj=None,
        proj_clip=None,
        num_unit_shards=None,
        num_proj_shards=None,
        forget_bias=1.0,
        state_is_tuple=True,
        activation=None,
        reuse=None,
        name=None,
        dtype=None,
        **kwargs,
    ):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise ValueError("num_unit_shards and num_proj_shards are not supported (deprecated)")
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh
        output = num_proj if num_proj else num_units
        if state_is_tuple:
            self._state_size = LSTMStateTuple(num_units, output)
        else:
            self._state_size = num_units + output
        self._output_size = output

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._output_size

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape, self)
        units = self._num_units
        h_depth = self._num_proj if self._num_proj is not None else units
        self._kernel = self.add_variable(
            _WEIGHTS_VARIABLE_NAME,
            shape=[depth + h_depth, 4 * units],
            initializer=self._initializer,
        )
        self._bias = self.add_variable(
            _BIAS_VARIABLE_NAME,
            shape=[4 * units],
            initializer=init_ops.zeros_initializer(dtype=self.dtype),
        )
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("w_f_diag", [units], initializer=self._initializer)
            self._w_i_diag = self.add_variable("w_i_diag", [units], initializer=self._initializer)
            self._w_o_diag = self.add_variable("w_o_diag", [units], initializer=self._initializer)
        if self._num_proj is not None:
            self._proj_kernel = self.add_variable(
                "projection/" + _WEIGHTS_VARIABLE_NAME,
                shape=[units, self._num_proj],
                initializer=self._initializer,
            )
        self.built = True

    def call(self, inputs, state):
        units = self._num_units
        output_size = self._num_proj or units
        c_prev, m_prev = _lstm_state_parts(state, units, output_size, self._state_is_tuple)
        lstm_matrix = math_ops.matmul(array_ops.concat([inputs, m_prev], 1), self._kernel)
        lstm_matrix = nn_ops.bias_add(lstm_matrix, self._bias)
        i, j, f, o = array_ops.split(value=lstm_matrix, num_or_size_splits=4, axis=1)
        sigmoid = math_ops.sigmoid
        if self._use_peepholes:
            c = sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev + sigmoid(
                i + self._w_i_diag * c_prev
            ) * self._activation(j)
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = clip_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = clip_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        if self._state_is_tuple:
            new_state = LSTMStateTuple(c, m)
        else:
            new_state = array_ops.concat([c, m], 1)
        return m, new_state


class MultiRNNCell(RNNCell):
    """Cells stacked in layers: cell i reads cell i-1's output; variables
    under multi_rnn_cell/cell_<i>/."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_nested(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_nested(c.state_size) for c in self._cells):
            raise ValueError(
                "Some cells return tuples of states, but the flag state_is_tuple is not set. "
                f"State sizes are: {[c.state_size for c in self._cells]}"
            )

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    @property
    def trainable_weights(self):
        return [w for cell in self._cells for w in cell.trainable_weights]

    @property
    def weights(self):
        return [w for cell in self._cells for w in cell.weights]

    variables = weights
    trainable_variables = trainable_weights

    def __call__(self, inputs, state, scope=None):
        if self._scope is None and scope is None:
            # TensorFlow re-enters the enclosing variable scope first, so the
            # ops go under e.g. rnn/while/rnn/multi_rnn_cell/.
            enclosing = variable_scope.get_variable_scope()
            relative = enclosing.name.rsplit("/", 1)[-1]
            if relative:
                with (
                    variable_scope.variable_scope(enclosing, auxiliary_name_scope=False),
                    ops.name_scope(relative),
                ):
                    return super().__call__(inputs, state)
        return super().__call__(inputs, state, scope=scope)

    def zero_state(self, batch_size, dtype):
        with ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return super().zero_state(batch_size, dtype)

    def call(self, inputs, state):
        current_input = inputs
        new_states = []
        offset = 0
        for index, cell in enumerate(self._cells):
            with variable_scope.variable_scope(f"cell_{index}"):
                if self._state_is_tuple:
                    if not nest.is_nested(state):
                        raise ValueError(
                            f"Expected state to be a tuple of length {len(self.state_size)}, "
                            f"but received: {state}"
                        )
                    current_state = state[index]
                else:
                    current_state = array_ops.slice(state, [0, offset], [-1, cell.state_size])
                    offset += cell.state_size
                current_input, new_state = cell(current_input, current_state)
                new_states.append(new_state)
        if self._state_is_tuple:
            return current_input, tuple(new_states)
        return current_input, array_ops.concat(new_states, 1)


class _WrapperCell(RNNCell):
    """A cell around another: the wrapped cell keeps its own variable scope."""

    def __init__(self, cell):
        super().__init__()
        self._cell = cell

    @property
    def wrapped_cell(self):
        return self._cell

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    @property
    def trainable_weights(self):
        return self._cell.trainable_weights

    @property
    def weights(self):
        return self._cell.weights

    variables = weights
    trainable_variables = trainable_weights

    def zero_state(self, batch_size, dtype):
        with ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            return self._cell.zero_state(batch_size, dtype)


def _keeps_everything(keep_prob):
    return (
        isinstance(keep_prob, numbers.Real) and not isinstance(keep_prob, bool) and keep_prob == 1
    )


def _default_dropout_state_filter(substate):
    """An LSTM's c is never dropped; everything else in the state may be."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


class DropoutWrapper(_WrapperCell):
    """Dropout on the cell's inputs, outputs and (but for an LSTM's c) state.

    variational_recurrent=True (one mask per sequence) is not supported."""

    def __init__(
        self,
        cell,
        input_keep_prob=1.0,
        output_keep_prob=1.0,
        state_keep_prob=1.0,
        variational_recurrent=False,
        input_size=None,
        dtype=None,
        seed=None,
        dropout_state_filter_visitor=None,
    ):
        super().__init__(cell)
        if variational_recurrent:
            raise NotImplementedError("DropoutWrapper(variational_recurrent=True) is not supported")
        for name, value in (
            ("input_keep_prob", input_keep_prob),
            ("output_keep_prob", output_keep_prob),
            ("state_keep_prob", state_keep_prob),
        ):
            if isinstance(value, numbers.Real) and not 0 < value <= 1:
                raise ValueError(f"Parameter {name} must be between 0 and 1: {value}")
        self._input_keep_prob = input_keep_prob
        self._output_keep_prob = output_keep_prob
        self._state_keep_prob = state_keep_prob
        self._seed = seed
        self._state_filter = dropout_state_filter_visitor or _default_dropout_state_filter

    def _dropout(self, values, keep_prob, keep_mask=None):
        flat = nest.flatten(values)
        mask = [True] * len(flat) if keep_mask is None else keep_mask
        dropped = [
            nn_ops.dropout(value, keep_prob=keep_prob, seed=self._seed) if drop else value
            for value, drop in zip(flat, mask)
        ]
        return nest.pack_sequence_as(values, dropped)

    def _state_mask(self, substate):
        """Per flat part of `substate`, whether dropout may touch it: the
        filter says True (look inside), False, or a structure of verdicts."""
        verdict = self._state_filter(substate)
        if not nest.is_nested(substate):
            return [bool(verdict)]
        if verdict is False:
            return [False] * len(nest.flatten(substate))
        if verdict is True:
            return [flag for part in substate for flag in self._state_mask(part)]
        mask = []
        for part, part_verdict in zip(substate, verdict):
            if isinstance(part_verdict, bool):
                mask.extend([part_verdict] * len(nest.flatten(part)))
            else:
                mask.extend(self._state_mask(part))
        return mask

    def __call__(self, inputs, state, scope=None):
        if not _keeps_everything(self._input_keep_prob):
            inputs = self._dropout(inputs, self._input_keep_prob)
        output, new_state = self._cell(inputs, state, scope=scope)
        if not _keeps_everything(self._state_keep_prob):
            new_state = self._dropout(new_state, self._state_keep_prob, self._state_mask(new_state))
        if not _keeps_everything(self._output_keep_prob):
            output = self._dropout(output, self._output_keep_prob)
        return output, new_state


class ResidualWrapper(_WrapperCell):
    """output = inputs + cell output (or residual_fn(inputs, output))."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def __call__(self, inputs, state, scope=None):
        output, new_state = self._cell(inputs, state, scope=scope)

        def add_inputs(inputs, output):
            nest.assert_same_structure(inputs, output)

            def add_one(inp, out):
                inp.shape.assert_is_compatible_with(out.shape)
                return inp + out

            return nest.map_structure(add_one, inputs, output)

        residual = self._residual_fn or add_inputs
        return residual(inputs, output), new_state


class DeviceWrapper(_WrapperCell):
    """Runs the cell's step on `device`."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with (
            ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]),
            ops.device(self._device),
        ):
            return self._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        with ops.device(self._device):
            return self._cell(inputs, state, scope=scope)

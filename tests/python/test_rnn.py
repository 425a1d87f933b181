"""tf.nn.rnn_cell cells and the RNN drivers (dynamic_rnn, static_rnn and the
bidirectional forms) against numpy, with TensorFlow 1.x's variable names,
and their gradients. (Programs compared with real TensorFlow are in
test_rnn_fixtures.py.)"""

import numpy as np
import pytest
import tensorweave as tf
from gradient_check import check_gradients

rnn_cell = tf.nn.rnn_cell


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _random_weights(sess, seed=0):
    """Every variable random (biases too), returned by name."""
    rng = np.random.RandomState(seed)
    values = {}
    for variable in tf.global_variables():
        value = rng.uniform(-0.5, 0.5, variable.shape.as_list()).astype(
            variable.dtype.base_dtype.as_numpy_dtype
        )
        variable.load(value, sess)
        values[variable.op.name] = value
    return values


def _numpy_basic_lstm(x, c, h, kernel, bias, forget_bias=1.0):
    gates = np.concatenate([x, h], 1) @ kernel + bias
    i, j, f, o = np.split(gates, 4, axis=1)
    new_c = c * _sigmoid(f + forget_bias) + _sigmoid(i) * np.tanh(j)
    return new_c, np.tanh(new_c) * _sigmoid(o)


def _numpy_gru(x, h, w):
    prefix = "gru_cell/"
    value = _sigmoid(
        np.concatenate([x, h], 1) @ w[prefix + "gates/kernel"] + w[prefix + "gates/bias"]
    )
    r, u = np.split(value, 2, axis=1)
    candidate = np.tanh(
        np.concatenate([x, r * h], 1) @ w[prefix + "candidate/kernel"]
        + w[prefix + "candidate/bias"]
    )
    return u * h + (1 - u) * candidate


def test_basic_rnn_cell_step_and_variables():
    x = np.random.RandomState(0).randn(2, 3).astype(np.float32)
    h = np.random.RandomState(1).randn(2, 4).astype(np.float32)
    cell = rnn_cell.BasicRNNCell(4)
    assert cell.state_size == 4 and cell.output_size == 4
    output, state = cell(tf.constant(x), tf.constant(h))
    assert [(v.op.name, v.shape.as_list()) for v in tf.global_variables()] == [
        ("basic_rnn_cell/kernel", [7, 4]),
        ("basic_rnn_cell/bias", [4]),
    ]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert not sess.run(tf.global_variables()[1]).any()  # biases start at zero
        w = _random_weights(sess)
        got, got_state = sess.run([output, state])
    want = np.tanh(
        np.concatenate([x, h], 1) @ w["basic_rnn_cell/kernel"] + w["basic_rnn_cell/bias"]
    )
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got, got_state)


@pytest.mark.parametrize("state_is_tuple", [True, False])
def test_basic_lstm_cell_gate_order_i_j_f_o(state_is_tuple):
    rng = np.random.RandomState(2)
    x, c, h = (rng.randn(2, n).astype(np.float32) for n in (3, 5, 5))
    cell = rnn_cell.BasicLSTMCell(5, forget_bias=0.7, state_is_tuple=state_is_tuple)
    state = (
        rnn_cell.LSTMStateTuple(tf.constant(c), tf.constant(h))
        if state_is_tuple
        else tf.constant(np.concatenate([c, h], 1))
    )
    output, new_state = cell(tf.constant(x), state)
    with tf.Session() as sess:
        w = _random_weights(sess)
        got_h, got_state = sess.run([output, new_state])
    want_c, want_h = _numpy_basic_lstm(
        x, c, h, w["basic_lstm_cell/kernel"], w["basic_lstm_cell/bias"], 0.7
    )
    np.testing.assert_allclose(got_h, want_h, rtol=1e-5, atol=1e-6)
    got_c = got_state.c if state_is_tuple else got_state[:, :5]
    np.testing.assert_allclose(got_c, want_c, rtol=1e-5, atol=1e-6)
    assert tf.global_variables()[0].shape.as_list() == [8, 20]


def test_lstm_cell_peepholes_clipping_and_projection():
    rng = np.random.RandomState(3)
    x = rng.randn(2, 3).astype(np.float32)
    c = rng.randn(2, 6).astype(np.float32) * 3
    m = rng.randn(2, 4).astype(np.float32)
    cell = rnn_cell.LSTMCell(6, use_peepholes=True, cell_clip=1.5, num_proj=4, proj_clip=0.3)
    assert cell.state_size == (6, 4) and cell.output_size == 4
    output, state = cell(tf.constant(x), rnn_cell.LSTMStateTuple(tf.constant(c), tf.constant(m)))
    names = sorted((v.op.name, v.shape.as_list()) for v in tf.global_variables())
    assert names == [
        ("lstm_cell/bias", [24]),
        ("lstm_cell/kernel", [7, 24]),
        ("lstm_cell/projection/kernel", [6, 4]),
        ("lstm_cell/w_f_diag", [6]),
        ("lstm_cell/w_i_diag", [6]),
        ("lstm_cell/w_o_diag", [6]),
    ]
    with tf.Session() as sess:
        w = _random_weights(sess)
        got_m, got_state = sess.run([output, state])
    p = "lstm_cell/"
    gates = np.concatenate([x, m], 1) @ w[p + "kernel"] + w[p + "bias"]
    i, j, f, o = np.split(gates, 4, axis=1)
    new_c = _sigmoid(f + 1.0 + w[p + "w_f_diag"] * c) * c + _sigmoid(
        i + w[p + "w_i_diag"] * c
    ) * np.tanh(j)
    new_c = np.clip(new_c, -1.5, 1.5)
    new_m = _sigmoid(o + w[p + "w_o_diag"] * new_c) * np.tanh(new_c)
    new_m = np.clip(new_m @ w[p + "projection/kernel"], -0.3, 0.3)
    np.testing.assert_allclose(got_state.c, new_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_m, new_m, rtol=1e-5, atol=1e-6)


def test_gru_cell_step_and_its_gate_bias_starts_at_one():
    rng = np.random.RandomState(4)
    x, h = rng.randn(2, 3).astype(np.float32), rng.randn(2, 4).astype(np.float32)
    cell = rnn_cell.GRUCell(4)
    output, _ = cell(tf.constant(x), tf.constant(h))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        by_name = {v.op.name: v for v in tf.global_variables()}
        np.testing.assert_array_equal(sess.run(by_name["gru_cell/gates/bias"]), np.ones(8))
        assert by_name["gru_cell/candidate/kernel"].shape.as_list() == [7, 4]
        w = _random_weights(sess)
        got = sess.run(output)
    np.testing.assert_allclose(got, _numpy_gru(x, h, w), rtol=1e-5, atol=1e-6)


def test_a_cell_called_twice_shares_its_variables_and_a_second_cell_gets_a_new_scope():
    x = tf.zeros([2, 3])
    cell = rnn_cell.GRUCell(4)
    state = cell.zero_state(2, tf.float32)
    _, state = cell(x, state)
    cell(x, state)
    assert len(tf.global_variables()) == 4
    rnn_cell.GRUCell(4)(x, state)
    assert sorted({v.op.name.split("/")[0] for v in tf.global_variables()}) == [
        "gru_cell",
        "gru_cell_1",
    ]


def test_zero_state_shapes_and_names():
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(3), rnn_cell.GRUCell(2)])
    state = cell.zero_state(5, tf.float32)
    assert isinstance(state[0], rnn_cell.LSTMStateTuple)
    assert state[0].c.shape.as_list() == [5, 3] and state[1].shape.as_list() == [5, 2]
    assert state[1].op.name.startswith("MultiRNNCellZeroState/GRUCellZeroState/")
    batch = tf.placeholder(tf.int32, [])
    dynamic = rnn_cell.GRUCell(2).zero_state(batch, tf.float32)
    assert dynamic.shape.as_list() == [None, 2]
    with tf.Session() as sess:
        assert sess.run(dynamic, {batch: 3}).shape == (3, 2)


def _numpy_lstm_sequence(x, lengths, w, prefix, units):
    """BasicLSTMCell over [batch, time, depth] with TensorFlow's length rule."""
    batch, time, _ = x.shape
    c = np.zeros((batch, units), np.float32)
    h = np.zeros((batch, units), np.float32)
    outputs = np.zeros((batch, time, units), np.float32)
    for t in range(time):
        new_c, new_h = _numpy_basic_lstm(x[:, t], c, h, w[prefix + "kernel"], w[prefix + "bias"])
        live = (t < lengths)[:, None]
        c, h = np.where(live, new_c, c), np.where(live, new_h, h)
        outputs[:, t] = np.where(live, new_h, 0.0)
    return outputs, c, h


@pytest.mark.parametrize("time_major", [False, True])
@pytest.mark.parametrize("lengths", [[6, 0, 3], [2, 4, 1]], ids=["longest_full", "all_short"])
def test_dynamic_rnn_with_sequence_length_matches_numpy(time_major, lengths):
    rng = np.random.RandomState(5)
    x = rng.uniform(-1, 1, (3, 6, 2)).astype(np.float32)
    lengths = np.array(lengths, np.int32)
    inputs = tf.placeholder(tf.float32, [6, 3, 2] if time_major else [3, 6, 2])
    seq_len = tf.placeholder(tf.int32, [3])
    outputs, state = tf.nn.dynamic_rnn(
        rnn_cell.BasicLSTMCell(4),
        inputs,
        sequence_length=seq_len,
        dtype=tf.float32,
        time_major=time_major,
    )
    assert outputs.shape.as_list() == ([6, 3, 4] if time_major else [3, 6, 4])
    assert [v.op.name for v in tf.global_variables()] == [
        "rnn/basic_lstm_cell/kernel",
        "rnn/basic_lstm_cell/bias",
    ]
    assert outputs.graph.get_operation_by_name("rnn/while/basic_lstm_cell/MatMul")
    with tf.Session() as sess:
        w = _random_weights(sess)
        feed = np.transpose(x, (1, 0, 2)) if time_major else x
        got, got_state = sess.run([outputs, state], {inputs: feed, seq_len: lengths})
    want, want_c, want_h = _numpy_lstm_sequence(x, lengths, w, "rnn/basic_lstm_cell/", 4)
    if time_major:
        got = np.transpose(got, (1, 0, 2))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_state.c, want_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_state.h, want_h, rtol=1e-5, atol=1e-6)


def test_dynamic_rnn_checks_the_length_of_sequence_length():
    outputs, _ = tf.nn.dynamic_rnn(
        rnn_cell.GRUCell(2),
        tf.zeros([3, 4, 2]),
        sequence_length=tf.placeholder_with_default([1, 2], [None]),
        dtype=tf.float32,
    )
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError, match="Expected shape for Tensor"):
            sess.run(outputs)


def test_dynamic_rnn_initial_state_unknown_batch_and_static_rnn_agree():
    rng = np.random.RandomState(6)
    x = rng.uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    h0 = rng.uniform(-1, 1, (2, 4)).astype(np.float32)
    inputs = tf.placeholder(tf.float32, [None, None, 3])
    initial = tf.placeholder(tf.float32, [None, 4])
    cell = rnn_cell.GRUCell(4)
    outputs, state = tf.nn.dynamic_rnn(cell, inputs, initial_state=initial)
    static_outputs, static_state = tf.nn.static_rnn(
        cell, tf.unstack(tf.constant(x), axis=1), initial_state=tf.constant(h0)
    )
    assert len(tf.global_variables()) == 4  # one cell, one set of weights
    with tf.Session() as sess:
        _random_weights(sess)
        got, got_state, want, want_state = sess.run(
            [outputs, state, tf.stack(static_outputs, axis=1), static_state],
            {inputs: x, initial: h0},
        )
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_state, want_state, rtol=1e-5, atol=1e-6)


def test_multi_rnn_cell_names_and_stacking():
    x = tf.zeros([2, 4, 3])
    cell = rnn_cell.MultiRNNCell([rnn_cell.LSTMCell(5), rnn_cell.GRUCell(2)])
    outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    assert outputs.shape.as_list() == [2, 4, 2]
    names = [v.op.name for v in tf.global_variables()]
    assert names[:2] == [
        "rnn/multi_rnn_cell/cell_0/lstm_cell/kernel",
        "rnn/multi_rnn_cell/cell_0/lstm_cell/bias",
    ]
    assert "rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel" in names
    assert len(state) == 2 and isinstance(state[0], rnn_cell.LSTMStateTuple)


def test_dropout_wrapper_keeps_lstm_c_and_residual_wrapper_adds_inputs():
    # 64 sequences: the dropped fractions below are means over 320 entries.
    x = np.random.RandomState(7).uniform(-1, 1, (64, 6, 5)).astype(np.float32)
    inputs = tf.constant(x)
    base = rnn_cell.GRUCell(5)
    residual, _ = tf.nn.dynamic_rnn(rnn_cell.ResidualWrapper(base), inputs, dtype=tf.float32)
    plain, _ = tf.nn.dynamic_rnn(base, inputs, dtype=tf.float32, scope="rnn")
    lstm = rnn_cell.BasicLSTMCell(5)
    dropped, (c, h) = tf.nn.dynamic_rnn(
        rnn_cell.DropoutWrapper(lstm, output_keep_prob=0.5, state_keep_prob=0.5, seed=3),
        inputs,
        dtype=tf.float32,
        scope="dropped",
    )
    kept, _ = tf.nn.dynamic_rnn(
        rnn_cell.DropoutWrapper(lstm, input_keep_prob=1.0), inputs, dtype=tf.float32, scope="kept"
    )
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_residual, got_plain, got_dropped, got_kept, got_c, got_h = sess.run(
            [residual, plain, dropped, kept, c, h]
        )
    np.testing.assert_allclose(got_residual, got_plain + x, rtol=1e-5, atol=1e-6)
    assert 0.2 < (got_dropped == 0).mean() < 0.8
    assert 0.2 < (got_h == 0).mean() < 0.8  # the state's h is dropped
    assert (got_c == 0).mean() < 0.05  # its c never is
    assert np.abs(got_kept).min() > 0
    with pytest.raises(NotImplementedError):
        rnn_cell.DropoutWrapper(lstm, variational_recurrent=True)


@pytest.mark.parametrize("with_lengths", [True, False])
def test_bidirectional_dynamic_rnn_backward_half_reads_each_sequence_reversed(with_lengths):
    rng = np.random.RandomState(8)
    x = rng.uniform(-1, 1, (3, 5, 2)).astype(np.float32)
    lengths = np.array([5, 2, 3], np.int32) if with_lengths else np.array([5, 5, 5], np.int32)
    (fw, bw), (_, state_bw) = tf.nn.bidirectional_dynamic_rnn(
        rnn_cell.BasicLSTMCell(3),
        rnn_cell.BasicLSTMCell(3),
        tf.constant(x),
        sequence_length=lengths if with_lengths else None,
        dtype=tf.float32,
    )
    names = sorted(v.op.name for v in tf.global_variables())
    assert names[0] == "bidirectional_rnn/bw/basic_lstm_cell/bias"
    assert names[-1] == "bidirectional_rnn/fw/basic_lstm_cell/kernel"
    with tf.Session() as sess:
        w = _random_weights(sess)
        got_fw, got_bw, got_state_bw = sess.run([fw, bw, state_bw])
    reversed_x = np.stack(
        [np.concatenate([x[b, :n][::-1], x[b, n:]]) for b, n in enumerate(lengths)]
    )
    want_fw, _, _ = _numpy_lstm_sequence(x, lengths, w, "bidirectional_rnn/fw/basic_lstm_cell/", 3)
    want_rev, _, want_h = _numpy_lstm_sequence(
        reversed_x, lengths, w, "bidirectional_rnn/bw/basic_lstm_cell/", 3
    )
    want_bw = np.stack(
        [np.concatenate([want_rev[b, :n][::-1], want_rev[b, n:]]) for b, n in enumerate(lengths)]
    )
    np.testing.assert_allclose(got_fw, want_fw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_bw, want_bw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_state_bw.h, want_h, rtol=1e-5, atol=1e-6)


def test_static_bidirectional_rnn_concatenates_both_directions():
    steps = [tf.constant(np.full((2, 3), t, np.float32)) for t in range(4)]
    outputs, _, state_bw = tf.nn.static_bidirectional_rnn(
        rnn_cell.BasicRNNCell(2), rnn_cell.BasicRNNCell(3), steps, dtype=tf.float32
    )
    assert len(outputs) == 4 and outputs[0].shape.as_list() == [2, 5]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, final_bw = sess.run([outputs, state_bw])
    np.testing.assert_allclose(got[0][:, 2:], final_bw, rtol=1e-6)


def _weights_from(values_by_suffix):
    """A custom getter handing the cell the given tensors as its weights, so a
    gradient check can differentiate with respect to them."""

    def getter(unused_getter, name, shape=None, **unused):
        weight = values_by_suffix[name.rsplit("/", 1)[-1]]
        assert weight.shape.as_list() == list(shape), name
        return weight

    return getter


def test_static_rnn_gradients_match_central_differences():
    def build(x, kernel, bias, w_f_diag):
        weights = {"kernel": kernel, "bias": bias, "w_f_diag": w_f_diag}
        weights["w_i_diag"] = weights["w_o_diag"] = w_f_diag * 0.5
        with tf.variable_scope("rnn", custom_getter=_weights_from(weights)):
            cell = rnn_cell.LSTMCell(3, use_peepholes=True, dtype=tf.float64)
            outputs, state = tf.nn.static_rnn(
                cell, tf.unstack(x, axis=1), dtype=tf.float64, sequence_length=[3, 1]
            )
        return [tf.stack(outputs, 1), state.c]

    rng = np.random.RandomState(9)
    values = [rng.uniform(-1, 1, shape) for shape in [(2, 3, 2), (5, 12), (12,), (3,)]]
    check_gradients(build, values, rtol=1e-4)


def _train_to_count_ones(build_rnn):
    """Trains an RNN to output, at the last step, the fraction of ones seen;
    returns (first loss, last loss)."""
    rng = np.random.RandomState(10)
    x_value = rng.randint(0, 2, (16, 6, 1)).astype(np.float32)
    target = x_value.mean(axis=1)
    x = tf.constant(x_value)
    last = build_rnn(x)
    prediction = tf.layers.dense(last, 1)
    loss = tf.reduce_mean(tf.square(prediction - target))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        tf.set_random_seed(0)
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(60):
            sess.run(train)
        return first, sess.run(loss)


def test_static_rnn_trains():
    def build(x):
        outputs, _ = tf.nn.static_rnn(
            rnn_cell.BasicLSTMCell(8), tf.unstack(x, axis=1), dtype=tf.float32
        )
        return outputs[-1]

    first, last = _train_to_count_ones(build)
    assert last < first * 0.2, (first, last)


def test_dynamic_rnn_gradients_match_central_differences():
    def build(x, gate_kernel, candidate_kernel, bias):
        by_name = {
            "gates/kernel": gate_kernel,
            "gates/bias": tf.concat([bias, bias], 0),
            "candidate/kernel": candidate_kernel,
            "candidate/bias": bias,
        }

        def getter(unused_getter, name, shape=None, **unused):
            return by_name["/".join(name.split("/")[-2:])]

        with tf.variable_scope("rnn", custom_getter=getter):
            outputs, state = tf.nn.dynamic_rnn(
                rnn_cell.GRUCell(3, dtype=tf.float64),
                x,
                sequence_length=[3, 1],
                dtype=tf.float64,
            )
        return [outputs, state]

    rng = np.random.RandomState(11)
    values = [rng.uniform(-1, 1, shape) for shape in [(2, 3, 2), (5, 6), (5, 3), (3,)]]
    check_gradients(build, values, rtol=1e-4)


def test_dynamic_rnn_lstm_trains():
    def build(x):
        _, state = tf.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(8), x, dtype=tf.float32)
        return state.h

    first, last = _train_to_count_ones(build)
    assert last < first * 0.2, (first, last)


def test_driver_scopes_name_the_variables():
    x = tf.zeros([2, 3, 4])
    tf.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(2), x, dtype=tf.float32, scope="encoder")
    with tf.variable_scope("decoder") as decoder:
        pass
    outputs, _ = tf.nn.dynamic_rnn(rnn_cell.GRUCell(2), x, dtype=tf.float32, scope=decoder)
    names = [v.op.name for v in tf.global_variables()]
    assert names[:2] == ["encoder/basic_lstm_cell/kernel", "encoder/basic_lstm_cell/bias"]
    assert names[2] == "decoder/gru_cell/gates/kernel"
    # A VariableScope object is re-entered as TensorFlow does: its ops go to
    # a new name scope named after it (TensorFlow 2.21 names this op so too).
    assert outputs.op.name == "decoder_1/transpose_1"


def test_lstm_cell_initializer_sets_kernel_peepholes_and_projection():
    cell = rnn_cell.LSTMCell(
        3, use_peepholes=True, num_proj=2, initializer=tf.constant_initializer(0.25)
    )
    cell(tf.zeros([1, 4]), cell.zero_state(1, tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = {v.op.name: sess.run(v) for v in tf.global_variables()}
    assert not values["lstm_cell/bias"].any()
    for name in ("kernel", "w_f_diag", "w_i_diag", "w_o_diag", "projection/kernel"):
        np.testing.assert_array_equal(values["lstm_cell/" + name], 0.25)


def test_driver_argument_errors():
    cell = rnn_cell.GRUCell(2)
    with pytest.raises(ValueError, match="must give a dtype"):
        tf.nn.dynamic_rnn(cell, tf.zeros([2, 3, 4]))
    with pytest.raises(ValueError, match="rank at least 3"):
        tf.nn.dynamic_rnn(cell, tf.zeros([2, 3]), dtype=tf.float32)
    with pytest.raises(TypeError):
        tf.nn.static_rnn(cell, tf.zeros([2, 3]), dtype=tf.float32)
    with pytest.raises(ValueError, match="Expected inputs.shape"):
        cell(tf.placeholder(tf.float32, [2, None]), tf.zeros([2, 2]))

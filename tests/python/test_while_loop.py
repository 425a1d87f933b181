"""tf.while_loop: values against numpy and hand-computed results, loop
variables of any nested structure, shape invariants, maximum_iterations,
parallel_iterations, nested loops, conds inside loops and loops inside
conds, variables and control dependencies in the body, TensorFlow's errors,
and long loops."""

import collections

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.ops import control_flow_context, control_flow_ops

State = collections.namedtuple("State", ["step", "value"])


def run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_counter_with_accumulator_against_numpy():
    n = tf.placeholder(tf.int32, [])
    i, total = tf.while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t + i * i), [0, 0])
    for count in (0, 1, 7, 30):
        assert run([i, total], {n: count}) == [count, sum(k * k for k in range(count))]


def test_tensor_loop_variable_against_numpy():
    x = tf.placeholder(tf.float32, [4])
    _, y = tf.while_loop(lambda k, v: k < 20, lambda k, v: (k + 1, v * 0.5 + 1.0), [0, x])
    assert y.shape.as_list() == [4]
    value = np.array([0.0, 1.0, 100.0, -8.0], np.float32)
    expected = value.copy()
    for _ in range(20):
        expected = expected * np.float32(0.5) + np.float32(1.0)
    np.testing.assert_allclose(run(y, {x: value}), expected, rtol=1e-6)


def test_single_loop_variable_gives_a_tensor_unless_return_same_structure():
    single = tf.while_loop(lambda i: i < 5, lambda i: i + 1, [0])
    assert isinstance(single, tf.Tensor)
    same = tf.while_loop(lambda i: i < 5, lambda i: i + 1, [0], return_same_structure=True)
    assert isinstance(same, list) and len(same) == 1
    assert run(single) == 5 and run(same) == [5]


def test_nested_structure_loop_variables():
    x = tf.placeholder(tf.float32, [2])
    # cond and body take one argument per top-level loop variable.
    loop_vars = [
        State(step=tf.constant(0), value=x),
        {"total": x * 0.0, "product": [tf.constant(1)]},
    ]

    def body(state, sums):
        return [
            State(step=state.step + 1, value=state.value * 2.0),
            {"total": sums["total"] + state.value, "product": [sums["product"][0] * 3]},
        ]

    state, sums = tf.while_loop(lambda state, sums: state.step < 4, body, loop_vars)
    assert isinstance(state, State)
    assert isinstance(sums, dict) and isinstance(sums["product"], list)
    value = np.array([1.0, -0.5], np.float32)
    got_state, got_sums = run([state, sums], {x: value})
    assert got_state.step == 4
    np.testing.assert_allclose(got_state.value, value * 16)
    np.testing.assert_allclose(got_sums["total"], value * (1 + 2 + 4 + 8))
    assert got_sums["product"] == [81]


def test_namedtuple_loop_variable_keeps_its_type():
    start = [State(step=tf.constant(0), value=tf.constant(1))]
    (result,) = tf.while_loop(
        lambda s: s.step < 3, lambda s: [State(step=s.step + 1, value=s.value + 10)], start
    )
    assert isinstance(result, State)
    assert run(result) == State(step=3, value=31)
    # As in TensorFlow, the body returns the loop variables' structure: the
    # namedtuple alone is not the one-element list it came in.
    with pytest.raises(ValueError, match="same nested structure"):
        tf.while_loop(lambda s: s.step < 3, lambda s: State(s.step + 1, s.value), start)


def test_shape_invariant_lets_a_loop_variable_grow():
    x = tf.constant([1.0])
    _, y = tf.while_loop(
        lambda i, v: i < 3,
        lambda i, v: (i + 1, tf.concat([v, v * 2.0], 0)),
        [0, x],
        shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])],
    )
    assert y.shape.as_list() == [None]
    # The Merge the body reads has the relaxed shape.
    merge = tf.get_default_graph().get_operation_by_name("while/Merge_1")
    assert merge.outputs[0].shape.as_list() == [None]
    np.testing.assert_allclose(run(y), [1, 2, 2, 4, 2, 4, 4, 8])


def test_shape_change_without_an_invariant_is_a_value_error():
    x = tf.constant([1.0], name="start")
    with pytest.raises(ValueError, match="enters the loop with shape") as error:
        tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tf.concat([v, v], 0)), [0, x])
    assert "'start:0'" in str(error.value) and "shape_invariants" in str(error.value)


def test_shape_invariant_less_specific_than_the_start_is_a_value_error():
    with pytest.raises(ValueError, match="not compatible with the initial shape"):
        tf.while_loop(
            lambda v: tf.reduce_sum(v) < 3,
            lambda v: v + 1,
            [tf.constant([1, 2])],
            shape_invariants=[tf.TensorShape([3])],
        )


def test_body_must_keep_dtypes_and_structure():
    with pytest.raises(ValueError, match="same nested structure"):
        tf.while_loop(lambda i: i < 3, lambda i: (i, i), [tf.constant(1)])
    with pytest.raises(ValueError, match="int32"):
        tf.while_loop(lambda i: i < 3, lambda i: tf.cast(i, tf.float32), [tf.constant(1)])


def test_argument_errors():
    with pytest.raises(TypeError, match="'cond' must be callable"):
        tf.while_loop(1, lambda i: i, [0])
    with pytest.raises(TypeError, match="'body' must be callable"):
        tf.while_loop(lambda i: i < 3, 1, [0])
    with pytest.raises(TypeError, match="'parallel_iterations' must be a positive integer"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], parallel_iterations=0)
    with pytest.raises(ValueError, match="'loop_vars' must be provided"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [])
    with pytest.raises(ValueError, match="'maximum_iterations' must be a scalar"):
        tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0], maximum_iterations=[1, 2])
    with pytest.raises(ValueError, match="rank 0"):
        tf.while_loop(lambda v: v < 3, lambda v: v + 1, [tf.constant([1])])


def test_parallel_iterations_and_frame_go_to_every_enter():
    x = tf.placeholder(tf.float32, [])
    tf.while_loop(lambda i: i < 3.0, lambda i: i + x, [0.0], parallel_iterations=3)
    enters = [op for op in tf.get_default_graph().get_operations() if op.type == "Enter"]
    assert len(enters) == 2
    for op in enters:
        assert op.get_attr("parallel_iterations") == 3
        assert op.get_attr("frame_name") == b"while/while_context"
    constant = [op for op in enters if op.get_attr("is_constant")]
    assert [op.inputs[0] for op in constant] == [x]


@pytest.mark.parametrize("limit, expected", [(3, 3), (50, 10)])
def test_maximum_iterations(limit, expected):
    result = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [0], maximum_iterations=limit)
    assert run(result) == expected


def test_maximum_iterations_with_several_loop_variables():
    i, total = tf.while_loop(
        lambda i, t: i < 100, lambda i, t: [i + 1, t + 2], [0, 0], maximum_iterations=4
    )
    assert run([i, total]) == [4, 8]
    # The loop variables are nested one level down then, so (as in
    # TensorFlow) a tuple for a list is a different structure.
    with pytest.raises(TypeError, match="same sequence type"):
        tf.while_loop(
            lambda i, t: i < 100, lambda i, t: (i + 1, t + 2), [0, 0], maximum_iterations=4
        )


def test_nested_loops_against_numpy():
    n = tf.placeholder(tf.int32, [])

    def outer_body(i, total):
        _, inner = tf.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + i * j), [0, 0])
        return i + 1, total + inner

    _, total = tf.while_loop(lambda i, t: i < n, outer_body, [0, 0])
    for count in (0, 4, 9):
        assert run(total, {n: count}) == sum(i * j for i in range(count) for j in range(i))


def test_cond_inside_a_loop():
    x = tf.placeholder(tf.float32, [])

    def body(i, acc):
        acc = tf.cond(tf.equal(i % 2, 0), lambda: acc + x, lambda: acc * x)
        return i + 1, acc

    _, acc = tf.while_loop(lambda i, a: i < 5, body, [0, 1.0])
    expected = 1.0
    for i in range(5):
        expected = expected + 3.0 if i % 2 == 0 else expected * 3.0
    assert run(acc, {x: 3.0}) == pytest.approx(expected)


@pytest.mark.parametrize("taken, expected", [(True, 1.5 * 32), (False, 1.75)])
def test_loop_inside_a_cond(taken, expected):
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder(tf.bool, [])
    y = tf.cond(
        p,
        lambda: tf.while_loop(lambda k, v: k < 5, lambda k, v: (k + 1, v * 2.0), [0, x])[1],
        lambda: x + 0.25,
    )
    assert run(y, {x: 1.5, p: taken}) == pytest.approx(expected)


def test_variables_read_and_assigned_in_the_body():
    step = tf.Variable(2.0)
    counter = tf.Variable(0)

    def body(i, total):
        bump = tf.assign_add(counter, 1)
        with tf.control_dependencies([bump]):
            return i + 1, total + step

    i, total = tf.while_loop(lambda i, t: i < 6, body, [0, 0.0])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([i, total]) == [6, pytest.approx(12.0)]
        assert sess.run(counter) == 6
    # The assignment takes the variable itself (RefEnter); the read takes
    # its value (Enter of v/read); both are loop constants.
    operations = tf.get_default_graph().get_operations()
    ref_enters = [op for op in operations if op.type == "RefEnter"]
    assert [op.inputs[0].op.type for op in ref_enters] == ["VariableV2"]
    read_enters = [op for op in operations if op.type == "Enter" and op.get_attr("is_constant")]
    assert [op.inputs[0].op.name for op in read_enters] == [step.value().op.name]


def test_control_dependency_on_an_op_outside_the_loop_runs_it_once():
    counter = tf.Variable(0)
    outside = tf.assign_add(counter, 1)

    def body(i):
        with tf.control_dependencies([outside]):
            return i + 1

    result = tf.while_loop(lambda i: i < 5, body, [0])
    graph = tf.get_default_graph()
    # As TensorFlow builds it: the outside op is waited for through an
    # Identity of it made in the loop (so it enters once, as a constant).
    const = graph.get_operation_by_name("while/add/y")
    assert sorted(op.name for op in const.control_inputs) == [
        "while/Identity",
        "while/add/Identity",
    ]
    pulled = graph.get_operation_by_name("while/add/Identity")
    assert pulled.inputs[0].op.type == "RefEnter" and pulled.inputs[0].op.inputs[0].op is outside.op
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(result) == 5
        assert sess.run(counter) == 1


def test_control_dependencies_around_the_loop_reach_its_enters():
    counter = tf.Variable(0)
    outside = tf.assign_add(counter, 1)
    start = tf.constant(0)
    with tf.control_dependencies([outside]):
        result = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [start])
    enter = tf.get_default_graph().get_operation_by_name("while/Enter")
    assert [op.name for op in enter.control_inputs] == [outside.op.name]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(result) == 3
        assert sess.run(counter) == 1


def test_ops_without_inputs_run_after_the_pivots():
    tf.while_loop(
        lambda i: i < tf.constant(3, name="limit"),
        lambda i: i + tf.constant(1, name="one"),
        [0],
    )
    graph = tf.get_default_graph()
    # A constant made by the condition waits for the first Merge, one made by
    # the body for the first Identity: both run once per iteration.
    assert [c.name for c in graph.get_operation_by_name("while/limit").control_inputs] == [
        "while/Merge"
    ]
    assert [c.name for c in graph.get_operation_by_name("while/one").control_inputs] == [
        "while/Identity"
    ]


def test_outside_value_enters_once_per_loop():
    x = tf.placeholder(tf.float32, [])
    tf.while_loop(lambda v: v < x, lambda v: v + x * x, [0.0])
    constant_enters = [
        op
        for op in tf.get_default_graph().get_operations()
        if op.type == "Enter" and op.get_attr("is_constant")
    ]
    assert [op.inputs[0] for op in constant_enters] == [x]


def test_ten_thousand_iterations():
    i, total = tf.while_loop(lambda i, t: i < 10000, lambda i, t: (i + 1, t + 2.0), [0, 0.0])
    assert run([i, total]) == [10000, pytest.approx(20000.0)]


def test_deeply_nested_loop_variable_structure():
    depth = 2000
    structure = tf.constant(1)
    for _ in range(depth):
        structure = [structure]

    def unwrap(value):
        while isinstance(value, list):
            value = value[0]
        return value

    def rewrap(value):
        for _ in range(depth):
            value = [value]
        return value

    result = tf.while_loop(lambda s: unwrap(s) < 4, lambda s: [rewrap(unwrap(s) * 2)], [structure])
    assert run(unwrap(result)) == 4
    with pytest.raises(ValueError, match="same nested structure"):
        tf.while_loop(lambda s: unwrap(s) < 4, lambda s: [rewrap(unwrap(s))[0]], [structure])


def test_a_value_from_inside_a_loop_is_refused_outside_it():
    leaked = []

    def body(i):
        leaked.append(i * 2)
        return i + 1

    tf.while_loop(lambda i: i < 3, body, [0])
    with pytest.raises(ValueError, match="because 'while/mul' is in a while loop"):
        tf.identity(leaked[0])


def test_a_value_from_one_loop_is_refused_in_another():
    leaked = []

    def first_body(i):
        leaked.append(i * 2)
        return i + 1

    tf.while_loop(lambda i: i < 3, first_body, [0])
    with pytest.raises(ValueError, match="because they are in different while loops"):
        tf.while_loop(lambda i: i < 3, lambda i: i + leaked[0], [0])


def test_an_outer_loop_value_is_usable_in_an_inner_loop():
    def outer_body(i, total):
        doubled = i * 2
        _, inner = tf.while_loop(lambda j, t: j < 2, lambda j, t: (j + 1, t + doubled), [0, 0])
        return i + 1, total + inner

    _, total = tf.while_loop(lambda i, t: i < 4, outer_body, [0, 0])
    assert run(total) == sum(2 * (2 * i) for i in range(4))


def test_update_input_rewires_an_operation_through_TF_UpdateEdge():
    a = tf.placeholder(tf.float32, [2], name="a")
    b = tf.placeholder(tf.float32, [None], name="b")
    flag = tf.placeholder(tf.bool, [], name="flag")
    merged, _ = control_flow_ops.merge([a, a])
    assert merged.shape.as_list() == [2]
    merged.op._update_input(1, b)
    assert [t.name for t in merged.op.inputs] == ["a:0", "b:0"]
    # The Merge's shape is inferred again from its new inputs.
    assert merged.shape.as_list() == [None]
    with pytest.raises(ValueError, match="type bool"):
        merged.op._update_input(1, flag)
    with pytest.raises(ValueError, match="incompatible shapes"):
        merged.op._update_input(0, tf.placeholder(tf.float32, [3]))
    with pytest.raises(tf.errors.OutOfRangeError, match="Cannot update edge"):
        merged.op._update_input(2, a)
    assert [t.name for t in merged.op.inputs] == ["a:0", "b:0"]


class Box:
    """A value that travels through control flow as one tensor, its flow,
    the way tf.TensorArray does."""

    def __init__(self, flow, label):
        self.flow = flow
        self.label = label


control_flow_context.register_flow_type(
    Box, lambda box: box.flow, lambda box, flow: Box(flow, box.label)
)


def test_registered_flow_types_travel_through_loops_and_conds():
    seen_in_body = []

    def body(i, box):
        seen_in_body.append(box)
        return i + 1, Box(box.flow * 2.0, box.label)

    _, box = tf.while_loop(lambda i, box: i < 5, body, [0, Box(tf.constant(1.0), "acc")])
    assert isinstance(seen_in_body[0], Box) and seen_in_body[0].flow.op.type == "Identity"
    assert isinstance(box, Box) and box.label == "acc" and box.flow.op.type == "Exit"
    p = tf.placeholder(tf.bool, [])
    chosen = tf.cond(p, lambda: Box(box.flow + 1.0, "t"), lambda: Box(box.flow, "f"))
    assert isinstance(chosen, Box) and chosen.label == "t" and chosen.flow.op.type == "Merge"
    assert run(box.flow) == pytest.approx(32.0)
    assert run(chosen.flow, {p: True}) == pytest.approx(33.0)


def test_values_inside_a_cond_or_loop_cannot_be_fetched_or_fed_as_in_tensorflow():
    x = tf.placeholder(tf.float32, [], name="x")
    p = tf.placeholder(tf.bool, [], name="p")
    y = tf.cond(p, lambda: x * 2.0, lambda: x - 1.0)
    _, power = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), [0, 1.0])
    graph = tf.get_default_graph()
    body_mul = next(op for op in graph.get_operations() if op.name == "while/mul")
    with tf.Session() as sess:
        assert sess.run([y, power], {x: 2.0, p: True}) == [4.0, 8.0]
        for inside in ("cond/mul:0", body_mul.outputs[0], body_mul):
            with pytest.raises(ValueError, match="has been marked as not fetchable"):
                sess.run(inside, {x: 2.0, p: True})
        with pytest.raises(ValueError, match="may not be fed"):
            sess.run(power, {x: 2.0, body_mul.inputs[0]: 3.0})
    # The results of an outermost loop and of a cond stay fetchable.
    assert graph.is_fetchable(power) and graph.is_fetchable(y)

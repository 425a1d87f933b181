"""tf.cond, tf.case, tf.tuple and the control_flow_ops builders: values
against numpy, nested structures, `strict`, TensorFlow's errors, and the
graph a branch builds (one Switch per outside value, pivots for ops
without inputs)."""

import collections

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.ops import control_flow_ops

X = np.array([1.5, -2.0, 4.0], np.float32)
Point = collections.namedtuple("Point", ["x", "y"])


@pytest.fixture
def x():
    return tf.placeholder(tf.float32, [3], name="x")


@pytest.fixture
def p():
    return tf.placeholder(tf.bool, [], name="p")


def run(fetches, feed):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


@pytest.mark.parametrize("taken", [True, False])
def test_cond_returns_the_taken_branch(x, p, taken):
    r = tf.cond(p, lambda: x * 2.0 + 1.0, lambda: tf.square(x) - x)
    expected = X * 2.0 + 1.0 if taken else X * X - X
    np.testing.assert_allclose(run(r, {x: X, p: taken}), expected)
    assert r.shape.as_list() == [3]


def test_cond_runs_only_the_taken_branch(p):
    hits = tf.Variable(0, name="hits")
    misses = tf.Variable(0, name="misses")
    r = tf.cond(p, lambda: tf.assign_add(hits, 1), lambda: tf.assign_add(misses, 10))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(r, {p: True}) == 1
        assert sess.run(r, {p: True}) == 2
        assert sess.run(r, {p: False}) == 10
        assert sess.run([hits, misses]) == [2, 10]


def test_cond_with_a_constant_predicate_still_builds_both_branches(x):
    r = tf.cond(tf.constant(False), lambda: x + 100.0, lambda: x - 100.0)
    names = {op.name for op in tf.get_default_graph().get_operations()}
    assert {"cond/add", "cond/sub"} <= names
    np.testing.assert_allclose(run(r, {x: X}), X - 100.0)


def test_cond_python_bool_predicate_is_a_type_error(x):
    with pytest.raises(TypeError, match="'pred' must not be a Python bool"):
        tf.cond(True, lambda: x, lambda: x)


@pytest.mark.parametrize("taken", [True, False])
def test_cond_nested_structures(x, p, taken):
    def true_fn():
        return {"sum": x + 1.0, "pair": (x * 2.0, Point(x=x, y=tf.reduce_sum(x))), "list": [x]}

    def false_fn():
        return {"sum": x - 1.0, "pair": (x * 3.0, Point(x=-x, y=tf.reduce_max(x))), "list": [x * x]}

    r = tf.cond(p, true_fn, false_fn)
    assert set(r) == {"sum", "pair", "list"}
    assert isinstance(r["pair"], tuple) and isinstance(r["pair"][1], Point)
    assert isinstance(r["list"], list) and len(r["list"]) == 1
    values = run(r, {x: X, p: taken})
    if taken:
        expected = (X + 1, X * 2, X, X.sum(), X)
    else:
        expected = (X - 1, X * 3, -X, X.max(), X * X)
    got = (
        values["sum"],
        values["pair"][0],
        values["pair"][1].x,
        values["pair"][1].y,
        values["list"][0],
    )
    for value, want in zip(got, expected):
        np.testing.assert_allclose(value, want)


def test_cond_singleton_lists_are_unpacked_unless_strict(x, p):
    loose = tf.cond(p, lambda: [x * 2.0], lambda: [x])
    assert isinstance(loose, tf.Tensor)
    mixed = tf.cond(p, lambda: [x], lambda: x)
    assert isinstance(mixed, tf.Tensor)
    strict = tf.cond(p, lambda: [x * 2.0], lambda: [x], strict=True)
    assert isinstance(strict, list) and len(strict) == 1
    np.testing.assert_allclose(run(strict[0], {x: X, p: True}), X * 2)
    with pytest.raises(ValueError, match="same nested structure"):
        tf.cond(p, lambda: [x], lambda: x, strict=True)


def test_cond_branch_structures_must_match(x, p):
    with pytest.raises(TypeError, match="Incompatible return types"):
        tf.cond(p, lambda: (x, x), lambda: [x, x])
    with pytest.raises(ValueError, match="Incompatible return values"):
        tf.cond(p, lambda: (x, x), lambda: (x,))
    with pytest.raises(ValueError, match="Incompatible return values"):
        tf.cond(p, lambda: {"a": x}, lambda: {"b": x})


def test_cond_branch_dtypes_must_match(x, p):
    with pytest.raises(ValueError, match="must have the same type"):
        tf.cond(p, lambda: x, lambda: tf.cast(x, tf.int32))


def test_cond_argument_errors(x, p):
    with pytest.raises(TypeError, match="'true_fn' must be callable"):
        tf.cond(p, 1, lambda: x)
    with pytest.raises(TypeError, match="'false_fn' must be callable"):
        tf.cond(p, lambda: x, x)
    with pytest.raises(TypeError, match="'false_fn' argument required"):
        tf.cond(p, lambda: x)
    with pytest.raises(ValueError, match="'true_fn' must have a return value"):
        tf.cond(p, lambda: None, lambda: x)
    with pytest.raises(ValueError, match="must return at least one result"):
        tf.cond(p, list, list)


def test_cond_fn1_fn2_are_the_old_names(x, p):
    r = tf.cond(p, fn1=lambda: x + 1.0, fn2=lambda: x - 1.0)
    np.testing.assert_allclose(run(r, {x: X, p: False}), X - 1)


def test_cond_branches_returning_operations(p):
    counter = tf.Variable(0)
    r = tf.cond(
        p,
        lambda: tf.assign_add(counter, 1).op,
        lambda: tf.assign_add(counter, 100).op,
    )
    # An op stands for "the branch ran": the result is the branch's pivot.
    assert r.dtype == tf.bool
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(r, {p: True})
        sess.run(r, {p: False})
        assert sess.run(counter) == 101


def test_cond_branches_returning_variables(p):
    a = tf.Variable([1.0, 2.0])
    b = tf.Variable([5.0, 6.0])
    r = tf.cond(p, lambda: a, lambda: b)
    np.testing.assert_allclose(run(r, {p: True}), [1.0, 2.0])
    np.testing.assert_allclose(run(r, {p: False}), [5.0, 6.0])


def test_cond_returning_an_outside_value_goes_through_a_switch(x, p):
    c = tf.constant(3.0, name="c")
    r = tf.cond(p, lambda: tf.constant(1.0), lambda: c)
    assert r.op.type == "Merge"
    switch = tf.get_default_graph().get_operation_by_name("cond/Switch_1")
    assert switch.type == "Switch" and switch.inputs[0] is c
    assert run(r, {p: False}) == pytest.approx(3.0)


def test_cond_switches_each_outside_value_once_per_branch(x, p):
    y = tf.placeholder(tf.float32, [3], name="y")
    tf.cond(p, lambda: x * x + x * y + tf.identity(x), lambda: y - y)
    switches = [op for op in tf.get_default_graph().get_operations() if op.type == "Switch"]
    by_value = collections.Counter(op.inputs[0].name for op in switches)
    # x in the true branch; y in each branch; p for the pivots.
    assert by_value == {"x:0": 1, "y:0": 2, "p:0": 1}
    for op in switches:
        if op.inputs[0].name != "p:0":
            assert op.inputs[1].name == "cond/pred_id:0"


def test_cond_ops_without_inputs_wait_for_the_branch_pivot(p):
    r = tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0))
    graph = tf.get_default_graph()
    assert [c.name for c in graph.get_operation_by_name("cond/Const").control_inputs] == [
        "cond/switch_t"
    ]
    assert [c.name for c in graph.get_operation_by_name("cond/Const_1").control_inputs] == [
        "cond/switch_f"
    ]
    assert run(r, {p: False}) == pytest.approx(2.0)


def test_cond_ops_remember_their_context(x, p):
    tf.cond(p, lambda: x + 1.0, lambda: x - 1.0)
    graph = tf.get_default_graph()
    add = graph.get_operation_by_name("cond/add")
    sub = graph.get_operation_by_name("cond/sub")
    assert add._control_flow_context.branch == 1
    assert sub._control_flow_context.branch == 0
    assert add._control_flow_context.pred is sub._control_flow_context.pred
    assert graph.get_operation_by_name("cond/Merge")._control_flow_context is None
    assert graph._get_control_flow_context() is None


def test_cond_control_dependencies_inside_a_branch(p):
    counter = tf.Variable(0)
    outside = tf.assign_add(counter, 5)

    def true_fn():
        with tf.control_dependencies([outside]):
            return tf.identity(tf.constant(1))

    r = tf.cond(p, true_fn, lambda: tf.constant(0))
    const = tf.get_default_graph().get_operation_by_name("cond/Const")
    assert sorted(c.name for c in const.control_inputs) == ["AssignAdd", "cond/switch_t"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        # As in TensorFlow: an op made outside the cond runs whichever branch
        # is taken; the branch's own ops wait for it.
        assert sess.run(r, {p: False}) == 0
        assert sess.run(counter) == 5
        assert sess.run(r, {p: True}) == 1
        assert sess.run(counter) == 10


def test_control_dependencies_none_leaves_the_cond_context(x, p):
    def true_fn():
        with tf.control_dependencies(None):
            outside = tf.constant(7.0, name="outside")
        return x + outside

    r = tf.cond(p, true_fn, lambda: x)
    outside = tf.get_default_graph().get_operation_by_name("cond/outside")
    assert outside._control_flow_context is None and outside.control_inputs == []
    np.testing.assert_allclose(run(r, {x: X, p: True}), X + 7.0)


@pytest.mark.parametrize(
    "p_value, q_value, expected", [(True, True, X * 3), (True, False, X + 10), (False, True, -X)]
)
def test_nested_cond(x, p, p_value, q_value, expected):
    q = tf.placeholder(tf.bool, [], name="q")
    r = tf.cond(p, lambda: tf.cond(q, lambda: x * 3.0, lambda: x + 10.0), lambda: -x)
    np.testing.assert_allclose(run(r, {x: X, p: p_value, q: q_value}), expected)


def test_switch_and_merge_by_hand(x, p):
    false_side, true_side = control_flow_ops.switch(x, p)
    assert false_side.op.type == "Switch" and false_side.op is true_side.op
    value, index = control_flow_ops.merge([false_side + 1.0, true_side * 2.0])
    got_value, got_index = run([value, index], {x: X, p: True})
    np.testing.assert_allclose(got_value, X * 2)
    assert got_index == 1
    got_value, got_index = run([value, index], {x: X, p: False})
    np.testing.assert_allclose(got_value, X + 1)
    assert got_index == 0
    with pytest.raises(ValueError, match="merge inputs is None"):
        control_flow_ops.merge([x, None])


def test_ref_switch_for_a_variable_assigned_in_a_branch(p):
    v = tf.Variable(1.0)
    r = tf.cond(p, lambda: tf.assign(v, 5.0), lambda: tf.identity(v))
    ref_switches = [op for op in tf.get_default_graph().get_operations() if op.type == "RefSwitch"]
    assert len(ref_switches) == 1
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(r, {p: False}) == pytest.approx(1.0)
        assert sess.run(r, {p: True}) == pytest.approx(5.0)
        assert sess.run(v) == pytest.approx(5.0)


def test_with_dependencies_and_tuple():
    counter = tf.Variable(0)
    bump = tf.assign_add(counter, 1)
    value = tf.constant(41)
    gated = control_flow_ops.with_dependencies([bump], value + 1)
    a, b, none = tf.tuple([tf.constant(1), tf.constant(2), None], control_inputs=[bump])
    assert none is None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(gated) == 42
        assert sess.run(counter) == 1
        assert sess.run([a, b]) == [1, 2]
        assert sess.run(counter) == 2
    with pytest.raises(TypeError, match="control_inputs"):
        tf.tuple([tf.constant(1)], control_inputs=[3])
    with pytest.raises(ValueError, match="at least one Tensor"):
        tf.tuple([None])


# --- tf.case ------------------------------------------------------------------


@pytest.mark.parametrize("value, expected", [(-5.0, 1.0), (5.0, 2.0), (50.0, 3.0)])
def test_case_takes_the_first_true_predicate(value, expected):
    v = tf.placeholder(tf.float32, [])
    r = tf.case(
        [(v < 0.0, lambda: tf.constant(1.0)), (v < 10.0, lambda: tf.constant(2.0))],
        default=lambda: tf.constant(3.0),
    )
    assert run(r, {v: value}) == pytest.approx(expected)


def test_case_with_a_dict_and_nested_results():
    v = tf.placeholder(tf.float32, [])
    negative = tf.less(v, 0.0, name="negative")
    large = tf.greater(v, 10.0, name="large")
    r = tf.case(
        {negative: lambda: (v * -1.0, [v]), large: lambda: (v / 10.0, [v])},
        default=lambda: (v, [v + 1.0]),
    )
    assert run(r, {v: -4.0}) == (pytest.approx(4.0), [pytest.approx(-4.0)])
    assert run(r, {v: 40.0}) == (pytest.approx(4.0), [pytest.approx(40.0)])
    assert run(r, {v: 4.0}) == (pytest.approx(4.0), [pytest.approx(5.0)])


def test_case_strict_keeps_singleton_lists():
    v = tf.placeholder(tf.float32, [])
    r = tf.case([(v < 0.0, lambda: [v])], default=lambda: [-v], strict=True)
    assert isinstance(r, list) and len(r) == 1
    assert run(r[0], {v: 2.0}) == pytest.approx(-2.0)


def test_case_argument_errors(x, p):
    with pytest.raises(TypeError, match="must be a list, tuple, or dict"):
        tf.case(p, default=lambda: x)
    with pytest.raises(TypeError, match="must be a 2-tuple"):
        tf.case([p], default=lambda: x)
    with pytest.raises(TypeError, match="must be callable"):
        tf.case([(p, 1)], default=lambda: x)
    with pytest.raises(TypeError, match="Tensor of type bool"):
        tf.case([(x, lambda: x)], default=lambda: x)


def test_case_exclusive_asserts_at_most_one_true_predicate():
    v = tf.placeholder(tf.float32, [])
    r = tf.case(
        [(v < 10.0, lambda: tf.constant(1.0)), (v < 20.0, lambda: tf.constant(2.0))],
        default=lambda: tf.constant(3.0),
        exclusive=True,
    )
    assert run(r, {v: 15.0}) == pytest.approx(2.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="exclusive=True"):
        run(r, {v: 5.0})


def test_case_without_default_checks_that_the_last_predicate_holds():
    v = tf.placeholder(tf.float32, [])
    r = tf.case([(v < 10.0, lambda: tf.constant(1.0)), (v < 20.0, lambda: tf.constant(2.0))])
    assert run(r, {v: 5.0}) == pytest.approx(1.0)
    assert run(r, {v: 15.0}) == pytest.approx(2.0)
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="None of conditions evaluated as True"
    ):
        run(r, {v: 25.0})

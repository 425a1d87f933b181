"""tf.strings.format, tf.Print, tf.print, tf.Assert and tf.debugging.assert_*
against what TensorFlow 2.21 printed and raised for the same expressions
(tests/fixtures/tf_logging/expected.json, written by
tests/fixtures/record_logging.py), byte for byte."""

import builtins
import collections
import json
import logging
import os
import re

import numpy as np
import pytest
import tensorweave as tf

_FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "tf_logging", "expected.json")
with open(_FIXTURE) as _file:
    _RECORDED = json.load(_file)
CASES = _RECORDED["cases"]
_GRAPH_RECORD = _RECORDED["graph"]


def _cases(kind):
    chosen = [case for case in CASES if case["kind"] == kind]
    return pytest.mark.parametrize("case", chosen, ids=[case["expr"] for case in chosen])


def _build(case):
    return eval(case["expr"], {"tf": tf, "np": np, "collections": collections})


def _run(case, capfd):
    """Builds and runs the case; (value or error, stdout, stderr). With
    capfdbinary the streams are bytes, decoded as latin-1 like the fixture."""
    built = _build(case)
    graph = built.graph
    feeds = {graph.get_tensor_by_name(k): v for k, v in case.get("feeds", {}).items()}
    capfd.readouterr()
    with tf.Session(graph=graph) as sess:
        try:
            outcome = sess.run(built, feeds)
        except tf.errors.OpError as error:
            outcome = error
    out, err = capfd.readouterr()
    if isinstance(out, bytes):
        out, err = out.decode("latin-1"), err.decode("latin-1")
    return built, outcome, out, err


@_cases("format")
def test_string_format_matches_tensorflow(case, capfd):
    _, value, _, _ = _run(case, capfd)
    assert value.decode("latin-1") == case["value"]


@_cases("print_v1")
def test_print_writes_what_tensorflow_writes(case, capfdbinary):
    built, value, out, err = _run(case, capfdbinary)
    assert err == case["stderr"]
    assert out == case["stdout"]
    np.testing.assert_array_equal(value, case["value"])
    assert built.op.type == "Print"


@_cases("print_v2")
def test_tf_print_writes_what_tensorflow_writes(case, capfdbinary):
    built, _, out, err = _run(case, capfdbinary)
    assert err == case["stderr"]
    assert out == case["stdout"]
    assert built.type == "PrintV2"


@_cases("assert")
def test_asserts_pass_and_fail_as_in_tensorflow(case, capfd):
    expected = case.get("error")
    if case.get("raised") == "building":
        error_type = getattr(tf.errors, expected[0], None) or getattr(builtins, expected[0])
        with pytest.raises(error_type) as raised:
            _build(case)
        assert type(raised.value) is error_type
        assert str(raised.value) == expected[1]
        return
    _, outcome, _, _ = _run(case, capfd)
    if expected is None:
        assert not isinstance(outcome, Exception)
        return
    assert isinstance(outcome, tf.errors.InvalidArgumentError)
    assert type(outcome).__name__ == expected[0]
    # Ours ends in " (node 'NAME', op Assert)" where TensorFlow adds a line.
    message = re.sub(r" \(node '[^']*', op Assert\)$", "", outcome.message)
    assert message == expected[1]


def test_the_fixture_covers_every_kind():
    kinds = collections.Counter(case["kind"] for case in CASES)
    assert kinds["format"] >= 100 and kinds["print_v1"] >= 60
    assert kinds["print_v2"] >= 10 and kinds["assert"] >= 30


def test_print_first_n_prints_only_the_first_runs(capfd):
    x = tf.placeholder(tf.int32, [])
    printed = tf.Print(x, [x], message="x=", first_n=2)
    with tf.Session() as sess:
        values = [sess.run(printed, {x: i}) for i in range(4)]
    assert values == [0, 1, 2, 3]
    assert capfd.readouterr().err == "x=[0]\nx=[1]\n"


def test_print_gradient_passes_through():
    x = tf.constant([1.0, 2.0])
    y = tf.Print(x * 3.0, [x], message="never printed: the gradient does not run Print")
    (grad,) = tf.gradients(tf.reduce_sum(y), [x])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(grad), [3.0, 3.0])


def test_tf_print_streams_and_files(capfd, tmp_path):
    import sys

    path = tmp_path / "printed.txt"
    to_stdout = tf.print("out", tf.constant(1), output_stream=sys.stdout)
    to_file = tf.print("file", tf.constant([1, 2]), output_stream=f"file://{path}")
    to_log = tf.print("logged", output_stream=logging.WARNING)
    with tf.Session() as sess:
        sess.run([to_stdout, to_file])
        sess.run(to_file)
        sess.run(to_log)
    out, err = capfd.readouterr()
    assert out == "out 1\n"
    assert path.read_text() == "file [1 2]\nfile [1 2]\n"
    assert re.fullmatch(r"W\d{4} \d\d:\d\d:\d\d\.\d{6} logging_ops\] logged\n", err)


def test_tf_print_rejects_unknown_streams_and_keywords():
    with pytest.raises(ValueError, match="Unsupported output stream"):
        tf.print("x", output_stream="stdout")
    with pytest.raises(ValueError, match="Unrecognized keyword arguments for tf.print"):
        tf.print("x", colour="red")


def test_print_v2_of_a_non_scalar_fails_when_built():
    with pytest.raises(ValueError, match="input must be a scalar, but has rank: 1"):
        tf.get_default_graph().create_op("PrintV2", [tf.constant(["a", "b"])], attrs={})


def test_string_format_checks_its_placeholders():
    with pytest.raises(
        ValueError, match="The template expects 2 tensors, but the inputs only has 1"
    ):
        tf.strings.format("{} {}", tf.constant(1))


def test_assert_returns_an_op_that_guards_a_computation():
    x = tf.placeholder(tf.float32, [None])
    check = tf.Assert(tf.reduce_all(x > 0), ["x must be positive:", x])
    with tf.control_dependencies([check]):
        y = tf.sqrt(x)
    assert check.type == "Assert" and check.name == "Assert/Assert"
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {x: [4.0]}), [2.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"\[x must be positive:\] \[-1\]"):
            sess.run(y, {x: [-1.0]})


def test_assert_needs_a_scalar_condition():
    condition = tf.placeholder(tf.bool)
    check = tf.Assert(condition, [1])
    with (
        tf.Session() as sess,
        pytest.raises(tf.errors.InvalidArgumentError, match=r"In\[0\] should be a scalar: \[2\]"),
    ):
        sess.run(check, {condition: [True, True]})


def test_static_checks_that_pass_give_no_ops():
    x = tf.constant([[1, 2]])
    assert tf.assert_rank(x, 2).type == "NoOp"
    assert tf.assert_rank_in(x, [1, 2]).type == "NoOp"
    assert tf.assert_integer(x).type == "NoOp"
    assert tf.assert_type(x, tf.int32).type == "NoOp"
    assert tf.assert_equal(x, x).type == "NoOp"
    assert tf.assert_scalar(tf.constant(1)).op.type == "Const"
    assert tf.assert_same_float_dtype([tf.constant(1.0)]) == tf.float32
    assert tf.assert_same_float_dtype() == tf.float32


def test_monotonic_checks():
    x = tf.placeholder(tf.float32)
    non_decreasing = tf.debugging.is_non_decreasing(x)
    increasing = tf.math.is_strictly_increasing(x)
    assert tf.is_numeric_tensor(x) and not tf.is_numeric_tensor(tf.constant("a"))
    with tf.Session() as sess:
        for value, expected in (
            ([1, 2, 2], (True, False)),
            ([1, 2, 3], (True, True)),
            ([[1, 2], [0, 5]], (False, False)),
            ([5], (True, True)),
            ([], (True, True)),
        ):
            assert tuple(sess.run([non_decreasing, increasing], {x: value})) == expected
    with pytest.raises(TypeError, match="Expected x to be numeric"):
        tf.debugging.is_non_decreasing(tf.constant(["a"]))


def test_dynamic_rank_of_a_fed_rank_is_checked_too():
    x = tf.placeholder(tf.float32)
    rank = tf.placeholder(tf.int32)
    check = tf.assert_rank(x, rank)
    with tf.Session() as sess:
        sess.run(check, {x: [1.0], rank: 1})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Rank must be a scalar"):
            sess.run(check, {x: [1.0], rank: [1]})


def test_assert_and_print_are_never_folded_or_pruned_away(capfd):
    # A constant condition: constant folding must not evaluate (or drop)
    # the Assert, and a fetched Print must print on every run.
    check = tf.Assert(tf.constant(False), [tf.constant(1)])
    printed = tf.Print(tf.constant(5), [tf.constant(6)], message="run ")
    with tf.Session() as sess:
        for _ in range(2):
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(check)
            assert sess.run(printed) == 5
    assert capfd.readouterr().err == "run [6]\nrun [6]\n"


def test_tf_print_prints_variables_as_tensors(capfd):
    v = tf.Variable([1.0, 2.5])
    printed = tf.print("v:", v, [v])
    formatted = tf.strings.format("<{}>", v)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(printed)
        assert sess.run(formatted) == b"<[1 2.5]>"
    assert capfd.readouterr().err == "v: [1 2.5] [[1 2.5]]\n"


def test_a_tensorflow_graphdef_with_asserts_and_prints_runs_as_in_tensorflow(capfdbinary):
    # tf.Assert's guard there is a v1 tf.cond (Switch/Merge) around the op.
    recorded = _GRAPH_RECORD
    graph_def = tf.GraphDef()
    with open(os.path.join(os.path.dirname(_FIXTURE), "logging_graph.pb"), "rb") as file:
        graph_def.ParseFromString(file.read())
    tf.import_graph_def(graph_def, name="")
    graph = tf.get_default_graph()
    names = recorded["names"]
    x = graph.get_tensor_by_name("x:0")
    doubled = graph.get_tensor_by_name(names["doubled"])
    formatted = graph.get_tensor_by_name(names["formatted"])
    report = graph.get_operation_by_name(names["report"])
    check = graph.get_tensor_by_name(names["check"] + ":0")
    with tf.Session() as sess:
        for run in recorded["runs"]:
            capfdbinary.readouterr()
            got = sess.run([doubled, formatted, report], {x: run["x"]})
            failure = None
            try:
                sess.run(check, {x: run["x"]})
            except tf.errors.InvalidArgumentError as error:
                failure = re.sub(r" \(node '[^']*', op Assert\)$", "", error.message)
            err = capfdbinary.readouterr().err.decode("latin-1")
            np.testing.assert_array_equal(got[0], run["doubled"])
            assert got[1].decode("latin-1") == run["formatted"]
            assert failure == run.get("error")
            # Print and PrintV2 run side by side: their order may differ.
            assert sorted(err.splitlines()) == sorted(run["stderr"].splitlines())

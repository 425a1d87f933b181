"""TF_AddGradients / TF_AddGradientsWithPrefix: symbolic gradients added to a
graph under "gradients" (then "gradients_1", ...) or a caller's prefix, run
in a session (also through a TF_NewWhile loop), with TensorFlow's errors: a used prefix and an x unreachable
from y are INVALID_ARGUMENT, an operation without a gradient NOT_FOUND, and
the graph is unchanged after any error."""

import numpy as np
import pytest
from capi_helpers import CODES, TF_DOUBLE, CApiError
from test_capi_while import finish, new_while


def add_gradients(api, graph, y, x, dx=None, prefix=None):
    """The gradients as (oper, index) pairs; raises CApiError on error."""
    dy = api.ffi.new("TF_Output[]", max(len(x), 1))
    dx_array = api.outputs(dx) if dx is not None else api.ffi.NULL
    if prefix is None:
        api.call(
            lambda status: api.lib.TF_AddGradients(
                graph, api.outputs(y), len(y), api.outputs(x), len(x), dx_array, status, dy
            )
        )
    else:
        api.call(
            lambda status: api.lib.TF_AddGradientsWithPrefix(
                graph,
                prefix.encode(),
                api.outputs(y),
                len(y),
                api.outputs(x),
                len(x),
                dx_array,
                status,
                dy,
            )
        )
    return [(dy[i].oper, dy[i].index) for i in range(len(x))]


def error_of(function):
    with pytest.raises(CApiError) as caught:
        function()
    return caught.value.code, caught.value.message


def name(api, oper):
    return api.ffi.string(api.lib.TF_OperationName(oper)).decode()


def run(api, graph, fetches, feeds):
    session = api.new_session(graph)
    try:
        return api.run(session, feeds=feeds, fetches=fetches)
    finally:
        status = api.lib.TF_NewStatus()
        api.lib.TF_DeleteSession(session, status)
        api.lib.TF_DeleteStatus(status)


def polynomial(api, graph):
    """y = x * x + 3 * x over a float64 placeholder x."""
    x = api.placeholder(graph, "x", TF_DOUBLE)
    three = api.const(graph, "three", np.float64(3))
    square = api.binary(graph, "Mul", "square", x, x)
    scaled = api.binary(graph, "Mul", "scaled", three, x)
    y = api.binary(graph, "AddV2", "y", square, scaled)
    return x, y


def test_TF_AddGradients_computes_the_derivative(api, graph):
    x, y = polynomial(api, graph)
    (grad,) = add_gradients(api, graph, [(y, 0)], [(x, 0)])
    assert name(api, grad[0]) == "gradients/AddN"
    values = np.array([-2.0, 0.5, 4.0])
    (result,) = run(api, graph, [grad], [((x, 0), values)])
    np.testing.assert_allclose(result, 2 * values + 3)


def test_TF_AddGradients_second_call_uses_gradients_1(api, graph):
    x, y = polynomial(api, graph)
    first = add_gradients(api, graph, [(y, 0)], [(x, 0)])
    second = add_gradients(api, graph, [(y, 0)], [(x, 0)])
    assert name(api, first[0][0]) == "gradients/AddN"
    assert name(api, second[0][0]) == "gradients_1/AddN"
    names = api.operation_names(graph)
    assert "gradients/OnesLike" in names and "gradients_1/OnesLike" in names


def test_TF_AddGradients_with_initial_gradients(api, graph):
    x, y = polynomial(api, graph)
    dx = api.const(graph, "seed", np.array([1.0, 10.0]))
    (grad,) = add_gradients(api, graph, [(y, 0)], [(x, 0)], dx=[(dx, 0)])
    assert not any(n.endswith("OnesLike") for n in api.operation_names(graph))
    (result,) = run(api, graph, [grad], [((x, 0), np.array([1.0, 2.0]))])
    np.testing.assert_allclose(result, [5.0, 70.0])


def test_TF_AddGradients_sums_over_several_outputs_and_inputs(api, graph):
    a = api.placeholder(graph, "a", TF_DOUBLE)
    b = api.placeholder(graph, "b", TF_DOUBLE)
    product = api.binary(graph, "Mul", "product", a, b)
    total = api.binary(graph, "AddV2", "total", a, b)
    grads = add_gradients(api, graph, [(product, 0), (total, 0)], [(a, 0), (b, 0)])
    results = run(api, graph, grads, [((a, 0), np.float64(2)), ((b, 0), np.float64(5))])
    assert [float(r) for r in results] == [6.0, 3.0]  # b + 1, a + 1


def test_TF_AddGradients_matmul_and_reduction(api, graph):
    x = api.placeholder(graph, "x", TF_DOUBLE)
    w = api.const(graph, "w", np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    product = api.op(graph, "MatMul", "product", inputs=[(x, 0), (w, 0)])
    axes = api.const(graph, "axes", np.array([0, 1], np.int32))
    loss = api.op(graph, "Sum", "loss", inputs=[(product, 0), (axes, 0)])
    (grad,) = add_gradients(api, graph, [(loss, 0)], [(x, 0)])
    (result,) = run(api, graph, [grad], [((x, 0), np.ones((2, 3)))])
    np.testing.assert_allclose(result, [[3.0, 7.0, 11.0]] * 2)


def test_TF_AddGradients_unreachable_x_is_invalid_argument(api, graph):
    _, y = polynomial(api, graph)
    z = api.placeholder(graph, "z", TF_DOUBLE)
    before = api.operation_names(graph)
    code, message = error_of(lambda: add_gradients(api, graph, [(y, 0)], [(z, 0)]))
    assert code == CODES["INVALID_ARGUMENT"]
    assert message == (
        "Cannot compute the partial derivative for node 'z' as it's unreachable from the "
        "output node(s)."
    )
    assert api.operation_names(graph) == before


def test_TF_AddGradients_x_behind_shape_gets_no_gradient(api, graph):
    x = api.placeholder(graph, "x", TF_DOUBLE)
    shape = api.op(graph, "Shape", "shape", inputs=[(x, 0)])
    (grad,) = add_gradients(api, graph, [(shape, 0)], [(x, 0)])
    assert grad[0] == api.ffi.NULL and grad[1] == -1


def test_TF_AddGradients_op_without_gradient_is_not_found(api, graph):
    x = api.placeholder(graph, "x", TF_DOUBLE)
    passed = api.op(
        graph, "PlaceholderWithDefault", "passed", inputs=[(x, 0)], attrs={"shape": ("shape", None)}
    )
    y = api.binary(graph, "Mul", "y", passed, passed)
    before = api.operation_names(graph)
    code, message = error_of(lambda: add_gradients(api, graph, [(y, 0)], [(x, 0)]))
    assert code == CODES["NOT_FOUND"]
    assert message.startswith("No gradient defined for op: PlaceholderWithDefault.")
    assert api.operation_names(graph) == before


def test_TF_AddGradients_bad_arguments(api, graph):
    x, y = polynomial(api, graph)
    dy = api.ffi.new("TF_Output[]", 1)
    status = api.lib.TF_NewStatus()
    try:
        api.lib.TF_AddGradients(
            api.ffi.NULL,
            api.outputs([(y, 0)]),
            1,
            api.outputs([(x, 0)]),
            1,
            api.ffi.NULL,
            status,
            dy,
        )
        assert api.code(status) == CODES["INVALID_ARGUMENT"]
        api.lib.TF_AddGradients(
            graph, api.outputs([(y, 0)]), 1, api.outputs([(x, 5)]), 1, api.ffi.NULL, status, dy
        )
        assert api.code(status) == CODES["OUT_OF_RANGE"]
        api.lib.TF_AddGradients(
            graph, api.outputs([(y, 0)]), -1, api.outputs([(x, 0)]), 1, api.ffi.NULL, status, dy
        )
        assert api.code(status) == CODES["INVALID_ARGUMENT"]
    finally:
        api.lib.TF_DeleteStatus(status)


def test_TF_AddGradientsWithPrefix_names_operations_under_the_prefix(api, graph):
    x, y = polynomial(api, graph)
    (grad,) = add_gradients(api, graph, [(y, 0)], [(x, 0)], prefix="my/grads")
    assert name(api, grad[0]) == "my/grads/AddN"
    new = [
        n for n in api.operation_names(graph) if n not in ("x", "three", "square", "scaled", "y")
    ]
    assert new and all(n.startswith("my/grads/") for n in new)
    (result,) = run(api, graph, [grad], [((x, 0), np.float64(1.5))])
    assert float(result) == 6.0


def test_TF_AddGradientsWithPrefix_used_prefix_is_invalid_argument(api, graph):
    x, y = polynomial(api, graph)
    add_gradients(api, graph, [(y, 0)], [(x, 0)])
    before = api.operation_names(graph)
    for prefix, user in (("square", "square"), ("gradients", "gradients/")):
        code, message = error_of(
            lambda prefix=prefix: add_gradients(api, graph, [(y, 0)], [(x, 0)], prefix=prefix)
        )
        assert code == CODES["INVALID_ARGUMENT"]
        assert message.startswith(
            f"prefix [{prefix}] conflicts with existing node in the graph named [{user}"
        )
    assert api.operation_names(graph) == before


def test_TF_AddGradientsWithPrefix_null_prefix_is_the_default(api, graph):
    x, y = polynomial(api, graph)
    dy = api.ffi.new("TF_Output[]", 1)
    api.call(
        lambda status: api.lib.TF_AddGradientsWithPrefix(
            graph,
            api.ffi.NULL,
            api.outputs([(y, 0)]),
            1,
            api.outputs([(x, 0)]),
            1,
            api.ffi.NULL,
            status,
            dy,
        )
    )
    assert name(api, dy[0].oper) == "gradients/AddN"


def squaring_loop(api, graph, x, iterations):
    """A TF_NewWhile loop: (i, v) = (0, x); while i < iterations: (i + 1, v * v)."""
    zero = api.const(graph, "zero", np.int32(0))
    params = new_while(api, graph, [(zero, 0), (x, 0)])
    cond = params.cond_graph
    limit = api.const(cond, "limit", np.int32(iterations))
    less = api.op(cond, "Less", "less", [(params.cond_inputs[0].oper, 0), (limit, 0)])
    params.cond_output = api.output(less, 0)
    body = params.body_graph
    one = api.const(body, "one", np.int32(1))
    i, v = params.body_inputs[0].oper, params.body_inputs[1].oper
    params.body_outputs[0] = api.output(api.op(body, "AddV2", "inc", [(i, 0), (one, 0)]), 0)
    params.body_outputs[1] = api.output(api.op(body, "Mul", "square", [(v, 0), (v, 0)]), 0)
    return finish(api, params, 2)


def test_TF_AddGradients_through_a_while_loop(api, graph):
    # v = x^(2^3) after three squarings: dv/dx = 8 x^7.
    x = api.placeholder(graph, "x", TF_DOUBLE)
    _, result = squaring_loop(api, graph, x, 3)
    (grad,) = add_gradients(api, graph, [result], [(x, 0)])
    assert name(api, grad[0]).startswith("gradients/while_grad/")
    values = np.array([0.5, -1.1, 1.2])
    value, derivative = run(api, graph, [result, grad], [((x, 0), values)])
    np.testing.assert_allclose(value, values**8)
    np.testing.assert_allclose(derivative, 8 * values**7, rtol=1e-12)

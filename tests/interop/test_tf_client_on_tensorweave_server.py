"""Direction 2: TensorFlow's own client (tf.compat.v1.Session("grpc://...")
in the interop virtualenv's Python) runs graphs on a tensorweave server
(`python -m tensorweave.server`). Both run as subprocesses started and
killed by pid by each test; tests/interop/tf_client.py holds the client's
scenarios and prints their results as JSON.

These need the master service (MasterService on the tensorweave server):
without it every scenario ends with UNIMPLEMENTED from CreateSession."""

INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
FAILED_PRECONDITION = 9


def run_scenario(tf_client, tw_server, scenario):
    result = tf_client(tw_server, scenario)
    assert "error" not in result, f"{scenario}: {result['error']}"
    return result


def test_tf_client_feeds_and_fetches(tf_client, tw_server):
    result = run_scenario(tf_client, tw_server, "affine")
    assert result["y"] == [[1.0, 3.0, 5.0, 7.0]]
    assert result["dict_y"] == [[1.0, 3.0, 5.0, 7.0]]
    assert result["dict_doubled"] == [[0.0, 2.0, 4.0, 6.0]]


def test_tf_client_variables_update_across_runs(tf_client, tw_server):
    result = run_scenario(tf_client, tw_server, "variables")
    assert result == {"values": [3.0, 5.0, 7.0], "final": 7.0}


def test_tf_client_sees_tensorflows_error_codes(tf_client, tw_server):
    result = run_scenario(tf_client, tw_server, "errors")
    assert result["uninitialized"]["code"] == FAILED_PRECONDITION
    assert "never_initialized" in result["uninitialized"]["message"]
    assert result["bad_reshape"]["code"] == INVALID_ARGUMENT
    assert result["unfed_placeholder"]["code"] == INVALID_ARGUMENT


def test_tf_client_extends_makes_callables_and_lists_devices(tf_client, tw_server):
    result = run_scenario(tf_client, tw_server, "extend_callable_devices")
    assert result["first"] == [2.0, 3.0]
    assert result["second"] == [6.0, 9.0]
    assert result["callable"] == [3.0, 6.0]
    assert "/job:localhost/replica:0/task:0/device:CPU:0" in result["devices"]


def test_tf_client_run_options_timeout(tf_client, tw_server):
    result = run_scenario(tf_client, tw_server, "timeout")
    assert result["timeout"]["code"] == DEADLINE_EXCEEDED


def test_tf_client_runs_control_flow_and_its_gradients(tf_client, tw_server):
    result = run_scenario(tf_client, tw_server, "control_flow")
    assert result["cond"] == [6.0, 2.0]
    assert result["cond_grad"] == [2.0, 1.0]
    assert result["power"] == 32.0
    assert result["power_grad"] == 80.0  # 5 x^4 at x = 2, through StackV2/StackPopV2


def test_tf_client_runs_tensorflow_2_control_flow_and_functions(tf_client, tw_server):
    # If/While and a tf.function call: the graph carries a function library.
    result = run_scenario(tf_client, tw_server, "functions")
    ops = set(result["ops"])
    for kind in (
        {"If", "StatelessIf"},
        {"While", "StatelessWhile"},
        {"PartitionedCall", "StatefulPartitionedCall"},
    ):
        assert ops & kind, result["ops"]
    assert result["cond"] == [6.0, 2.0]
    assert result["power"] == 32.0
    assert result["squared"] == 9.0


def test_tf_client_partial_runs(tf_client, tw_server):
    result = run_scenario(tf_client, tw_server, "partial_run")
    assert result["first"] == 3.0
    assert result["second"] == 153.0
    assert result["handles_differ"]
    assert result["last"] == 15.0
    for name, words in (
        ("not_computable", "can't be computed"),
        ("already_fed", "has already been fed"),
        ("already_fetched", "has already been fetched"),
        ("ended", "Must run 'setup'"),
    ):
        assert result[name]["code"] == INVALID_ARGUMENT, result[name]
        assert words in result[name]["message"], result[name]

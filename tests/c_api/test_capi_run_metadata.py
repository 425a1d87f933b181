"""RunMetadata through the C API: TF_SessionRun's and TF_Run's run_metadata
buffer and TW_SessionRunCallableWithMetadata, with RunOptions.trace_level
(step_stats per node) and output_partition_graphs."""

import numpy as np
from capi_helpers import CODES, TF_OK
from google.protobuf import message_factory

FEED = np.arange(8, dtype=np.float32).reshape(2, 4)
DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
FULL_TRACE = 3


def run_metadata_class(api):
    pool = api.pb.RunOptions.DESCRIPTOR.file.pool
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorweave.RunMetadata"))


def session_run(api, session, feeds, fetches, run_options, metadata_buffer):
    """TF_SessionRun with a run_metadata buffer; (values, status code, message)."""
    ffi, lib = api.ffi, api.lib
    feed_tensors = [api.tensor(value) for _, value in feeds]
    inputs = api.outputs([key for key, _ in feeds])
    values = ffi.new("TF_Tensor*[]", feed_tensors)
    outputs = api.outputs(fetches)
    results = ffi.new("TF_Tensor*[]", len(fetches))
    data = run_options.SerializeToString()
    options = lib.TF_NewBufferFromString(data, len(data))
    status = lib.TF_NewStatus()
    try:
        lib.TF_SessionRun(
            session,
            options,
            inputs,
            values,
            len(feeds),
            outputs,
            results,
            len(fetches),
            ffi.NULL,
            0,
            metadata_buffer,
            status,
        )
        code, message = api.code(status), api.message(status)
        taken = [api.take(results[i]) for i in range(len(fetches))] if code == TF_OK else []
        return taken, code, message
    finally:
        lib.TF_DeleteStatus(status)
        lib.TF_DeleteBuffer(options)
        for t in feed_tensors:
            lib.TF_DeleteTensor(t)


def parse(api, buffer):
    metadata = run_metadata_class(api)()
    metadata.ParseFromString(bytes(api.ffi.buffer(buffer.data, buffer.length)))
    return metadata


def traced_run(api, session, affine, **options):
    x, y = affine
    run_options = api.pb.RunOptions(**options)
    buffer = api.lib.TF_NewBuffer()
    try:
        values, code, message = session_run(
            api, session, [((x, 0), FEED)], [(y, 0)], run_options, buffer
        )
        assert code == TF_OK, message
        np.testing.assert_array_equal(values[0], FEED * 2 + 1)
        return parse(api, buffer)
    finally:
        api.lib.TF_DeleteBuffer(buffer)


def test_TF_SessionRun_full_trace_records_every_node_once(api, session, affine):
    metadata = traced_run(api, session, affine, trace_level=FULL_TRACE)
    (device,) = metadata.step_stats.dev_stats
    assert device.device == DEVICE
    names = [node.node_name for node in device.node_stats]
    assert len(names) == len(set(names))
    for node in ("two", "one", "twice", "y"):
        assert node in names
    for node in device.node_stats:
        assert node.all_start_micros > 0 and node.all_start_nanos // 1000 == node.all_start_micros
        assert 0 <= node.op_start_rel_nanos <= node.op_end_rel_nanos <= node.all_end_rel_nanos
        assert node.thread_id in device.thread_names
    by_name = {node.node_name: node for node in device.node_stats}
    # The fed x reaches Mul through the _Arg node that replaced it.
    assert by_name["twice"].timeline_label == "twice = Mul(x/_arg/_0, two)"
    (output,) = by_name["y"].output
    description = output.tensor_description
    assert output.slot == 0 and description.dtype == 1  # DT_FLOAT
    assert [d.size for d in description.shape.dim] == [2, 4]
    assert description.allocation_description.requested_bytes == FEED.nbytes


def test_TF_SessionRun_without_trace_records_no_stats(api, session, affine):
    metadata = traced_run(api, session, affine)
    assert not metadata.HasField("step_stats") and len(metadata.partition_graphs) == 0
    software = traced_run(api, session, affine, trace_level=1)  # SOFTWARE_TRACE
    assert len(software.step_stats.dev_stats) == 1


def test_TF_SessionRun_output_partition_graphs(api, session, affine):
    metadata = traced_run(api, session, affine, output_partition_graphs=True)
    (partition,) = metadata.partition_graphs
    ops = {node.name: node.op for node in partition.node}
    assert ops["twice"] == "Mul" and ops["y"] == "AddV2"
    assert all(node.device == DEVICE for node in partition.node)


def test_TF_SessionRun_run_metadata_buffer_must_be_empty(api, session, affine):
    x, y = affine
    buffer = api.lib.TF_NewBufferFromString(b"x", 1)
    try:
        values, code, message = session_run(
            api, session, [((x, 0), FEED)], [(y, 0)], api.pb.RunOptions(), buffer
        )
        assert code == CODES["INVALID_ARGUMENT"] and "empty" in message and values == []
    finally:
        api.lib.TF_DeleteBuffer(buffer)


def test_TF_SessionRun_run_metadata_is_filled_when_the_run_fails(api, graph, session):
    x = api.placeholder(graph, "x")
    shape = api.const(graph, "shape", np.array([3], np.int32))
    bad = api.binary(graph, "Reshape", "check", x, shape)
    buffer = api.lib.TF_NewBuffer()
    try:
        feed = np.zeros([2], np.float32)  # two elements do not make three
        run_options = api.pb.RunOptions(trace_level=FULL_TRACE)
        _, code, message = session_run(
            api, session, [((x, 0), feed)], [(bad, 0)], run_options, buffer
        )
        assert code == CODES["INVALID_ARGUMENT"] and "check" in message
        metadata = parse(api, buffer)
        names = {n.node_name for d in metadata.step_stats.dev_stats for n in d.node_stats}
        assert "check" not in names  # it failed; the feed before it ran
    finally:
        api.lib.TF_DeleteBuffer(buffer)


def test_TW_SessionRunCallableWithMetadata(api, session, affine):
    ffi, lib = api.ffi, api.lib
    options = api.pb.CallableOptions(feed=["x:0"], fetch=["y:0"])
    options.run_options.trace_level = FULL_TRACE
    handle = api.make_callable(session, options=options)
    feed = api.tensor(FEED)
    results = ffi.new("TF_Tensor*[]", 1)
    buffer = lib.TF_NewBuffer()
    status = lib.TF_NewStatus()
    try:
        for _ in range(2):  # each run gets its own stats
            lib.TF_DeleteBuffer(buffer)
            buffer = lib.TF_NewBuffer()
            feeds = ffi.new("TF_Tensor*[]", [feed])
            lib.TW_SessionRunCallableWithMetadata(
                session, handle, feeds, 1, results, 1, buffer, status
            )
            api.check(status)
            np.testing.assert_array_equal(api.take(results[0]), FEED * 2 + 1)
            names = [n.node_name for n in parse(api, buffer).step_stats.dev_stats[0].node_stats]
            assert "twice" in names and len(names) == len(set(names))
        # NULL metadata: a plain run.
        lib.TW_SessionRunCallableWithMetadata(
            session, handle, ffi.new("TF_Tensor*[]", [feed]), 1, results, 1, ffi.NULL, status
        )
        api.check(status)
        api.take(results[0])
        # A wrong handle fails before anything runs and leaves NULL outputs.
        lib.TF_DeleteBuffer(buffer)
        buffer = lib.TF_NewBuffer()
        lib.TW_SessionRunCallableWithMetadata(
            session, handle + 100, ffi.new("TF_Tensor*[]", [feed]), 1, results, 1, buffer, status
        )
        assert api.code(status) == CODES["INVALID_ARGUMENT"] and results[0] == ffi.NULL
    finally:
        lib.TF_DeleteStatus(status)
        lib.TF_DeleteBuffer(buffer)
        lib.TF_DeleteTensor(feed)


def test_TF_Run_fills_run_metadata(api, lib, ffi, graph, affine):
    # No feeds: TF_Run's ownership of its inputs does not matter here.
    graph_def = api.graph_def(graph).SerializeToString()
    opts = api.options()
    session = api.call(lib.TF_NewDeprecatedSession, opts)
    lib.TF_DeleteSessionOptions(opts)
    status = lib.TF_NewStatus()
    data = api.pb.RunOptions(trace_level=FULL_TRACE).SerializeToString()
    options = lib.TF_NewBufferFromString(data, len(data))
    buffer = lib.TF_NewBuffer()
    try:
        lib.TF_ExtendGraph(session, graph_def, len(graph_def), status)
        api.check(status)
        outputs = ffi.new("TF_Tensor*[]", 1)
        fetch = ffi.new("char[]", b"two:0")
        lib.TF_Run(
            session,
            options,
            ffi.NULL,
            ffi.NULL,
            0,
            ffi.new("char*[]", [fetch]),
            outputs,
            1,
            ffi.NULL,
            0,
            buffer,
            status,
        )
        api.check(status)
        assert api.take(outputs[0]) == 2
        stats = parse(api, buffer).step_stats.dev_stats[0].node_stats
        assert "two" in [n.node_name for n in stats]
    finally:
        lib.TF_DeleteBuffer(buffer)
        lib.TF_DeleteBuffer(options)
        lib.TF_CloseDeprecatedSession(session, status)
        lib.TF_DeleteDeprecatedSession(session, status)
        lib.TF_DeleteStatus(status)

"""tf.train.import_meta_graph / export_meta_graph: the `.meta` file a Saver writes
brings back the graph and a working Saver in a fresh graph."""

import numpy as np
import pytest
import tensorweave as tf


def build_and_save(tmp_path):
    """A tiny model; returns the checkpoint prefix and the output for a fixed input."""
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    b = tf.Variable(np.array([0.5, -0.5], np.float32), name="b")
    tf.identity(tf.matmul(x, w) + b, name="y")
    saver = tf.train.Saver(max_to_keep=3)
    feed = np.ones((2, 3), np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(w, np.full((3, 2), 2.0, np.float32)))
        expected = sess.run("y:0", {"x:0": feed})
        prefix = saver.save(sess, str(tmp_path / "model"), global_step=7)
    return prefix, feed, expected


def test_import_meta_graph_restores_into_a_fresh_graph(tmp_path):
    prefix, feed, expected = build_and_save(tmp_path)
    tf.reset_default_graph()
    saver = tf.train.import_meta_graph(prefix + ".meta")
    assert saver.last_checkpoints == []
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        np.testing.assert_array_equal(sess.run("y:0", {"x:0": feed}), expected)
        # The imported Saver saves too, with the max_to_keep it was written with.
        for step in (8, 9, 10, 11):
            saver.save(sess, str(tmp_path / "again"), global_step=step, write_meta_graph=False)
        assert [p.rsplit("-", 1)[1] for p in saver.last_checkpoints] == ["9", "10", "11"]


def test_import_scope_and_errors_of_imported_savers(tmp_path):
    prefix, feed, expected = build_and_save(tmp_path)
    tf.reset_default_graph()
    saver = tf.train.import_meta_graph(prefix + ".meta", import_scope="net", clear_devices=True)
    graph = tf.get_default_graph()
    assert graph.get_operation_by_name("net/save/RestoreV2").type == "RestoreV2"
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="missing.twckpt"):
            saver.restore(sess, str(tmp_path / "missing"))
        saver.restore(sess, prefix)
        np.testing.assert_array_equal(sess.run("net/y:0", {"net/x:0": feed}), expected)


def test_export_meta_graph_without_a_saver_imports_to_none(tmp_path):
    tf.constant(3.0, name="three")
    path = str(tmp_path / "graph.meta")
    meta_graph_def = tf.train.export_meta_graph(path)
    with open(path, "rb") as f:
        assert f.read() == meta_graph_def.SerializeToString()
    assert not meta_graph_def.HasField("saver_def")
    tf.reset_default_graph()
    assert tf.train.import_meta_graph(path) is None
    with tf.Session() as sess:
        assert sess.run("three:0") == 3.0
    with pytest.raises(ValueError, match="Not a MetaGraphDef"):
        tf.train.import_meta_graph(b"\x12\xff\xff")


def test_meta_graph_def_round_trips_through_the_generated_classes(tmp_path):
    """Every field TensorFlow's MetaGraphDef has at these numbers survives a
    round trip, and a field we do not model (object_graph_def, field 7) is
    kept as it was."""
    from google.protobuf import any_pb2
    from tensorweave.proto import meta_graph_pb2, saver_pb2

    meta = meta_graph_pb2.MetaGraphDef()
    meta.meta_info_def.meta_graph_version = "v7"
    meta.meta_info_def.tags.extend(["serve", "train"])
    meta.meta_info_def.tensorflow_version = "1.15.5"
    meta.meta_info_def.stripped_default_attrs = True
    meta.meta_info_def.stripped_op_list.op.add(name="Placeholder")
    placeholder = meta.graph_def.node.add(name="x", op="Placeholder")
    placeholder.attr["dtype"].type = tf.float32.as_datatype_enum
    meta.saver_def.CopyFrom(
        saver_pb2.SaverDef(
            filename_tensor_name="save/Const:0", max_to_keep=4, version=saver_pb2.SaverDef.V2
        )
    )
    meta.collection_def["summaries"].node_list.value.append("loss:0")
    meta.collection_def["steps"].int64_list.value.extend([1, -2, 1 << 40])
    meta.collection_def["rates"].float_list.value.append(0.5)
    meta.collection_def["blobs"].bytes_list.value.append(b"\x00\xff")
    packed = any_pb2.Any()
    packed.Pack(saver_pb2.SaverDef(restore_op_name="r"))
    meta.collection_def["anys"].any_list.value.append(packed)
    signature = meta.signature_def["serving_default"]
    signature.method_name = "tensorflow/serving/predict"
    signature.inputs["x"].name = "x:0"
    signature.inputs["x"].dtype = tf.float32.as_datatype_enum
    signature.inputs["x"].tensor_shape.dim.add(size=-1)
    signature.outputs["y"].coo_sparse.values_tensor_name = "y/values:0"
    asset = meta.asset_file_def.add(filename="vocab.txt")
    asset.tensor_info.name = "vocab_path:0"
    data = meta.SerializeToString()
    # Field numbers as TensorFlow has them: spot-check the keys on the wire.
    assert data.startswith(b"\x0a")  # meta_info_def: field 1, length-delimited
    assert b"\x1a" + bytes([meta.saver_def.ByteSize()]) in data  # saver_def: field 3
    parsed = meta_graph_pb2.MetaGraphDef.FromString(data)
    assert parsed == meta
    unpacked = saver_pb2.SaverDef()
    assert parsed.collection_def["anys"].any_list.value[0].Unpack(unpacked)
    assert unpacked.restore_op_name == "r"

    # stripped_op_list is MetaInfoDef's field 2 as in TensorFlow. A message
    # field that appears twice on the wire is merged, so appending a
    # MetaInfoDef holding only field 2 adds one more OpDef to the list.
    op_list = b"\x0a\x04\x0a\x02Op"  # an OpList with one OpDef named "Op"
    info = b"\x12" + bytes([len(op_list)]) + op_list
    # MetaGraphDef.object_graph_def (7), as a TensorFlow writer adds it,
    # survives a parse and a write.
    foreign = data + b"\x0a" + bytes([len(info)]) + info + b"\x3a\x00"
    reparsed = meta_graph_pb2.MetaGraphDef.FromString(foreign)
    assert reparsed.meta_info_def.tags == ["serve", "train"]
    assert reparsed.saver_def == meta.saver_def
    assert [op.name for op in reparsed.meta_info_def.stripped_op_list.op] == ["Placeholder", "Op"]
    assert reparsed.SerializeToString().endswith(b"\x3a\x00")

    # A .meta file made from the proto imports like one a Saver wrote, and
    # its collections come back (a node list names tensors of the graph, so
    # the one naming "loss:0", which this graph lacks, goes).
    path = tmp_path / "graph.meta"
    meta.ClearField("saver_def")
    meta.collection_def["summaries"].node_list.value[:] = ["x:0"]
    path.write_bytes(meta.SerializeToString())
    assert tf.train.import_meta_graph(str(path), import_scope="m") is None
    graph = tf.get_default_graph()
    assert graph.get_operation_by_name("m/x").type == "Placeholder"
    assert graph.get_collection("summaries") == [graph.get_tensor_by_name("m/x:0")]
    assert graph.get_collection("steps") == [1, -2, 1 << 40]
    assert graph.get_collection("blobs") == [b"\x00\xff"]
    assert graph.get_collection("anys") == [packed]

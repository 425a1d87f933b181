"""tf.summary.FileWriter, FileWriterCache, tf.train.summary_iterator and
tf.io's record files: what the files hold, their names, when they appear,
and the errors for misuse. (tests/interop/test_tensorboard_events.py reads
the same files with TensorBoard and TensorFlow.)"""

import os
import re
import socket
import time
import warnings

import numpy as np
import pytest
import tensorweave as tf


def events(path):
    return list(tf.train.summary_iterator(path))


def event_files(logdir):
    return sorted(os.path.join(logdir, f) for f in os.listdir(logdir))


def scalar_summary(tag, value):
    return tf.summary.Summary(value=[tf.summary.Summary.Value(tag=tag, simple_value=value)])


def test_file_is_named_as_tensorflow_names_it_and_starts_with_the_version(tmp_path):
    before = int(time.time())
    with tf.summary.FileWriter(str(tmp_path), filename_suffix=".eval") as writer:
        writer.add_summary(scalar_summary("x", 1.0), 3)
    (path,) = event_files(str(tmp_path))
    match = re.fullmatch(r"events\.out\.tfevents\.(\d{10})\.(.+)\.eval", os.path.basename(path))
    assert match and match.group(2) == socket.gethostname()
    assert before <= int(match.group(1)) <= time.time()
    first, second = events(path)
    assert first.file_version == "brain.Event:2"
    assert first.wall_time == float(match.group(1))
    assert (second.step, second.summary.value[0].simple_value) == (3, 1.0)
    assert second.wall_time >= before


def test_no_file_until_the_first_event_without_a_suffix(tmp_path):
    logdir = str(tmp_path / "new" / "dir")
    writer = tf.summary.FileWriter(logdir)
    writer.flush()
    assert os.listdir(logdir) == []
    writer.add_summary(scalar_summary("x", 1.0))
    writer.flush()
    assert len(event_files(logdir)) == 1
    writer.close()


def test_flush_makes_events_readable_before_close(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path), flush_secs=3600)
    for step in range(25):  # more than max_queue
        writer.add_summary(scalar_summary("loss", step / 2), step)
    writer.flush()
    (path,) = event_files(str(tmp_path))
    steps = [e.step for e in events(path) if e.HasField("summary")]
    assert steps == list(range(25))
    writer.close()


def test_add_summary_takes_bytes_from_a_session_run(tmp_path):
    x = tf.placeholder(tf.float32, [None])
    tf.summary.scalar("mean", tf.reduce_mean(x))
    tf.summary.histogram("x", x)
    merged = tf.summary.merge_all()
    with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path)) as writer:
        for step in range(3):
            writer.add_summary(sess.run(merged, {x: np.arange(4, dtype=np.float32) + step}), step)
    summaries = [e for e in events(event_files(str(tmp_path))[0]) if e.HasField("summary")]
    assert [e.summary.value[0].simple_value for e in summaries] == [1.5, 2.5, 3.5]
    assert [e.summary.value[1].histo.num for e in summaries] == [4, 4, 4]


def test_metadata_is_written_only_with_the_first_value_of_a_tag(tmp_path):
    summary = tf.summary.text("note", tf.constant("hi"))
    with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_summary(sess.run(summary), 1)
        writer.add_summary(sess.run(summary), 2)
    first, second = [e for e in events(event_files(str(tmp_path))[0]) if e.HasField("summary")]
    assert first.summary.value[0].metadata.plugin_data.plugin_name == "text"
    assert not second.summary.value[0].HasField("metadata")


def test_graph_and_meta_graph_are_written_with_the_graph(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        tf.add(tf.constant(1.0, name="a"), 2.0, name="sum")
    with tf.summary.FileWriter(str(tmp_path), graph=graph):
        pass
    kinds = [e.WhichOneof("what") for e in events(event_files(str(tmp_path))[0])]
    assert kinds == ["file_version", "graph_def", "meta_graph_def"]
    graph_event = events(event_files(str(tmp_path))[0])[1]
    graph_def = tf.GraphDef.FromString(graph_event.graph_def)
    assert {n.name for n in graph_def.node} >= {"a", "sum"}
    assert "_output_shapes" in {k for n in graph_def.node for k in n.attr}


def test_add_graph_accepts_a_graph_def_and_refuses_both_or_neither(tmp_path):
    graph_def = tf.GraphDef()
    graph_def.node.add(name="n", op="NoOp")
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_graph(graph_def, global_step=5)
        with pytest.raises(ValueError, match="not both"):
            writer.add_graph(tf.Graph(), graph_def=graph_def)
        with pytest.raises(TypeError, match="must be an instance of `Graph`"):
            writer.add_graph("graph")
        with pytest.raises(TypeError, match="must be type MetaGraphDef"):
            writer.add_meta_graph(graph_def)
    event = events(event_files(str(tmp_path))[0])[1]
    assert event.step == 5
    assert tf.GraphDef.FromString(event.graph_def) == graph_def


def test_run_metadata_session_log_and_raw_events(tmp_path):
    run_metadata = tf.GraphDef()  # any message: add_run_metadata serializes what it is given
    run_metadata.node.add(name="traced")
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        writer.add_run_metadata(run_metadata, "step_7", global_step=7)
        with pytest.raises(ValueError, match="tag was already used"):
            writer.add_run_metadata(run_metadata, "step_7")
        writer.add_session_log(tf.summary.SessionLog(status=tf.summary.SessionLog.START), 8)
        writer.add_event(tf.summary.Event(wall_time=12.5, step=9, file_version="custom"))
    _, tagged, session_log, raw = events(event_files(str(tmp_path))[0])
    assert (tagged.step, tagged.tagged_run_metadata.tag) == (7, "step_7")
    assert tagged.tagged_run_metadata.run_metadata == run_metadata.SerializeToString()
    assert (session_log.step, session_log.session_log.status) == (8, 1)
    assert (raw.wall_time, raw.step, raw.file_version) == (12.5, 9, "custom")


def test_closed_writer_warns_and_drops_until_reopened(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_summary(scalar_summary("x", 1.0), 1)
    writer.close()
    writer.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        writer.add_summary(scalar_summary("x", 2.0), 2)
    assert "closed FileWriter" in str(caught[0].message)
    time.sleep(1.05)  # the next file's name holds a later second
    writer.reopen()
    writer.add_summary(scalar_summary("x", 3.0), 3)
    writer.close()
    first, second = event_files(str(tmp_path))
    assert [e.step for e in events(first) if e.HasField("summary")] == [1]
    assert [e.step for e in events(second) if e.HasField("summary")] == [3]
    assert events(second)[0].file_version == "brain.Event:2"


def test_get_logdir_and_file_writer_cache(tmp_path):
    logdir = str(tmp_path)
    writer = tf.summary.FileWriterCache.get(logdir)
    try:
        assert writer.get_logdir() == logdir
        assert tf.summary.FileWriterCache.get(logdir) is writer
    finally:
        tf.summary.FileWriterCache.clear()
    assert tf.summary.FileWriterCache.get(logdir) is not writer
    tf.summary.FileWriterCache.clear()


def test_a_failed_write_is_raised_by_the_next_flush_and_close_still_closes(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path), filename_suffix=".x")
    records = writer.event_writer._records

    def failing_write(record):
        raise tf.errors.ResourceExhaustedError(None, None, "disk full")

    records.write = failing_write
    writer.add_summary(scalar_summary("x", 1.0))
    with pytest.raises(tf.errors.ResourceExhaustedError, match="disk full"):
        writer.flush()
    writer.add_summary(scalar_summary("x", 2.0))
    with pytest.raises(tf.errors.ResourceExhaustedError, match="disk full"):
        writer.close()
    assert not writer.event_writer._thread.is_alive()
    assert writer.event_writer._records is None
    writer.close()  # closed: a no-op


def test_a_logdir_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "taken").write_text("")
    with pytest.raises(FileExistsError):
        tf.summary.FileWriter(str(tmp_path / "taken"))


# ---- tf.io record files --------------------------------------------------------


def test_tfrecord_writer_and_iterator_round_trip(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    records = [b"a", b"", bytes(range(256)) * 10, "text"]
    with tf.io.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)
    assert list(tf.python_io.tf_record_iterator(path)) == [
        b"a",
        b"",
        bytes(range(256)) * 10,
        b"text",
    ]
    with pytest.raises(ValueError, match="has been closed"):
        writer.write(b"late")


def test_tfrecord_options(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    options = tf.io.TFRecordOptions(tf.io.TFRecordCompressionType.NONE)
    with tf.python_io.TFRecordWriter(path, options) as writer:
        writer.write(b"x")
    assert list(tf.io.tf_record_iterator(path, options)) == [b"x"]
    for compression in ("GZIP", "ZLIB", tf.io.TFRecordCompressionType.GZIP):
        with tf.io.TFRecordWriter(path, tf.io.TFRecordOptions(compression)) as writer:
            writer.write(b"squeezed" * 100)
            writer.write(b"")
        assert os.path.getsize(path) < 100
        assert list(tf.io.tf_record_iterator(path, compression)) == [b"squeezed" * 100, b""]
        with pytest.raises(tf.errors.DataLossError):
            list(tf.io.tf_record_iterator(path))  # read as uncompressed
    with pytest.raises(ValueError, match="Unsupported compression type"):
        tf.io.TFRecordOptions("LZMA")


def test_damaged_and_missing_files_raise(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(b"first")
        writer.write(b"second")
    with open(path, "r+b") as f:
        f.seek(-3, os.SEEK_END)
        f.write(b"\x00")
    iterator = tf.io.tf_record_iterator(path)
    assert next(iterator) == b"first"
    with pytest.raises(tf.errors.DataLossError, match="Corrupted record"):
        next(iterator)
    with pytest.raises(tf.errors.NotFoundError):
        list(tf.train.summary_iterator(str(tmp_path / "absent")))

"""Event files against TensorBoard and TensorFlow (run in the interop
Python as subprocesses with a timeout):
  * what tensorweave's tf.summary.FileWriter writes, TensorBoard's
    EventAccumulator reads back: the scalars equal what was written, and the
    histograms, images, audio, text, graph, meta graph and run metadata are
    there and parse; TensorFlow's tf.compat.v1.train.summary_iterator reads
    every record of the file;
  * an event file TensorFlow's FileWriter wrote reads here with
    tf.train.summary_iterator, values equal;
  * tf.io record files, plain and compressed, read both ways.
"""

import json
import os
import subprocess

import numpy as np
import pytest
import tensorweave as tf

TIMEOUT_SECONDS = 300
STEPS = 5

READ_WITH_TENSORBOARD = """
import glob, json, sys
from tensorboard.backend.event_processing import event_accumulator
import tensorflow as tf

logdir = sys.argv[1]
accumulator = event_accumulator.EventAccumulator(
    logdir, size_guidance={kind: 0 for kind in event_accumulator.DEFAULT_SIZE_GUIDANCE})
accumulator.Reload()
tags = accumulator.Tags()
graph = accumulator.Graph()
run_metadata = accumulator.RunMetadata("train_step_3")
(path,) = glob.glob(logdir + "/events.out.tfevents.*")
records = [(e.step, e.WhichOneof("what")) for e in tf.compat.v1.train.summary_iterator(path)]
first = next(iter(tf.compat.v1.train.summary_iterator(path)))
print(json.dumps({
    "tags": {k: sorted(v) if isinstance(v, list) else v for k, v in tags.items()},
    "scalars": {t: [[s.step, s.value] for s in accumulator.Scalars(t)] for t in tags["scalars"]},
    "histograms": {t: [[h.step, h.histogram_value.num, h.histogram_value.min,
                        h.histogram_value.max, h.histogram_value.sum]
                       for h in accumulator.Histograms(t)] for t in tags["histograms"]},
    "images": {t: [[i.step, i.width, i.height, i.encoded_image_string[:8].hex()]
                   for i in accumulator.Images(t)] for t in tags["images"]},
    "audio": {t: [[a.step, a.content_type, a.sample_rate, a.length_frames,
                   a.encoded_audio_string[:4].decode()] for a in accumulator.Audio(t)]
              for t in tags["audio"]},
    "text": {t: [[e.step, tf.make_ndarray(e.tensor_proto).reshape(-1)[0].decode()]
                 for e in accumulator.Tensors(t)] for t in tags["tensors"]},
    "plugins": {t: accumulator.SummaryMetadata(t).plugin_data.plugin_name
                for t in tags["tensors"]},
    "graph_nodes": sorted(n.name for n in graph.node),
    "meta_graph_nodes": len(accumulator.MetaGraph().graph_def.node),
    "run_metadata_graph": run_metadata.partition_graphs[0].node[0].name,
    "records": records,
    "file_version": first.file_version,
}))
"""

WRITE_WITH_TENSORFLOW = """
import sys
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_eager_execution()
x = tf.placeholder(tf.float32, [None])
tf.summary.scalar("mean", tf.reduce_mean(x))
tf.summary.histogram("x", x)
tf.summary.text("note", tf.constant("from tensorflow"))
merged = tf.summary.merge_all()
with tf.Session() as sess, tf.summary.FileWriter(sys.argv[1], sess.graph) as writer:
    for step in range(3):
        writer.add_summary(sess.run(merged, {x: np.arange(4, dtype=np.float32) * step}), step)
print("written")
"""


def run_in_tensorflow(tf_python, script, *args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    done = subprocess.run(
        [tf_python, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def tensorboard_python(tf_python):
    """The interop Python, which must also have the tensorboard package."""
    check = subprocess.run(
        [tf_python, "-c", "import tensorboard.backend.event_processing.event_accumulator"],
        capture_output=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    if check.returncode != 0:
        message = f"{tf_python} has no tensorboard package (pip install tensorboard)"
        if os.environ.get("INTEROP_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return tf_python


class SerializedRunMetadata:
    """A RunMetadata as bytes: partition_graphs (field 3) holding one
    GraphDef, the message add_run_metadata serializes."""

    def __init__(self, graph_def):
        payload = graph_def.SerializeToString()
        assert len(payload) < 128
        self._bytes = b"\x1a" + bytes([len(payload)]) + payload

    def SerializeToString(self):
        return self._bytes


def losses():
    return [1.0 / (step + 1) for step in range(STEPS)]


def write_events(logdir):
    """Writes STEPS steps of every summary kind, the graph, run metadata."""
    loss = tf.placeholder(tf.float32, [], name="loss_value")
    weights = tf.placeholder(tf.float32, [None], name="weight_values")
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("accuracy", 1.0 - loss, family="eval")
    tf.summary.histogram("weights", weights)
    tf.summary.image("picture", tf.reshape(tf.tile(weights[:4], [3]), [1, 2, 2, 3]))
    tf.summary.audio("tone", tf.reshape(weights[:8], [1, 8]) / 10.0, 8000.0)
    tf.summary.text("note", tf.constant("hello TensorBoard"))
    merged = tf.summary.merge_all()
    traced = tf.GraphDef()
    traced.node.add(name="traced_node", op="NoOp")
    with tf.Session() as sess, tf.summary.FileWriter(logdir, sess.graph) as writer:
        for step, value in enumerate(losses()):
            feeds = {loss: value, weights: np.arange(8, dtype=np.float32) * (step + 1)}
            writer.add_summary(sess.run(merged, feeds), step)
            if step == 3:
                writer.add_run_metadata(SerializedRunMetadata(traced), "train_step_3", step)


def test_tensorboard_reads_what_file_writer_wrote(tensorboard_python, tmp_path):
    logdir = str(tmp_path / "logs")
    write_events(logdir)
    seen = json.loads(run_in_tensorflow(tensorboard_python, READ_WITH_TENSORBOARD, logdir))

    written = [[step, float(np.float32(value))] for step, value in enumerate(losses())]
    assert seen["scalars"]["loss"] == written
    assert seen["scalars"]["eval/eval/accuracy"] == [
        [step, float(np.float32(1.0) - np.float32(value))] for step, value in enumerate(losses())
    ]
    histograms = seen["histograms"]["weights"]
    assert [h[0] for h in histograms] == list(range(STEPS))
    assert histograms[1][1:] == [8.0, 0.0, 14.0, 56.0]
    assert seen["images"]["picture/image/0"][0][1:] == [2, 2, "89504e470d0a1a0a"]  # PNG
    assert seen["audio"]["tone/audio/0"][0][1:] == ["audio/wav", 8000.0, 8, "RIFF"]
    assert seen["text"]["note"][0] == [0, "hello TensorBoard"]
    assert seen["plugins"]["note"] == "text"
    assert {"loss", "weights", "loss_value", "Merge/MergeSummary"} <= set(seen["graph_nodes"])
    assert seen["meta_graph_nodes"] == len(seen["graph_nodes"])
    assert seen["run_metadata_graph"] == "traced_node"
    assert seen["tags"]["run_metadata"] == ["train_step_3"]
    assert seen["file_version"] == "brain.Event:2"
    assert seen["records"] == (
        [[0, "file_version"], [0, "graph_def"], [0, "meta_graph_def"]]
        + [[step, "summary"] for step in range(4)]
        + [[3, "tagged_run_metadata"], [4, "summary"]]
    )


def test_summary_iterator_reads_tensorflows_event_files(tf_python, tmp_path):
    logdir = str(tmp_path / "tf_logs")
    assert run_in_tensorflow(tf_python, WRITE_WITH_TENSORFLOW, logdir) == "written"
    (name,) = os.listdir(logdir)
    events = list(tf.train.summary_iterator(os.path.join(logdir, name)))
    assert events[0].file_version == "brain.Event:2"
    assert events[1].HasField("graph_def")
    summaries = [e for e in events if e.HasField("summary")]
    assert [e.step for e in summaries] == [0, 1, 2]
    means = [e.summary.value[0].simple_value for e in summaries]
    assert means == [0.0, 1.5, 3.0]
    assert [e.summary.value[1].histo.num for e in summaries] == [4.0, 4.0, 4.0]
    assert summaries[0].summary.value[2].metadata.plugin_data.plugin_name == "text"
    graph_def = tf.GraphDef.FromString(events[1].graph_def)
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")


RECORDS = [b"first", b"", bytes(range(256)) * 4]

READ_RECORDS = """
import json, sys
import tensorflow as tf
records = tf.compat.v1.io.tf_record_iterator(sys.argv[1], sys.argv[2] or None)
print(json.dumps([r.hex() for r in records]))
"""

WRITE_RECORDS = """
import sys
import tensorflow as tf
with tf.io.TFRecordWriter(sys.argv[1], sys.argv[2] or None) as writer:
    for record in sys.argv[3:]:
        writer.write(bytes.fromhex(record))
print("written")
"""


@pytest.mark.parametrize("compression", ["", "GZIP", "ZLIB"])
def test_record_files_read_both_ways(tf_python, tmp_path, compression):
    ours = str(tmp_path / "ours.tfrecord")
    with tf.io.TFRecordWriter(ours, compression) as writer:
        for record in RECORDS:
            writer.write(record)
    read = json.loads(run_in_tensorflow(tf_python, READ_RECORDS, ours, compression))
    assert [bytes.fromhex(r) for r in read] == RECORDS

    theirs = str(tmp_path / "theirs.tfrecord")
    hex_records = [r.hex() for r in RECORDS]
    assert run_in_tensorflow(tf_python, WRITE_RECORDS, theirs, compression, *hex_records) == (
        "written"
    )
    assert list(tf.io.tf_record_iterator(theirs, compression)) == RECORDS

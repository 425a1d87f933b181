"""tf.summary's ops and Python API: TensorFlow 1.x's tags, scopes, families
and collections, and the errors TensorFlow's kernels give for bad inputs
(fixtures in test_summary_fixtures.py check the values themselves)."""

import struct

import numpy as np
import pytest
import tensorweave as tf


def run(fetch, feed_dict=None):
    with tf.Session(graph=fetch.graph) as sess:
        return sess.run(fetch, feed_dict)


def parsed(serialized):
    return tf.summary.Summary.FromString(serialized)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as graph:
        yield graph


# ---- names, tags and collections ---------------------------------------------


def test_tags_follow_name_scopes_and_families():
    with tf.name_scope("train"):
        loss = tf.summary.scalar("loss", tf.constant(1.0))
        grads = tf.summary.histogram("grads", tf.constant([1.0]), family="diagnostics")
    top = tf.summary.scalar("loss", tf.constant(2.0))
    again = tf.summary.scalar("loss", tf.constant(3.0))
    assert loss.op.name == "train/loss"
    assert grads.op.name == "train/diagnostics/grads"
    assert parsed(run(loss)).value[0].tag == "train/loss"
    assert parsed(run(grads)).value[0].tag == "diagnostics/train/diagnostics/grads"
    assert top.op.name == "loss"
    assert again.op.name == "loss_1"
    assert parsed(run(again)).value[0].tag == "loss_1"


def test_illegal_characters_in_names_become_underscores():
    summary = tf.summary.scalar("/loss (train)", tf.constant(1.0))
    assert summary.op.name == "loss__train_"
    assert parsed(run(summary)).value[0].tag == "loss__train_"


def test_summaries_join_the_summaries_collection_unless_told_otherwise():
    a = tf.summary.scalar("a", tf.constant(1.0))
    b = tf.summary.scalar("b", tf.constant(2.0), collections=["mine"])
    c = tf.summary.text("c", tf.constant("x"), collections=[])
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [a]
    assert tf.get_collection("mine") == [b]
    assert c not in tf.get_collection(tf.GraphKeys.SUMMARIES)


def test_merge_all_merges_the_collection_and_is_none_when_empty():
    assert tf.summary.merge_all() is None
    tf.summary.scalar("a", tf.constant(1.0))
    with tf.name_scope("inner"):
        tf.summary.scalar("b", tf.constant(2.0))
    merged = tf.summary.merge_all()
    assert merged.op.name == "Merge/MergeSummary"
    assert [v.tag for v in parsed(run(merged)).value] == ["a", "inner/b"]
    only_inner = tf.summary.merge_all(scope="inner")
    assert [v.tag for v in parsed(run(only_inner)).value] == ["inner/b"]


def test_merge_names_its_op_after_name():
    merged = tf.summary.merge([tf.summary.scalar("a", tf.constant(1.0))], name="all")
    assert merged.op.name == "all/all"


def test_merge_keeps_values_of_every_input_in_order():
    s1 = tf.summary.scalar("a", tf.constant(1.0))
    s2 = tf.summary.histogram("h", tf.constant([1.0, 2.0]))
    merged = tf.summary.merge([s2, s1])
    summary = parsed(run(merged))
    assert [v.tag for v in summary.value] == ["h", "a"]
    assert summary.value[1].simple_value == 1.0


def test_text_requires_a_string_tensor():
    with pytest.raises(ValueError, match="to have dtype string"):
        tf.summary.text("t", tf.constant(1.0))
    value = parsed(run(tf.summary.text("t", tf.constant(["a", "b"])))).value[0]
    assert value.metadata.plugin_data.plugin_name == "text"
    assert list(value.tensor.string_val) == [b"a", b"b"]


def test_tensor_summary_keeps_metadata_and_tensor():
    metadata = tf.summary.SummaryMetadata(display_name="shown")
    metadata.plugin_data.plugin_name = "custom"
    metadata.plugin_data.content = b"\x01\x02"
    summary = tf.summary.tensor_summary(
        "t", tf.constant([[1, 2]], tf.int64), summary_description="why", summary_metadata=metadata
    )
    value = parsed(run(summary)).value[0]
    assert value.metadata.plugin_data.content == b"\x01\x02"
    assert value.metadata.display_name == "shown"
    assert value.metadata.summary_description == "why"
    assert [d.size for d in value.tensor.tensor_shape.dim] == [1, 2]
    assert np.frombuffer(value.tensor.tensor_content, np.int64).tolist() == [1, 2]


def test_image_tags_depend_on_max_outputs_not_on_the_batch():
    images = tf.zeros([1, 2, 2, 3], tf.uint8)
    one = tf.summary.image("one", images, max_outputs=1)
    many = tf.summary.image("many", images, max_outputs=4)
    assert [v.tag for v in parsed(run(one)).value] == ["one/image"]
    assert [v.tag for v in parsed(run(many)).value] == ["many/image/0"]


def test_audio_is_16_bit_pcm_wav():
    clip = tf.constant([[0.0, 0.5, -1.0, 2.0, -0.25, float("nan")]])
    value = parsed(run(tf.summary.audio("clip", clip, 16000.0))).value[0]
    assert value.tag == "clip/audio/0"
    assert (value.audio.sample_rate, value.audio.num_channels) == (16000.0, 1)
    assert (value.audio.length_frames, value.audio.content_type) == (6, "audio/wav")
    wav = value.audio.encoded_audio_string
    assert wav[:4] == b"RIFF" and wav[8:16] == b"WAVEfmt " and wav[36:40] == b"data"
    assert struct.unpack("<IHHIIHH", wav[16:36]) == (16, 1, 1, 16000, 32000, 2, 16)
    assert struct.unpack("<I", wav[40:44])[0] == 12
    assert struct.unpack("<6h", wav[44:]) == (0, 16384, -32768, 32767, -8192, 0)


# ---- errors as TensorFlow gives them ----------------------------------------


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_histogram_of_nan_or_infinity_is_invalid_argument(bad):
    values = tf.placeholder(tf.float32, [None], name="values")
    summary = tf.summary.histogram("weights", values)
    word = "Nan" if np.isnan(bad) else "Infinity"
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=f"{word} in summary histogram for: weights"
    ):
        run(summary, {values: np.array([1.0, bad], np.float32)})


def test_merge_of_a_repeated_tag_is_invalid_argument():
    a = tf.summary.scalar("a", tf.constant(1.0))
    merged = tf.summary.merge([a, a])
    with pytest.raises(
        tf.errors.InvalidArgumentError, match="Duplicate tag a found in summary inputs"
    ):
        run(merged)


def test_merge_of_bytes_that_are_no_summary_is_invalid_argument():
    merged = tf.summary.merge([tf.constant(b"\xff\xff\xff")])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse one of the summary"):
        run(merged)


def test_scalar_tags_and_values_must_have_one_shape():
    values = tf.placeholder(tf.float32, name="values")
    summary = tf.summary.scalar("s", values)
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match=r"tags and values not the same shape: \[\] != \[2\] \(tag 's'\)",
    ):
        run(summary, {values: np.zeros(2, np.float32)})


@pytest.mark.parametrize(
    "shape,message",
    [
        ([2, 2, 3], "Tensor must be 4-D with last dim 1, 3, or 4"),
        ([1, 2, 2, 2], "last dim 1, 3, or 4"),
    ],
)
def test_image_shape_errors(shape, message):
    images = tf.placeholder(tf.float32, name="images")
    summary = tf.summary.image("i", images)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        run(summary, {images: np.zeros(shape, np.float32)})


def test_image_bad_color_must_cover_the_depth():
    images = tf.placeholder(tf.float32, [1, 1, 1, 4])
    op = tf.get_default_graph().create_op(
        "ImageSummary",
        [tf.constant("i"), images],
        attrs={"T": tf.float32, "max_images": 1, "bad_color": np.array([1, 2, 3], np.uint8)},
    )
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected depth <= bad_color.size"):
        run(op.outputs[0], {images: np.zeros([1, 1, 1, 4], np.float32)})


def test_audio_errors():
    clip = tf.placeholder(tf.float32, name="clip")
    rate = tf.placeholder(tf.float32, name="rate")
    summary = tf.summary.audio("a", clip, rate)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tensor must be 3-D or 2-D"):
        run(summary, {clip: np.zeros([4], np.float32), rate: 1.0})
    with pytest.raises(tf.errors.InvalidArgumentError, match="sample_rate must be > 0"):
        run(summary, {clip: np.zeros([1, 4], np.float32), rate: 0.0})
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=r"sample_rate must be in \(0, 2\^32\)"
    ):
        run(summary, {clip: np.zeros([1, 4], np.float32), rate: 1e20})
    with pytest.raises(tf.errors.InvalidArgumentError, match="sample_rate must be a scalar"):
        run(summary, {clip: np.zeros([1, 4], np.float32), rate: np.ones(2, np.float32)})


def test_tags_must_be_scalars():
    tag = tf.placeholder(tf.string, name="tag")
    graph = tf.get_default_graph()
    histogram = graph.create_op(
        "HistogramSummary", [tag, tf.constant([1.0])], attrs={"T": tf.float32}
    )
    tensor = graph.create_op(
        "TensorSummaryV2", [tag, tf.constant(1.0), tf.constant("")], attrs={"T": tf.float32}
    )
    tags = np.array(["a", "b"], object)
    with pytest.raises(tf.errors.InvalidArgumentError, match="tags must be scalar"):
        run(histogram.outputs[0], {tag: tags})
    with pytest.raises(tf.errors.InvalidArgumentError, match="tag must be scalar"):
        run(tensor.outputs[0], {tag: tags})


def test_max_outputs_below_one_is_refused():
    with pytest.raises(ValueError, match="max_images.*less than the minimum 1"):
        tf.summary.image("i", tf.zeros([1, 1, 1, 1]), max_outputs=0)


def test_bad_color_defaults_to_opaque_red_as_in_tensorflow():
    images = np.zeros([1, 1, 2, 3], np.float32)
    images[0, 0, 1, 1] = np.nan
    op = tf.get_default_graph().create_op(
        "ImageSummary", [tf.constant("i"), tf.constant(images)], attrs={"T": tf.float32}
    )
    encoded = parsed(run(op.outputs[0])).value[0].image.encoded_image_string
    with tf.Graph().as_default(), tf.Session() as sess:
        pixels = sess.run(tf.image.decode_png(encoded))
    assert pixels.tolist() == [[[0, 0, 0], [255, 0, 0]]]


def test_protos_have_tensorflow_1_names():
    assert tf.Summary is tf.summary.Summary is tf.compat.v1.Summary
    assert tf.Event is tf.summary.Event
    assert tf.SessionLog.START == 1
    assert tf.HistogramProto.DESCRIPTOR.fields_by_name["bucket"].number == 7
    assert tf.SummaryMetadata.DESCRIPTOR.fields_by_name["data_class"].number == 4
    assert tf.LogMessage.WARN == 30

"""tf.summary's op builders with TensorFlow 1.x's semantics: each summary op
is named after `name` inside the current name scope (and its `family`),
its tag is that scope's name, and it joins the SUMMARIES collection (or the
given `collections`), where merge_all finds it.

    loss_summary = tf.summary.scalar("loss", loss)
    tf.summary.histogram("weights", w, family="layer1")
    merged = tf.summary.merge_all()
    writer = tf.summary.FileWriter("/tmp/logs", sess.graph)
    writer.add_summary(sess.run(merged), step)
"""

import contextlib
import logging
import re

import numpy as np
from google.protobuf import json_format

from tensorweave.framework import dtypes, ops
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.gradient_registry import NotDifferentiable
from tensorweave.ops.op_builder import make_op
from tensorweave.proto import summary_pb2

_log = logging.getLogger("tensorweave")

# As in TensorFlow: a summary is an output for people, not part of the model.
for _op_type in (
    "ScalarSummary",
    "HistogramSummary",
    "ImageSummary",
    "AudioSummaryV2",
    "TensorSummaryV2",
    "MergeSummary",
):
    NotDifferentiable(_op_type)

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")

# ImageSummary's bad_color as TensorFlow's op defaults it: opaque red.
_DEFAULT_BAD_COLOR = np.array([255, 0, 0, 255], dtype=np.uint8)


def _clean_tag(name):
    """Replaces the characters TensorBoard cannot show with "_" and drops
    leading slashes, as TensorFlow's summary_op_util.clean_tag."""
    if name is None:
        return None
    cleaned = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    if cleaned != name:
        _log.info("Summary name %s is illegal; using %s instead.", name, cleaned)
    return cleaned


@contextlib.contextmanager
def _summary_scope(name, family=None, default_name=None, values=None):
    """Yields (tag, scope): the op's name scope and the tag it reports,
    which is that scope without its slash, prefixed with the family."""
    name = _clean_tag(name)
    family = _clean_tag(family)
    scope_name = name if family is None else f"{family}/{name}"
    with ops.name_scope(scope_name, default_name, values) as scope:
        tag = scope.rstrip("/")
        if family is not None:
            tag = f"{family}/{tag}"
        yield tag, scope


def _collect(value, collections, default_collections):
    for key in default_collections if collections is None else collections:
        ops.add_to_collection(key, value)


def _tag(tag, input_name="tag"):
    """The tag as the op's string input, a Const named after that input."""
    return ops.convert_to_tensor(tag, dtype=dtypes.string, name=input_name)


def _summary_op(name, family, values, collections, build):
    """Builds one summary op: `build(tag, scope)` returns its output."""
    with _summary_scope(name, family, values=values) as (tag, scope):
        summary = build(tag, scope)
        _collect(summary, collections, [ops.GraphKeys.SUMMARIES])
    return summary


@tf_export("summary.scalar")
def scalar(name, tensor, collections=None, family=None):
    """A ScalarSummary of the scalar `tensor` (a real number type)."""

    def build(tag, scope):
        values = ops.convert_to_tensor(tensor, name="values")
        return make_op(
            "ScalarSummary", [_tag(tag, "tags"), values], {"T": values.dtype.base_dtype}, scope
        )

    return _summary_op(name, family, [tensor], collections, build)


@tf_export("summary.histogram")
def histogram(name, values, collections=None, family=None):
    """A HistogramSummary of `values` (any shape, a real number type); NaN or
    infinite values fail the run with InvalidArgumentError."""

    def build(tag, scope):
        data = ops.convert_to_tensor(values, name="values")
        return make_op("HistogramSummary", [_tag(tag), data], {"T": data.dtype.base_dtype}, scope)

    return _summary_op(name, family, [values], collections, build)


@tf_export("summary.image")
def image(name, tensor, max_outputs=3, collections=None, family=None):
    """An ImageSummary of up to `max_outputs` images of the [batch, height,
    width, 1|3|4] `tensor` (uint8, float32, float16 or float64)."""

    def build(tag, scope):
        images = ops.convert_to_tensor(tensor, name="tensor")
        attrs = {
            "T": images.dtype.base_dtype,
            "max_images": int(max_outputs),
            "bad_color": _DEFAULT_BAD_COLOR,
        }
        return make_op("ImageSummary", [_tag(tag), images], attrs, scope)

    return _summary_op(name, family, [tensor], collections, build)


@tf_export("summary.audio")
def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """An AudioSummaryV2 of up to `max_outputs` clips of the float32
    [batch, frames] or [batch, frames, channels] `tensor`, samples in [-1, 1]."""

    def build(tag, scope):
        clips = ops.convert_to_tensor(tensor, dtype=dtypes.float32, name="tensor")
        rate = ops.convert_to_tensor(sample_rate, dtype=dtypes.float32, name="sample_rate")
        attrs = {"max_outputs": int(max_outputs)}
        return make_op("AudioSummaryV2", [_tag(tag), clips, rate], attrs, scope)

    return _summary_op(name, family, [tensor], collections, build)


@tf_export("summary.tensor_summary")
def tensor_summary(
    name,
    tensor,
    summary_description=None,
    collections=None,
    summary_metadata=None,
    family=None,
    display_name=None,
):
    """A TensorSummaryV2 holding `tensor` itself, with `summary_metadata`
    (a SummaryMetadata; its description and display name may be given
    apart)."""
    metadata = summary_pb2.SummaryMetadata()
    if summary_metadata is not None:
        metadata.CopyFrom(summary_metadata)
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    serialized_metadata = metadata.SerializeToString()

    def build(tag, scope):
        value = ops.convert_to_tensor(tensor, name="tensor")
        inputs = [
            _tag(tag),
            value,
            ops.convert_to_tensor(
                serialized_metadata, dtype=dtypes.string, name="serialized_summary_metadata"
            ),
        ]
        return make_op("TensorSummaryV2", inputs, {"T": value.dtype.base_dtype}, scope)

    return _summary_op(name, family, [tensor], collections, build)


@tf_export("summary.text")
def text(name, tensor, collections=None):
    """A tensor summary of the string `tensor` for TensorBoard's text plugin."""
    tensor = ops.convert_to_tensor(tensor)
    if tensor.dtype != dtypes.string:
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got {tensor.dtype}")
    metadata = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text")
    )
    return tensor_summary(name, tensor, summary_metadata=metadata, collections=collections)


@tf_export("summary.merge")
def merge(inputs, collections=None, name=None):
    """One MergeSummary of the serialized summaries `inputs`; a tag repeated
    across them fails the run with InvalidArgumentError."""
    inputs = [ops.convert_to_tensor(summary) for summary in inputs]
    with ops.name_scope(name, "Merge", inputs):
        with ops.name_scope(name, "MergeSummary", inputs) as scope:
            merged = make_op("MergeSummary", [inputs], {"N": len(inputs)}, scope)
        _collect(merged, collections, [])
    return merged


@tf_export("summary.merge_all")
def merge_all(key=ops.GraphKeys.SUMMARIES, scope=None, name=None):
    """merge() of every summary in collection `key` (matching `scope`), or
    None when there is none."""
    summaries = ops.get_collection(key, scope=scope)
    return merge(summaries, name=name) if summaries else None


@tf_export("summary.get_summary_description")
def get_summary_description(node_def):
    """The SummaryDescription of a TensorSummary node_def."""
    if node_def.op not in ("TensorSummary", "TensorSummaryV2"):
        raise ValueError(f"Can't get_summary_description on {node_def.op}")
    description = summary_pb2.SummaryDescription()
    if "description" in node_def.attr:
        json_format.Parse(node_def.attr["description"].s.decode(), description)
    return description

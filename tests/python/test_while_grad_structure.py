"""The backprop loops tf.gradients builds for small while-loop programs
(tests/fixtures/while_grad_programs.py) have TensorFlow 2.21's structure
(recorded with v1 control flow by tests/fixtures/record_while_grad.py):
the same op types in the same numbers, and the same Enters into the same
frames. Known differences, normalized here:
- grad_ys: TensorFlow fills ones with Shape/Const/Fill, tensorweave uses
  OnesLike (gradients_impl.py);
- TensorFlow's math_ops.add builds AddV2, tensorweave's Add;
- a counter's NextIteration waits for the pushes (pops) of its iteration:
  TensorFlow adds control inputs to the NextIteration after building it,
  tensorweave routes its input through an Identity (f_sync, b_sync) holding
  them, since an op's control inputs are fixed once it is built."""

import collections
import json
import os
import sys

import pytest
import tensorweave as tf

_FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
sys.path.insert(0, _FIXTURES)
from while_grad_programs import PROGRAMS

with open(os.path.join(_FIXTURES, "tf_while_grad", "structure.json")) as _f:
    RECORDED = json.load(_f)["programs"]


def _is_grad_ys(name):
    return name.startswith("gradients/grad_ys") or name == "gradients/Shape"


def _is_sync_identity(entry):
    last = entry["name"].rsplit("/", 1)[-1]
    return entry["type"] == "Identity" and last.split("_")[0] in ("f", "b") and "sync" in last


def op_type_counts(entries):
    counts = collections.Counter()
    for entry in entries:
        if _is_grad_ys(entry["name"]) or _is_sync_identity(entry):
            continue
        counts[{"AddV2": "Add"}.get(entry["type"], entry["type"])] += 1
    return counts


def enter_frames(entries):
    return collections.Counter(
        (entry["frame_name"], entry["is_constant"]) for entry in entries if entry["type"] == "Enter"
    )


def build_ours(program):
    graph = tf.Graph()
    with graph.as_default():
        ys, xs = program(tf)
        before = len(graph.get_operations())
        tf.gradients(ys, xs)
        entries = []
        for op in graph.get_operations()[before:]:
            entry = {"type": op.type, "name": op.name}
            if op.type == "Enter":
                entry["frame_name"] = op.get_attr("frame_name")
                if isinstance(entry["frame_name"], bytes):
                    entry["frame_name"] = entry["frame_name"].decode()
                entry["is_constant"] = bool(op.get_attr("is_constant"))
            entries.append(entry)
        return entries


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_op_types_as_tensorflow(name):
    ours = op_type_counts(build_ours(PROGRAMS[name]))
    theirs = op_type_counts(RECORDED[name])
    assert ours == theirs, f"only TensorFlow: {theirs - ours}, only ours: {ours - theirs}"
    # The backprop loop really is there.
    assert ours["StackPopV2"] > 0 and ours["LoopCond"] > 0


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_enters_into_the_same_frames_as_tensorflow(name):
    assert enter_frames(build_ours(PROGRAMS[name])) == enter_frames(RECORDED[name])

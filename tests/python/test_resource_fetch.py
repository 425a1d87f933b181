"""Fetching a DT_RESOURCE tensor (a TensorArray's or a stack's handle) from
Python returns what TensorFlow's session returns: a 1-D numpy array of the
handle's bytes whose dtype is the struct [("resource", uint8, (1,))]. The
bytes are the serialized ResourceHandleProto the C API fetches (TensorFlow
1.x's layout; TensorFlow 2.21 copies its in-memory handle instead)."""

import numpy as np
import tensorweave as tf
from tensorweave.ops import data_flow_ops
from tensorweave.proto import resource_handle_pb2

RESOURCE_DTYPE = np.dtype([("resource", np.uint8, (1,))])


def _handle_proto(array):
    proto = resource_handle_pb2.ResourceHandleProto()
    proto.ParseFromString(array.tobytes())
    return proto


def test_a_tensor_array_handle_fetches_as_its_serialized_resource_handle():
    with tf.Graph().as_default():
        array = tf.TensorArray(tf.float32, size=2, tensor_array_name="my_array")
        with tf.Session() as sess:
            fetched = sess.run(array.handle)
    assert isinstance(fetched, np.ndarray)
    assert fetched.dtype == RESOURCE_DTYPE
    assert fetched.ndim == 1 and fetched.shape[0] == fetched.nbytes > 0
    proto = _handle_proto(fetched)
    assert proto.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert proto.maybe_type_name == "TensorArray"
    assert proto.name.startswith("my_array")
    assert proto.container  # a per-step container: the array lives for its step


def test_handles_fetch_next_to_other_values_and_through_a_callable():
    with tf.Graph().as_default():
        stack = data_flow_ops.stack_v2(max_size=tf.constant(-1), elem_type=tf.float32)
        value = tf.constant([1.0, 2.0])
        with tf.Session() as sess:
            handle, numbers = sess.run([stack, value])
            run_stack = sess.make_callable(stack)
            again = run_stack()
    np.testing.assert_array_equal(numbers, [1.0, 2.0])
    for fetched in (handle, again):
        assert fetched.dtype == RESOURCE_DTYPE
        assert _handle_proto(fetched).maybe_type_name == "Stack"
    # Each run makes its own stack.
    assert _handle_proto(handle).name != _handle_proto(again).name


def test_resource_and_variant_dtypes_are_exported_as_in_tensorflow():
    assert tf.resource.name == "resource" and tf.resource.as_datatype_enum == 20
    assert tf.variant.name == "variant" and tf.variant.as_datatype_enum == 21

"""tf.reverse_sequence and tf.reverse: the ReverseSequence and ReverseV2 ops.

# Row b reversed in its first lengths[b] entries, as bidirectional RNNs do.
y = tf.reverse_sequence(x, lengths, seq_axis=1, batch_axis=0)
z = tf.reverse(x, axis=[1])
"""

from tensorweave.framework import dtypes, ops
from tensorweave.framework.api_export import tf_export
from tensorweave.ops.op_builder import make_op


def _one_of(new_value, new_name, old_value, old_name):
    """TensorFlow's deprecated-argument rule: at most one of two spellings."""
    if new_value is not None and old_value is not None and new_value != old_value:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'.")
    return old_value if new_value is None else new_value


@tf_export("reverse_sequence")
def reverse_sequence(
    input, seq_lengths, seq_axis=None, batch_axis=None, name=None, seq_dim=None, batch_dim=None
):
    """For each index b along `batch_axis`, reverses the first `seq_lengths[b]`
    slices along `seq_axis` and leaves the rest in place. `seq_dim` and
    `batch_dim` are TensorFlow 1.x's names for the two axes."""
    seq_axis = _one_of(seq_axis, "seq_axis", seq_dim, "seq_dim")
    batch_axis = _one_of(batch_axis, "batch_axis", batch_dim, "batch_dim")
    if seq_axis is None:
        raise TypeError("reverse_sequence() needs 'seq_axis'")
    if batch_axis is None:
        batch_axis = 0
    with ops.name_scope(name, "ReverseSequence", [input, seq_lengths]) as scope:
        input = ops.convert_to_tensor(input, name="input")
        seq_lengths = ops.convert_to_tensor(seq_lengths, name="seq_lengths")
        if seq_lengths.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(
                "Value passed to parameter 'seq_lengths' has DataType "
                f"{seq_lengths.dtype.base_dtype.name} not in list of allowed values: int32, int64"
            )
        return make_op(
            "ReverseSequence",
            [input, seq_lengths],
            {
                "seq_dim": int(seq_axis),
                "batch_dim": int(batch_axis),
                "T": input.dtype.base_dtype,
                "Tlen": seq_lengths.dtype.base_dtype,
            },
            scope,
        )


@tf_export("reverse", "reverse_v2")
def reverse(tensor, axis, name=None):
    """`tensor` with its entries along each of `axis` (a list; negative
    counts from the end) in reverse order."""
    with ops.name_scope(name, "ReverseV2", [tensor, axis]) as scope:
        tensor = ops.convert_to_tensor(tensor, name="tensor")
        axis = ops.convert_to_tensor(axis, name="axis", preferred_dtype=dtypes.int32)
        if axis.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(
                "Value passed to parameter 'axis' has DataType "
                f"{axis.dtype.base_dtype.name} not in list of allowed values: int32, int64"
            )
        return make_op(
            "ReverseV2",
            [tensor, axis],
            {"T": tensor.dtype.base_dtype, "Tidx": axis.dtype.base_dtype},
            scope,
        )

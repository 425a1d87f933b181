"""tf.while_loop: repeats `body` while `cond` holds, as one v1 loop in the
graph (Enter, Merge, LoopCond, Switch, NextIteration, Exit; while_context.py
builds it).

    i, total = tf.while_loop(lambda i, t: i < 10, lambda i, t: (i + 1, t + i), [0, 0])
"""

from tensorweave.framework import dtypes, ops, tensor_shape
from tensorweave.framework.api_export import tf_export
from tensorweave.ops import constant_op, math_ops
from tensorweave.ops import control_flow_nest as nest
from tensorweave.ops.while_context import WhileContext

WHILE_CONTEXT = "while_context"  # GraphKeys.WHILE_CONTEXT in TensorFlow


@tf_export("while_loop")
def while_loop(
    cond,
    body,
    loop_vars,
    shape_invariants=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    name=None,
    maximum_iterations=None,
    return_same_structure=False,
):
    """Repeats `body(*loop_vars)` while `cond(*loop_vars)` is true.

    `loop_vars` is a (possibly nested) list, tuple, namedtuple or dict of
    tensors; `body` returns the same structure. A loop variable whose shape
    changes across iterations needs a less specific entry in
    `shape_invariants` (ValueError otherwise). `maximum_iterations` caps the
    number of iterations; `parallel_iterations` bounds how many run at once.
    Returns the final values: a single tensor when there is one loop variable
    (unless `return_same_structure`).
    """
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if parallel_iterations < 1:
        raise TypeError("'parallel_iterations' must be a positive integer.")

    with ops.name_scope(name, "while", nest.flatten(loop_vars)):
        if not loop_vars:
            raise ValueError("'loop_vars' must be provided.")
        try_to_pack = len(loop_vars) == 1 and not return_same_structure
        if maximum_iterations is not None:
            maximum_iterations = ops.convert_to_tensor(
                maximum_iterations, name="maximum_iterations"
            )
            if maximum_iterations.shape.ndims != 0:
                raise ValueError(
                    "'maximum_iterations' must be a scalar. "
                    f"Received shape: {maximum_iterations.shape}"
                )
            if maximum_iterations.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
                raise TypeError(
                    "'maximum_iterations' must be an int32 or int64 scalar, got "
                    f"{maximum_iterations.dtype.name}"
                )
            # The counter is one more loop variable, tested first.
            counter = constant_op.constant(
                0, dtype=maximum_iterations.dtype.base_dtype, name="iteration_counter"
            )
            orig_cond, orig_body = cond, body
            if try_to_pack:
                loop_vars = (counter, loop_vars[0])

                def cond(i, value):
                    return math_ops.logical_and(i < maximum_iterations, orig_cond(value))

                def body(i, value):
                    return (i + 1, orig_body(value))

            else:
                loop_vars = (counter, loop_vars)

                def cond(i, values):
                    return math_ops.logical_and(i < maximum_iterations, orig_cond(*values))

                def body(i, values):
                    return (i + 1, orig_body(*values))

            if shape_invariants is not None:
                shape_invariants = (tensor_shape.TensorShape([]), shape_invariants)

        context = WhileContext(
            maximum_iterations=maximum_iterations,
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
            swap_memory=swap_memory,
        )
        # Only loops at the top level: nested ones belong to their outer context.
        if context.outer_context is None:
            ops.add_to_collection(WHILE_CONTEXT, context)
        result = context.build_loop(cond, body, loop_vars, shape_invariants, return_same_structure)
        return result[1] if maximum_iterations is not None else result

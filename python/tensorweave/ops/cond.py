"""tf.cond: `true_fn()` if `pred` else `false_fn()`, as a v1 conditional in
the graph: a Switch routes each value a branch uses from outside, only the
taken branch runs (the other's tensors are dead) and a Merge per output
forwards the live result.

    r = tf.cond(x < y, lambda: x + 1, lambda: y * 2)
"""

from tensorweave.framework import ops
from tensorweave.framework.api_export import tf_export
from tensorweave.ops import array_ops, control_flow_ops
from tensorweave.ops import control_flow_nest as nest
from tensorweave.ops.control_flow_context import CondContext, from_flow

COND_CONTEXT = "cond_context"  # GraphKeys.COND_CONTEXT in TensorFlow


def _unpack_if_singleton(value):
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return value[0]
    return value


def _build_branch(pred, pivot, branch, branch_fn, fn_name):
    context = CondContext(pred, pivot, branch=branch)
    context.enter()
    try:
        original, result = context.build_cond_branch(branch_fn)
        if original is None:
            raise ValueError(f"'{fn_name}' must have a return value.")
        context.exit_result(result)
    finally:
        context.exit()
    return context, original, result


@tf_export("cond")
def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """`true_fn()` if the scalar bool `pred` is true, else `false_fn()`.

    Both branches are built (each function is called once, now) and must
    return the same (possibly nested) structure of tensors with the same
    dtypes; an Operation stands for "ran" and gives the branch's pivot. A
    singleton list or tuple is unpacked unless `strict`. Ops the branches
    take from outside always run; ops made inside a branch run only when
    it is taken.
    """
    if fn1 is not None:
        if true_fn is not None:
            raise TypeError("cond(): 'true_fn' and 'fn1' may not be set simultaneously.")
        true_fn = fn1
    elif true_fn is None:
        raise TypeError("cond(): 'true_fn' argument required")
    if fn2 is not None:
        if false_fn is not None:
            raise TypeError("cond(): 'false_fn' and 'fn2' may not be set simultaneously.")
        false_fn = fn2
    elif false_fn is None:
        raise TypeError("cond(): 'false_fn' argument required")
    if not callable(true_fn):
        raise TypeError("'true_fn' must be callable.")
    if not callable(false_fn):
        raise TypeError("'false_fn' must be callable.")

    with ops.name_scope(name, "cond", [pred]):
        if isinstance(pred, bool):
            raise TypeError("'pred' must not be a Python bool.")
        switch_false, switch_true = control_flow_ops.switch(pred, pred)
        pivot_true = array_ops.identity(switch_true, name="switch_t")
        pivot_false = array_ops.identity(switch_false, name="switch_f")
        pred = array_ops.identity(pred, name="pred_id")

        context_t, orig_res_t, res_t = _build_branch(pred, pivot_true, 1, true_fn, "true_fn")
        context_f, orig_res_f, res_f = _build_branch(pred, pivot_false, 0, false_fn, "false_fn")

        if not strict:
            orig_res_t = _unpack_if_singleton(orig_res_t)
            orig_res_f = _unpack_if_singleton(orig_res_f)
        try:
            nest.assert_same_structure(orig_res_t, orig_res_f)
        except TypeError as error:
            raise TypeError(f"Incompatible return types of 'true_fn' and 'false_fn': {error}")
        except ValueError as error:
            raise ValueError(f"Incompatible return values of 'true_fn' and 'false_fn': {error}")
        if not res_t:
            raise ValueError("'true_fn' and 'false_fn' must return at least one result.")

        res_t_flat = nest.flatten(res_t)
        res_f_flat = nest.flatten(res_f)
        for x, y in zip(res_t_flat, res_f_flat):
            if x.dtype.base_dtype != y.dtype.base_dtype:
                raise ValueError(
                    "Outputs of 'true_fn' and 'false_fn' must have the same type(s). "
                    f"Received {x.dtype.name} from 'true_fn' and {y.dtype.name} from 'false_fn'."
                )
        merges = [control_flow_ops.merge(pair)[0] for pair in zip(res_f_flat, res_t_flat)]
        if context_t.outer_context is None:
            ops.add_to_collection(COND_CONTEXT, context_t)
            ops.add_to_collection(COND_CONTEXT, context_f)
        merges = [from_flow(x, m) for x, m in zip(nest.flatten(orig_res_t), merges)]
        merges = nest.pack_sequence_as(orig_res_t, merges)
        if not strict:
            merges = _unpack_if_singleton(merges)
        return merges

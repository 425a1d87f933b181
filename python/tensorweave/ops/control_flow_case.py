"""tf.case: the result of the first (predicate, function) pair whose
predicate holds, as a chain of tf.cond.

    r = tf.case([(x < y, lambda: tf.constant(17))], default=lambda: tf.constant(23))

Without `default`, the last pair's function is the default and Asserts check
at run time that its predicate holds and no other does; `exclusive=True`
asserts that at most one predicate holds.
"""

import collections
import functools

from tensorweave.framework import dtypes, ops
from tensorweave.framework.api_export import tf_export
from tensorweave.ops import array_ops, constant_op, math_ops
from tensorweave.ops.cond import cond
from tensorweave.ops.logging_ops import Assert


def _assert_at_most_n_true(predicates, n, message):
    """An Assert that at most `n` of the bool scalars `predicates` are true."""
    stacked = array_ops.stack(predicates, name="preds_c")
    num_true = math_ops.reduce_sum(array_ops.cast(stacked, dtypes.int32), name="num_true_conds")
    condition = math_ops.less_equal(num_true, constant_op.constant(n, name="n_true_conds"))
    names = ", ".join(getattr(p, "name", "?") for p in predicates)
    data = [f"{message}: more than {n} conditions ({names}) evaluated as True:", stacked]
    return Assert(condition, data=data, summarize=len(predicates))


def _default_action(predicates, actions):
    """The last action as the default, checking at run time that its
    predicate holds and no other does."""
    last = len(predicates) - 1
    predicate, action = predicates[last], actions[last]
    other_predicates, other_actions = predicates[:last], actions[:last]

    def default_action():
        others_message = (
            f"Implementation error: selected default action #{last} was called, but some "
            "of other predicates are True: "
        )
        default_message = (
            "Input error: None of conditions evaluated as True:",
            array_ops.stack(predicates, name="preds_c"),
        )
        with ops.control_dependencies(
            [
                _assert_at_most_n_true(other_predicates, n=0, message=others_message),
                Assert(predicate, data=default_message),
            ]
        ):
            return action()

    return default_action, other_predicates, other_actions


def _verify_and_canonicalize(pred_fn_pairs):
    """(predicates, actions) from a list or dict of (predicate, callable)."""
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError(
            f"'pred_fn_pairs' must be a list, tuple, or dict. Received: {type(pred_fn_pairs)}"
        )
    if isinstance(pred_fn_pairs, collections.OrderedDict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    elif isinstance(pred_fn_pairs, dict):
        # Deterministic order (by name), as TensorFlow.
        pred_fn_pairs = sorted(pred_fn_pairs.items(), key=lambda item: item[0].name)
    for pair in pred_fn_pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"Each entry in 'pred_fn_pairs' must be a 2-tuple. Received {pair}.")
        pred, fn = pair
        if isinstance(pred, ops.Tensor):
            if pred.dtype != dtypes.bool:
                raise TypeError(f"pred must be Tensor of type bool: {pred.name}")
        else:
            raise TypeError(f"pred must be a Tensor, got: {pred}")
        if not callable(fn):
            raise TypeError(f"fn for pred {pred.name} must be callable.")
    if not pred_fn_pairs:
        return (), ()
    predicates, actions = zip(*pred_fn_pairs)
    return predicates, actions


@tf_export("case")
def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The result of the first pair of `pred_fn_pairs` (a list of
    (bool scalar tensor, callable), or a dict) whose predicate is true, else
    of `default`. All callables return the same structure and dtypes."""
    predicates, actions = _verify_and_canonicalize(pred_fn_pairs)
    if default is not None and not callable(default):
        raise TypeError("'default' must be callable.")
    with ops.name_scope(name, "case", list(predicates)):
        if default is None:
            if not predicates:
                raise ValueError("'pred_fn_pairs' must not be empty when there is no default.")
            default, predicates, actions = _default_action(predicates, actions)
        fn = default
        for predicate, action in reversed(list(zip(predicates, actions))):
            fn = functools.partial(cond, predicate, true_fn=action, false_fn=fn, strict=strict)
        if exclusive:
            check = _assert_at_most_n_true(predicates, n=1, message="Input error: exclusive=True")
            with ops.control_dependencies([check]):
                return fn()
        return fn()

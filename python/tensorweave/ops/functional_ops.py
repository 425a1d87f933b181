"""tf.map_fn, tf.scan, tf.foldl and tf.foldr: TensorFlow 1.x's higher-order
functions, each a tf.while_loop over the first dimension of `elems` with
TensorArrays holding the inputs (unstacked) and the results (stacked).

    squares = tf.map_fn(lambda x: x * x, tf.constant([1.0, 2.0, 3.0]))
    sums = tf.scan(lambda acc, x: acc + x, tf.constant([1, 2, 3]))  # [1, 3, 6]
    total = tf.foldl(lambda acc, x: acc + x, tf.constant([1, 2, 3]))  # 6

`elems` may be a nested structure (lists, tuples, dicts, namedtuples) of
tensors with the same first dimension; `fn` then receives the same
structure. tf.while_loop and the nesting helpers live in the control-flow
modules (tensor_array_ops carries a TensorArray through the loop as its
flow), which are imported when a function runs.
"""

from tensorweave.framework import ops, tensor_shape
from tensorweave.framework.api_export import tf_export
from tensorweave.framework.dtypes import as_dtype
from tensorweave.ops import array_ops, constant_op
from tensorweave.ops.tensor_array_ops import TensorArray


def _control_flow():
    """(while_loop, nest): the loop and the structure helpers tf.cond and
    tf.while_loop use, so every construct nests structures alike."""
    from tensorweave.ops import control_flow_nest, while_loop

    return while_loop.while_loop, control_flow_nest


def _check_callable(fn):
    if not callable(fn):
        raise TypeError(f"{fn} is not callable. Please provide a callable function.")


def _first_dimension(elems_flat, what):
    """(static length or None, length tensor) of the elements' first dimension;
    every element must agree where the lengths are known."""
    static = None
    for elem in elems_flat:
        shape = elem.shape
        if shape.ndims is not None and shape.ndims < 1:
            raise ValueError(
                f"Elements in elems must be 1+ dimensional Tensors, not scalars ({what})"
            )
        length = shape.as_list()[0] if shape.ndims is not None else None
        if length is not None:
            if static is not None and static != length:
                raise ValueError(
                    f"Dimensions {static} and {length} are not compatible: every element of "
                    f"elems must have the same first dimension"
                )
            static = length
    return static, (static if static is not None else array_ops.shape(elems_flat[0])[0])


def _set_first_dimension(tensor, static):
    shape = tensor.shape
    if shape.ndims is not None and shape.ndims >= 1:
        tensor.set_shape(tensor_shape.TensorShape([static]).concatenate(shape.as_list()[1:]))


@tf_export("map_fn")
def map_fn(
    fn,
    elems,
    dtype=None,
    parallel_iterations=None,
    back_prop=True,
    swap_memory=False,
    infer_shape=True,
    name=None,
    fn_output_signature=None,
):
    """fn applied to each element of `elems` along dimension 0, stacked.
    `dtype` (or `fn_output_signature`) gives the structure of dtypes fn
    returns when it differs from `elems`."""
    _check_callable(fn)
    while_loop, nest = _control_flow()
    if fn_output_signature is None:
        fn_output_signature = dtype
    if parallel_iterations is None:
        parallel_iterations = 10
    elems_flat = nest.flatten(elems)
    if not elems_flat:
        raise ValueError("elems must be a Tensor or (possibly nested) sequence of Tensors.")
    with ops.name_scope(name, "map", elems_flat):
        elems_flat = [ops.convert_to_tensor(t, name="elem") for t in elems_flat]
        n_static, n = _first_dimension(elems_flat, "map_fn")
        if fn_output_signature is None:
            result_dtypes = [t.dtype.base_dtype for t in elems_flat]
            result_structure = elems
        else:
            result_dtypes = [as_dtype(d) for d in nest.flatten(fn_output_signature)]
            result_structure = fn_output_signature
        elems_tas = [
            TensorArray(
                dtype=t.dtype.base_dtype, size=n, dynamic_size=False, infer_shape=True
            ).unstack(t)
            for t in elems_flat
        ]
        result_tas = [
            TensorArray(dtype=d, size=n, dynamic_size=False, infer_shape=infer_shape)
            for d in result_dtypes
        ]

        def compute(i, tas):
            value = nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_tas])
            result = fn(value)
            nest.assert_same_structure(result_structure, result)
            flat = nest.flatten(result)
            return i + 1, [ta.write(i, v) for ta, v in zip(tas, flat)]

        _, result_tas = while_loop(
            lambda i, _: i < n,
            compute,
            (constant_op.constant(0), result_tas),
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
            swap_memory=swap_memory,
            maximum_iterations=n,
        )
        results = [ta.stack() for ta in result_tas]
        for r in results:
            _set_first_dimension(r, n_static)
        return nest.pack_sequence_as(result_structure, results)


@tf_export("scan")
def scan(
    fn,
    elems,
    initializer=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    infer_shape=True,
    reverse=False,
    name=None,
):
    """Every intermediate accumulator of fn(acc, x) over `elems` along
    dimension 0 (last to first with `reverse`), stacked. Without an
    initializer the first element is the first accumulator."""
    _check_callable(fn)
    while_loop, nest = _control_flow()
    elems_flat = nest.flatten(elems)
    with ops.name_scope(name, "scan", elems_flat):
        elems_flat = [ops.convert_to_tensor(t, name="elem") for t in elems_flat]
        n_static, n = _first_dimension(elems_flat, "scan")
        elems_tas = [
            TensorArray(
                dtype=t.dtype.base_dtype,
                size=n,
                dynamic_size=False,
                element_shape=tensor_shape.TensorShape(t.shape.dims[1:])
                if t.shape.ndims is not None
                else None,
                infer_shape=True,
            ).unstack(t)
            for t in elems_flat
        ]
        first_index = n - 1 if reverse else 0
        if initializer is None:
            acc_structure = elems
            acc_flat = [ta.read(first_index) for ta in elems_tas]
            start = 1
        else:
            acc_structure = initializer
            acc_flat = [ops.convert_to_tensor(v) for v in nest.flatten(initializer)]
            start = 0
        result_tas = [
            TensorArray(
                dtype=a.dtype.base_dtype,
                size=n,
                element_shape=a.shape if infer_shape else None,
                dynamic_size=False,
                infer_shape=infer_shape,
            )
            for a in acc_flat
        ]
        if initializer is None:
            result_tas = [ta.write(first_index, a) for ta, a in zip(result_tas, acc_flat)]

        def compute(i, acc_flat, tas):
            x = nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_tas])
            acc = fn(nest.pack_sequence_as(acc_structure, acc_flat), x)
            nest.assert_same_structure(acc_structure, acc)
            acc_flat = nest.flatten(acc)
            tas = [ta.write(i, v) for ta, v in zip(tas, acc_flat)]
            return (i - 1 if reverse else i + 1), acc_flat, tas

        if reverse:
            initial_i = n - 1 - start
            condition = lambda i, _1, _2: i >= 0
        else:
            initial_i = start
            condition = lambda i, _1, _2: i < n
        _, _, result_tas = while_loop(
            condition,
            compute,
            (ops.convert_to_tensor(initial_i), acc_flat, result_tas),
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
            swap_memory=swap_memory,
            maximum_iterations=n,
        )
        results = [ta.stack() for ta in result_tas]
        for r in results:
            _set_first_dimension(r, n_static)
        return nest.pack_sequence_as(acc_structure, results)


def _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, reverse):
    _check_callable(fn)
    while_loop, nest = _control_flow()
    with ops.name_scope(name, "foldr" if reverse else "foldl", nest.flatten(elems)):
        elems_flat = [ops.convert_to_tensor(t, name="elem") for t in nest.flatten(elems)]
        _, n = _first_dimension(elems_flat, "foldr" if reverse else "foldl")
        tas = nest.pack_sequence_as(
            elems,
            [
                TensorArray(
                    dtype=t.dtype.base_dtype, size=n, dynamic_size=False, infer_shape=True
                ).unstack(t)
                for t in elems_flat
            ],
        )
        tas_flat = nest.flatten(tas)
        if initializer is None:
            first = n - 1 if reverse else 0
            acc = nest.pack_sequence_as(elems, [ta.read(first) for ta in tas_flat])
            i = (n - 2) if reverse else 1
        else:
            acc = initializer
            i = (n - 1) if reverse else 0

        def compute(i, acc):
            x = nest.pack_sequence_as(elems, [ta.read(i) for ta in tas_flat])
            return [i - 1 if reverse else i + 1, fn(acc, x)]

        _, result = while_loop(
            (lambda i, _: i >= 0) if reverse else (lambda i, _: i < n),
            compute,
            [ops.convert_to_tensor(i), acc],
            parallel_iterations=parallel_iterations,
            back_prop=back_prop,
            swap_memory=swap_memory,
            maximum_iterations=n,
        )
        return result


@tf_export("foldl")
def foldl(
    fn,
    elems,
    initializer=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    name=None,
):
    """fn(acc, x) over `elems` along dimension 0, first to last: the final
    accumulator. Without an initializer the first element starts it."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, False)


@tf_export("foldr")
def foldr(
    fn,
    elems,
    initializer=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    name=None,
):
    """fn(acc, x) over `elems` along dimension 0, last to first: the final
    accumulator. Without an initializer the last element starts it."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, True)

"""Nested structures of values, as TensorFlow's `nest` reads them: what
tf.cond's branches return and what tf.while_loop's loop variables are.

A structure is a list, a tuple, a namedtuple or a dict (read in sorted key
order) of structures; anything else is a leaf (a Tensor, an Operation, a
Python number, None is a leaf too).

    flat = flatten({"b": (x, y), "a": z})          # [z, x, y]
    pack_sequence_as({"b": (0, 0), "a": 0}, flat)  # {"a": z, "b": (x, y)}
"""

import collections
import reprlib


def is_nested(value):
    return isinstance(value, (list, tuple, dict, collections.abc.Mapping))


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _children(value):
    """The direct children of a structure, in nest's order."""
    if isinstance(value, collections.abc.Mapping):
        return [value[key] for key in _sorted_keys(value)]
    return list(value)


def _sorted_keys(mapping):
    try:
        return sorted(mapping)
    except TypeError as error:
        raise TypeError("nest only supports dicts with sortable keys.") from error


def flatten(structure):
    """The leaves of `structure`, depth first (iteratively: deep structures
    do not hit Python's recursion limit)."""
    if not is_nested(structure):
        return [structure]
    flat = []
    stack = [iter([structure])]
    while stack:
        item = next(stack[-1], _END)
        if item is _END:
            stack.pop()
        elif is_nested(item):
            stack.append(iter(_children(item)))
        else:
            flat.append(item)
    return flat


_END = object()


def _rebuild(template, children):
    """A structure of `template`'s kind holding `children`."""
    if isinstance(template, collections.abc.Mapping):
        by_key = dict(zip(_sorted_keys(template), children))
        # The template's own key order and mapping type.
        rebuilt = {key: by_key[key] for key in template}
        return rebuilt if type(template) is dict else type(template)(rebuilt)
    if _is_namedtuple(template):
        return type(template)(*children)
    if isinstance(template, tuple):
        return tuple(children)
    return list(children)


def pack_sequence_as(structure, flat_sequence):
    """`flat_sequence` in the shape of `structure` (ValueError when the
    counts differ)."""
    flat_sequence = list(flat_sequence)
    if not is_nested(structure):
        if len(flat_sequence) != 1:
            raise ValueError(
                f"Structure is a scalar but len(flat_sequence) == {len(flat_sequence)} > 1"
            )
        return flat_sequence[0]
    count = len(flatten(structure))
    if count != len(flat_sequence):
        raise ValueError(
            f"Could not pack sequence. Structure had {count} atoms, but "
            f"flat_sequence had {len(flat_sequence)} items. Structure: {_show(structure)}, "
            f"flat_sequence: {_show(flat_sequence)}."
        )
    position = iter(flat_sequence)
    # Rebuilt bottom up with an explicit stack: deep structures do not hit
    # Python's recursion limit. Each entry: (template, its children, built).
    stack = [(structure, iter(_children(structure)), [])]
    while True:
        template, children, built = stack[-1]
        child = next(children, _END)
        if child is _END:
            stack.pop()
            value = _rebuild(template, built)
            if not stack:
                return value
            stack[-1][2].append(value)
        elif is_nested(child):
            stack.append((child, iter(_children(child)), []))
        else:
            built.append(next(position))


def _show(structure):
    """A structure for an error message, cut short (a deep one's full repr
    would recurse past Python's limit)."""
    return reprlib.repr(structure)


def _kind(value):
    if isinstance(value, collections.abc.Mapping):
        return "dict"
    if _is_namedtuple(value):
        return type(value)
    if isinstance(value, tuple):
        return "tuple"
    return "list"


def assert_same_structure(first, second, check_types=True):
    """ValueError when the two nest differently (different lengths or one a
    leaf where the other nests), TypeError when the kinds of sequence differ
    (a list against a tuple, two namedtuple types, different dict keys)."""
    pairs = [(first, second)]
    while pairs:
        a, b = pairs.pop()
        if is_nested(a) != is_nested(b):
            raise ValueError(
                "The two structures don't have the same nested structure.\n\n"
                f"First structure: {_show(first)}\n\nSecond structure: {_show(second)}"
            )
        if not is_nested(a):
            continue
        if check_types and _kind(a) != _kind(b):
            raise TypeError(
                "The two structures don't have the same sequence type. Input structure "
                f"has type {type(a)}, while shallow structure has type {type(b)}."
            )
        if isinstance(a, collections.abc.Mapping) and set(a) != set(b):
            raise ValueError(
                "The two dictionaries don't have the same set of keys. First "
                f"structure has keys {sorted(a)}, while second structure has keys {sorted(b)}."
            )
        if len(a) != len(b):
            raise ValueError(
                "The two structures don't have the same nested structure.\n\n"
                f"First structure: {_show(first)}\n\nSecond structure: {_show(second)}\n\n"
                f"More specifically: Substructure {_show(a)} has length {len(a)}, while "
                f"{_show(b)} has length {len(b)}"
            )
        pairs.extend(zip(_children(a), _children(b)))


def map_structure(function, *structures):
    """`function` applied leaf by leaf, in the shape of the first structure."""
    if not structures:
        raise ValueError("Must provide at least one structure")
    for other in structures[1:]:
        assert_same_structure(structures[0], other)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [function(*leaves) for leaves in zip(*flats)])

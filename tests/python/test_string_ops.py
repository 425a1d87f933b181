"""tf.strings and the TF1 string functions: every case TensorFlow recorded in
tests/fixtures/tf_string_ops/expected.json (tests/fixtures/record_string_ops.py)
gives the same value here, or the same error class (building) or the same
class and kernel message naming the node (running); then each op against
Python's own string semantics on generated inputs."""

import json
import pathlib
import random
import re

import numpy as np
import pytest
import tensorweave as tf

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "tf_string_ops"
RECORDS = json.loads((FIXTURE / "expected.json").read_text())["cases"]


def _feed(value):
    if isinstance(value, str) or (value and isinstance(value, list) and _holds_text(value)):
        return np.array(value, dtype=object)
    return np.array(value)


def _holds_text(values):
    first = values[0]
    while isinstance(first, list):
        first = first[0]
    return isinstance(first, str)


def _text(items):
    """latin-1 text (the fixture's spelling of bytes) back to bytes."""
    if isinstance(items, list):
        return [_text(item) for item in items]
    return items.encode("latin-1")


def _assert_value(result, expected):
    if "dense_shape" in expected:
        assert isinstance(result, tf.SparseTensorValue)
        assert np.asarray(result.indices).tolist() == expected["indices"]
        assert [bytes(v) for v in np.asarray(result.values).tolist()] == _text(expected["values"])
        assert np.asarray(result.dense_shape).tolist() == expected["dense_shape"]
        return
    if isinstance(result, bytes):  # a scalar string comes back as bytes, as in TensorFlow
        assert expected["dtype"] == "string" and expected["shape"] == []
        assert result == _text(expected["items"])
        return
    array = np.asarray(result)
    assert list(array.shape) == expected["shape"]
    if expected["dtype"] == "string":
        assert array.dtype == object
        assert (array.tolist() if array.size else []) == _text(expected["items"])
        return
    assert array.dtype.name == expected["dtype"]
    np.testing.assert_array_equal(array, np.asarray(expected["items"], dtype=expected["dtype"]))


@pytest.mark.parametrize("record", RECORDS, ids=[r["expr"][:90] for r in RECORDS])
def test_string_ops_match_tensorflow(record):
    graph = tf.Graph()
    with graph.as_default():
        if record.get("raised") == "building":
            with pytest.raises(Exception) as raised:
                eval(record["expr"], {"tf": tf, "np": np})
            assert type(raised.value).__name__ == record["error"][0], raised.value
            return
        built = eval(record["expr"], {"tf": tf, "np": np})
        feeds = {graph.get_tensor_by_name(k): _feed(v) for k, v in record["feeds"].items()}
        with tf.Session(graph=graph) as sess:
            if "error" in record:
                with pytest.raises(tf.errors.OpError) as raised:
                    sess.run(built, feeds)
                assert type(raised.value).__name__ == record["error"][0]
                assert record["error"][1] in raised.value.message
                assert record["node"].split("/")[-1] in raised.value.message
                return
            _assert_value(sess.run(built, feeds), record["value"])


def test_fixture_covers_every_string_op():
    expressions = " ".join(r["expr"] for r in RECORDS)
    for name in (
        "strings.join",
        "string_join",
        "strings.length",
        "strings.substr",
        "tf.substr",
        "strings.to_number",
        "string_to_number",
        "as_string",
        "regex_replace",
        "regex_full_match",
        "strings.strip",
        "string_strip",
        "strings.lower",
        "strings.upper",
        "reduce_join",
        "string_split",
        "strings.split",
    ):
        assert name in expressions, name


# ---- against Python's string semantics ----

_ALPHABET = ["a", "b", ",", " ", "\t", "\xe9", "xy", "Q"]


def _random_strings(seed, count=40):
    rng = random.Random(seed)
    return [
        "".join(rng.choice(_ALPHABET) for _ in range(rng.randrange(0, 9))).encode()
        for _ in range(count)
    ]


def _run(tensor):
    with tf.Session() as sess:
        return sess.run(tensor)


def _sparse_rows(value, batch):
    rows = [[] for _ in range(batch)]
    for (row, _), token in zip(np.asarray(value.indices).tolist(), value.values):
        rows[row].append(bytes(token))
    return rows


@pytest.mark.parametrize("seed", range(3))
def test_split_is_python_str_split(seed):
    strings = _random_strings(seed)
    for sep, maxsplit in [(",", -1), (",", 1), ("xy", -1), ("", -1), ("", 2)]:
        tf.reset_default_graph()
        value = _run(tf.strings.split(strings, sep=sep, maxsplit=maxsplit))
        rows = _sparse_rows(value, len(strings))
        for text, row in zip(strings, rows):
            if sep:
                assert row == text.split(sep.encode(), maxsplit), (text, sep, maxsplit)
            elif maxsplit < 0:
                assert row == text.split(), text


@pytest.mark.parametrize("seed", range(3))
def test_string_split_is_any_character_split(seed):
    strings = _random_strings(seed)
    value = _run(tf.string_split(strings, delimiter=", "))
    for text, row in zip(strings, _sparse_rows(value, len(strings))):
        assert row == [t for t in re.split(rb"[, ]", text) if t], text


def test_join_length_strip_case_are_python_s():
    strings = _random_strings(7)
    joined, lengths, chars, stripped, lowered, uppered = _run(
        [
            tf.strings.join([strings, "-", strings[::-1]], separator="|"),
            tf.strings.length(strings),
            tf.strings.length(strings, unit="UTF8_CHAR"),
            tf.strings.strip(strings),
            tf.strings.lower(strings),
            tf.strings.upper(strings),
        ]
    )
    assert joined.tolist() == [b"|".join([a, b"-", b]) for a, b in zip(strings, strings[::-1])]
    assert lengths.tolist() == [len(s) for s in strings]
    assert chars.tolist() == [len(s.decode()) for s in strings]
    assert stripped.tolist() == [s.strip() for s in strings]
    assert lowered.tolist() == [s.lower() for s in strings]
    assert uppered.tolist() == [s.upper() for s in strings]


def test_substr_is_python_slicing():
    strings = [b"hello world", b"", b"abc", b"0123456789"]
    rng = random.Random(3)
    for _ in range(20):
        tf.reset_default_graph()
        pos = [rng.randrange(-len(s), len(s) + 1) for s in strings]
        length = [rng.randrange(-1, 12) for _ in strings]
        result = _run(tf.strings.substr(strings, pos, length)).tolist()
        for s, p, n, r in zip(strings, pos, length, result):
            begin = p if p >= 0 else p + len(s)
            assert r == (s[begin:] if n < 0 else s[begin : begin + n])


def test_to_number_and_as_string_are_python_s():
    numbers = [0.5, -3.25, 1e-3, 123456.789, 7.0]
    texts = _run(tf.as_string(np.array(numbers), precision=4)).tolist()
    assert texts == [(b"%.4f" % x) for x in numbers]
    back = _run(tf.strings.to_number(texts, out_type=tf.float64)).tolist()
    assert back == [float(t) for t in texts]
    ints = _run(tf.strings.to_number([b" 42", b"-7", b"+0"], out_type=tf.int64)).tolist()
    assert ints == [int(b" 42"), int(b"-7"), int(b"+0")]


def test_regex_replace_and_full_match_are_python_re_s():
    strings = _random_strings(11)
    replaced, matched = _run(
        [
            tf.strings.regex_replace(strings, "[ab]+", "<\\0>"),
            tf.strings.regex_full_match(strings, "[a-z ,]*"),
        ]
    )
    assert replaced.tolist() == [re.sub(rb"[ab]+", rb"<\g<0>>", s) for s in strings]
    assert matched.tolist() == [re.fullmatch(rb"[a-z ,]*", s) is not None for s in strings]


def test_reduce_join_is_numpy_order():
    values = np.array([[[b"a", b"b"], [b"c", b"d"]], [[b"e", b"f"], [b"g", b"h"]]], dtype=object)
    for axis in ([0], [2], [0, 2], [2, 1, 0]):
        tf.reset_default_graph()
        result = _run(tf.strings.reduce_join(values, axis=axis, separator="."))
        # The first listed axis varies fastest: move it last, join in row-major order.
        moved = np.moveaxis(values, axis[::-1], list(range(-len(axis), 0)))
        flat = moved.reshape(moved.shape[: moved.ndim - len(axis)] + (-1,))
        expected = np.apply_along_axis(lambda row: b".".join(row), -1, flat)
        assert np.asarray(result).tolist() == expected.tolist(), axis


def test_split_refuses_ragged_results_and_double_separators():
    with pytest.raises(ValueError, match="RaggedTensor"):
        tf.strings.split(["a b"], result_type="RaggedTensor")
    with pytest.raises(ValueError, match="both 'sep' and 'delimiter'"):
        tf.string_split(["a b"], sep=" ", delimiter=" ")
    with pytest.raises(ValueError, match="both 'axis' and 'reduction_indices'"):
        tf.strings.reduce_join([["a"]], axis=0, reduction_indices=0)


def test_lower_with_utf8_encoding_is_unimplemented_naming_the_node():
    with pytest.raises(tf.errors.UnimplementedError, match="encoding 'utf-8'") as raised:
        _run(tf.strings.lower(["A"], encoding="utf-8", name="lowered"))
    assert "lowered" in raised.value.message


def test_string_ops_have_no_gradient():
    x = tf.placeholder(tf.string, [2])
    y = tf.strings.to_number(tf.strings.join([x, "1"]))
    assert tf.gradients(y, x) == [None]

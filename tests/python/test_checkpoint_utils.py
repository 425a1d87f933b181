"""tf.train.list_variables, load_variable, load_checkpoint and NewCheckpointReader
over checkpoints written by tf.train.Saver, including damaged ones."""

import os
import pathlib
import threading

import numpy as np
import pytest
import tensorweave as tf


@pytest.fixture
def checkpoint(tmp_path):
    """A saved model: {name: value} and the prefix it was saved under."""
    values = {
        "mlp/kernel": np.arange(6, dtype=np.float32).reshape(2, 3),
        "mlp/bias": np.array([0.5, -1.5], np.float64),
        "global_step": np.int64(42),
        "vocab": np.array([b"a", b"bc", b""], dtype=object),
    }
    for name, value in values.items():
        tf.Variable(value, name=name)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "model"), global_step=42)
    return values, prefix


def test_list_variables_of_a_directory_and_of_a_prefix(checkpoint, tmp_path):
    values, prefix = checkpoint
    expected = sorted((name, list(np.shape(value))) for name, value in values.items())
    assert tf.train.list_variables(str(tmp_path)) == expected
    assert tf.train.list_variables(prefix) == expected


def test_load_variable_returns_every_dtype(checkpoint):
    values, prefix = checkpoint
    for name, value in values.items():
        loaded = tf.train.load_variable(prefix, name)
        assert loaded.dtype == np.asarray(value).dtype
        np.testing.assert_array_equal(loaded, value)
    np.testing.assert_array_equal(tf.train.load_variable(prefix, "mlp/bias:0"), [0.5, -1.5])


def test_reader_maps_and_missing_keys(checkpoint):
    _, prefix = checkpoint
    reader = tf.train.NewCheckpointReader(prefix)
    assert reader.get_variable_to_shape_map()["mlp/kernel"] == [2, 3]
    assert reader.get_variable_to_dtype_map()["global_step"] == tf.int64
    assert reader.has_tensor("vocab") and not reader.has_tensor("nope")
    # TensorFlow's lines: name, dtype enum name, shape without spaces.
    assert b"mlp/kernel (DT_FLOAT) [2,3]\n" in reader.debug_string()
    assert b"global_step (DT_INT64) []\n" in reader.debug_string()
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        reader.get_tensor("nope")
    reader.close()


def test_missing_and_damaged_files(checkpoint, tmp_path):
    _, prefix = checkpoint
    with pytest.raises(tf.errors.NotFoundError, match="other.index nor .*other.twckpt exists"):
        tf.train.NewCheckpointReader(str(tmp_path / "other"))
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.list_variables(str(tmp_path / "empty_dir"))
    index, data = prefix + ".index", prefix + ".data-00000-of-00001"
    good_index, good_data = pathlib.Path(index).read_bytes(), pathlib.Path(data).read_bytes()
    # Damage in the index is seen when it is opened ...
    with open(index, "wb") as f:
        f.write(good_index[:10] + bytes([good_index[10] ^ 1]) + good_index[11:])
    with pytest.raises(tf.errors.DataLossError, match="checksum mismatch in data block 0"):
        tf.train.list_variables(prefix)
    with open(index, "wb") as f:
        f.write(good_index)
    # ... damage in the data when a value is read (by the runtime).
    with open(data, "wb") as f:
        f.write(good_data[:-2] + bytes([good_data[-2] ^ 1]) + good_data[-1:])
    reader = tf.train.load_checkpoint(prefix)
    with pytest.raises(tf.errors.DataLossError, match="entry vocab checksum does not match"):
        reader.get_tensor("vocab")
    with open(data, "wb") as f:
        f.write(good_data[: len(good_data) // 2])
    with pytest.raises(tf.errors.DataLossError, match="truncated"):
        tf.train.load_variable(prefix, "mlp/kernel")
    os.remove(data)
    with pytest.raises(tf.errors.NotFoundError, match="data-00000-of-00001 not found"):
        tf.train.load_checkpoint(prefix)


def test_reads_from_several_threads_and_after_close(checkpoint):
    """The file is read with the GIL released: threads read side by side, and
    close() while reads are in flight lets them finish before the file goes."""
    values, prefix = checkpoint
    reader = tf.train.NewCheckpointReader(prefix)
    results, errors = [], []

    def read_all():
        try:
            for _ in range(50):
                results.append(reader.get_tensor("mlp/kernel"))
        except ValueError as error:  # closed meanwhile: refused cleanly
            errors.append(error)

    threads = [threading.Thread(target=read_all) for _ in range(4)]
    for thread in threads:
        thread.start()
    reader.close()
    for thread in threads:
        thread.join()
    assert len(results) + len(errors) > 0
    for result in results:
        np.testing.assert_array_equal(result, values["mlp/kernel"])
    with pytest.raises(ValueError, match="closed"):
        reader.get_tensor("mlp/kernel")
    assert reader.has_tensor("mlp/kernel")  # the table stays readable


def test_init_from_checkpoint_by_name_scope_and_variable(checkpoint):
    values, prefix = checkpoint
    with tf.Graph().as_default():
        kernel = tf.Variable(np.zeros((2, 3), np.float32), name="new/kernel")
        bias = tf.Variable(np.zeros(2), name="new/bias")
        step = tf.Variable(np.int64(0), name="step")
        untouched = tf.Variable(np.float32(7.0), name="untouched")
        tf.train.init_from_checkpoint(prefix, {"mlp/": "new/", "global_step": step})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(kernel), values["mlp/kernel"])
            np.testing.assert_array_equal(sess.run(bias), values["mlp/bias"])
            assert sess.run(step) == 42 and sess.run(untouched) == 7.0


def test_init_from_checkpoint_refuses_missing_names_and_wrong_shapes(checkpoint):
    _, prefix = checkpoint
    with tf.Graph().as_default():
        tf.Variable(np.zeros((3, 3), np.float32), name="k")
        tf.Variable(np.zeros(2), name="other/bias")
        with pytest.raises(ValueError, match="Shape of variable k"):
            tf.train.init_from_checkpoint(prefix, {"mlp/kernel": "k"})
        with pytest.raises(ValueError, match="Tensor nope is not found"):
            tf.train.init_from_checkpoint(prefix, {"nope": "k"})
        with pytest.raises(ValueError, match="should map to scope only"):
            tf.train.init_from_checkpoint(prefix, {"mlp": "other/"})
        with pytest.raises(ValueError, match="Tensor mlp/bias/k"):
            tf.train.init_from_checkpoint(prefix, {"mlp/bias/": "/"})

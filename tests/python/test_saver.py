"""tf.train.Saver and the checkpoint helpers: round trips through sessions and
graphs, step naming, max_to_keep, the state file, errors that name the path or
the variable and leave every variable unchanged, and a save killed mid-way."""

import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.proto import meta_graph_pb2
from tensorweave.train import checkpoint_management

PYTHON_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))


def make_model(scale=1.0):
    """Variables of several dtypes, named as a small model names them."""
    with tf.name_scope("mlp"):
        kernel = tf.Variable(scale * np.arange(12, dtype=np.float32).reshape(3, 4), name="kernel")
        bias = tf.Variable(scale * np.ones(4, np.float64), name="bias")
    step = tf.Variable(np.int64(0), name="global_step", trainable=False)
    words = tf.Variable(np.array([b"alpha", b"", b"\x00\xff"], dtype=object), name="words")
    flags = tf.Variable(np.array([True, False]), name="flags")
    return kernel, bias, step, words, flags


def values_of(sess, variables):
    return [np.array(v) for v in sess.run(list(variables))]


def assert_same(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert a.dtype == e.dtype and a.shape == e.shape
        np.testing.assert_array_equal(a, e)


def scramble(sess, variables):
    """Sets every variable to a value different from what it was saved with."""
    kernel, bias, step, words, flags = variables
    sess.run(
        [
            tf.assign(kernel, -np.ones((3, 4), np.float32)),
            tf.assign(bias, np.zeros(4, np.float64)),
            tf.assign(step, np.int64(-5)),
            tf.assign(words, np.array([b"x", b"y", b"z"], dtype=object)),
            tf.assign(flags, np.array([False, True])),
        ]
    )


# --- round trips -------------------------------------------------------------------------


def test_save_restore_round_trip_every_dtype(tmp_path):
    variables = make_model()
    saver = tf.train.Saver()
    prefix = str(tmp_path / "model")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saved = values_of(sess, variables)
        assert saver.save(sess, prefix) == prefix
        # TensorFlow's V2 format, one data shard.
        assert os.path.isfile(prefix + ".index")
        assert os.path.isfile(prefix + ".data-00000-of-00001")
        assert not os.path.exists(prefix + ".twckpt")
        assert os.path.isfile(prefix + ".meta")
        scramble(sess, variables)
        saver.restore(sess, prefix)
        assert_same(values_of(sess, variables), saved)


def test_meta_file_is_a_meta_graph_def_holding_the_graph(tmp_path):
    make_model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "model"))
    with open(prefix + ".meta", "rb") as f:
        meta_graph_def = meta_graph_pb2.MetaGraphDef.FromString(f.read())
    # What TensorFlow's Saver.save writes (export_meta_graph: the OpDefs used and
    # the collections too), and nothing the message does not define.
    assert [field.name for field, _ in meta_graph_def.ListFields()] == [
        "meta_info_def",
        "graph_def",
        "saver_def",
        "collection_def",
    ]
    known = meta_graph_pb2.MetaGraphDef()
    known.CopyFrom(meta_graph_def)
    known.DiscardUnknownFields()
    assert known.ByteSize() == meta_graph_def.ByteSize()
    names = {node.name for node in meta_graph_def.graph_def.node}
    assert {"mlp/kernel", "save/SaveV2", "save/RestoreV2", "save/restore_all"} <= names
    assert meta_graph_def.saver_def == saver.saver_def
    assert meta_graph_def.saver_def.filename_tensor_name == "save/filename:0"
    assert meta_graph_def.saver_def.restore_op_name == "save/restore_all"


def test_ops_are_built_once_under_the_save_scope(tmp_path):
    make_model()
    graph = tf.get_default_graph()
    saver = tf.train.Saver()
    names = {op.name for op in graph.get_operations()}
    for expected in (
        "save/filename",
        "save/SaveV2",
        "save/RestoreV2",
        "save/restore_all",
        "save/control_dependency",
        "save/Assign",
    ):
        assert expected in names
    init = tf.global_variables_initializer()
    count = len(graph.get_operations())
    with tf.Session() as sess:
        sess.run(init)
        for step in range(3):
            path = saver.save(sess, str(tmp_path / "m"), global_step=step)
            saver.restore(sess, path)
    assert len(graph.get_operations()) == count
    tf.train.Saver()
    tf.train.Saver(name="second")
    names = {op.name for op in graph.get_operations()}
    assert "save_1/SaveV2" in names and "second/SaveV2" in names


def test_restore_into_a_fresh_graph_and_session_without_initializing(tmp_path):
    with tf.Graph().as_default():
        variables = make_model(scale=3.0)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saved = values_of(sess, variables)
            path = saver.save(sess, str(tmp_path / "model"), global_step=10)
    assert tf.train.latest_checkpoint(str(tmp_path)) == path
    with tf.Graph().as_default():
        variables = make_model(scale=0.0)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, path)
            assert_same(values_of(sess, variables), saved)


def test_dict_var_list_maps_checkpoint_names_to_variables(tmp_path):
    a = tf.Variable(np.float32(1.5), name="a")
    b = tf.Variable(np.array([1, 2], np.int32), name="b")
    saver = tf.train.Saver({"renamed/a": a, "renamed/b": b})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "dict"))
    tf.reset_default_graph()
    x = tf.Variable(np.float32(0), name="x")
    y = tf.Variable(np.array([0, 0], np.int32), name="y")
    only_x = tf.train.Saver({"renamed/a": x})  # a subset of the checkpoint
    both = tf.train.Saver(var_list={"renamed/b": y, "renamed/a": x})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        only_x.restore(sess, path)
        assert sess.run(x) == 1.5 and list(sess.run(y)) == [0, 0]
        both.restore(sess, path)
        assert list(sess.run(y)) == [1, 2]


def test_var_list_as_a_list_uses_op_names_and_rejects_duplicates(tmp_path):
    kernel = make_model()[0]
    saver = tf.train.Saver([kernel])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "list"))
    tf.reset_default_graph()
    other = tf.Variable(np.zeros((3, 4), np.float32), name="mlp/kernel")
    with tf.Session() as sess:
        tf.train.Saver([other]).restore(sess, path)
        np.testing.assert_array_equal(sess.run(other), np.arange(12).reshape(3, 4))
    with pytest.raises(ValueError, match="same name"):
        tf.train.Saver([other, other])
    with pytest.raises(TypeError, match="not a Variable"):
        tf.train.Saver([other.value()])


def test_no_variables_is_an_error_unless_allowed(tmp_path):
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver()
    saver = tf.train.Saver(allow_empty=True)
    with tf.Session() as sess:
        assert saver.save(sess, str(tmp_path / "empty")) is None
    assert not os.listdir(tmp_path)


# --- naming, state file, max_to_keep -------------------------------------------------------


def test_global_step_naming_from_int_variable_and_padding(tmp_path):
    _, _, step, _, _ = make_model()
    saver = tf.train.Saver()
    padded = tf.train.Saver(pad_step_number=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(step, np.int64(100)))
        base = str(tmp_path / "model")
        assert saver.save(sess, base, global_step=7) == base + "-7"
        assert saver.save(sess, base, global_step=step) == base + "-100"
        assert padded.save(sess, base, global_step=3) == base + "-00000003"
        assert tf.train.checkpoint_exists(base + "-100")
        assert not tf.train.checkpoint_exists(base + "-8")


def test_max_to_keep_deletes_old_checkpoints_and_state_file_lists_the_rest(tmp_path):
    make_model()
    saver = tf.train.Saver(max_to_keep=2)
    base = str(tmp_path / "model")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in (1, 2, 3, 4):
            saver.save(sess, base, global_step=step)
    files = sorted(os.listdir(tmp_path))
    assert files == [
        "checkpoint",
        "model-3.data-00000-of-00001",
        "model-3.index",
        "model-3.meta",
        "model-4.data-00000-of-00001",
        "model-4.index",
        "model-4.meta",
    ]
    assert saver.last_checkpoints == [base + "-3", base + "-4"]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == base + "-4"
    assert state.all_model_checkpoint_paths == [base + "-3", base + "-4"]
    assert len(state.all_model_checkpoint_timestamps) == 2
    assert tf.train.latest_checkpoint(str(tmp_path)) == base + "-4"
    text = (tmp_path / "checkpoint").read_text()
    assert text.startswith(
        f'model_checkpoint_path: "{base}-4"\nall_model_checkpoint_paths: "{base}-3"\n'
    )


def test_max_to_keep_none_keeps_everything(tmp_path):
    make_model()
    saver = tf.train.Saver(max_to_keep=None)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(4):
            saver.save(sess, str(tmp_path / "m"), global_step=step, write_meta_graph=False)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint"] + [
        f"m-{i}.{suffix}" for i in range(4) for suffix in ("data-00000-of-00001", "index")
    ]


def test_keep_checkpoint_every_n_hours_preserves_old_checkpoints(tmp_path, monkeypatch):
    make_model()
    clock = [1000.0]
    monkeypatch.setattr("tensorweave.train.saver.time.time", lambda: clock[0])
    saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(6):
            clock[0] += 1800.0  # half an hour between saves
            saver.save(sess, str(tmp_path / "m"), global_step=step, write_meta_graph=False)
    kept = sorted(f for f in os.listdir(tmp_path) if f.endswith(".index"))
    # The first save after each hour boundary is preserved; the newest is kept.
    assert kept == ["m-2.index", "m-4.index", "m-5.index"]
    assert len([f for f in os.listdir(tmp_path) if ".data-" in f]) == 3


def test_relative_paths_survive_moving_the_directory(tmp_path, monkeypatch):
    make_model()
    saver = tf.train.Saver(save_relative_paths=True)
    (tmp_path / "a").mkdir()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, str(tmp_path / "a" / "model"), global_step=5)
    assert 'model_checkpoint_path: "model-5"' in (tmp_path / "a" / "checkpoint").read_text()
    os.rename(tmp_path / "a", tmp_path / "b")
    assert tf.train.latest_checkpoint(str(tmp_path / "b")) == str(tmp_path / "b" / "model-5")
    # A relative save path gives relative state entries too (TensorFlow's default).
    monkeypatch.chdir(tmp_path)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver().save(sess, "b/model", global_step=6)
    assert 'model_checkpoint_path: "model-6"' in (tmp_path / "b" / "checkpoint").read_text()
    assert tf.train.latest_checkpoint("b") == os.path.join("b", "model-6")


def test_checkpoint_state_helpers_handle_missing_and_odd_files(tmp_path):
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "gone-1"\n')
    assert tf.train.latest_checkpoint(str(tmp_path)) is None  # named, but no file
    (tmp_path / "checkpoint").write_text("not a state file")
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    state = checkpoint_management.CheckpointState('we"ird\\ päth\n', ["a"], [1.5], 2.0)
    assert checkpoint_management.CheckpointState.parse(str(state)) == state


def test_save_errors_name_the_problem(tmp_path):
    make_model()
    saver = tf.train.Saver()
    (tmp_path / "file").write_text("in the way")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
            saver.save(sess, str(tmp_path / "model"))  # not initialized
        assert os.listdir(tmp_path) == ["file"]
        sess.run(tf.global_variables_initializer())
        with pytest.raises(ValueError, match="Parent directory of .* doesn't exist"):
            saver.save(sess, str(tmp_path / "file" / "sub" / "model"))
        # Missing directories are created, as TensorFlow's SaveV2 does.
        path = saver.save(sess, str(tmp_path / "new" / "dirs" / "model"), global_step=1)
        assert tf.train.latest_checkpoint(str(tmp_path / "new" / "dirs")) == path
        with pytest.raises(ValueError, match="path components"):
            saver.save(sess, str(tmp_path / "model"), latest_filename="a/b")


# --- errors leave variables unchanged --------------------------------------------------------


@pytest.fixture
def saved_and_scrambled(tmp_path):
    """A checkpoint of the model, and a session whose variables differ from it."""
    variables = make_model()
    saver = tf.train.Saver()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    prefix = saver.save(sess, str(tmp_path / "model"))
    scramble(sess, variables)
    yield sess, saver, prefix, variables, values_of(sess, variables)
    sess.close()


def test_missing_checkpoint_is_not_found_naming_the_path(saved_and_scrambled, tmp_path):
    sess, saver, _, variables, before = saved_and_scrambled
    missing = str(tmp_path / "nothing-here")
    with pytest.raises(tf.errors.NotFoundError, match="nothing-here.index"):
        saver.restore(sess, missing)
    assert_same(values_of(sess, variables), before)
    with pytest.raises(ValueError, match="None"):
        saver.restore(sess, None)


@pytest.mark.parametrize(
    "damage", ["truncate_data", "flip_data", "flip_index", "truncate_index", "empty_index"]
)
def test_damaged_checkpoint_is_data_loss_and_changes_nothing(saved_and_scrambled, damage):
    sess, saver, prefix, variables, before = saved_and_scrambled
    path = prefix + (".data-00000-of-00001" if damage.endswith("data") else ".index")
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if damage.startswith("truncate"):
        data = data[: len(data) * 2 // 3]
    elif damage == "flip_data":
        data[-3] ^= 0x40  # inside the last entry's bytes
    elif damage == "flip_index":
        data[12] ^= 0x01  # inside the first block
    else:
        data = b""
    with open(path, "wb") as f:
        f.write(bytes(data))
    with pytest.raises(tf.errors.DataLossError) as info:
        saver.restore(sess, prefix)
    assert path in info.value.message
    if damage == "truncate_data":
        assert "truncated" in info.value.message
    assert_same(values_of(sess, variables), before)


def test_shape_mismatch_names_the_variable_and_both_shapes(tmp_path):
    with tf.Graph().as_default():
        a = tf.Variable(np.ones((2, 2), np.float32), name="a")
        z = tf.Variable(np.ones((3,), np.float32), name="z")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(sess, str(tmp_path / "model"))
    # "a" (restored first) matches; "z" (last) does not: nothing may change.
    a = tf.Variable(np.zeros((2, 2), np.float32), name="a")
    z = tf.Variable(np.zeros((4,), np.float32), name="z")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            saver.restore(sess, path)
        assert sess.run(a).sum() == 0 and sess.run(z).sum() == 0
        assert "variable z" in info.value.message
        assert "(4,)" in info.value.message and "(3,)" in info.value.message
        # reshape=True accepts the same elements in another shape.
        b = tf.Variable(np.zeros((4,), np.float32), name="b")
        sess.run(b.initializer)
        tf.train.Saver({"a": b}, reshape=True).restore(sess, path)
        np.testing.assert_array_equal(sess.run(b), np.ones(4))


def test_dtype_mismatch_and_missing_key_name_the_variable(saved_and_scrambled):
    sess, _, prefix, variables, before = saved_and_scrambled
    wrong_dtype = tf.Variable(np.zeros(4, np.float32), name="other")
    absent = tf.Variable(np.zeros(2, np.float32), name="absent")
    sess.run([wrong_dtype.initializer, absent.initializer])
    kernel = variables[0]
    # TensorFlow's words for it.
    with pytest.raises(
        tf.errors.InvalidArgumentError,
        match="tensor_name = mlp/bias; expected dtype float does not equal original dtype double",
    ):
        tf.train.Saver({"mlp/kernel": kernel, "mlp/bias": wrong_dtype}).restore(sess, prefix)
    with pytest.raises(
        tf.errors.NotFoundError, match="Key mlp/dense/kernel not found in checkpoint"
    ):
        tf.train.Saver({"mlp/kernel": kernel, "mlp/dense/kernel": absent}).restore(sess, prefix)
    assert_same(values_of(sess, variables), before)


# --- a save killed mid-way ----------------------------------------------------------------------

_CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    import numpy as np, tensorweave as tf
    big = tf.Variable(tf.fill([{size}], 2.0), name="big")
    small = tf.Variable(np.float32(2.0), name="small")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print("saving", flush=True)
        saver.save(sess, {prefix!r}, write_meta_graph=False)
""")


def test_save_killed_midway_leaves_the_last_good_checkpoint(tmp_path):
    size = 1 << 24  # 64 MB of floats: the write takes long enough to be interrupted
    prefix = str(tmp_path / "model")
    big = tf.Variable(tf.fill([size], 1.0), name="big")
    small = tf.Variable(np.float32(1.0), name="small")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, prefix, write_meta_graph=False)
    files = (prefix + ".index", prefix + ".data-00000-of-00001")
    good = [pathlib.Path(f).read_bytes() for f in files]

    # The child saves new values over the same prefix; it is killed as soon
    # as its temporary file appears.
    script = _CHILD.format(root=PYTHON_ROOT, size=size, prefix=prefix)
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    temporary = None
    deadline = time.time() + 120
    while temporary is None and child.poll() is None and time.time() < deadline:
        temporary = next((f for f in os.listdir(tmp_path) if ".tmp-" in f), None)
        time.sleep(0.001)  # writing 64 MB and fsyncing it takes far longer
    child.send_signal(signal.SIGKILL)
    _, stderr = child.communicate()
    assert temporary is not None, f"no save in progress was seen; child said: {stderr[-2000:]}"
    assert os.path.exists(tmp_path / temporary), "killed after the rename"

    assert [pathlib.Path(f).read_bytes() for f in files] == good
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        assert sess.run(small) == 1.0 and sess.run(big)[-1] == 1.0


# --- building later, taking over earlier checkpoints ------------------------------------------


def test_defer_build_adds_the_ops_on_first_use(tmp_path):
    variables = make_model()
    saver = tf.train.Saver(defer_build=True)
    graph = tf.get_default_graph()
    assert not any(op.name.startswith("save/") for op in graph.get_operations())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saved = values_of(sess, variables)
        path = saver.save(sess, str(tmp_path / "late"))
        scramble(sess, variables)
        saver.restore(sess, path)
        assert_same(values_of(sess, variables), saved)


def test_recover_last_checkpoints_lets_a_new_saver_prune_old_ones(tmp_path):
    make_model()
    base = str(tmp_path / "model")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = tf.train.Saver(max_to_keep=5)
        for step in range(3):
            first.save(sess, base, global_step=step, write_meta_graph=False)
        # A restarted job: a new Saver takes over what the state file lists.
        second = tf.train.Saver(max_to_keep=2)
        state = tf.train.get_checkpoint_state(str(tmp_path))
        second.recover_last_checkpoints(state.all_model_checkpoint_paths + [base + "-99"])
        assert second.last_checkpoints == [base + "-0", base + "-1", base + "-2"]
        second.save(sess, base, global_step=3, write_meta_graph=False)
    assert sorted(f for f in os.listdir(tmp_path) if f.endswith(".index")) == [
        "model-2.index",
        "model-3.index",
    ]
    assert tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == [
        base + "-2",
        base + "-3",
    ]


def test_saver_def_names_ops_a_graph_only_program_can_run(tmp_path):
    variables = make_model()
    saver = tf.train.Saver(max_to_keep=3)
    saver_def = saver.saver_def
    assert saver_def.filename_tensor_name == "save/filename:0"
    assert saver_def.save_tensor_name == "save/control_dependency:0"
    assert saver_def.restore_op_name == "save/restore_all"
    assert saver_def.max_to_keep == 3 and saver_def.version == saver_def.V2
    prefix = str(tmp_path / "by_name")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saved = values_of(sess, variables)
        # Saving and restoring by op names alone, as C or serving code does.
        written = sess.run(saver_def.save_tensor_name, {saver_def.filename_tensor_name: prefix})
        assert written == prefix.encode()
        scramble(sess, variables)
        sess.run(saver_def.restore_op_name, {saver_def.filename_tensor_name: prefix})
        assert_same(values_of(sess, variables), saved)


# --- TensorFlow's V2 format: sharded saves, write_version -------------------------------


def test_sharded_save_writes_a_data_file_per_device_and_restores(tmp_path):
    with tf.device("/cpu:0"):
        placed = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="placed")
    unplaced = tf.Variable(np.array([b"x", b"yz"], dtype=object), name="unplaced")
    saver = tf.train.Saver(sharded=True)
    assert saver.saver_def.sharded
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = saver.save(sess, str(tmp_path / "model"), global_step=2)
        # Two devices (one unspecified), two shards, merged; the parts' directory is gone.
        assert sorted(os.listdir(tmp_path)) == [
            "checkpoint",
            "model-2.data-00000-of-00002",
            "model-2.data-00001-of-00002",
            "model-2.index",
            "model-2.meta",
        ]
        sess.run([placed.assign(tf.zeros([2, 3])), unplaced.assign(["", ""])])
        saver.restore(sess, prefix)
        np.testing.assert_array_equal(sess.run(placed), np.arange(6).reshape(2, 3))
        assert list(sess.run(unplaced)) == [b"x", b"yz"]
    # A plain Saver reads the merged checkpoint too.
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, prefix)
        assert list(sess.run(unplaced)) == [b"x", b"yz"]


def test_write_version_other_than_v2_is_refused():
    tf.Variable(1.0, name="v")
    with pytest.raises(ValueError, match="write_version=1 is not supported"):
        tf.train.Saver(write_version=tf.train.SaverDef.V1)
    assert tf.train.Saver(write_version=tf.train.SaverDef.V2).saver_def.version == 2

"""tf.train.SessionManager: initialize, restore, recover and wait for a model.

Local sessions share no variables, so a test of wait_for_session needs a
readiness signal from outside the session: here the ready op reads a small
checkpoint (the names of what is not ready yet) that another thread, playing
the chief, rewrites while the worker polls.
"""

import os
import threading
import time

import numpy as np
import pytest
import tensorweave as tf


def model():
    v = tf.Variable(1.0, name="v")
    w = tf.Variable([2.0, 3.0], name="w")
    return v, w, tf.global_variables_initializer(), tf.report_uninitialized_variables()


def save_values(directory, v_value, w_value):
    """Writes a checkpoint of the model with these values, in its own graph."""
    with tf.Graph().as_default():
        v, w, init, _ = model()
        with tf.Session() as sess:
            sess.run(init)
            v.load(v_value, sess)
            w.load(w_value, sess)
            return tf.train.Saver().save(sess, os.path.join(directory, "model"), global_step=7)


def test_prepare_session_initializes_without_a_checkpoint(tmp_path):
    v, _w, init, ready = model()
    manager = tf.train.SessionManager(ready_op=ready)
    sess = manager.prepare_session(
        "", init_op=init, saver=tf.train.Saver(), checkpoint_dir=str(tmp_path)
    )
    assert sess.run(v) == 1.0
    sess.close()


def test_prepare_session_restores_the_latest_checkpoint(tmp_path):
    save_values(str(tmp_path), 5.0, [6.0, 7.0])
    v, w, init, ready = model()
    saver = tf.train.Saver()
    sess = tf.train.SessionManager(ready_op=ready).prepare_session(
        "", init_op=init, saver=saver, checkpoint_dir=str(tmp_path)
    )
    # Restored, and init_op did not run over the restored values.
    assert sess.run(v) == 5.0 and sess.run(w).tolist() == [6.0, 7.0]
    assert saver.last_checkpoints == [os.path.join(str(tmp_path), "model-7")]
    sess.close()


def test_prepare_session_restores_a_named_checkpoint(tmp_path):
    path = save_values(str(tmp_path), 5.0, [6.0, 7.0])
    v, _w, _init, ready = model()
    manager = tf.train.SessionManager(ready_op=ready)
    sess = manager.prepare_session("", saver=tf.train.Saver(), checkpoint_filename_with_path=path)
    assert sess.run(v) == 5.0
    sess.close()
    with pytest.raises(ValueError, match="Can not provide both"):
        manager.prepare_session(
            "", saver=tf.train.Saver(), checkpoint_dir="d", checkpoint_filename_with_path=path
        )


def test_prepare_session_init_fn_and_feed():
    value = tf.placeholder(tf.float32, [], name="value")
    v = tf.Variable(value, name="v")
    calls = []
    sess = tf.train.SessionManager().prepare_session(
        "",
        init_op=v.initializer,
        init_feed_dict={value: 4.0},
        init_fn=lambda s: calls.append(s.run(v)),
    )
    assert calls == [4.0]
    sess.close()


def test_prepare_session_errors():
    v, _w, _init, ready = model()
    manager = tf.train.SessionManager(ready_op=ready)
    with pytest.raises(RuntimeError, match="no init_op or init_fn or local_init_op"):
        manager.prepare_session("")
    with pytest.raises(RuntimeError, match="Variables not initialized: w"):
        manager.prepare_session("", init_op=v.initializer)


def test_wait_for_checkpoint_is_bounded(tmp_path):
    v, _w, init, ready = model()
    manager = tf.train.SessionManager(ready_op=ready, recovery_wait_secs=0.05)
    started = time.monotonic()
    sess = manager.prepare_session(
        "",
        init_op=init,
        saver=tf.train.Saver(),
        checkpoint_dir=str(tmp_path),
        wait_for_checkpoint=True,
        max_wait_secs=0.3,
    )
    assert 0.25 <= time.monotonic() - started < 5
    assert sess.run(v) == 1.0  # no checkpoint came: initialized
    sess.close()


def test_local_init_op_runs_once_the_globals_are_ready():
    v = tf.Variable(1.0, name="v")
    local = tf.Variable(v.initialized_value() * 10, name="local", collections=[])
    manager = tf.train.SessionManager(
        local_init_op=local.initializer,
        ready_for_local_init_op=tf.report_uninitialized_variables([v]),
        ready_op=tf.report_uninitialized_variables([v, local]),
    )
    sess = manager.prepare_session("", init_op=v.initializer)
    assert sess.run(local) == 10.0
    sess.close()
    with pytest.raises(ValueError, match="you must also pass a local_init_op"):
        tf.train.SessionManager(ready_for_local_init_op=tf.report_uninitialized_variables())


def test_recover_session(tmp_path):
    v, _w, _init, ready = model()
    manager = tf.train.SessionManager(ready_op=ready)
    sess, initialized = manager.recover_session(
        "", saver=tf.train.Saver(), checkpoint_dir=str(tmp_path)
    )
    assert not initialized
    sess.close()
    tf.reset_default_graph()
    save_values(str(tmp_path), 5.0, [6.0, 7.0])
    v, _w, _init, ready = model()
    manager = tf.train.SessionManager(ready_op=ready)
    sess, initialized = manager.recover_session(
        "", saver=tf.train.Saver(), checkpoint_dir=str(tmp_path)
    )
    assert initialized and sess.run(v) == 5.0
    sess.close()


# --- waiting for the chief ----------------------------------------------------------------


def write_not_ready(prefix, names):
    """The chief's side: records which variables are not ready yet."""
    with tf.Graph().as_default():
        initial = np.array(names, dtype=object) if names else tf.constant([], dtype=tf.string)
        status = tf.Variable(initial, name="not_ready")
        with tf.Session() as sess:
            sess.run(status.initializer)
            tf.train.Saver({"not_ready": status}).save(
                sess, prefix, write_meta_graph=False, write_state=False
            )


def ready_op_reading(prefix):
    """The worker's side: a ready op that reads that record on every run."""
    graph = tf.get_default_graph()
    inputs = [tf.constant(prefix), tf.constant(["not_ready"]), tf.constant([""])]
    restore = graph.create_op("RestoreV2", inputs, attrs={"dtypes": [tf.string]}, name="read")
    return restore.outputs[0]


def test_wait_for_session_polls_until_the_model_is_ready(tmp_path, caplog):
    prefix = str(tmp_path / "status")
    write_not_ready(prefix, ["w", "b"])
    manager = tf.train.SessionManager(ready_op=ready_op_reading(prefix), recovery_wait_secs=0.05)
    chief = threading.Timer(0.4, write_not_ready, args=(prefix, []))
    chief.start()
    started = time.monotonic()
    try:
        with caplog.at_level("INFO", logger="tensorweave"):
            sess = manager.wait_for_session("", max_wait_secs=20)
    finally:
        chief.join()
    assert 0.35 <= time.monotonic() - started < 15
    waits = [r.getMessage() for r in caplog.records if "Waiting for model" in r.getMessage()]
    assert len(waits) >= 2
    assert "Variables not initialized: w, b" in waits[0]
    sess.close()


def test_wait_for_session_gives_up_after_max_wait_secs(tmp_path):
    prefix = str(tmp_path / "status")
    write_not_ready(prefix, ["w"])
    manager = tf.train.SessionManager(ready_op=ready_op_reading(prefix), recovery_wait_secs=0.05)
    started = time.monotonic()
    with pytest.raises(
        tf.errors.DeadlineExceededError, match="Session was not ready after waiting"
    ):
        manager.wait_for_session("", max_wait_secs=0.5)
    assert 0.4 <= time.monotonic() - started < 5


def test_wait_for_session_raises_errors_other_than_uninitialized(tmp_path):
    # The record does not exist: NotFoundError is not "not ready yet".
    manager = tf.train.SessionManager(
        ready_op=ready_op_reading(str(tmp_path / "missing")), recovery_wait_secs=0.05
    )
    with pytest.raises(tf.errors.NotFoundError):
        manager.wait_for_session("", max_wait_secs=5)


def test_a_ready_op_failing_on_an_uninitialized_variable_means_not_ready():
    v = tf.Variable(1.0, name="v")
    manager = tf.train.SessionManager(ready_op=tf.identity(v), recovery_wait_secs=0.05)
    with pytest.raises(tf.errors.DeadlineExceededError):
        manager.wait_for_session("", max_wait_secs=0.2)

"""MonitoredSession, MonitoredTrainingSession and the Scaffold, on local sessions.

The scenarios of monitored_session_reference.py run here on tensorweave and
must give what they gave on TensorFlow 2.21 (monitored_session_reference.json):
the hooks' calls in order, the runs a StopAtStepHook allows, the checkpoints
saved and restored, recovery from AbortedError, OutOfRangeError ending the loop.
"""

import json
import threading
import time

import monitored_session_reference as reference
import numpy as np
import pytest
import tensorweave as tf
from tensorweave.train import monitored_session

with open(reference.REFERENCE_FILE) as _file:
    RECORDED = json.load(_file)


@pytest.mark.parametrize("name", sorted(reference.SCENARIOS))
def test_scenario_matches_tensorflow(name):
    got = reference.run_scenario(tf, name)
    want = RECORDED[name]
    if "w_b" in want:  # trained weights: equal to float32 rounding, not bit for bit
        np.testing.assert_allclose(got.pop("w_b"), want["w_b"], rtol=1e-5, atol=1e-6)
        want = {k: v for k, v in want.items() if k != "w_b"}
    assert got == want


def test_stop_at_step_trains_the_regression_to_its_last_step():
    model = reference.linear_regression(tf)
    train_op, feeds = model.train_op, model.feeds
    final = tf.train.FinalOpsHook(
        [model.step, model.w, model.b, model.loss], final_ops_feed_dict=feeds
    )
    runs = 0
    with tf.train.MonitoredTrainingSession(
        hooks=[tf.train.StopAtStepHook(last_step=300), final]
    ) as sess:
        while not sess.should_stop():
            sess.run(train_op, feed_dict=feeds)
            runs += 1
    final_step, final_w, final_b, final_loss = final.final_ops_values
    assert runs == 300 and final_step == 300
    np.testing.assert_allclose([final_w, final_b], [3.0, 1.0], atol=1e-3)
    assert final_loss < 1e-6


class Recorder(tf.train.SessionRunHook):
    def __init__(self, fetches=None, feed_dict=None):
        self.fetches, self.feed_dict = fetches, feed_dict
        self.results, self.contexts = [], []

    def before_run(self, run_context):
        self.contexts.append(run_context)
        return tf.train.SessionRunArgs(self.fetches, self.feed_dict)

    def after_run(self, run_context, run_values):
        self.results.append(run_values.results)


def test_hook_fetches_do_not_change_what_the_caller_gets():
    a = tf.constant(2.0, name="a")
    c = tf.constant([1, 2, 3], name="c")
    hook = Recorder(fetches={"a": a, "c": c})
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        assert sess.run(a) == 2.0
        assert sess.run({"x": [a, c]})["x"][1].tolist() == [1, 2, 3]
        single_list = sess.run([c])
        assert isinstance(single_list, list) and len(single_list) == 1
        assert sess.run({"a": a}).keys() == {"a"}
    assert len(hook.results) == 4
    for result in hook.results:
        assert result["a"] == 2.0 and result["c"].tolist() == [1, 2, 3]
    assert hook.contexts[0].original_args.fetches is a
    assert hook.contexts[0].original_args.feed_dict is None


def test_hook_without_fetches_gets_none():
    hook = Recorder()
    one = tf.constant(1.0)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(one)
    assert hook.results == [None]


def test_feeds_from_hooks_and_caller_merge_and_must_not_overlap():
    x = tf.placeholder(tf.float32, [], name="x")
    y = tf.placeholder(tf.float32, [], name="y")
    total = x + y
    feeder = tf.train.FeedFnHook(lambda: {x: 5.0})
    with tf.train.MonitoredSession(hooks=[feeder]) as sess:
        assert sess.run(total, feed_dict={y: 1.0}) == 6.0
        with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"):
            sess.run(total, feed_dict={x: 1.0, y: 1.0})
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [], name="x")
    doubled = x * 2.0
    hooks = [tf.train.FeedFnHook(lambda: {x: 1.0}), tf.train.FeedFnHook(lambda: {x: 2.0})]
    with (
        tf.train.MonitoredSession(hooks=hooks) as sess,
        pytest.raises(RuntimeError, match="Same tensor is fed by two hooks"),
    ):
        sess.run(doubled)


def test_run_options_from_hooks_reach_the_run():
    class WithTimeout(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(None, options=tf.RunOptions(timeout_in_ms=5000))

        def after_run(self, run_context, run_values):
            self.timeout = run_values.options.timeout_in_ms

    hook = WithTimeout()
    three = tf.constant(3.0)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        assert sess.run(three) == 3.0
    assert hook.timeout == 5000


def test_run_after_stop_is_an_error_and_the_graph_is_writable_again():
    model = reference.linear_regression(tf)
    train_op, feeds = model.train_op, model.feeds
    graph = tf.get_default_graph()
    with tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(num_steps=1)]) as sess:
        assert graph.finalized
        sess.run(tf.train.get_global_step())  # reading does not advance the step
        assert not sess.should_stop()
        sess.run(train_op, feed_dict=feeds)
        assert sess.should_stop()
        with pytest.raises(RuntimeError, match="should_stop"):
            sess.run(tf.train.get_global_step())
    assert not graph.finalized
    assert sess.should_stop()


def test_a_finalized_graph_stays_finalized():
    tf.constant(1.0)
    scaffold = tf.train.Scaffold().finalize()  # finalizes the graph
    assert tf.get_default_graph().finalized
    creator = tf.train.ChiefSessionCreator(scaffold=scaffold)
    with tf.train.MonitoredSession(session_creator=creator) as sess:
        sess.run("Const:0")
    assert tf.get_default_graph().finalized


def test_error_reported_to_the_coordinator_stops_and_is_raised_by_close():
    class Reporter(tf.train.SessionRunHook):
        def after_create_session(self, session, coord):
            self.coord = coord

    hook = Reporter()
    value = tf.constant(1.0)
    sess = tf.train.MonitoredSession(hooks=[hook])
    sess.run(value)
    hook.coord.request_stop(ValueError("from a thread"))
    assert sess.should_stop() is True
    with pytest.raises(ValueError, match="from a thread"):
        sess.close()


def test_an_error_in_the_loop_skips_end_and_propagates():
    events = []
    hook = reference.recording_hook_class(tf)(events)
    reference.linear_regression(tf)
    with pytest.raises(ZeroDivisionError), tf.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(tf.train.get_global_step())
        1 / 0  # noqa: B018
    assert not any(event.startswith("hook.end") for event in events)


def test_nan_tensor_hook():
    loss = tf.placeholder(tf.float32, [], name="loss")
    with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss)]) as sess:
        sess.run(loss, {loss: 1.0})
        with pytest.raises(tf.train.NanLossDuringTrainingError, match="NaN loss during training"):
            sess.run(loss, {loss: np.nan})
    hook = tf.train.NanTensorHook(loss, fail_on_nan_loss=False)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(loss, {loss: np.nan})
        assert sess.should_stop()


# --- recovery -----------------------------------------------------------------------------


class FailingOnceCreator(tf.train.SessionCreator):
    """Creates sessions through a ChiefSessionCreator, but the first attempts raise."""

    def __init__(self, errors_to_raise):
        self.inner = tf.train.ChiefSessionCreator()
        self.errors_to_raise = list(errors_to_raise)
        self.attempts = 0

    def create_session(self):
        self.attempts += 1
        if self.errors_to_raise:
            raise self.errors_to_raise.pop(0)
        return self.inner.create_session()


def test_session_creation_is_retried_after_preemption_errors():
    creator = FailingOnceCreator(
        [tf.errors.UnavailableError(None, None, "ps down"), tf.errors.AbortedError(None, None, "x")]
    )
    seven = tf.constant(7.0)
    with tf.train.MonitoredSession(session_creator=creator) as sess:
        assert sess.run(seven) == 7.0
    assert creator.attempts == 3


def test_other_creation_errors_are_not_retried():
    creator = FailingOnceCreator([tf.errors.InvalidArgumentError(None, None, "bad")])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.train.MonitoredSession(session_creator=creator)
    assert creator.attempts == 1


def test_aborted_run_is_retried_on_a_new_session():
    events = []
    hook = reference.recording_hook_class(tf)(
        events, raise_at_run=2, error_type=tf.errors.UnavailableError
    )
    creator = FailingOnceCreator([])
    tf.train.get_or_create_global_step()
    value = tf.constant(4.0)
    with tf.train.MonitoredSession(session_creator=creator, hooks=[hook]) as sess:
        first_session = sess._tf_sess()
        assert sess.run(value) == 4.0
        assert sess.run(value) == 4.0  # raised in after_run, retried on a new session
        assert sess._tf_sess() is not first_session
        assert first_session._closed
    assert creator.attempts == 2
    assert sum(event.startswith("hook.after_create_session") for event in events) == 2


def test_singular_monitored_session_does_not_recover():
    events = []
    hook = reference.recording_hook_class(tf)(
        events, raise_at_run=1, error_type=tf.errors.AbortedError
    )
    reference.linear_regression(tf)
    with (
        pytest.raises(tf.errors.AbortedError),
        tf.train.SingularMonitoredSession(hooks=[hook]) as sess,
    ):
        assert isinstance(sess.raw_session(), tf.Session)
        sess.run(tf.train.get_global_step())


def test_run_step_fn():
    model = reference.linear_regression(tf)
    train_op, feeds, step = model.train_op, model.feeds, model.step
    hook = Recorder(fetches=step)

    def step_fn(step_context):
        raw = step_context.session.run(step)  # bypasses the hooks
        step_context.run_with_hooks(train_op, feed_dict=feeds)
        if raw >= 2:
            step_context.request_stop()
        return raw

    returned = []
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            returned.append(sess.run_step_fn(step_fn))
        with pytest.raises(ValueError, match="step_context"):
            sess.run_step_fn(lambda context: None)
    # The third call requested the stop, which ended the `with` block cleanly.
    assert returned == [0, 1]
    assert len(hook.results) == 3


def test_run_step_fn_is_retried_after_a_preemption():
    calls = []

    def step_fn(step_context):
        calls.append(step_context.session)
        if len(calls) == 1:
            raise tf.errors.AbortedError(None, None, "worker restarted")
        return step_context.run_with_hooks(tf.get_default_graph().get_tensor_by_name("c:0"))

    tf.constant(9.0, name="c")
    with tf.train.MonitoredSession() as sess:
        assert sess.run_step_fn(step_fn) == 9.0
    assert len(calls) == 2 and calls[0] is not calls[1]


# --- MonitoredTrainingSession and the Scaffold --------------------------------------------


def test_non_chief_waits_for_the_chief_and_gives_up_after_max_wait_secs():
    reference.linear_regression(tf)
    started = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError, match="not ready"):
        tf.train.MonitoredTrainingSession(is_chief=False, max_wait_secs=1)
    assert time.monotonic() - started < 10


def test_non_chief_runs_only_its_hooks_once_the_model_is_ready():
    # A model with nothing to initialize is ready at once for a worker.
    value = tf.constant(1.0)
    hook = Recorder(fetches=value)
    with tf.train.MonitoredTrainingSession(
        is_chief=False, hooks=[hook], chief_only_hooks=[tf.train.StopAtStepHook(num_steps=1)]
    ) as sess:
        for _ in range(3):
            sess.run(value)
        assert not sess.should_stop()
    assert len(hook.results) == 3


def test_monitored_training_session_saves_every_600_secs_by_default(tmp_path):
    model = reference.linear_regression(tf)
    train_op, feeds = model.train_op, model.feeds
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path), hooks=[tf.train.StopAtStepHook(last_step=5)]
    ) as sess:
        while not sess.should_stop():
            sess.run(train_op, feed_dict=feeds)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    # Saved when the session was created (step 0) and at the end (step 5).
    assert [p.rsplit("-", 1)[1] for p in state.all_model_checkpoint_paths] == ["0", "5"]
    assert (tmp_path / "graph.pbtxt").exists()


def test_scaffold_defaults_and_collections():
    v = tf.Variable(1.0, name="v")
    local = tf.Variable(2.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    scaffold = tf.train.Scaffold().finalize()
    assert tf.get_default_graph().finalized
    assert scaffold.init_op is not None and scaffold.local_init_op is not None
    assert isinstance(scaffold.saver, tf.train.Saver)
    # The defaults went into the collections; a second Scaffold reuses them.
    tf.get_default_graph()._unsafe_unfinalize()
    again = tf.train.Scaffold().finalize()
    assert again.init_op is scaffold.init_op and again.saver is scaffold.saver
    assert again.ready_op is scaffold.ready_op
    with tf.train.MonitoredSession(
        session_creator=tf.train.ChiefSessionCreator(scaffold=again)
    ) as sess:
        assert sess.run([v, local]) == [1.0, 2.0]


def test_scaffold_rejects_two_items_in_a_collection():
    tf.add_to_collection("ready_op", tf.constant([], dtype=tf.string))
    tf.add_to_collection("ready_op", tf.constant([], dtype=tf.string))
    with pytest.raises(RuntimeError, match='More than one item in the collection "ready_op"'):
        tf.train.Scaffold().finalize()


def test_scaffold_init_fn_and_copy_from_scaffold():
    v = tf.Variable(1.0, name="v")
    calls = []

    def init_fn(scaffold, session):
        calls.append(scaffold)
        v.load(5.0, session)

    base = tf.train.Scaffold(init_fn=init_fn, init_op=tf.no_op())
    copy = tf.train.Scaffold(copy_from_scaffold=base)
    assert copy.init_op is base.init_op
    with tf.train.MonitoredSession(
        session_creator=tf.train.ChiefSessionCreator(scaffold=copy)
    ) as sess:
        assert sess.run(v) == 5.0
    assert calls == [copy]
    with pytest.raises(TypeError, match="not a Scaffold"):
        tf.train.Scaffold(copy_from_scaffold=object())


def test_a_model_left_uninitialized_is_an_error():
    tf.Variable(1.0, name="v")
    scaffold = tf.train.Scaffold(init_op=tf.no_op())
    with pytest.raises(RuntimeError, match="Init operations did not make model ready"):
        tf.train.MonitoredSession(session_creator=tf.train.ChiefSessionCreator(scaffold=scaffold))


def test_use_default_is_the_module_sentinel():
    assert monitored_session.USE_DEFAULT is not None


# --- the Coordinator ----------------------------------------------------------------------


def test_coordinator_stop_and_join_reraise_the_first_error():
    coord = tf.train.Coordinator()
    assert not coord.should_stop()
    started = threading.Event()

    def worker():
        started.set()
        with coord.stop_on_exception():
            raise ValueError("first")

    thread = threading.Thread(target=worker)
    thread.start()
    assert coord.wait_for_stop(10)
    coord.request_stop(RuntimeError("second"))  # only the first error is kept
    with pytest.raises(ValueError, match="first"):
        coord.join([thread], stop_grace_period_secs=5)
    assert coord.joined


def test_coordinator_clean_stop_exceptions_and_clear_stop():
    coord = tf.train.Coordinator()
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "end of input"))
    assert coord.should_stop()
    coord.raise_requested_exception()  # OutOfRangeError is a clean stop: nothing raised
    coord.join([])
    coord.clear_stop()
    assert not coord.should_stop() and not coord.wait_for_stop(0.01)


def test_coordinator_join_reports_threads_that_outlive_the_grace_period():
    coord = tf.train.Coordinator()
    release = threading.Event()
    thread = threading.Thread(target=release.wait, args=(10,))
    thread.start()
    try:
        coord.request_stop()
        started = time.monotonic()
        with pytest.raises(RuntimeError, match="threads still running"):
            coord.join([thread], stop_grace_period_secs=0.1)
        assert time.monotonic() - started < 5
    finally:
        release.set()
        thread.join()

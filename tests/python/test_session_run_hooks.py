"""The hooks of basic_session_run_hooks, each under a MonitoredSession on a
local session, timed by a fake clock where they follow the time."""

import logging
import os

import numpy as np
import pytest
import tensorweave as tf
from tensorweave.train import basic_session_run_hooks


class FakeClock:
    """Stands in for the `time` module of basic_session_run_hooks."""

    def __init__(self):
        self.now = 1000.0

    def time(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(basic_session_run_hooks, "time", fake)
    return fake


def counter_model():
    """A global step and a train_op that only increments it."""
    step = tf.train.get_or_create_global_step()
    return step, tf.assign_add(step, 1)


def checkpoint_steps(directory):
    state = tf.train.get_checkpoint_state(directory)
    return [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]


# --- SecondOrStepTimer ---------------------------------------------------------------------


def test_second_or_step_timer_by_steps():
    timer = tf.train.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(7)  # the first step asked about
    assert timer.update_last_triggered_step(7) == (None, None)
    assert [timer.should_trigger_for_step(s) for s in (7, 8, 9, 10, 11)] == [
        False,
        False,
        False,
        True,
        True,
    ]
    assert timer.update_last_triggered_step(10)[1] == 3
    assert timer.last_triggered_step() == 10


def test_second_or_step_timer_by_seconds(clock):
    timer = tf.train.SecondOrStepTimer(every_secs=2.0)
    timer.update_last_triggered_step(0)
    clock.now += 1.5
    assert not timer.should_trigger_for_step(5)
    clock.now += 0.5
    assert timer.should_trigger_for_step(5)
    assert not timer.should_trigger_for_step(0)  # the same step never triggers twice
    assert timer.update_last_triggered_step(5) == (2.0, 5)


def test_second_or_step_timer_needs_exactly_one_period():
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        tf.train.SecondOrStepTimer()
    with pytest.raises(ValueError, match="Can not provide both"):
        tf.train.SecondOrStepTimer(every_secs=1, every_steps=1)


# --- StopAtStepHook -----------------------------------------------------------------------


def test_stop_at_step_hook_arguments():
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of"):
        tf.train.StopAtStepHook(num_steps=1, last_step=1)
    with pytest.raises(RuntimeError, match="Global step should be created to use StopAtStepHook"):
        tf.train.StopAtStepHook(num_steps=1).begin()


def test_stop_at_step_hook_when_a_run_advances_several_steps():
    step = tf.train.get_or_create_global_step()
    train_op = tf.assign_add(step, 3)
    runs = 0
    with tf.train.MonitoredSession(hooks=[tf.train.StopAtStepHook(last_step=10)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)
            runs += 1
        assert sess.should_stop()
    assert runs == 4  # 3, 6, 9, 12: the first step at or past 10 stops


# --- CheckpointSaverHook ------------------------------------------------------------------


def test_checkpoint_saver_hook_by_steps(tmp_path):
    _, train_op = counter_model()
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=4, checkpoint_basename="m")
    with tf.train.MonitoredSession(hooks=[hook, tf.train.StopAtStepHook(last_step=10)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    assert checkpoint_steps(str(tmp_path)) == [0, 4, 8, 10]
    assert os.path.exists(tmp_path / "m-8.index") and os.path.exists(tmp_path / "m-8.meta")
    assert (tmp_path / "graph.pbtxt").read_text().startswith("node {")


def test_checkpoint_saver_hook_by_seconds(tmp_path, clock):
    _, train_op = counter_model()
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_secs=60)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        for _ in range(3):
            sess.run(train_op)  # steps 1..3 within the first minute
        clock.now += 60
        sess.run(train_op)  # step 4: a minute passed
        clock.now += 30
        sess.run(train_op)  # step 5: not yet
    # 0 at creation, 4 by time, 5 at the end.
    assert checkpoint_steps(str(tmp_path)) == [0, 4, 5]


def test_checkpoint_saver_hook_end_does_not_save_twice(tmp_path):
    _, train_op = counter_model()
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2)
    with tf.train.MonitoredSession(hooks=[hook, tf.train.StopAtStepHook(last_step=4)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    assert checkpoint_steps(str(tmp_path)) == [0, 2, 4]


def test_checkpoint_saver_listener_is_called_and_can_stop_training(tmp_path):
    calls = []

    class Listener(tf.train.CheckpointSaverListener):
        def begin(self):
            calls.append("begin")

        def before_save(self, session, global_step_value):
            calls.append(f"before_save {global_step_value}")

        def after_save(self, session, global_step_value):
            calls.append(f"after_save {global_step_value}")
            return global_step_value >= 2  # stop once step 2 is saved

        def end(self, session, global_step_value):
            calls.append(f"end {global_step_value}")

    _, train_op = counter_model()
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[Listener()])
    runs = 0
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop() and runs < 100:
            sess.run(train_op)
            runs += 1
    assert runs == 2
    assert calls == [
        "begin",
        "before_save 0",
        "after_save 0",
        "before_save 2",
        "after_save 2",
        "end 2",
    ]


def test_checkpoint_saver_hook_finds_its_saver():
    with pytest.raises(ValueError, match="both saver and scaffold"):
        tf.train.CheckpointSaverHook("d", save_steps=1, saver=object(), scaffold=object())
    counter_model()
    hook = tf.train.CheckpointSaverHook("d", save_steps=1)
    with pytest.raises(RuntimeError, match="No items in collection savers"):
        hook._get_saver()


# --- StepCounterHook and LoggingTensorHook ------------------------------------------------


def test_step_counter_hook_logs_the_rate(clock, caplog):
    _, train_op = counter_model()
    hook = tf.train.StepCounterHook(every_n_steps=5)
    with (
        caplog.at_level(logging.INFO, logger="tensorweave"),
        tf.train.MonitoredSession(hooks=[hook]) as sess,
    ):
        for _ in range(11):
            sess.run(train_op)
            clock.now += 0.5
    rates = [r.getMessage() for r in caplog.records if r.getMessage().startswith("global_step/sec")]
    # Triggers at steps 1 (first), 6 and 11: 5 steps in 2.5 s each time.
    assert rates == ["global_step/sec: 2", "global_step/sec: 2"]


def test_step_counter_hook_warns_when_the_step_does_not_move(caplog):
    tf.train.get_or_create_global_step()
    value = tf.constant(1.0)
    with (
        caplog.at_level(logging.WARNING, logger="tensorweave"),
        tf.train.MonitoredSession(hooks=[tf.train.StepCounterHook(every_n_steps=1)]) as sess,
    ):
        for _ in range(8):
            sess.run(value)
    warnings = [r for r in caplog.records if "has not been increased" in r.getMessage()]
    assert len(warnings) == 5  # TensorFlow logs the first five


def test_logging_tensor_hook(caplog):
    step, train_op = counter_model()
    doubled = tf.identity(step * 2, name="doubled")
    hook = tf.train.LoggingTensorHook({"twice": doubled, "step": step}, every_n_iter=2, at_end=True)
    with (
        caplog.at_level(logging.INFO, logger="tensorweave"),
        tf.train.MonitoredSession(hooks=[hook]) as sess,
    ):
        for _ in range(5):
            sess.run(train_op)
    lines = [r.getMessage().split(" (")[0] for r in caplog.records if "twice =" in r.getMessage()]
    # Iterations 0, 2, 4 (values fetched with the run, before or after its
    # increment: the step op and the fetch race), then the end.
    assert len(lines) == 4
    assert lines[-1] == "step = 5, twice = 10"


def test_logging_tensor_hook_by_name_with_formatter(caplog):
    tf.constant(3, name="three")
    hook = tf.train.LoggingTensorHook(
        ["three"], every_n_iter=1, formatter=lambda values: f"got {values['three']}"
    )
    noop = tf.no_op()
    with (
        caplog.at_level(logging.INFO, logger="tensorweave"),
        tf.train.MonitoredSession(hooks=[hook]) as sess,
    ):
        sess.run(noop)
    assert "got 3" in [r.getMessage() for r in caplog.records]


def test_logging_tensor_hook_arguments():
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        tf.train.LoggingTensorHook(["x"])
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        tf.train.LoggingTensorHook(["x"], every_n_iter=0)


# --- FinalOpsHook, FeedFnHook, GlobalStepWaiterHook ---------------------------------------


def test_final_ops_hook():
    step, train_op = counter_model()
    final = tf.train.FinalOpsHook({"step": step})
    with tf.train.MonitoredSession(hooks=[final]) as sess:
        for _ in range(3):
            sess.run(train_op)
        assert final.final_ops_values is None
    assert final.final_ops_values == {"step": 3}


def test_feed_fn_hook_feeds_every_run():
    x = tf.placeholder(tf.float32, [2], name="x")
    total = tf.reduce_sum(x)
    values = iter([np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    with tf.train.MonitoredSession(hooks=[tf.train.FeedFnHook(lambda: {x: next(values)})]) as sess:
        assert sess.run(total) == 3.0
        assert sess.run(total) == 7.0


def test_global_step_waiter_hook_waits_until_the_step(clock):
    step, train_op = counter_model()
    calls = []

    class Advance(tf.train.SessionRunHook):
        """Plays the chief: each time the waiter sleeps, the step moves on."""

        def after_create_session(self, session, coord):
            def sleep(seconds):
                calls.append(seconds)
                session.run(train_op)

            clock.sleep = sleep

    waiter = tf.train.GlobalStepWaiterHook(wait_until_step=3)
    with tf.train.MonitoredSession(hooks=[Advance(), waiter]) as sess:
        sess.run(step)
        assert sess.run(step) == 3
    assert calls == [0.5, 0.5, 0.5]


def test_global_step_waiter_hook_does_not_wait_for_step_zero():
    step, _ = counter_model()
    with tf.train.MonitoredSession(hooks=[tf.train.GlobalStepWaiterHook(0)]) as sess:
        assert sess.run(step) == 0


# --- training_util helpers the hooks use --------------------------------------------------


def test_hooks_share_one_read_of_the_global_step():
    from tensorweave.train import training_util

    assert training_util._get_or_create_global_step_read() is None  # no global step yet
    step = tf.train.get_or_create_global_step()
    read = training_util._get_or_create_global_step_read()
    assert read is training_util._get_or_create_global_step_read()
    assert read.name == "global_step/read_for_hooks:0"
    with tf.Session() as sess:
        sess.run(step.initializer)
        assert sess.run(read) == 0


def test_write_graph_text_and_binary(tmp_path):
    tf.constant(1.0, name="one")
    graph_def = tf.get_default_graph().as_graph_def()
    text_path = tf.train.write_graph(tf.get_default_graph(), str(tmp_path / "sub"), "g.pbtxt")
    binary_path = tf.train.write_graph(graph_def, str(tmp_path), "g.pb", as_text=False)
    assert text_path == str(tmp_path / "sub" / "g.pbtxt")
    with open(text_path) as f:
        assert 'name: "one"' in f.read()
    parsed = type(graph_def)()
    with open(binary_path, "rb") as f:
        parsed.ParseFromString(f.read())
    assert parsed == graph_def

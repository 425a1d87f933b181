"""The hooks that write summaries: SummarySaverHook, StepCounterHook's rate,
CheckpointSaverHook's graph and checkpoint logs, and MonitoredTrainingSession
wiring them to its summary directory. (tests/interop/test_summary_hooks.py
checks the same event sequences against TensorFlow's.)"""

import glob
import itertools
import os

import pytest
import tensorweave as tf
from tensorweave.proto import event_pb2


def read_events(directory):
    """(step, kind, detail) of every event in `directory`'s event files."""
    found = []
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for event in tf.train.summary_iterator(path):
            kind = event.WhichOneof("what")
            if kind == "summary":
                detail = {value.tag: value.simple_value for value in event.summary.value}
            elif kind == "session_log":
                detail = event.session_log.status
            else:
                detail = None
            found.append((event.step, kind, detail))
    return found


def counting_graph():
    step = tf.train.get_or_create_global_step()
    constant = tf.constant(7.0)
    train = tf.assign_add(step, 1)
    return train, tf.summary.scalar("seven", constant)


@pytest.fixture(autouse=True)
def fresh_writers():
    tf.summary.FileWriterCache.clear()
    yield
    tf.summary.FileWriterCache.clear()


def test_summary_saver_hook_writes_on_the_first_step_then_every_save_steps(tmp_path):
    with tf.Graph().as_default():
        train, summary = counting_graph()
        hook = tf.train.SummarySaverHook(save_steps=2, output_dir=str(tmp_path), summary_op=summary)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(5):
                sess.run(train)
    events = read_events(str(tmp_path))
    assert (1, "session_log", event_pb2.SessionLog.START) in events
    summaries = [(step, detail) for step, kind, detail in events if kind == "summary"]
    # Which later steps write depends on whether the hook's copy of the step
    # was read before or after the run's increment (as in TensorFlow, where
    # 1, 3, 5 is usual): at least every other one of the 5 steps, never two
    # in a row.
    steps = [step for step, _ in summaries]
    assert steps[0] == 1 and 2 <= len(steps) <= 3
    assert all(later - earlier >= 2 for earlier, later in itertools.pairwise(steps))
    assert all(detail == {"seven": 7.0} for _, detail in summaries)
    # The cached writer was made with the graph, as TensorFlow's is.
    assert [kind for _, kind, _ in events[:3]] == ["file_version", "graph_def", "meta_graph_def"]


def test_summary_saver_hook_takes_a_list_of_ops_and_a_given_writer(tmp_path):
    with tf.Graph().as_default():
        train, summary = counting_graph()
        other = tf.summary.scalar("eight", tf.constant(8.0))
        writer = tf.summary.FileWriter(str(tmp_path))
        hook = tf.train.SummarySaverHook(
            save_steps=10, summary_writer=writer, summary_op=[summary, other]
        )
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run(train)
        writer.close()
    summaries = [
        (step, detail) for step, kind, detail in read_events(str(tmp_path)) if kind == "summary"
    ]
    assert summaries == [(1, {"seven": 7.0}), (1, {"eight": 8.0})]


def test_summary_saver_hook_needs_exactly_one_source_and_a_global_step(tmp_path):
    with tf.Graph().as_default():
        summary = tf.summary.scalar("seven", tf.constant(7.0))
        with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
            tf.train.SummarySaverHook(save_steps=1, output_dir=str(tmp_path))
        with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
            tf.train.SummarySaverHook(
                save_steps=1,
                output_dir=str(tmp_path),
                summary_op=summary,
                scaffold=tf.train.Scaffold(),
            )
        hook = tf.train.SummarySaverHook(save_steps=1, output_dir=str(tmp_path), summary_op=summary)
        with pytest.raises(RuntimeError, match="Global step should be created"):
            hook.begin()


def test_step_counter_hook_writes_its_rate_as_a_summary(tmp_path):
    with tf.Graph().as_default():
        train, _ = counting_graph()
        hook = tf.train.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path))
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(6):
                sess.run(train)
    tf.summary.FileWriterCache.clear()  # StepCounterHook leaves flushing to the writer
    rates = [
        (step, detail) for step, kind, detail in read_events(str(tmp_path)) if kind == "summary"
    ]
    assert [step for step, _ in rates] == [3, 5]
    assert all(
        list(detail) == ["global_step/sec"] and detail["global_step/sec"] > 0 for _, detail in rates
    )


def test_monitored_training_session_writes_the_graphs_summaries_and_checkpoint_logs(tmp_path):
    with tf.Graph().as_default():
        train, _ = counting_graph()
        with tf.train.MonitoredTrainingSession(
            checkpoint_dir=str(tmp_path), save_summaries_steps=3, save_checkpoint_steps=4
        ) as sess:
            for _ in range(7):
                sess.run(train)
    tf.summary.FileWriterCache.clear()
    events = read_events(str(tmp_path))
    summaries = [step for step, kind, detail in events if kind == "summary" and "seven" in detail]
    assert summaries[0] == 1 and len(summaries) >= 2 and summaries == sorted(set(summaries))
    checkpoints = [
        step
        for step, kind, detail in events
        if kind == "session_log" and detail == event_pb2.SessionLog.CHECKPOINT
    ]
    assert checkpoints[:2] == [0, 4]
    assert [kind for _, kind, _ in events].count("graph_def") == 2


def test_monitored_training_session_without_summary_steps_writes_no_summaries(tmp_path):
    with tf.Graph().as_default():
        train, _ = counting_graph()
        with tf.train.MonitoredTrainingSession(
            checkpoint_dir=str(tmp_path), save_summaries_steps=0, log_step_count_steps=0
        ) as sess:
            sess.run(train)
    tf.summary.FileWriterCache.clear()
    assert not [kind for _, kind, _ in read_events(str(tmp_path)) if kind == "summary"]

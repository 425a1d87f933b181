"""Training with the summary-writing hooks, run the same way under TensorFlow
(`python summary_hooks_scenario.py tensorflow OUT`) and tensorweave
(`... tensorweave OUT`); prints, as JSON, the events each directory's files
hold: (step, kind, detail) where detail is the summary tags, or the
SessionLog status and checkpoint file name. Values are left out: the
summaries read a variable the same run updates, so they race in both."""

import glob
import json
import os
import sys

if sys.argv[1] == "tensorflow":
    import tensorflow.compat.v1 as tf
    from tensorflow.python.training import training_util

    tf.disable_eager_execution()
else:
    import tensorweave as tf
    from tensorweave.train import training_util


def events(directory):
    found = []
    for path in sorted(glob.glob(os.path.join(directory, "events.out.tfevents.*"))):
        for event in tf.train.summary_iterator(path):
            kind = event.WhichOneof("what")
            if kind == "summary":
                detail = sorted(value.tag for value in event.summary.value)
            elif kind == "session_log":
                detail = [
                    event.session_log.status,
                    os.path.basename(event.session_log.checkpoint_path),
                ]
            else:
                detail = None
            found.append([event.step, kind, detail])
    return found


def graph_with_summary():
    tf.train.get_or_create_global_step()
    x = tf.Variable(1.0)
    # The step is incremented after the hooks' copy of it is read (as
    # Estimator loops do), so which steps write does not depend on timing.
    train = tf.group(tf.assign_add(x, 1.0), training_util._increment_global_step(1))
    return train, tf.summary.scalar("x", x)


def main(out):
    result = {}
    with tf.Graph().as_default():
        train, summary = graph_with_summary()
        hook = tf.train.SummarySaverHook(save_steps=2, output_dir=out + "/hook", summary_op=summary)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(5):
                sess.run(train)
    result["hook"] = events(out + "/hook")
    with tf.Graph().as_default():
        train, _ = graph_with_summary()
        with tf.train.MonitoredTrainingSession(
            checkpoint_dir=out + "/monitored",
            save_summaries_steps=3,
            log_step_count_steps=2,
            save_checkpoint_steps=4,
        ) as sess:
            for _ in range(7):
                sess.run(train)
    result["monitored"] = events(out + "/monitored")
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[2])

"""The TensorFlow side of a benchmark that compares with TensorFlow in the
same run. TensorFlow is never a project dependency: the figures come from
this process when tensorflow imports here, else from the benchmark script
run again with `--only tensorflow` under the Python named by
$TENSORFLOW_PYTHON (default /work/tfvenv/bin/python, a separate
virtualenv), which prints them as JSON on its last line.

    theirs = tensorflow_side.figures(
        __file__, ["--repeats", str(args.repeats)],
        lambda: bench(tensorflow_side.tensorflow_v1(), args.repeats))
"""

import json
import os
import subprocess
import sys

DEFAULT_TENSORFLOW_PYTHON = "/work/tfvenv/bin/python"


def tensorflow_v1(control_flow_v2=True):
    """TensorFlow's tf.compat.v1 in graph mode (v1 control flow when
    control_flow_v2 is False); ImportError when tensorflow is not here."""
    import tensorflow as tf

    tf.compat.v1.disable_eager_execution()
    if not control_flow_v2:
        tf.compat.v1.disable_control_flow_v2()
    return tf.compat.v1


def figures(script, arguments, compute_here, timeout=900):
    """compute_here() when tensorflow imports in this process; else what
    `script --only tensorflow *arguments` prints under TensorFlow's Python.
    None when neither is available or that run fails (its stderr's tail is
    printed)."""
    try:
        return compute_here()
    except ImportError:
        pass
    python = os.environ.get("TENSORFLOW_PYTHON", DEFAULT_TENSORFLOW_PYTHON)
    if not os.path.exists(python):
        return None
    command = [python, os.path.abspath(script), "--only", "tensorflow", *arguments]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])

"""Timeline: turns a traced run's StepStats into a Chrome trace (TF 1.x).

    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    sess.run(y, options=options, run_metadata=metadata)
    trace = timeline.Timeline(metadata.step_stats)
    with open("timeline.json", "w") as f:
        f.write(trace.generate_chrome_trace_format())

Open the file in chrome://tracing (or Perfetto). The layout is TensorFlow's:
one process per device ("<device> Compute"), one row per thread, a complete
event ("ph": "X") per node execution named after its op with the node name,
op and inputs as arguments; with show_dataflow, a flow arrow from the node
producing a tensor to each node consuming it on another thread or device;
with show_memory, a "<device> Tensors" process with the life of each tensor
(created when its producer ends, deleted when its last consumer ends).
"""

import json
import re

# "name = Op(input, input)": the label the runtime gives each node
# (NodeExecStats.timeline_label).
_LABEL = re.compile(r"(.*) = (.*)\((.*)\)")


def _parse_label(label):
    """(node name, op, inputs) of a timeline label; None when it has none."""
    match = _LABEL.match(label)
    if match is None:
        return None
    name, op, inputs = match.groups()
    inputs = [i for i in (part.strip() for part in inputs.split(",")) if i]
    # A transfer's input is "tensor @peer_device": the tensor it carries.
    inputs = [i.split(" @", 1)[0] for i in inputs]
    return name, op, inputs


def _tensor_name(name):
    """ "x" and "x:0" both name output 0 of x."""
    return name if ":" in name else f"{name}:0"


class _ChromeTrace:
    """Collects events in Chrome's Trace Event Format."""

    def __init__(self):
        self._metadata = []
        self._events = []

    def process(self, pid, name):
        self._metadata.append(
            {"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}}
        )
        self._metadata.append(
            {"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}}
        )

    def thread(self, pid, tid, name):
        self._metadata.append(
            {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}
        )

    def complete(self, category, name, pid, tid, start, duration, args):
        self._events.append(
            {
                "ph": "X",
                "cat": category,
                "name": name,
                "pid": pid,
                "tid": tid,
                "ts": start,
                "dur": duration,
                "args": args,
            }
        )

    def flow(self, name, flow_id, start, end):
        """An arrow from `start` (ts, pid, tid) to `end` (ts, pid, tid)."""
        for phase, (ts, pid, tid) in (("s", start), ("t", end)):
            self._events.append(
                {
                    "ph": phase,
                    "cat": "DataFlow",
                    "name": name,
                    "id": flow_id,
                    "pid": pid,
                    "tid": tid,
                    "ts": ts,
                }
            )

    def tensor(self, name, object_id, pid, created, deleted, snapshot):
        """A tensor's life: created, described once, deleted."""
        common = {"cat": "Tensor", "name": name, "id": object_id, "pid": pid, "tid": 0}
        self._events.append(dict(common, ph="N", ts=created))
        self._events.append(dict(common, ph="O", ts=created, args={"snapshot": snapshot}))
        self._events.append(dict(common, ph="D", ts=deleted))

    def to_json(self, pretty):
        trace = {"traceEvents": self._metadata + self._events}
        return json.dumps(trace, indent=4 if pretty else None, separators=(",", ":"))


class _Execution:
    """One NodeExecStats, with where and when it ran."""

    def __init__(self, device, stats):
        self.device = device
        self.stats = stats
        parsed = _parse_label(stats.timeline_label)
        if parsed is None:
            self.name, self.op, self.inputs = stats.node_name, "unknown", []
        else:
            self.name, self.op, self.inputs = parsed
        self.start = stats.all_start_micros
        self.duration = stats.all_end_rel_micros
        self.end = self.start + self.duration
        self.tid = stats.thread_id


class Timeline:
    """A Chrome trace of the StepStats of one traced run.

    step_stats: a tf.RunMetadata's step_stats. graph: accepted for
    TensorFlow's signature; the labels in the stats say all that is shown.
    """

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False, op_time=None):
        """The trace as a JSON string ({"traceEvents": [...]}).

        show_dataflow: flow arrows for tensors crossing threads or devices.
        show_memory: a "Tensors" process per device showing each output
        tensor from its creation to its last use.
        op_time: accepted for TensorFlow's signature; events span the whole
        node (all_start to all_end).
        """
        trace = _ChromeTrace()
        executions = []
        compute_pid = {}
        for dev_stats in self._step_stats.dev_stats:
            pid = len(compute_pid)
            compute_pid[dev_stats.device] = pid
            trace.process(pid, f"{dev_stats.device} Compute")
            threads = set()
            for stats in dev_stats.node_stats:
                execution = _Execution(dev_stats.device, stats)
                executions.append((pid, execution))
                if execution.tid not in threads:
                    threads.add(execution.tid)
                    name = dev_stats.thread_names.get(execution.tid, f"thread {execution.tid}")
                    trace.thread(pid, execution.tid, name)

        # Where each tensor was produced: "node:slot" -> (end, pid, tid,
        # NodeOutputStats). A _Send produces, for the flow arrows only, the
        # transfer its _Recv names, so arrows cross devices.
        producers = {}
        for pid, execution in executions:
            for output in execution.stats.output:
                key = f"{execution.name}:{output.slot}"
                producers[key] = (execution.end, pid, execution.tid, output)
            if execution.op == "_Send" and execution.inputs:
                # The value leaves when the kernel starts handing it over
                # (its receiver may finish inside that call).
                sent = execution.start + execution.stats.op_start_rel_micros
                key = _tensor_name(execution.inputs[0])
                producers.setdefault(key, (sent, pid, execution.tid, None))

        last_use = {}
        next_flow = 0
        for pid, execution in executions:
            args = {"name": execution.name, "op": execution.op}
            for i, name in enumerate(execution.inputs):
                args[f"input{i}"] = name
            trace.complete(
                "Op", execution.op, pid, execution.tid, execution.start, execution.duration, args
            )
            for name in execution.inputs:
                if name.startswith("^"):  # a control input carries no tensor
                    continue
                key = _tensor_name(name)
                produced = producers.get(key)
                if produced is None:
                    continue
                last_use[key] = max(last_use.get(key, 0), execution.end)
                end, source_pid, source_tid, _ = produced
                # Arrows between nodes of one thread would only clutter it.
                if show_dataflow and (source_pid, source_tid) != (pid, execution.tid):
                    # A _Recv waits from its start; the value arrives at its end.
                    arrival = execution.end if execution.op == "_Recv" else execution.start
                    trace.flow(
                        key,
                        next_flow,
                        (end, source_pid, source_tid),
                        (arrival, pid, execution.tid),
                    )
                    next_flow += 1

        if show_memory:
            tensors_pid = {}
            for key, (end, pid, _, output) in producers.items():
                if output is None:  # a transfer, not a tensor of its own
                    continue
                if pid not in tensors_pid:
                    tensors_pid[pid] = len(compute_pid) + len(tensors_pid)
                    device = next(d for d, p in compute_pid.items() if p == pid)
                    trace.process(tensors_pid[pid], f"{device} Tensors")
                description = output.tensor_description
                snapshot = {
                    "tensor_description": str(description),
                    "bytes": description.allocation_description.allocated_bytes,
                }
                deleted = max(end, last_use.get(key, end))
                trace.tensor(key, key, tensors_pid[pid], end, deleted, snapshot)
        return trace.to_json(pretty=False)

"""tf.train.ClusterSpec and tf.train.Server with TensorFlow 1.x's semantics.

A ClusterSpec names the jobs of a cluster and the address of each task, and
converts to and from the ClusterDef message servers exchange
(tf.train.ClusterDef, tf.train.ServerDef). A Server is one task of a
cluster, serving TensorFlow's distributed protocol in this process:

    cluster = tf.train.ClusterSpec({"ps": ["localhost:2222"], "worker": ["localhost:2223"]})
    server = tf.train.Server(cluster, job_name="ps", task_index=0)
    with tf.Session(server.target) as sess:   # "grpc://localhost:2222"
        ...
    server.stop()

A task whose address says localhost listens on the loopback interface only;
the transport is TensorFlow's insecure one (no TLS, no token).
"""

import contextlib

from tensorweave import pywrap_tensorweave as _c_api
from tensorweave.proto.cluster_pb2 import ClusterDef, JobDef
from tensorweave.proto.config_pb2 import ConfigProto
from tensorweave.proto.tensorflow_server_pb2 import ServerDef

__all__ = ["ClusterDef", "ClusterSpec", "JobDef", "Server", "ServerDef"]


class Server:
    """An in-process server: task `task_index` of job `job_name` in a cluster.

    server_or_cluster_def: a tf.train.ServerDef (job_name, task_index,
    protocol and config then override its fields when given), or anything
    tf.train.ClusterSpec accepts (a ClusterSpec, a dict, a ClusterDef).
    job_name, task_index: may be left out when the cluster has one job, and
    that job one task.
    protocol: "grpc" (the default).
    config: a tf.ConfigProto, the default for sessions on this server.
    start: start serving now.

    Unlike TensorFlow's, stop() really stops the server (and join() then
    returns).
    """

    def __init__(
        self,
        server_or_cluster_def,
        job_name=None,
        task_index=None,
        protocol=None,
        config=None,
        start=True,
    ):
        self._server = None  # set last, so __del__ after a failed init is harmless
        self._server_def = _make_server_def(
            server_or_cluster_def, job_name, task_index, protocol, config
        )
        self._server = _c_api.TF_NewServer(self._server_def.SerializeToString())
        if start:
            self.start()

    def __del__(self):
        server, self._server = getattr(self, "_server", None), None
        if server is not None:
            # Nothing may propagate out of __del__.
            with contextlib.suppress(Exception):
                _c_api.TF_DeleteServer(server)

    def start(self):
        """Starts serving. Raises UnavailableError when the address cannot be
        bound, FailedPreconditionError when already started or stopped."""
        _c_api.TF_ServerStart(self._live())

    def join(self):
        """Blocks until the server stops (stop() from another thread). Returns
        at once for a server never started, which then cannot start."""
        _c_api.TF_ServerJoin(self._live())

    def stop(self):
        """Stops serving (calls in flight get about a second to finish, then
        are cancelled). Stopping twice is fine; a stopped server cannot
        start again."""
        _c_api.TF_ServerStop(self._live())

    @property
    def server_def(self):
        """The tf.train.ServerDef this server was made from."""
        return self._server_def

    @property
    def target(self):
        """ "grpc://host:port", the target for tf.Session to reach this server
        (the port is the bound one once started, also when the cluster said
        port 0)."""
        return _c_api.TF_ServerTarget(self._live())

    @staticmethod
    def create_local_server(config=None, start=True):
        """A one-task server on localhost at a free port."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config, start=start)

    def _live(self):
        if self._server is None:
            raise ValueError("The server has been deleted")
        return self._server


def _make_server_def(server_or_cluster_def, job_name, task_index, protocol, config):
    """The ServerDef for Server's arguments, with TensorFlow's checks."""
    if config is not None and not isinstance(config, ConfigProto):
        raise TypeError(f"config must be a tf.ConfigProto, but got {type(config)}")
    if isinstance(server_or_cluster_def, ServerDef):
        server_def = ServerDef()
        server_def.CopyFrom(server_or_cluster_def)
        if job_name is not None:
            server_def.job_name = job_name
        if task_index is not None:
            server_def.task_index = task_index
        if protocol is not None:
            server_def.protocol = protocol
    else:
        try:
            cluster_spec = ClusterSpec(server_or_cluster_def)
        except TypeError:
            raise TypeError(
                "Could not convert `server_or_cluster_def` to a "
                "`tf.train.ServerDef` or `tf.train.ClusterSpec`."
            ) from None
        if job_name is None:
            if len(cluster_spec.jobs) != 1:
                raise ValueError("Must specify an explicit `job_name`.")
            job_name = cluster_spec.jobs[0]
        if task_index is None:
            task_indices = cluster_spec.task_indices(job_name)
            if len(task_indices) != 1:
                raise ValueError("Must specify an explicit `task_index`.")
            task_index = task_indices[0]
        server_def = ServerDef(
            cluster=cluster_spec.as_cluster_def(),
            job_name=job_name,
            task_index=task_index,
            protocol="grpc" if protocol is None else protocol,
        )
    if config is not None:
        server_def.default_session_config.MergeFrom(config)
    return server_def


class ClusterSpec:
    """A cluster: job name -> {task index: "host:port"}.

    Built from a dict mapping each job to a list of addresses (tasks 0, 1, ...)
    or to a dict {task index: address} (a "sparse" job, which may skip
    indices), from a ClusterDef, or from another ClusterSpec.
    """

    def __init__(self, cluster):
        if isinstance(cluster, dict):
            self._cluster_spec = {
                job_name: _tasks_of(job_name, tasks) for job_name, tasks in cluster.items()
            }
            self._cluster_def = _to_cluster_def(self._cluster_spec)
        elif isinstance(cluster, (ClusterDef, ClusterSpec)):
            source = cluster if isinstance(cluster, ClusterDef) else cluster.as_cluster_def()
            # A copy: changing the caller's message later does not change us.
            self._cluster_def = ClusterDef()
            self._cluster_def.CopyFrom(source)
            self._cluster_spec = {
                job.name: dict(job.tasks.items()) for job in self._cluster_def.job
            }
        else:
            raise TypeError(
                "`cluster` must be a dictionary mapping one or more job names to lists "
                "of network addresses, or a `ClusterDef` protocol buffer"
            )

    def __bool__(self):
        return bool(self._cluster_spec)

    # As TensorFlow's: a ClusterSpec equals another with the same jobs and
    # tasks, and equals the dict {job: {index: address}} it holds.
    def __eq__(self, other):
        return self._cluster_spec == other

    def __ne__(self, other):
        return self._cluster_spec != other

    __hash__ = None  # compared by content, like the dict it holds

    def __repr__(self):
        jobs = self.as_dict()
        items = ", ".join(f"{job!r}: {jobs[job]!r}" for job in sorted(jobs))
        return "ClusterSpec({" + items + "})"

    def as_dict(self):
        """{job: addresses}: a list for a job whose indices are 0..n-1, else a
        dict {task index: address}; an empty job gives {}."""
        result = {}
        for job_name in self.jobs:
            indices = self.task_indices(job_name)
            if indices and indices[-1] + 1 == len(indices):
                result[job_name] = self.job_tasks(job_name)
            else:
                result[job_name] = {index: self.task_address(job_name, index) for index in indices}
        return result

    def as_cluster_def(self):
        """The ClusterDef message: jobs sorted by name, tasks by index."""
        return self._cluster_def

    @property
    def jobs(self):
        """The job names, in the order the cluster was given."""
        return list(self._cluster_spec)

    def num_tasks(self, job_name):
        return len(self._job(job_name))

    def task_indices(self, job_name):
        """The job's task indices, ascending."""
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index):
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name):
        """The job's addresses as a list indexed by task, None where a sparse
        job has no task."""
        job = self._job(job_name)
        addresses = [None] * (max(job) + 1 if job else 0)
        for index, address in job.items():
            addresses[index] = address
        return addresses

    def _job(self, job_name):
        try:
            return self._cluster_spec[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None


def _tasks_of(job_name, tasks):
    """{task index: address} from a list of addresses or a dict."""
    if isinstance(tasks, (list, tuple)):
        return dict(enumerate(tasks))
    if isinstance(tasks, dict):
        return {int(index): address for index, address in tasks.items()}
    raise TypeError(
        f"The tasks for job {job_name!r} must be a list or a dictionary from integers to strings."
    )


def _to_cluster_def(cluster_spec):
    cluster_def = ClusterDef()
    # Sorted, so equal clusters serialize to equal bytes.
    for job_name, tasks in sorted(cluster_spec.items(), key=lambda item: str(_text(item[0]))):
        job = cluster_def.job.add()
        job.name = _checked_text(job_name, "Job name")
        for index, address in sorted(tasks.items()):
            job.tasks[index] = _checked_text(address, "Task address")
    return cluster_def


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _checked_text(value, what):
    if not isinstance(value, (str, bytes)):
        raise TypeError(f"{what} {value!r} must be bytes or unicode")
    return _text(value)

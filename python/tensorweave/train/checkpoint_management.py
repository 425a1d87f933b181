"""The `checkpoint` state file and finding checkpoints on disk.

A directory of checkpoints holds each checkpoint's files (TensorFlow's V2
format: `<prefix>.index` and `<prefix>.data-NNNNN-of-NNNNN`; or tensorweave's
older single file `<prefix>.twckpt`; see docs/checkpoint_format.md) and a small
text file, `checkpoint`, naming the latest one and the ones a Saver still
keeps, in TensorFlow's text format (a CheckpointState proto):

    model_checkpoint_path: "model-300"
    all_model_checkpoint_paths: "model-200"
    all_model_checkpoint_paths: "model-300"
    all_model_checkpoint_timestamps: 1763770000.5
    all_model_checkpoint_timestamps: 1763770060.25
    last_preserved_timestamp: 1763769990.0

The state file is replaced atomically (temporary file, fsync, rename,
directory fsync), so a crash leaves either the old or the new state.
"""

import glob
import logging
import os
import uuid

__all__ = [
    "CheckpointState",
    "checkpoint_exists",
    "get_checkpoint_mtimes",
    "get_checkpoint_state",
    "latest_checkpoint",
    "remove_checkpoint",
    "update_checkpoint_state",
]

# tensorweave's older one-file format; V2 checkpoints are found by their index.
CHECKPOINT_SUFFIX = ".twckpt"
V2_INDEX_SUFFIX = ".index"
_DEFAULT_STATE_FILENAME = "checkpoint"
_log = logging.getLogger("tensorweave")


class CheckpointState:
    """What the state file records (the fields of TensorFlow's CheckpointState proto)."""

    def __init__(
        self,
        model_checkpoint_path="",
        all_model_checkpoint_paths=(),
        all_model_checkpoint_timestamps=(),
        last_preserved_timestamp=0.0,
    ):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps)
        self.last_preserved_timestamp = float(last_preserved_timestamp)

    def __eq__(self, other):
        return isinstance(other, CheckpointState) and vars(self) == vars(other)

    def __repr__(self):
        return f"CheckpointState({self.model_checkpoint_path!r})"

    def __str__(self):
        """The text-format serialization written to the state file."""
        lines = [f"model_checkpoint_path: {_quote(self.model_checkpoint_path)}"]
        lines += [
            f"all_model_checkpoint_paths: {_quote(p)}" for p in self.all_model_checkpoint_paths
        ]
        lines += [
            f"all_model_checkpoint_timestamps: {t!r}" for t in self.all_model_checkpoint_timestamps
        ]
        if self.last_preserved_timestamp:
            lines.append(f"last_preserved_timestamp: {self.last_preserved_timestamp!r}")
        return "\n".join(lines) + "\n"

    @classmethod
    def parse(cls, text):
        """Parses the state file's text; ValueError on anything unexpected."""
        state = cls()
        for number, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, colon, value = line.partition(":")
            key, value = key.strip(), value.strip()
            if not colon:
                raise ValueError(f"line {number}: expected 'field: value', got {line!r}")
            if key == "model_checkpoint_path":
                state.model_checkpoint_path = _unquote(value, number)
            elif key == "all_model_checkpoint_paths":
                state.all_model_checkpoint_paths.append(_unquote(value, number))
            elif key == "all_model_checkpoint_timestamps":
                state.all_model_checkpoint_timestamps.append(_parse_float(value, number))
            elif key == "last_preserved_timestamp":
                state.last_preserved_timestamp = _parse_float(value, number)
            else:
                raise ValueError(f"line {number}: unknown field {key!r}")
        return state


def _quote(text):
    """A text-format string literal: printable ASCII kept, the rest escaped."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


_SIMPLE_ESCAPES = {
    "n": 10,
    "r": 13,
    "t": 9,
    "\\": 92,
    "'": 39,
    '"': 34,
    "a": 7,
    "b": 8,
    "f": 12,
    "v": 11,
    "?": 63,
}


def _unquote(literal, number):
    if len(literal) < 2 or literal[0] not in "\"'" or literal[-1] != literal[0]:
        raise ValueError(f"line {number}: expected a quoted string, got {literal!r}")
    body, out, i = literal[1:-1], bytearray(), 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out += char.encode("utf-8")
            i += 1
            continue
        if i + 1 >= len(body):
            raise ValueError(f"line {number}: string ends with a backslash")
        escape = body[i + 1]
        if escape in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[escape])
            i += 2
        elif escape in "01234567":
            digits = body[i + 1 : i + 4]
            digits = digits[: len(digits) - len(digits.lstrip("01234567"))] or digits[0]
            out.append(int(digits, 8) & 0xFF)
            i += 1 + len(digits)
        elif escape in "xX" and i + 2 < len(body):
            hex_digits = body[i + 2 : i + 4]
            hex_digits = (
                hex_digits
                if all(c in "0123456789abcdefABCDEF" for c in hex_digits)
                else hex_digits[:1]
            )
            out.append(int(hex_digits, 16))
            i += 2 + len(hex_digits)
        else:
            raise ValueError(f"line {number}: unknown escape \\{escape}")
    return out.decode("utf-8", errors="surrogateescape")


def _parse_float(value, number):
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"line {number}: {value!r} is not a number") from None


def _state_path(checkpoint_dir, latest_filename):
    return os.path.join(checkpoint_dir, latest_filename or _DEFAULT_STATE_FILENAME)


def _fsync_directory(directory):
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a directory; the rename is all they offer
    finally:
        os.close(fd)


def atomic_write(path, data, durable=True):
    """Replaces `path` with `data` (bytes) so a crash leaves the old or the new
    file. `durable` also fsyncs the file and the directory, so the new file
    survives a power loss too (a process crash never needs that)."""
    temp = f"{path}.tmp-{uuid.uuid4().hex}"
    try:
        with open(temp, "wb") as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.remove(temp)
        except OSError:
            pass
        raise
    if durable:
        _fsync_directory(os.path.dirname(path))


def update_checkpoint_state(
    save_dir,
    model_checkpoint_path,
    all_model_checkpoint_paths=None,
    latest_filename=None,
    all_model_checkpoint_timestamps=None,
    last_preserved_timestamp=None,
    save_relative_paths=False,
):
    """Atomically rewrites `save_dir/checkpoint` to name `model_checkpoint_path`
    as the latest checkpoint and `all_model_checkpoint_paths` as those kept.

    Paths are stored relative to `save_dir` when `save_relative_paths` is set,
    or (as TensorFlow does) when both `save_dir` and the path are relative, so
    the directory can be moved; absolute paths are otherwise kept as given."""
    state_path = _state_path(save_dir, latest_filename)
    if os.path.abspath(state_path) == os.path.abspath(model_checkpoint_path):
        raise RuntimeError(
            f"Save path '{model_checkpoint_path}' conflicts with path used for "
            "checkpoint state. Please use a different save path."
        )
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    timestamps = list(all_model_checkpoint_timestamps or [])
    if timestamps and len(timestamps) != len(paths):
        raise ValueError(
            f"Checkpoint timestamps had {len(timestamps)} entries, but there are "
            f"{len(paths)} checkpoint paths"
        )
    if save_relative_paths or not (os.path.isabs(save_dir) or os.path.isabs(model_checkpoint_path)):
        model_checkpoint_path = _relative_to(model_checkpoint_path, save_dir)
        paths = [_relative_to(p, save_dir) for p in paths]
    state = CheckpointState(
        model_checkpoint_path, paths, timestamps, last_preserved_timestamp or 0.0
    )
    atomic_write(state_path, str(state).encode("utf-8"))


def _relative_to(path, directory):
    """`path` relative to `directory` when it lies inside it, else unchanged."""
    relative = os.path.relpath(os.path.abspath(path), os.path.abspath(directory or "."))
    return path if relative.startswith(os.pardir) else relative


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState recorded in `checkpoint_dir`, with relative paths made
    relative to `checkpoint_dir`; None when there is no readable state file."""
    state_path = _state_path(checkpoint_dir, latest_filename)
    try:
        with open(state_path, "rb") as f:
            text = f.read().decode("utf-8", errors="surrogateescape")
    except FileNotFoundError:
        return None
    except OSError as error:
        _log.warning("Cannot read checkpoint state %s: %s", state_path, error)
        return None
    try:
        state = CheckpointState.parse(text)
    except ValueError as error:
        _log.warning("%s is not a valid checkpoint state file: %s", state_path, error)
        return None
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")
    if not os.path.isabs(state.model_checkpoint_path):
        state.model_checkpoint_path = os.path.join(checkpoint_dir, state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [
        p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)
        for p in state.all_model_checkpoint_paths
    ]
    return state


def checkpoint_exists(checkpoint_prefix):
    """True when a checkpoint was saved under `checkpoint_prefix` (a glob
    pattern is allowed) in either format, or when it names a checkpoint file."""
    for suffix in (V2_INDEX_SUFFIX, CHECKPOINT_SUFFIX):
        if glob.glob(glob.escape(checkpoint_prefix) + suffix) or glob.glob(
            checkpoint_prefix + suffix
        ):
            return True
    return checkpoint_prefix.endswith(CHECKPOINT_SUFFIX) and os.path.isfile(checkpoint_prefix)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint in `checkpoint_dir` (for Saver.restore),
    or None when the state file is missing or names a checkpoint that is gone."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and state.model_checkpoint_path:
        if checkpoint_exists(state.model_checkpoint_path):
            return state.model_checkpoint_path
        _log.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def checkpoint_files(prefix, meta_graph_suffix="meta"):
    """The files of the checkpoint saved under `prefix` that exist (V2 index
    and data shards, or the older single file) and its meta graph's path."""
    data = glob.glob(glob.escape(prefix) + ".data-?????-of-?????")
    return sorted(data) + [
        prefix + V2_INDEX_SUFFIX,
        prefix + CHECKPOINT_SUFFIX,
        f"{prefix}.{meta_graph_suffix}",
    ]


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=None, meta_graph_suffix="meta"):
    """Deletes the files of the checkpoint saved under `checkpoint_prefix`."""
    for path in checkpoint_files(checkpoint_prefix, meta_graph_suffix):
        try:
            os.remove(path)
        except FileNotFoundError:
            pass
        except OSError as error:
            _log.warning("Ignoring: failed to delete %s: %s", path, error)


def get_checkpoint_mtimes(checkpoint_prefixes):
    """Modification times of the checkpoints that exist, in the given order
    (of the index file for V2 checkpoints, as TensorFlow reports)."""
    times = []
    for prefix in checkpoint_prefixes:
        for suffix in (V2_INDEX_SUFFIX, CHECKPOINT_SUFFIX):
            path = prefix + suffix
            if os.path.isfile(path):
                times.append(os.path.getmtime(path))
                break
    return times

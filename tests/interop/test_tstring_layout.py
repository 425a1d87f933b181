"""TF_TString against TensorFlow's own libtensorflow_cc (loaded with ctypes in
the interop Python, as a subprocess): the same calls leave the same 24 bytes
in both libraries (pointers aside, which differ between processes), for
SMALL, LARGE (with TensorFlow's capacity rounding, reuse and halving) and VIEW
elements, and each library reads the other's SMALL and OFFSET bytes alike."""

import json
import pathlib
import struct
import subprocess

import cffi
import pytest
from capi_helpers import header_declarations

REPO = pathlib.Path(__file__).resolve().parents[2]
TIMEOUT_SECONDS = 300

# Each scenario: the calls made on one element, starting from TF_StringInit.
# ("copy", text) is TF_StringCopy; ("view", text) is TF_StringAssignView.
SCENARIOS = {
    "empty": [],
    "small": [("copy", "hello")],
    "largest_small": [("copy", "s" * 22)],
    "smallest_large": [("copy", "L" * 23)],
    "large_31": [("copy", "x" * 31)],
    "large_32": [("copy", "x" * 32)],
    "reused": [("copy", "a" * 100), ("copy", "b" * 60)],
    "halved": [("copy", "a" * 100), ("copy", "c" * 30)],
    "back_to_small": [("copy", "a" * 100), ("copy", "tiny")],
    "view": [("copy", "v"), ("view", "a viewed string")],
}

# What TensorFlow's library does with the scenarios, printed as JSON:
# {name: [hex of the 24 bytes, type, size, capacity, text]}.
TENSORFLOW_SCRIPT = r"""
import ctypes, importlib.util, json, os, sys
root = importlib.util.find_spec("tensorflow").submodule_search_locations[0]
ctypes.CDLL(os.path.join(root, "libtensorflow_framework.so.2"), mode=ctypes.RTLD_GLOBAL)
lib = ctypes.CDLL(os.path.join(root, "libtensorflow_cc.so.2"))
lib.TF_StringGetDataPointer.restype = ctypes.c_void_p
lib.TF_StringGetSize.restype = ctypes.c_size_t
lib.TF_StringGetCapacity.restype = ctypes.c_size_t
lib.TF_StringCopy.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
lib.TF_StringAssignView.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
kept = []
result = {}
for name, calls in json.loads(sys.argv[1]).items():
    element = ctypes.create_string_buffer(24)
    lib.TF_StringInit(element)
    for kind, text in calls:
        data = text.encode()
        kept.append(data)
        (lib.TF_StringCopy if kind == "copy" else lib.TF_StringAssignView)(element, data, len(data))
    size = lib.TF_StringGetSize(element)
    result[name] = [element.raw.hex(), lib.TF_StringGetType(element), size,
                    lib.TF_StringGetCapacity(element),
                    ctypes.string_at(lib.TF_StringGetDataPointer(element), size).decode()]
    lib.TF_StringDealloc(element)
# Reading bytes another library wrote: SMALL and OFFSET (no pointers in them).
reads = []
for hex_bytes in json.loads(sys.argv[2]):
    block = ctypes.create_string_buffer(bytes.fromhex(hex_bytes), 48)
    size = lib.TF_StringGetSize(block)
    reads.append([lib.TF_StringGetType(block), size,
                  ctypes.string_at(lib.TF_StringGetDataPointer(block), size).decode()])
print(json.dumps({"scenarios": result, "reads": reads}))
"""

# Two 24-byte elements side by side: a SMALL one, and an OFFSET one whose
# bytes are the second block.
FOREIGN_BLOCKS = [
    (bytes([3 << 2]) + b"abc" + bytes(20) + bytes(24)).hex(),
    (struct.pack("<III", 6 << 2 | 2, 24, 1) + bytes(12) + b"offset" + bytes(18)).hex(),
]


def pointer_free(hex_bytes, form):
    """The element's bytes with its pointer field zeroed: LARGE keeps one at
    16..24, VIEW at 8..16; a SMALL one's bytes past its NUL are leftovers
    (the old pointer among them), which neither library clears."""
    raw = bytearray.fromhex(hex_bytes)
    if form == 0:
        used = (raw[0] >> 2) + 2
        raw[used:] = bytes(24 - used)
    elif form == 1:
        raw[16:24] = bytes(8)
    elif form == 3:
        raw[8:16] = bytes(8)
    return raw.hex()


@pytest.fixture(scope="module")
def tensorweave_lib():
    ffi = cffi.FFI()
    ffi.cdef(header_declarations(REPO / "c_api" / "c_api.h"))
    return ffi, ffi.dlopen(str(REPO / "build" / "lib" / "libtensorweave.so"))


@pytest.fixture(scope="module")
def tensorflow_results(tf_python):
    done = subprocess.run(
        [
            tf_python,
            "-c",
            TENSORFLOW_SCRIPT,
            json.dumps(SCENARIOS),
            json.dumps(FOREIGN_BLOCKS),
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_here(ffi, lib, calls):
    element = ffi.new("TF_TString*")
    lib.TF_StringInit(element)
    kept = []
    for kind, text in calls:
        data = ffi.new("char[]", text.encode())
        kept.append(data)
        (lib.TF_StringCopy if kind == "copy" else lib.TF_StringAssignView)(element, data, len(text))
    size = lib.TF_StringGetSize(element)
    result = [
        ffi.buffer(element, 24)[:].hex(),
        lib.TF_StringGetType(element),
        size,
        lib.TF_StringGetCapacity(element),
        ffi.buffer(lib.TF_StringGetDataPointer(element), size)[:].decode(),
    ]
    lib.TF_StringDealloc(element)
    return result


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_calls_leave_the_same_bytes(tensorweave_lib, tensorflow_results, name):
    ffi, lib = tensorweave_lib
    ours = run_here(ffi, lib, SCENARIOS[name])
    theirs = tensorflow_results["scenarios"][name]
    assert ours[1:] == theirs[1:]
    assert pointer_free(ours[0], ours[1]) == pointer_free(theirs[0], theirs[1])


def test_both_read_small_and_offset_bytes_alike(tensorweave_lib, tensorflow_results):
    ffi, lib = tensorweave_lib
    ours = []
    for hex_bytes in FOREIGN_BLOCKS:
        block = ffi.new("char[]", bytes.fromhex(hex_bytes))
        element = ffi.cast("TF_TString*", block)
        size = lib.TF_StringGetSize(element)
        text = ffi.buffer(lib.TF_StringGetDataPointer(element), size)[:].decode()
        ours.append([lib.TF_StringGetType(element), size, text])
    assert ours == tensorflow_results["reads"] == [[0, 3, "abc"], [2, 6, "offset"]]

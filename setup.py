"""Builds the tensorweave Python package.

`python setup.py build_ext --inplace` (what `make python` runs) and
`pip install .` both:
  1. build build/lib/libtensorweave.so with `make lib` if it is missing,
  2. generate tensorweave/proto/*_pb2.py with protoc,
  3. generate the SWIG wrapper from swig/tf_session.i (the .py goes into the
     package, the C++ into swig/tf_session_wrap.cc),
  4. compile tensorweave._pywrap_tensorweave with rpath $ORIGIN and put
     libtensorweave.so next to it (a copy in a wheel, a symlink in place), so
     no LD_LIBRARY_PATH is needed.
None of the generated files are committed.
"""

import filecmp
import glob
import os
import shutil
import subprocess

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
PACKAGE_DIR = os.path.join("python", "tensorweave")
LIBRARY = os.path.join("build", "lib", "libtensorweave.so")
SWIG_INTERFACE = os.path.join("swig", "tf_session.i")
SWIG_WRAPPER = os.path.join("swig", "tf_session_wrap.cc")
SWIG_DEPENDENCIES = [
    SWIG_INTERFACE,
    os.path.join("swig", "tf_session_helper.h"),
    os.path.join("swig", "checkpoint_reader_helper.h"),
    os.path.join("swig", "py_func_helper.h"),
    os.path.join("c_api", "c_api.h"),
    os.path.join("c_api", "pkgconfig.pc.in"),
]


def _run(command):
    print(" ".join(command))
    subprocess.check_call(command, cwd=ROOT)


def _copy_if_changed(source, destination):
    """Leaves an up-to-date file alone so its timestamp does not force rebuilds."""
    if not os.path.exists(destination) or not filecmp.cmp(source, destination, shallow=False):
        shutil.copyfile(source, destination)


def build_library():
    if not os.path.exists(os.path.join(ROOT, LIBRARY)):
        _run(["make", "-j2", "lib"])


def generate_protos():
    protos = sorted(glob.glob(os.path.join(ROOT, "runtime", "proto", "*.proto")))
    _run(
        ["protoc", "-Itensorweave/proto=runtime/proto", "--python_out=python"]
        + [os.path.relpath(p, ROOT) for p in protos]
    )


def generate_swig_wrapper():
    """SWIG writes into build/swig first; only changed outputs are copied on."""
    staging = os.path.join(ROOT, "build", "swig")
    os.makedirs(staging, exist_ok=True)
    _run(
        [
            "swig",
            "-c++",
            "-python",
            "-I.",
            "-outdir",
            staging,
            "-o",
            os.path.join(staging, "tf_session_wrap.cc"),
            SWIG_INTERFACE,
        ]
    )
    _copy_if_changed(os.path.join(staging, "tf_session_wrap.cc"), os.path.join(ROOT, SWIG_WRAPPER))
    _copy_if_changed(
        os.path.join(staging, "pywrap_tensorweave.py"),
        os.path.join(ROOT, PACKAGE_DIR, "pywrap_tensorweave.py"),
    )


class BuildExt(build_ext):
    """Generates everything the extension and the package need, then compiles."""

    def run(self):
        build_library()
        generate_protos()
        generate_swig_wrapper()
        import numpy

        for extension in self.extensions:
            extension.include_dirs.append(numpy.get_include())
        super().run()
        if self.inplace:
            link_library_in_place()
        else:
            target = os.path.join(self.build_lib, "tensorweave")
            os.makedirs(target, exist_ok=True)
            shutil.copyfile(os.path.join(ROOT, LIBRARY), os.path.join(target, "libtensorweave.so"))
            copy_c_api_headers(target)


def copy_c_api_headers(package):
    """The wheel carries the C API as TensorFlow's wheel does: the headers in
    tensorweave/include/tensorflow/c/ and a relocatable pkg-config file in
    tensorweave/lib/pkgconfig/ whose library is the package's own copy, so
    `PKG_CONFIG_PATH=$(python -c ...)/lib/pkgconfig pkg-config --cflags --libs
    tensorweave` builds a TensorFlow C program against the installed wheel."""
    _run(["make", "headers"])
    headers = os.path.join(package, "include", "tensorflow", "c")
    os.makedirs(headers, exist_ok=True)
    for header in glob.glob(os.path.join(ROOT, "build", "include", "tensorflow", "c", "*.h")):
        shutil.copyfile(header, os.path.join(headers, os.path.basename(header)))
    pkgconfig = os.path.join(package, "lib", "pkgconfig")
    os.makedirs(pkgconfig, exist_ok=True)
    with open(os.path.join(ROOT, "c_api", "pkgconfig.pc.in")) as template:
        text = template.read()
    text = text.replace("@PREFIX@", "${pcfiledir}/../..").replace("@LIBDIR@", "${prefix}")
    text = text.replace("@NAME@", "tensorweave").replace("@LIBRARY@", "tensorweave")
    with open(os.path.join(pkgconfig, "tensorweave.pc"), "w") as out:
        out.write(text)


def link_library_in_place():
    """The in-place package gets a symlink, not a copy: a process that also
    loads build/lib/libtensorweave.so directly (the cffi C API tests) must see
    one library, or its static registrations (protobuf descriptors, ops) would
    run twice. The loader recognizes the same file behind both paths."""
    link = os.path.join(ROOT, PACKAGE_DIR, "libtensorweave.so")
    target = os.path.relpath(os.path.join(ROOT, LIBRARY), os.path.dirname(link))
    if os.path.islink(link) and os.readlink(link) == target:
        return
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(target, link)


class BuildPy(build_py):
    """build_py normally runs first and would miss the generated modules."""

    def run(self):
        self.run_command("build_ext")
        super().run()


extension = Extension(
    "tensorweave._pywrap_tensorweave",
    sources=[
        SWIG_WRAPPER,
        os.path.join("swig", "tf_session_helper.cc"),
        os.path.join("swig", "ndarray_tensor.cc"),
        os.path.join("swig", "checkpoint_reader_helper.cc"),
        os.path.join("swig", "py_func_helper.cc"),
        os.path.join("swig", "partial_run_helper.cc"),
    ],
    depends=SWIG_DEPENDENCIES + [os.path.join("swig", "ndarray_tensor.h")],
    # build/gen: the generated protobuf headers the runtime's tensor types
    # include (swig/py_func_helper.cc converts runtime tensors).
    include_dirs=[ROOT, os.path.join(ROOT, "build", "gen")],
    library_dirs=[os.path.join(ROOT, "build", "lib")],
    libraries=["tensorweave"],
    # The copy of libtensorweave.so sits next to the extension.
    extra_link_args=["-Wl,-rpath,$ORIGIN"],
    extra_compile_args=["-std=c++17", "-O2", "-Wno-unused-parameter"],
    language="c++",
)

# Every package under python/, found rather than listed, so a new
# subpackage (train, layers, ...) cannot be left out of the wheel.
PACKAGES = find_packages(os.path.join(ROOT, "python"))

if __name__ == "__main__":
    setup(
        name="tensorweave",
        version="0.1.0",
        description="A dataflow-graph runtime with the architecture of TensorFlow 1.x graph mode",
        package_dir={"": "python"},
        packages=PACKAGES,
        ext_modules=[extension],
        cmdclass={"build_ext": BuildExt, "build_py": BuildPy},
        install_requires=["numpy", "protobuf>=4.21,<5", "ml_dtypes"],
        python_requires=">=3.8",
    )

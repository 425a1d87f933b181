"""Keeps the C API honest: every TF_/TW_ function the library exports has a
regression test, every function the header declares is exported, no test
names a function that does not exist, and every function of TensorFlow's
core C headers (fixtures/tensorflow_c_api_functions.txt, written by
fixtures/list_tensorflow_c_api.py from TensorFlow 2.21's headers) is
exported, except the ones listed below with their reasons.

A test covers a function when its name starts with test_<function> (the
function name ends at the next underscore, as C API names have none after
their prefix) or when it carries @pytest.mark.covers("<function>", ...).
"""

import ast
import pathlib
import re
import subprocess

from capi_helpers import header_declarations

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
LIBRARY = REPO / "build" / "lib" / "libtensorweave.so"
API_NAME = re.compile(r"^(?:TF|TW)_[A-Za-z0-9]+$")
TEST_NAME = re.compile(r"^test_((?:TF|TW)_[A-Za-z0-9]+)")
TENSORFLOW_FUNCTIONS = HERE / "fixtures" / "tensorflow_c_api_functions.txt"

# Not exported yet, each for a reason (docs/c_api.md, "What is missing").
NOT_YET_EXPORTED = set()


def exported_functions():
    """TF_/TW_ functions in the library's dynamic symbol table (nm -D)."""
    listing = subprocess.run(
        ["nm", "-D", "--defined-only", str(LIBRARY)], check=True, capture_output=True, text=True
    ).stdout
    names = set()
    for line in listing.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] == "T" and API_NAME.match(fields[2]):
            names.add(fields[2])
    return names


def declared_functions():
    """Function names the header declares."""
    text = re.sub(
        r"/\*.*?\*/", "", header_declarations(REPO / "c_api" / "c_api.h"), flags=re.DOTALL
    )
    return set(re.findall(r"\b((?:TF|TW)_[A-Za-z0-9]+)\s*\(", text))


def covered_functions():
    """Function name -> tests covering it, read from the test modules' source."""
    covered = {}
    for path in sorted(HERE.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                continue
            names = set()
            match = TEST_NAME.match(node.name)
            if match:
                names.add(match.group(1))
            for decorator in node.decorator_list:
                if (
                    isinstance(decorator, ast.Call)
                    and ast.unparse(decorator.func) == "pytest.mark.covers"
                ):
                    names.update(arg.value for arg in decorator.args)
            for name in names:
                covered.setdefault(name, []).append(f"{path.name}::{node.name}")
    return covered


def tensorflow_functions():
    """The functions TensorFlow 2.21's core C headers declare."""
    lines = TENSORFLOW_FUNCTIONS.read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def test_exports_every_tensorflow_function():
    missing = tensorflow_functions() - exported_functions()
    expected_missing = NOT_YET_EXPORTED
    assert sorted(missing - expected_missing) == [], "TensorFlow C API functions not exported"
    # A function that lands must leave the lists (so they stay true).
    assert sorted(expected_missing - missing) == [], "exported now: remove from the lists above"


def test_exports_tensorflow_list_is_tensorflows():
    # The fixture lists the real headers' functions (210 in TensorFlow
    # 2.21), and the exception lists name only functions of it.
    functions = tensorflow_functions()
    assert len(functions) == 210
    assert {"TF_NewGraph", "TF_SessionRun", "TF_StringInit", "TF_SetPayload"} <= functions
    assert NOT_YET_EXPORTED <= functions


def test_exports_every_function_has_a_test():
    missing = sorted(exported_functions() - set(covered_functions()))
    assert not missing, f"exported C API functions without a test: {missing}"


def test_exports_match_the_header():
    exported, declared = exported_functions(), declared_functions()
    assert sorted(declared - exported) == [], "declared in c_api.h but not exported"
    assert sorted(exported - declared) == [], "exported but not declared in c_api.h"


def test_exports_tests_name_real_functions():
    unknown = sorted(set(covered_functions()) - exported_functions())
    assert not unknown, f"tests name functions the library does not export: {unknown}"


def test_exports_count_is_stable():
    # A reminder to update the report and docs when the surface changes.
    assert len(exported_functions()) == len(declared_functions()) > 100


def test_header_compiles_alone_as_strict_c99_and_as_cxx(tmp_path):
    source = tmp_path / "only_header.c"
    source.write_text('#include "c_api/c_api.h"\nint main(void) { return TF_OK; }\n')
    for compiler, flags in [("cc", ["-std=c99", "-pedantic"]), ("c++", ["-x", "c++"])]:
        subprocess.run(
            [
                compiler,
                *flags,
                "-Wall",
                "-Wextra",
                "-Werror",
                f"-I{REPO}",
                "-fsyntax-only",
                str(source),
            ],
            check=True,
        )

"""The fuzzers in tools/fuzz (built by `make test` into build/tools/fuzz): a
case is reproducible from its seed and index, the kernel sweep reaches every
registered op, and a case that crashes, hangs or returns INTERNAL is survived,
counted and reported with a reproducer. Whether the fuzzers find failures in
the runtime is `make test-fuzz`'s business, not these tests'."""

import pathlib
import re
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
FUZZ_DIR = REPO / "build" / "tools" / "fuzz"
FUZZERS = ["graph_fuzzer", "op_sweep"]
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$")


def run(name, *args):
    binary = FUZZ_DIR / name
    if not binary.exists():
        pytest.fail(f"{binary} is missing: run `make build/tools/fuzz/{name}`")
    return subprocess.run(
        [str(binary), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(REPO),
    )


def counts(stdout):
    last = stdout.strip().splitlines()[-1]
    match = SUMMARY.match(last)
    assert match, f"the last line is not `N passed, M failed`: {last!r}"
    return int(match[1]), int(match[2])


@pytest.mark.parametrize("name", FUZZERS)
def test_crash_hang_and_internal_status_are_counted_and_reproducible(name):
    completed = run(
        name,
        "--seed",
        "5",
        "--max-cases",
        "6",
        "--timeout",
        "2",
        "--brief",
        "--inject",
        "1:crash",
        "--inject",
        "3:hang",
        "--inject",
        "4:internal",
    )
    passed, failed = counts(completed.stdout)
    assert passed + failed == 6
    assert failed >= 3
    assert completed.returncode == 1
    lines = completed.stdout.splitlines()
    # Under ASan the injected SIGSEGV is caught and reported by the sanitizer.
    expected = {
        1: "(signal 11|sanitizer report)",
        3: r"hang \(> 2 s\)",
        4: "INTERNAL/UNKNOWN status",
    }
    for case, kind in expected.items():
        fail = [line for line in lines if line.startswith(f"FAIL case {case} (seed 5): ")]
        assert len(fail) == 1 and re.search(kind, fail[0]), fail
        assert any(line.endswith(f"{name} --seed 5 --case {case}") for line in lines)


@pytest.mark.parametrize("name", FUZZERS)
def test_a_case_is_the_same_graph_every_time(name):
    first = run(name, "--seed", "9", "--case", "7", "--print")
    again = run(name, "--seed", "9", "--case", "7", "--print")
    other = run(name, "--seed", "9", "--case", "8", "--print")
    assert first.returncode == 0, first.stderr
    assert "node {" in first.stdout
    assert first.stdout == again.stdout
    assert first.stdout != other.stdout


def test_sweep_reaches_every_registered_op_within_one_round():
    listing = run("op_sweep", "--verbose", "--max-cases", "0")
    number = int(re.search(r"sweeping (\d+) registered ops", listing.stdout)[1])
    completed = run(
        "op_sweep",
        "--verbose",
        "--seed",
        "2",
        "--max-cases",
        str(number),
        "--timeout",
        "3",
        "--brief",
    )
    swept = set(re.findall(r"^case \d+: (\S+) \|", completed.stdout, flags=re.MULTILINE))
    assert len(swept) == number
    assert {"MatMul", "Conv2D", "StridedSlice", "Range", "_Recv"} <= swept
    counts(completed.stdout)

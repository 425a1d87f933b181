"""GraphDefs with function libraries (tests/fixtures/tf_functions, recorded
from TensorFlow 2.21) through the C API: TF_GraphImportGraphDef keeps the
library, TF_GraphToGraphDef writes it back, and TF_SessionRun reproduces
every recorded case; a library that calls a missing function is
INVALID_ARGUMENT and adds nothing."""

import pathlib
import re

import numpy as np
import pytest
from capi_helpers import CODES

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "tf_functions"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.pb"))


def recorded_cases(name):
    """[(feeds, fetches)] per recorded case, keyed by tensor name."""
    data = np.load(FIXTURES / f"{name}.npz")
    cases = {}
    for key in data.files:
        kind, k, tensor = re.fullmatch(r"(feed|fetch)(\d+)__(.+)", key).groups()
        cases.setdefault(int(k), ({}, {}))[kind == "fetch"][tensor] = data[key]
    return [cases[k] for k in sorted(cases)]


def test_function_fixtures_are_present():
    assert len(NAMES) >= 9


@pytest.mark.parametrize("name", NAMES)
def test_function_fixture_through_graph_import_and_session_run(api, lib, graph, name):
    graph_def = (FIXTURES / f"{name}.pb").read_bytes()
    code, message = api.import_graph_def(graph, graph_def)
    assert code == CODES["OK"], message
    original = api.pb.GraphDef.FromString(graph_def)
    written = api.graph_def(graph)
    assert sorted(f.signature.name for f in written.library.function) == sorted(
        f.signature.name for f in original.library.function
    )

    def output(tensor):
        node, _, index = tensor.partition(":")
        oper = lib.TF_GraphOperationByName(graph, node.encode())
        assert oper != api.ffi.NULL, tensor
        return oper, int(index or 0)

    session = api.new_session(graph)
    try:
        for feeds, fetches in recorded_cases(name):
            results = api.run(
                session,
                feeds=[(output(t), v) for t, v in feeds.items()],
                fetches=[output(t) for t in fetches],
            )
            for (tensor, want), got in zip(fetches.items(), results):
                assert got.dtype == want.dtype, f"{name} {tensor}"
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=tensor)
    finally:
        status = lib.TF_NewStatus()
        lib.TF_DeleteSession(session, status)
        lib.TF_DeleteStatus(status)


def test_a_call_of_a_missing_function_is_invalid_argument(api, graph):
    graph_def = api.pb.GraphDef.FromString((FIXTURES / "cond.pb").read_bytes())
    for node in graph_def.node:
        if node.op == "StatelessIf":
            node.attr["else_branch"].func.name = "missing_branch"
    code, message = api.import_graph_def(graph, graph_def)
    assert code == CODES["INVALID_ARGUMENT"], message
    assert "missing_branch" in message
    assert api.operation_names(graph) == []
    assert len(api.graph_def(graph).library.function) == 0

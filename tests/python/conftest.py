"""Shared setup: the in-place package under python/ and the helpers under
tools/ are importable without PYTHONPATH, and each test starts with a fresh
default graph."""

import os
import sys

import pytest

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
for _path in (os.path.join(_REPO, "python"), os.path.join(_REPO, "tools")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import tensorweave as tf


@pytest.fixture(autouse=True)
def fresh_default_graph():
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()

"""Shared fixtures: the repository's examples, and a fresh default world for
every test (the world is per process)."""

import pathlib

import pytest

import hir
from hir import _native

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def examples():
    return ROOT / "examples"


@pytest.fixture(autouse=True)
def fresh_world():
    _native.shutdown()
    yield
    _native.shutdown()

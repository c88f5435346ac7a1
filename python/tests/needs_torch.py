"""torch for the tests that need it: a skip where it is not installed (a
developer without torch), a failure under scripts/python.sh, which sets
HIR_TEST_REQUIRE_TORCH=1 so that CI never skips them silently."""

import os

import pytest


def import_torch():
    """The torch module, or a skip of the calling test module."""
    try:
        import torch
    except ImportError as error:
        if os.environ.get("HIR_TEST_REQUIRE_TORCH") == "1":
            raise RuntimeError(f"HIR_TEST_REQUIRE_TORCH=1 but torch does not import: {error}") from error
        pytest.skip(f"torch does not import: {error}", allow_module_level=True)
    return torch

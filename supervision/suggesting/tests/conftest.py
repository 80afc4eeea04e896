"""Fixtures of the suggester's tests: the shipped model, or a copy of it a test may damage."""

from __future__ import annotations

import shutil

import pytest

from supervision.suggesting.engine.model import weights_path
from supervision.suggesting.loading import DEFAULT_MODEL_PATH, forget_loaded_models


@pytest.fixture(autouse=True)
def _fresh_model_per_test():
    forget_loaded_models()
    yield
    forget_loaded_models()


@pytest.fixture
def model_copy(tmp_path, settings):
    """A copy of the shipped model that the portal is told to use (``SUGGESTER_MODEL_PATH``)."""
    target = tmp_path / "model" / "suggester.json"
    target.parent.mkdir()
    shutil.copy(DEFAULT_MODEL_PATH, target)
    shutil.copy(weights_path(DEFAULT_MODEL_PATH), weights_path(target))
    settings.SUGGESTER_MODEL_PATH = str(target)
    return target

"""Parity tests compare ember with PyTorch; skipped where torch is not installed.

``EMBER_PARITY_DEVICE=cuda`` runs ember's side of ``compare()`` on the GPU (CuPy);
``EMBER_PARITY_DEVICE=fake-cuda`` on the stand-in cuda module of tests/backend/fake_cuda.py,
which refuses host arrays as CuPy does (see tests/parity/compare.py)."""
import os

import pytest

pytest.importorskip("torch")


@pytest.fixture(autouse=True, scope="session")
def _parity_device():
    """Installs the stand-in cuda module for the session when the fake device is asked for."""
    if os.environ.get("EMBER_PARITY_DEVICE") != "fake-cuda":
        yield
        return
    from tests.backend import fake_cuda as fake
    fake.install()
    yield
    fake.uninstall()

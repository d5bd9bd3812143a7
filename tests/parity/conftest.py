"""Parity tests compare ember with PyTorch; skipped where torch is not installed."""
import pytest

pytest.importorskip("torch")

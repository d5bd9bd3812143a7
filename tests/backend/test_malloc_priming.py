"""Big arrays freed by one training step are reused by the next without fresh pages
(ember/backend/process.py primes glibc's adaptive mmap threshold at import)."""
import os
import subprocess
import sys

import pytest

CODE = """
import resource, ember
x = ember.randn(64, 32, 28, 28)          # 6.4 MB, like the demo CNN's first activation
def step():
    a = x * 2.0                            # fresh 6.4 MB arrays, freed at the end
    b = a.relu()
    c = b + a
    return float(c.sum())
for _ in range(3):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    step()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)
"""


def _glibc():
    try:
        return bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (AttributeError, ValueError, OSError):
        return False


@pytest.mark.skipif(not _glibc(), reason="glibc's malloc only")
def test_big_arrays_are_not_refaulted_every_step():
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    faults = float(done.stdout.split()[-1])
    # Re-faulting three 6.4 MB arrays would be ~4,700 page faults per step.
    assert faults < 300, f"{faults} minor page faults per step"

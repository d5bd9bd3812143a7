"""Run extension-cpp's muladd operators on ember: values, gradients, the out variant, opcheck.

    python examples/extensions/muladd/demo.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ember  # noqa: E402
import extension_cpp  # noqa: E402  (compiles csrc/muladd.cpp on first use)

print("library:", os.path.basename(extension_cpp.library_path))
ember.manual_seed(0)
a = ember.randn(3, requires_grad=True)
b = ember.randn(3, requires_grad=True)
out = extension_cpp.ops.mymuladd(a, b, 1.0)
print("mymuladd:", out)
print("a * b + 1:", a * b + 1)
out.sum().backward()
print("grad a == b:", ember.equal(a.grad, b.detach()),
      " grad b == a:", ember.equal(b.grad, a.detach()))

c = ember.empty(3)
extension_cpp.ops.myadd_out(a.detach(), b.detach(), c)
print("myadd_out:", c)

print(ember.ops.extension_cpp.mymuladd.default)
try:
    extension_cpp.ops.mymuladd(a.double(), b, 1.0)
except RuntimeError as e:
    print("RuntimeError:", e)

for name, result in ember.library.opcheck(ember.ops.extension_cpp.mymuladd.default,
                                          (a, b, 2.0)).items():
    print(f"opcheck {name}: {result}")

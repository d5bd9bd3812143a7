"""``ember.library``: operators written in Python, as ``torch.library``.

``Library`` defines operators from schema strings and registers kernels per dispatch key;
``register_autograd``, ``register_fake``, ``register_kernel`` and ``register_vmap`` attach
a gradient formula, a fake (shape-only) implementation, device kernels and a vmap rule.
The operators are reached as ``ember.ops.<namespace>.<name>``.

>>> import ember
>>> lib = ember.library.Library("libdoc", "DEF")
>>> lib.define("add_one(Tensor x) -> Tensor")
'add_one'
>>> lib.impl("add_one", lambda x: x + 1, "CPU")
>>> ember.ops.libdoc.add_one(ember.zeros(2))
tensor([1., 1.])
"""
from ._library import Library, define, impl  # noqa: F401
from ._dispatch import fallthrough_kernel, OpOverload, OpOverloadPacket  # noqa: F401
from ._registration import (register_autograd, register_fake, register_kernel,  # noqa: F401
                            register_vmap, impl_abstract, register_autocast, get_kernel,
                            register_torch_dispatch, triton_op, wrap_triton)
from ._custom_ops import custom_op, infer_schema, get_ctx, CustomOpDef  # noqa: F401
from ._opcheck import opcheck, OpCheckError  # noqa: F401
from ._library import _scoped_library  # noqa: F401

__all__ = ["Library", "impl", "define", "fallthrough_kernel", "impl_abstract",
           "register_autocast", "register_fake", "register_torch_dispatch", "register_vmap",
           "get_ctx", "get_kernel", "custom_op", "triton_op", "wrap_triton", "infer_schema",
           "register_autograd", "register_kernel", "opcheck", "CustomOpDef", "OpCheckError"]

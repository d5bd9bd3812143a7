"""Function transforms: gradients, Jacobians and Jacobian products of Python functions
(PyTorch's ``torch.func``), and calling a module with other parameters.

>>> import ember
>>> from ember.func import grad
>>> grad(lambda x: (x ** 2).sum())(ember.tensor([1., 2.]))
tensor([2., 4.])
"""
from .._functorch.eager_transforms import (grad, grad_and_value, vjp, jvp, jacrev,  # noqa: F401
                                            jacfwd, hessian)
from .._functorch.functional_call import functional_call, stack_module_state  # noqa: F401

from .._functorch.vmap import vmap  # noqa: F401
from .._functorch.linearize import linearize, functionalize  # noqa: F401

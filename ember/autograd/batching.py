"""The seam through which ``ember._functorch`` (vmap) sees ops while a vmap runs.

vmap sits in a higher layer than the ops and autograd, so it installs its dispatcher
here while a vmap is active: ``hooks[0]`` is None otherwise, and every op pays one test
of it. The dispatcher has three entry points: ``primitive(cls, args)`` (built-in ops),
``function(cls, args, kwargs)`` (user ``autograd.Function``s) and
``grad(outputs, inputs, grad_outputs, ...)`` (``autograd.grad``); each returns
``NotImplemented`` when no batched tensor takes part.
"""
hooks = [None]

#: ``ember._functorch.vmap`` itself, registered when it is imported: ``autograd.grad``'s
#: ``is_grads_batched`` and gradcheck's ``check_batched_grad`` run through it.
vmap_function = [None]

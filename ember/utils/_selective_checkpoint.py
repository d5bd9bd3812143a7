"""Selective activation checkpointing: a policy picks the ops of a checkpointed region
whose outputs are kept, so the recomputation in backward does not run them again.

``create_selective_checkpoint_contexts(policy)`` makes the two contexts that
``checkpoint(fn, ..., use_reentrant=False, context_fn=...)`` runs the forward and the
recomputation under: two dispatch modes sharing one store. In the forward, each op runs
and the policy (``policy(ctx, op, *args, **kwargs)``, or a list of ops to save) decides
whether its outputs go to the store (``MUST_SAVE``/``PREFER_SAVE``: detached); in the
recomputation, the n-th call of an op whose outputs were stored returns them instead of
running, the others run again. Ops are ``ember.ops.aten`` overloads, which are ember's
Primitives: ``x @ y`` is ``aten.matmul.default`` here where PyTorch has ``aten.mm``.

>>> import functools, ember
>>> from ember.utils.checkpoint import checkpoint
>>> x = ember.randn(3, requires_grad=True)
>>> context_fn = functools.partial(create_selective_checkpoint_contexts,
...                                [ember.ops.aten.sin.default])
>>> out = checkpoint(lambda t: t.sin().exp().sum(), x, use_reentrant=False,
...                  context_fn=context_fn)
>>> out.backward(); bool(ember.allclose(x.grad, x.sin().exp() * x.cos()))
True
"""
import collections
import enum

from .._tensor import Tensor
from .._functorch.pytree import tree_map
from ..ops import aten
from ._python_dispatch import TorchDispatchMode

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext", "SAC_IGNORED_OPS",
           "create_selective_checkpoint_contexts"]


class CheckpointPolicy(enum.Enum):
    """Whether an op's outputs are kept for backward (``*_SAVE``) or recomputed
    (``*_RECOMPUTE``); ``MUST_*`` and ``PREFER_*`` differ only for compilers (ember has
    none). ``*_CPU_OFFLOAD`` is for compilers too: run eagerly, as here, it recomputes, as
    in PyTorch."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVING = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)


class SelectiveCheckpointContext:
    """What a policy function is told about the op: ``is_recompute`` (always False: the
    policy is asked in the forward only) and ``op_output``, the op's outputs."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


#: ops the policy never sees: checkpointing itself runs more or fewer of them
SAC_IGNORED_OPS = {aten.detach.default}

_RECOMPUTE = object()
_CONSUMED = object()
_MISMATCH = ("This can happen if the operations in the checkpointed region are "
             "nondeterministic or depend on global state that changed between forward and "
             "backward.")


def _policy_from_bool(save):
    return CheckpointPolicy.MUST_SAVE if save else CheckpointPolicy.PREFER_RECOMPUTE


class _Versioned:
    """A stored output and its version, to refuse one mutated since it was stored."""
    __slots__ = ("value", "version")

    def __init__(self, value):
        if isinstance(value, Tensor):
            value = value.detach()
        self.value = value
        self.version = value._version if isinstance(value, Tensor) else None

    def get(self, allow_mutation):
        if self.version is not None and not allow_mutation \
                and self.value._version != self.version:
            raise RuntimeError("Tensor cached during selective activation checkpoint has been "
                               "mutated")
        return self.value


class _CachingMode(TorchDispatchMode):
    """The forward's mode: runs each op, asks the policy, stores what it says to save."""

    def __init__(self, policy_fn, storage):
        super().__init__()
        self.policy_fn, self.storage = policy_fn, storage
        self.counts = collections.defaultdict(int)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = {} if kwargs is None else kwargs
        out = func(*args, **kwargs)
        if func in SAC_IGNORED_OPS:
            return out
        index = self.counts[func]
        self.counts[func] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out),
                                func, *args, **kwargs)
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        self.storage[func][index] = (tree_map(_Versioned, out) if policy in _SAVING
                                     else _RECOMPUTE)
        return out


class _CachedMode(TorchDispatchMode):
    """The recomputation's mode: hands out the stored outputs, reruns the other ops."""

    def __init__(self, storage, allow_cache_entry_mutation):
        super().__init__()
        self.storage, self.allow_mutation = storage, allow_cache_entry_mutation
        self.counts = collections.defaultdict(int)

    def __enter__(self):
        self.counts.clear()  # a second backward (retain_graph) finds the entries consumed
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = {} if kwargs is None else kwargs
        if func in SAC_IGNORED_OPS:
            return func(*args, **kwargs)
        index = self.counts[func]
        self.counts[func] += 1
        entries = self.storage.get(func)
        if entries is None:
            raise RuntimeError(f"{func} encountered during backward but not found in storage. "
                               f"{_MISMATCH}")
        entry = entries.get(index)
        if entry is None:
            raise RuntimeError(f"{func} invocation index {index} encountered during backward "
                               f"but not found in storage. {_MISMATCH}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to "
                               "backward once on any region computed under selective "
                               "activation checkpoint.")
        if entry is _RECOMPUTE:
            return func(*args, **kwargs)
        entries[index] = _CONSUMED
        return tree_map(lambda v: v.get(self.allow_mutation), entry)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The ``(forward, recompute)`` contexts of selective checkpointing, for
    ``checkpoint``'s ``context_fn``: ``policy_fn_or_list`` is
    ``policy(ctx, op, *args, **kwargs) -> CheckpointPolicy`` (or a bool: True saves), or a
    list of ``ember.ops.aten`` overloads to save (all others are recomputed). A stored
    output mutated before backward raises unless ``allow_cache_entry_mutation``.
    See the module docstring for an example."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, aten.OpOverload):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload.For "
                         "example, if you have `torch.ops.aten.mm`, change it to "
                         "`torch.ops.aten.mm.default`."
                         if isinstance(op, aten.OpOverloadPacket) else "")
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} "
                                 f"of type {type(op)}. {extra}")
        ops = list(policy_fn_or_list)

        def policy_fn(ctx, op, *args, **kwargs):
            return (CheckpointPolicy.MUST_SAVE if op in ops
                    else CheckpointPolicy.PREFER_RECOMPUTE)
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = collections.defaultdict(dict)
    return _CachingMode(policy_fn, storage), _CachedMode(storage, allow_cache_entry_mutation)

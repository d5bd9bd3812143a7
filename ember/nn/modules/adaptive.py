"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2016). Frequent
classes (below the first cutoff) are scored by a head layer together with one entry per
cluster of rarer classes; each cluster has its own two-layer projection (narrower by
``div_value`` per cluster) and softmax, entered with the head's log probability of it."""
from __future__ import annotations

from collections import namedtuple

from ... import _functions as _F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module
from .. import functional as F

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])

_BAD_CUTOFFS = ("cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1")


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax over ``n_classes`` classes split at ``cutoffs``; ``forward(input,
    target)`` gives each target's log probability and the mean negative log likelihood.

    >>> import ember
    >>> _ = ember.manual_seed(0)
    >>> asm = ember.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4], div_value=2.0)
    >>> out = asm(ember.randn(3, 8), ember.tensor([0, 5, 9]))
    >>> out.output.shape, out.loss.shape
    (ember.Size([3]), ember.Size([]))
    >>> ember.allclose(asm.log_prob(ember.randn(2, 8)).exp().sum(1), ember.ones(2))
    True
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs, div_value: float = 4.0,
                 head_bias: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError(_BAD_CUTOFFS)
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            width = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, width, bias=False, **kw)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection:
                layer.reset_parameters()

    def forward(self, input_, target_) -> _ASMoutput:
        target_dim = target_.dim()
        if target_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        elif target_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        rows = target.size(0)
        output = input.new_zeros(rows)
        head_index = target.new_empty(rows)
        covered = 0
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            mask = (target >= low) & (target < high)
            picked = mask.nonzero().squeeze()
            if picked.numel() == 0:
                continue
            if i == 0:
                head_index.index_copy_(0, picked, target[mask])
            else:
                # a rare class: the head scores its cluster, the cluster's softmax the class
                local = target[mask] - low
                cluster = self.tail[i - 1](input.index_select(0, picked))
                head_index.index_fill_(0, picked, self.shortlist_size + i - 1)
                logp = F.log_softmax(cluster, dim=1).gather(1, local.unsqueeze(1))
                output.index_copy_(0, picked, logp.squeeze(1))
            covered += picked.numel()
        if covered != rows:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logp = F.log_softmax(self.head(input), dim=1)
        output += head_logp.gather(1, head_index.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logp = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head_logp[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(zip(self.cutoffs, self.cutoffs[1:])):
            cluster_logp = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = cluster_logp + head_logp[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input):
        """Log probabilities of every class, (N, n_classes) for input (N, in_features)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row: the full distribution is computed only for
        rows whose best head entry is a cluster."""
        head_output = self.head(input)
        output = _F.argmax(head_output, dim=1)
        rare = output >= self.shortlist_size
        if not rare.any():
            return output
        if rare.all():
            return _F.argmax(self._get_full_log_prob(input, head_output), dim=1)
        full = self._get_full_log_prob(input[rare], head_output[rare])
        output[rare] = _F.argmax(full, dim=1)
        return output

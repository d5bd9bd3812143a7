"""L-BFGS: quasi-Newton steps from a limited history of parameter and gradient changes,
with a fixed step or a strong-Wolfe line search.

The arithmetic follows PyTorch's operation for operation (which quantities are 0-dim
tensors and which Python floats included), so the iterates agree to rounding.
"""
from __future__ import annotations

from typing import Any, Optional, Union

from .._functions import cat, mul
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad, enable_grad
from .optimizer import LossClosure, Optimizer, ParamsT
from ._common import _lr_check, to_number, to_scalar


def _cubic_minimizer(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimum of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2,
    clipped to ``bounds`` (default: between the two points); the midpoint when the
    cubic has no minimum."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if not d2_square >= 0:
        return (lo + hi) / 2.0
    d2 = d2_square.sqrt()
    if x1 <= x2:
        candidate = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        candidate = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(candidate, lo), hi)


class _Point:
    """One evaluated step length of the line search: t, loss, gradient, slope along d."""
    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def _bracket(evaluate, d, start, t, c1, c2, max_ls):
    """Phase 1 of the strong-Wolfe search: grow the step (cubic extrapolation) until an
    interval containing an acceptable step is found. Returns ``(points, done, n_iter,
    n_evals)``: one point when it already satisfies the conditions, else the interval's
    two ends."""
    f_new, g_new = evaluate(t)
    evals = 1
    new = _Point(t, f_new, g_new, g_new.dot(d))
    prev = _Point(0, start.f, start.g, start.gtd)
    ls_iter = 0
    while ls_iter < max_ls:
        if new.f > (start.f + c1 * new.t * start.gtd) or (ls_iter > 1 and new.f >= prev.f):
            return [prev, _Point(new.t, new.f, new.g.clone(), new.gtd)], False, ls_iter, evals
        if abs(new.gtd) <= -c2 * start.gtd:
            return [new], True, ls_iter, evals
        if new.gtd >= 0:
            return [prev, _Point(new.t, new.f, new.g.clone(), new.gtd)], False, ls_iter, evals
        t = _cubic_minimizer(prev.t, prev.f, prev.gtd, new.t, new.f, new.gtd,
                             bounds=(new.t + 0.01 * (new.t - prev.t), new.t * 10))
        prev = _Point(new.t, new.f, new.g.clone(), new.gtd)
        f_new, g_new = evaluate(t)
        evals += 1
        new = _Point(t, f_new, g_new, g_new.dot(d))
        ls_iter += 1
    # out of evaluations: the interval from 0 to the last step (slopes unused from here)
    return [_Point(0, start.f, start.g, None), _Point(new.t, new.f, new.g, None)], \
        False, ls_iter, evals


def _away_from_edges(t, ends, insufficient):
    """Keep a zoom trial step at least 10% of the interval away from its ends when the
    previous trial already crowded an end, or when this one lies on or outside it."""
    low, high = min(ends), max(ends)
    margin = 0.1 * (high - low)
    if min(high - t, t - low) < margin:
        if insufficient or t >= high or t <= low:
            t = high - margin if abs(t - high) < abs(t - low) else low + margin
            return t, False
        return t, True
    return t, False


def _strong_wolfe(evaluate, d, t, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Find a step ``t`` along ``d`` meeting the strong Wolfe conditions (sufficient
    decrease c1, curvature c2), by bracketing then zooming with cubic interpolation.
    ``evaluate(t)`` returns ``(loss, flat_grad)`` at ``x + t d``. Returns
    ``(loss, flat_grad, t, evaluations)``."""
    d_norm = d.abs().max()
    start = _Point(0, f, g.clone(), gtd)
    points, done, ls_iter, evals = _bracket(evaluate, d, start, t, c1, c2, max_ls)
    low, high = (0, 1) if points[0].f <= points[-1].f else (1, 0)
    insufficient = False
    while not done and ls_iter < max_ls:
        if abs(points[1].t - points[0].t) * d_norm < tolerance_change:
            break
        t = _cubic_minimizer(points[0].t, points[0].f, points[0].gtd,
                             points[1].t, points[1].f, points[1].gtd)
        t, insufficient = _away_from_edges(t, [points[0].t, points[1].t], insufficient)
        f_new, g_new = evaluate(t)
        evals += 1
        new = _Point(t, f_new, g_new.clone(), g_new.dot(d))
        ls_iter += 1
        if new.f > (f + c1 * t * gtd) or new.f >= points[low].f:
            # no sufficient decrease, or not below the best end: it becomes the high end
            points[high] = new
            low, high = (0, 1) if points[0].f <= points[1].f else (1, 0)
            continue
        if abs(new.gtd) <= -c2 * gtd:
            done = True
        elif new.gtd * (points[high].t - points[low].t) >= 0:
            points[high] = points[low]
        points[low] = new
    best = points[low]
    return best.f, best.g, best.t, evals


class LBFGS(Optimizer):
    """PyTorch's L-BFGS. ``step(closure)`` runs up to ``max_iter`` iterations (and
    ``max_eval`` closure calls) from the closure's loss and gradients: the two-loop
    recursion over the last ``history_size`` curvature pairs gives the direction, then a
    fixed step of ``lr`` (the first one scaled by ``1 / sum|g|``) or, with
    ``line_search_fn="strong_wolfe"``, a line search. It stops early when the gradient's
    largest entry is at most ``tolerance_grad`` or progress falls below
    ``tolerance_change``. One parameter group only; the state lives under the first
    parameter, as in PyTorch.

    >>> import ember
    >>> w = ember.nn.Parameter(ember.tensor([3.0, -2.0]))
    >>> opt = ember.optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - 1) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> opt.step(closure)
    tensor(13., grad_fn=<SumBackward0>)
    >>> w.detach().round(decimals=4)
    tensor([1., 1.])
    """

    def __init__(self, params: ParamsT, lr: Union[float, Tensor] = 1, max_iter: int = 20,
                 max_eval: Optional[int] = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: Optional[str] = None) -> None:
        _lr_check(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache: Optional[int] = None

    # ---------------------------------------------------------------- flat views
    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> Tensor:
        return cat([p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1)
                    for p in self._params], 0)

    def _add_grad(self, step_size: Any, update: Tensor) -> None:
        alpha = to_number(step_size)
        offset = 0
        for p in self._params:
            numel = p.numel()
            p.add_(update[offset:offset + numel].view_as(p), alpha=alpha)
            offset += numel

    def _clone_param(self) -> list[Tensor]:
        return [p.clone() for p in self._params]

    def _set_param(self, params_data: list[Tensor]) -> None:
        for p, data in zip(self._params, params_data):
            p.copy_(data)

    def _directional_evaluate(self, closure: LossClosure, x: list[Tensor], t: Any,
                              d: Tensor) -> tuple[float, Tensor]:
        """Loss and flat gradient at ``x + t d``; the parameters are put back to ``x``."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # ---------------------------------------------------------------- step
    def step(self, closure: LossClosure) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; ``closure`` (required) clears the
        gradients, computes the loss, calls ``backward`` and returns the loss. Returns
        the closure's first loss."""
        self._run_pre_hooks()
        with no_grad():
            loss = self._optimize(closure)
        self._run_post_hooks()
        return loss

    def _optimize(self, closure: LossClosure) -> Any:
        def evaluate():
            with enable_grad():
                return closure()

        group = self.param_groups[0]
        lr = to_scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        history = {key: state.get(key) for key in ("old_dirs", "old_stps", "ro", "H_diag")}
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                history = dict(old_dirs=[], old_stps=[], ro=[], H_diag=1)
            else:
                d = self._direction(state, history, flat_grad, prev_flat_grad, d, t, group)
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # the first step of all is scaled down by the gradient's size
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break  # not a descent direction (to tolerance)

            loss, flat_grad, t, evals, opt_cond = self._take_step(
                evaluate, group, loss, flat_grad, d, t, gtd, max_eval - current_evals,
                last=n_iter == max_iter)
            current_evals += evals
            state["func_evals"] += evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        # assigned one by one in PyTorch's order, so state_dicts list the same keys
        state["d"], state["t"] = d, t
        for key, value in history.items():
            state[key] = value
        state["prev_flat_grad"], state["prev_loss"] = prev_flat_grad, prev_loss
        return orig_loss

    def _take_step(self, evaluate, group, loss, flat_grad, d, t, gtd, evals_left, last):
        """Move the parameters along ``d``: by the line search's step, or by ``t`` and
        re-evaluate (skipped on the last iteration). Returns ``(loss, flat_grad, t,
        evaluations, gradient small enough)``."""
        line_search_fn = group["line_search_fn"]
        tolerance_grad = group["tolerance_grad"]
        if line_search_fn is not None:
            if line_search_fn != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            x_init = self._clone_param()

            def along_d(step_t):
                return self._directional_evaluate(evaluate, x_init, step_t, d)

            loss, flat_grad, t, evals = _strong_wolfe(along_d, d, t, loss, flat_grad, gtd,
                                                      max_ls=evals_left)
            self._add_grad(t, d)
            return loss, flat_grad, t, evals, flat_grad.abs().max() <= tolerance_grad
        self._add_grad(t, d)
        if last:
            # the loss there is not needed: the step ends here
            return loss, flat_grad, t, 0, False
        loss = float(evaluate())
        flat_grad = self._gather_flat_grad()
        return loss, flat_grad, t, 1, flat_grad.abs().max() <= tolerance_grad

    @staticmethod
    def _direction(state, history, flat_grad, prev_flat_grad, d, t, group):
        """Record the last step's curvature pair in ``history`` (when ``y.s > 1e-10``)
        and return the L-BFGS direction ``-H g`` by the two-loop recursion."""
        old_dirs, old_stps, ro = history["old_dirs"], history["old_stps"], history["ro"]
        y = flat_grad.sub(prev_flat_grad)
        s = d.mul(t)
        ys = y.dot(s)
        if ys > 1e-10:
            if len(old_dirs) == group["history_size"]:
                old_dirs.pop(0)
                old_stps.pop(0)
                ro.pop(0)
            old_dirs.append(y)
            old_stps.append(s)
            ro.append(1.0 / ys)
            history["H_diag"] = ys / y.dot(y)
        if "al" not in state:
            state["al"] = [None] * group["history_size"]
        al = state["al"]
        q = flat_grad.neg()
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=-al[i].item())
        r = mul(q, history["H_diag"])
        for i in range(len(old_dirs)):
            be_i = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=(al[i] - be_i).item())
        return r


__all__ = ["LBFGS"]

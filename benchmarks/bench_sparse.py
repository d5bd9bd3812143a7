"""Sparse (COO and CSR) workloads side by side with PyTorch.

    python benchmarks/bench_sparse.py [--rounds N] [--min-round SECONDS]

* GCN propagation: ``torch.sparse.mm(adj, h)`` and its backward into ``h``, for a random
  graph of 5000 nodes and 50000 edges (coalesced), 64 features, float32;
* a sparse embedding step: ``Embedding(20000, 64, sparse=True)`` looked up by 4096 indices,
  backward (a sparse gradient), then one ``SparseAdam`` step;
* ``to_dense`` and ``coalesce`` of an uncoalesced (2000, 2000) tensor with 100000 entries;
* the GCN propagation with the adjacency in CSR (``to_sparse_csr()``): forward alone, and
  forward and backward into ``h``.

Timing is benchmarks/run.py's: a warm-up, then alternating rounds, medians per call and the
ratio ember/torch (lower is better).
"""
import argparse
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(HERE))  # this checkout's ember before an installed one
from run import bench, fmt_ratio, fmt_time  # noqa: E402

import ember  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

warnings.filterwarnings("ignore", message="Sparse invariant checks")
warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")


def gcn_case(lib, rng_state):
    rng = np.random.default_rng(rng_state)
    n, e, f = 5000, 50000, 64
    idx = lib.tensor(rng.integers(0, n, (2, e)))
    adj = lib.sparse_coo_tensor(idx, lib.tensor(rng.random(e).astype(np.float32)),
                                (n, n)).coalesce()
    h = lib.tensor(rng.standard_normal((n, f)).astype(np.float32), requires_grad=True)

    def step():
        h.grad = None
        out = lib.sparse.mm(adj, h)
        out.sum().backward()
        return out, h.grad
    return step


def embedding_case(lib, rng_state):
    rng = np.random.default_rng(rng_state)
    emb = lib.nn.Embedding(20000, 64, sparse=True)
    with lib.no_grad():
        emb.weight.copy_(lib.tensor(rng.standard_normal((20000, 64)).astype(np.float32)))
    opt = lib.optim.SparseAdam(emb.parameters(), lr=1e-3)
    x = lib.tensor(rng.integers(0, 20000, 4096))

    def step():
        opt.zero_grad()
        out = emb(x)
        out.pow(2).sum().backward()
        opt.step()
        return out, emb.weight
    return step


def coalesce_case(lib, rng_state):
    rng = np.random.default_rng(rng_state)
    idx = lib.tensor(rng.integers(0, 2000, (2, 100000)))
    s = lib.sparse_coo_tensor(idx, lib.tensor(rng.random(100000).astype(np.float32)),
                              (2000, 2000))

    def step():
        c = s.coalesce()
        return c.values(), s.to_dense()
    return step


def csr_case(lib, rng_state, backward):
    rng = np.random.default_rng(rng_state)
    n, e, f = 5000, 50000, 64
    idx = lib.tensor(rng.integers(0, n, (2, e)))
    adj = lib.sparse_coo_tensor(idx, lib.tensor(rng.random(e).astype(np.float32)),
                                (n, n)).coalesce().to_sparse_csr()
    h = lib.tensor(rng.standard_normal((n, f)).astype(np.float32), requires_grad=backward)

    def step():
        h.grad = None
        out = adj @ h
        if backward:
            out.sum().backward()
            return out, h.grad
        return (out,)
    return step


CASES = {"GCN sparse.mm fwd+bwd": gcn_case, "sparse Embedding + SparseAdam": embedding_case,
         "coalesce + to_dense": coalesce_case,
         "GCN CSR @ dense fwd": lambda lib, seed: csr_case(lib, seed, False),
         "GCN CSR @ dense fwd+bwd": lambda lib, seed: csr_case(lib, seed, True)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--min-round", type=float, default=0.2, metavar="SECONDS")
    args = p.parse_args()
    print(f"{'workload':<34} {'ember':>10} {'torch':>10} {'ember/torch':>12}")
    if torch is not None:
        torch.set_num_threads(2)
    for title, make in CASES.items():
        cases = {"ember": make(ember, 0)}
        if torch is not None:
            cases["torch"] = make(torch, 0)
            for a, b in zip(cases["ember"](), cases["torch"]()):
                np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-3,
                                           atol=1e-3)
        medians = bench(cases, args.rounds, args.min_round)
        t = medians.get("torch")
        print(f"{title:<34} {fmt_time(medians['ember']):>10} {fmt_time(t):>10} "
              f"{fmt_ratio(medians['ember'], t):>12}")


if __name__ == "__main__":
    main()

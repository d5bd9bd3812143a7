"""ember.jit, ember.profiler and ember.utils.benchmark against PyTorch 2.13: scripted and
traced modules give torch's numbers on the same weights (forward and gradients, float32
and float64), the wrappers' bookkeeping and errors, the op names the profiler lists where
ember's ops are ATen's, schedules, the summary table's columns, and the benchmark
statistics and tables for the same raw times."""
import os
import warnings

import numpy as np
import pytest
import torch
import torch.utils.benchmark as tbench

import ember
import ember.utils.benchmark as ebench
from tests.parity.compare import error_of

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
FAKE_CUDA = os.environ.get("EMBER_PARITY_DEVICE") == "fake-cuda"
DEVICE = "cuda" if FAKE_CUDA else None


def _pair(dtype):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.Tanh(),
                             torch.nn.Linear(6, 2)).to(dtype)
    em = ember.nn.Sequential(ember.nn.Linear(4, 6), ember.nn.BatchNorm1d(6), ember.nn.Tanh(),
                             ember.nn.Linear(6, 2))
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    if dtype == torch.float64:
        em = em.double()
    if DEVICE is not None:
        em = em.to(DEVICE)
    return tm, em


def _host(t):
    return ember.Tensor.cpu(t).detach().numpy()


def _check_same(wrap_t, wrap_e, dtype, train):
    tm, em = _pair(dtype)
    tm.train(train)
    em.train(train)
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.dtype(str(dtype)[6:]))
    tw, ew = wrap_t(tm, torch.tensor(x)), wrap_e(em, ember.tensor(x, device=DEVICE))
    assert list(ew.state_dict()) == list(tw.state_dict())
    assert ew.original_name == tw.original_name
    assert repr(ew) == repr(tw)
    tout, eout = tw(torch.tensor(x)), ew(ember.tensor(x, device=DEVICE))
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_host(eout), tout.detach().numpy(), **tol)
    tout.pow(2).sum().backward()
    eout.pow(2).sum().backward()
    for (n, tp), (_, ep) in zip(tw.named_parameters(), ew.named_parameters()):
        np.testing.assert_allclose(_host(ep.grad), tp.grad.numpy(), err_msg=n, **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("train", [True, False])
def test_scripted_module_gives_torch_numbers(dtype, train):
    _check_same(lambda m, x: torch.jit.script(m), lambda m, x: ember.jit.script(m), dtype, train)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_traced_module_gives_torch_numbers(dtype):
    _check_same(lambda m, x: torch.jit.trace(m.eval(), x),
                lambda m, x: ember.jit.trace(m.eval(), x), dtype, False)


def test_tracing_updates_buffers_as_torch_does():
    # the trace run and the check runs change batch norm's running statistics
    for kw in ({}, {"check_trace": False}, {"check_inputs": [(np.ones((3, 4)),)] * 2}):
        tm, em = _pair(torch.float32)
        x = np.random.default_rng(2).standard_normal((5, 4)).astype(np.float32)
        checks = {lib: [tuple(lib.tensor(a, dtype=lib.float32, device=dev) for a in c)
                        for c in kw["check_inputs"]]
                  for lib, dev in ((torch, None), (ember, DEVICE))} \
            if "check_inputs" in kw else None
        for lib, m in ((torch, tm), (ember, em)):
            extra = {"check_inputs": checks[lib]} if checks else dict(kw)
            lib.jit.trace(m, lib.tensor(x, device=DEVICE if lib is ember else None), **extra)
        for (k, tv), (_, ev) in zip(tm.state_dict().items(), em.state_dict().items()):
            np.testing.assert_allclose(_host(ev), tv.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


def _scaled(lib):
    def scaled_tanh(x, k: float = 2.0):
        return lib.tanh(x) * k + x.sum()
    return scaled_tanh


def test_scripted_and_traced_functions():
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    for make in (lambda lib: lib.jit.script(_scaled(lib)),
                 lambda lib: lib.jit.trace(_scaled(lib), lib.tensor(x))):
        tf, ef = make(torch), make(ember)
        assert tf.name == ef.name == "scaled_tanh"
        np.testing.assert_allclose(_host(ef(ember.tensor(x))), tf(torch.tensor(x)).numpy(),
                                   rtol=1e-12)


def test_frozen_module_matches_torch():
    tm, em = _pair(torch.float32)
    tf = torch.jit.freeze(torch.jit.script(tm.eval()))
    ef = ember.jit.freeze(ember.jit.script(em.eval()))
    assert list(ef.state_dict()) == list(tf.state_dict()) == []
    assert repr(ef) == repr(tf)
    x = np.ones((2, 4), np.float32)
    tout, eout = tf(torch.tensor(x)), ef(ember.tensor(x, device=DEVICE))
    assert eout.requires_grad == tout.requires_grad
    np.testing.assert_allclose(_host(eout), tout.numpy(), rtol=1e-5, atol=1e-6)


def _jit_errors(lib):
    lin = lib.nn.Linear(2, 2)
    return [
        lambda: lib.jit.trace(lambda x, k: x * k, (lib.ones(1), 2)),
        lambda: lib.jit.trace(lambda x: x, 3),
        lambda: lib.jit.trace(lambda x: None, lib.ones(1)),
        lambda: lib.jit.trace(lambda x: (x, 3), lib.ones(1)),
        lambda: lib.jit.trace(lambda x: {"a": x}, lib.ones(1)),
        lambda: lib.jit.trace(lin),
        lambda: lib.jit.trace(lin, (lib.ones(1, 2), lib.ones(1))),
        lambda: lib.jit.trace_module(lin, lib.ones(1, 2)),
        lambda: lib.jit.trace_module(lambda x: x, {"forward": lib.ones(1)}),
        lambda: lib.jit.script(int),
        lambda: lib.jit.script(3),
        lambda: lib.jit.script(type("Sub", (lib.nn.Linear,), {})),
        lambda: lib.jit.freeze(lib.jit.script(lin)),
        lambda: lib.jit.freeze(lin.eval()),
        lambda: lib.jit.optimize_for_inference(lin),
        lambda: lib.jit.fork(3),
        lambda: lib.jit.ignore("yes"),
    ]


def test_jit_errors_match_torch():
    for i, (tcall, ecall) in enumerate(zip(_jit_errors(torch), _jit_errors(ember))):
        assert error_of(ecall) == error_of(tcall), i


def test_jit_warnings_match_torch():
    for lib in (torch, ember):
        with pytest.warns(lib.jit.TracerWarning, match="Encountering a list at the output"):
            lib.jit.trace(lambda x: [x, x], lib.ones(1))
        with pytest.warns(lib.jit.TracerWarning, match="Output nr 1. of the traced function "
                                                       "does not match"):
            lib.jit.trace(lambda x: x + lib.rand(1), lib.ones(1))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.jit.script(lib.nn.ReLU())
        assert "`torch.jit.script` is deprecated. Please switch to `torch.compile` or " \
               "`torch.export`." in [str(w.message) for w in caught]


def _names(lib, program):
    args = _inputs(lib)  # made before profiling: torch would list its tensor() ops
    with lib.profiler.profile() as prof:
        program(lib, *args)
    return [e.key for e in prof.key_averages()]


def _inputs(lib):
    rng = np.random.default_rng(0)
    return lib.tensor(rng.standard_normal((3, 3))), lib.tensor(rng.standard_normal((3, 3)))


SAME_NAMES = {
    "exp": lambda lib, x, y: x.exp(),
    "mul": lambda lib, x, y: x * y,
    "add": lambda lib, x, y: x + y,
    "sigmoid": lambda lib, x, y: lib.sigmoid(x),
}
SUBSET_NAMES = {
    "mm": lambda lib, x, y: lib.mm(x, y),
    "sin_sum": lambda lib, x, y: x.sin().sum(),
    "relu": lambda lib, x, y: lib.relu(x),
    "tanh_mean": lambda lib, x, y: x.tanh().mean(),
    "matmul": lambda lib, x, y: x @ y,
    "softmax": lambda lib, x, y: lib.softmax(x, 1),
    "linear_relu": lambda lib, x, y: lib.nn.functional.relu(
        lib.nn.functional.linear(x, y, x.sum(0))),
}


@pytest.mark.parametrize("name", sorted(SAME_NAMES))
def test_profiler_lists_torch_op_names(name):
    names = {lib: _names(lib, SAME_NAMES[name]) for lib in (torch, ember)}
    assert names[ember] == names[torch]


@pytest.mark.parametrize("name", sorted(SUBSET_NAMES))
def test_profiler_op_names_are_torch_ones(name):
    # ember's ops are coarser than ATen's in places: each op it lists is one torch lists
    names = {lib: _names(lib, SUBSET_NAMES[name]) for lib in
             (torch, ember)}
    assert names[ember] and set(names[ember]) <= set(names[torch])


def test_profiler_table_columns_match_torch():
    x = {lib: _inputs(lib)[0] for lib in (torch, ember)}
    for options in ({}, {"profile_memory": True}):
        tables = {}
        for lib in (torch, ember):
            with lib.profiler.profile(**options) as prof:
                with lib.profiler.record_function("block"):
                    x[lib].exp()
            tables[lib] = prof.key_averages().table(sort_by="cpu_time_total").splitlines()
        assert tables[ember][:3] == tables[torch][:3]  # separators, header: same widths
        assert [r.split()[0] for r in tables[ember][3:-2]] == \
               [r.split()[0] for r in tables[torch][3:-2]]
        assert tables[ember][-1].startswith("Self CPU time total: ")
    with torch.profiler.profile(record_shapes=True) as tp:
        x[torch].exp()
    with ember.profiler.profile(record_shapes=True) as ep:
        x[ember].exp()
    t_avg = tp.key_averages(group_by_input_shape=True)[0]
    e_avg = ep.key_averages(group_by_input_shape=True)[0]
    assert (e_avg.key, e_avg.count, e_avg.input_shapes) == (t_avg.key, t_avg.count,
                                                           t_avg.input_shapes)


def test_schedules_and_trace_ready_steps_match_torch():
    settings = [dict(wait=1, warmup=1, active=2, repeat=1, skip_first=1),
                dict(wait=2, warmup=1, active=3), dict(wait=0, warmup=2, active=1, repeat=3)]
    for kw in settings:
        ts, es = torch.profiler.schedule(**kw), ember.profiler.schedule(**kw)
        assert [es(i).name for i in range(20)] == [ts(i).name for i in range(20)], kw
    steps = {}
    for lib in (torch, ember):
        seen = []
        sched = lib.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
        with lib.profiler.profile(schedule=sched, on_trace_ready=lambda p: seen.append(
                p.step_num)) as prof:
            for _ in range(10):
                lib.ones(2).relu()
                prof.step()
        steps[lib] = seen
    assert steps[ember] == steps[torch]


def test_profiler_errors_match_torch():
    for lib_calls in zip(*[(lambda: lib.profiler.schedule(wait=-1, warmup=0, active=1),
                            lambda: lib.profiler.schedule(wait=0, warmup=1, active=0),
                            lambda: lib.profiler.profile().key_averages())
                           for lib in (torch, ember)]):
        assert error_of(lib_calls[1]) == error_of(lib_calls[0])
    with pytest.warns(UserWarning, match="CUDA is not available"):
        e = error_of(lambda: ember.profiler.profile(
            activities=[ember.profiler.ProfilerActivity.CUDA]).__enter__())
    with pytest.warns(UserWarning, match="CUDA is not available"):
        t = error_of(lambda: torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CUDA]).__enter__())
    assert e == t


def _measurements(lib):
    spec = (torch.utils.benchmark.utils.common.TaskSpec if lib is tbench else lib.TaskSpec)

    def m(times, number=1, **labels):
        labels.setdefault("env", "e1")
        return lib.Measurement(number, list(times), spec("x + y", "pass", **labels))
    return [m([2e-6, 2.1e-6], label="add", sub_label="n=10", description="a"),
            m([3e-6, 3e-6, 3.3e-6], label="add", sub_label="n=10", description="b"),
            m([5e-6, 4e-6, 6e-6, 5e-6], label="add", sub_label="n=99", description="a"),
            m([50e-6, 40e-6, 60e-6, 51e-6], label="add", sub_label="n=99", description="b",
              num_threads=4),
            m([1e-3, 2e-3, 1.1e-3, 1e-3], number=10, label="add", sub_label="n=99",
              description="a", num_threads=4, env="e2"),
            m([1.23456e-3], label="other", description="d", sub_label="big")]


def test_measurement_statistics_and_repr_match_torch():
    for tm, em in zip(_measurements(tbench), _measurements(ebench)):
        for attr in ("mean", "median", "iqr"):
            assert getattr(em, attr) == pytest.approx(getattr(tm, attr), rel=1e-12), attr
        assert em.significant_figures == tm.significant_figures
        assert em.has_warnings == tm.has_warnings and em.title == tm.title
        assert repr(em).split("\n", 1)[1] == repr(tm).split("\n", 1)[1]


def test_compare_tables_match_torch():
    for setup in (lambda c: None, lambda c: (c.trim_significant_figures(),
                                             c.highlight_warnings()),
                  lambda c: c.colorize(), lambda c: c.colorize(rowwise=True)):
        tc, ec = tbench.Compare(_measurements(tbench)), ebench.Compare(_measurements(ebench))
        setup(tc)
        setup(ec)
        assert str(ec) == str(tc)


def test_timer_errors_match_torch():
    for lib in (tbench, ebench):
        lib.calls = [lambda: lib.Timer(lambda: 1), lambda: lib.Timer("pass", global_setup="x"),
                     lambda: lib.Timer().repeat(), lambda: lib.Timer().autorange(),
                     lambda: lib.Timer("pass", language="fortran")]
    for t, e in zip(tbench.calls, ebench.calls):
        assert error_of(e) == error_of(t)
    t = tbench.Timer("x * 2", globals={"x": torch.ones(3)}, label="l", sub_label="s",
                     description="d", num_threads=2).timeit(10)
    e = ebench.Timer("x * 2", globals={"x": ember.ones(3)}, label="l", sub_label="s",
                     description="d", num_threads=2).timeit(10)
    assert (e.number_per_run, len(e.times), e.title, e.num_threads) == \
           (t.number_per_run, len(t.times), t.title, t.num_threads)
    assert repr(e).split("\n")[1:3] == repr(t).split("\n")[1:3]

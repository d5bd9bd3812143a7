"""``ember.compile`` against ``torch.compile``: the wrapper PyTorch makes (OptimizedModule,
``_orig_mod.`` state_dict keys, attribute pass-through), the argument checks and their
errors, and the numbers of a compiled training step (torch with its eager backend, which
computes exactly what ember's eager run does)."""
import numpy as np
import pytest
import torch

import ember


def _pair():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    em = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Linear(8, 2))
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, em


def test_wrapped_module_keys_repr_and_attributes():
    tm, em = _pair()
    tc, ec = torch.compile(tm, backend="eager"), ember.compile(em)
    assert type(ec).__name__ == type(tc).__name__ == "OptimizedModule"
    assert list(ec.state_dict()) == list(tc.state_dict())
    assert [n for n, _ in ec.named_parameters()] == [n for n, _ in tc.named_parameters()]
    assert repr(ec) == repr(tc)
    assert ec._orig_mod is em and tc._orig_mod is tm
    for lib_c, lib_m in ((tc, tm), (ec, em)):
        lib_c.note = 7                      # lands on the original module
        assert lib_m.note == 7
        lib_c.eval()
        assert not lib_m.training and not lib_c.training
        with pytest.raises(TypeError, match="not subscriptable"):
            lib_c[0]
    with pytest.raises(RuntimeError) as te:
        tc.load_state_dict(tm.state_dict())
    with pytest.raises(RuntimeError) as ee:
        ec.load_state_dict(em.state_dict())
    assert str(ee.value).replace("OptimizedModule", "") == \
        str(te.value).replace("OptimizedModule", "")


def test_compiled_training_step_gives_torch_numbers():
    tm, em = _pair()
    tc, ec = torch.compile(tm, backend="eager"), ember.compile(em)
    topt = torch.optim.SGD(tc.parameters(), lr=0.1)
    eopt = ember.optim.SGD(ec.parameters(), lr=0.1)
    x = np.random.default_rng(0).standard_normal((16, 4)).astype(np.float32)
    for _ in range(3):
        for c, opt, lib in ((tc, topt, torch), (ec, eopt, ember)):
            opt.zero_grad()
            c(lib.tensor(x)).pow(2).mean().backward()
            opt.step()
    for (kt, vt), (ke, ve) in zip(tc.state_dict().items(), ec.state_dict().items()):
        assert kt == ke
        np.testing.assert_allclose(ve.numpy(), vt.numpy(), rtol=1e-5, atol=1e-6)


def test_compiled_function_and_decorator():
    def f(x):
        return (x.sin() * 2).sum()
    for lib in (torch, ember):
        g = lib.compile(f, backend="eager") if lib is torch else lib.compile(f)
        assert g.__name__ == "f" and g.__wrapped__ is f
        x = lib.tensor([0.5, 1.0], requires_grad=True)
        g(x).backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos([0.5, 1.0]), rtol=1e-6)
    deco = ember.compile(mode="reduce-overhead")
    assert callable(deco) and deco(f)(ember.zeros(2)).item() == 0.0


@pytest.mark.parametrize("kwargs", [
    dict(mode="fast"), dict(backend="nope"), dict(mode="max-autotune", options={"a": 1}),
    dict(backend="eager", mode="default", options={"a": 1}), dict(backend="eager", mode="fast"),
    dict(backend="aot_eager"), dict(fullgraph=True, dynamic=True), dict(disable=True),
    dict(mode="max-autotune-no-cudagraphs"), dict(unknown_flag=1),
], ids=str)
def test_argument_checks_as_torch(kwargs):
    def outcome(lib, model):
        try:
            result = lib.compile(model, **kwargs)
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            # torch's InvalidBackend derives from RuntimeError through a dynamo base class
            kind = "RuntimeError" if isinstance(e, RuntimeError) else type(e).__name__
            return kind, str(e)
        return ("returned", type(result).__name__ if result is not model else "model")
    assert outcome(ember, ember.nn.Linear(2, 2)) == outcome(torch, torch.nn.Linear(2, 2))


def test_not_callable():
    for lib in (torch, ember):
        with pytest.raises(AssertionError, match="A callable function is expected, but "
                                                 "<class 'int'> is provided."):
            lib.compile(3)


def test_compiler_namespace():
    assert ember.compiler.is_compiling() is torch.compiler.is_compiling() is False
    f = lambda x: x  # noqa: E731
    assert ember.compiler.disable(f) is f
    assert set(ember.compiler.list_backends()) <= set(torch.compiler.list_backends()) | \
        {"cudagraphs"}

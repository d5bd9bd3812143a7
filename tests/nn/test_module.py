"""nn.Module bookkeeping: registries, iteration, state_dict, train/eval, hooks, repr, errors."""
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember import nn


class Affine(nn.Module):
    def __init__(self, n=3):
        super().__init__()
        self.weight = nn.Parameter(ember.ones(n))
        self.bias = nn.Parameter(ember.zeros(n))
        self.register_buffer("running", ember.zeros(n))
        self.register_buffer("scratch", ember.zeros(n), persistent=False)

    def forward(self, x):
        return x * self.weight + self.bias


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Affine()
        self.b = nn.Sequential(Affine(), Affine())
        self.scale = nn.Parameter(ember.tensor(2.0))

    def forward(self, x):
        return self.b(self.a(x)) * self.scale


def test_registries_and_listings():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "a.weight", "a.bias", "b.0.weight", "b.0.bias", "b.1.weight",
                     "b.1.bias"]
    assert len(list(net.parameters())) == 7
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in net.named_buffers()] == ["a.running", "a.scratch", "b.0.running",
                                                   "b.0.scratch", "b.1.running", "b.1.scratch"]
    assert [n for n, _ in net.named_children()] == ["a", "b"]
    assert [n for n, _ in net.named_modules()] == ["", "a", "b", "b.0", "b.1"]
    assert net.get_submodule("b.1") is net.b[1]
    assert net.get_parameter("b.0.bias") is net.b[0].bias


def test_shared_parameters_listed_once():
    shared = Affine()
    seq = nn.Sequential(shared, shared)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4


def test_state_dict_order_and_persistence():
    net = Net()
    keys = list(net.state_dict().keys())
    assert keys == ["scale", "a.weight", "a.bias", "a.running", "b.0.weight", "b.0.bias",
                    "b.0.running", "b.1.weight", "b.1.bias", "b.1.running"]
    assert not net.state_dict()["a.weight"].requires_grad
    assert net.state_dict(keep_vars=True)["a.weight"] is net.a.weight


def test_load_state_dict_round_trip_and_errors():
    src, dst = Net(), Net()
    with ember.no_grad():
        src.a.weight.mul_(3.0)
        src.b[1].running.fill_(7.0)
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_allclose(dst.a.weight.detach().numpy(), [3.0, 3.0, 3.0])
    np.testing.assert_allclose(dst.b[1].running.numpy(), [7.0, 7.0, 7.0])

    sd = src.state_dict()
    del sd["a.bias"]
    sd["extra"] = ember.zeros(1)
    sd["b.0.weight"] = ember.zeros(5)
    with pytest.raises(RuntimeError) as e:
        dst.load_state_dict(sd)
    msg = str(e.value)
    assert msg.startswith("Error(s) in loading state_dict for Net:")
    assert 'Missing key(s) in state_dict: "a.bias".' in msg
    assert 'Unexpected key(s) in state_dict: "extra".' in msg
    assert "size mismatch for b.0.weight: copying a param with shape ember.Size([5]) from " \
           "checkpoint, the shape in current model is ember.Size([3])." in msg
    del sd["b.0.weight"]
    missing, unexpected = dst.load_state_dict(sd, strict=False)
    assert missing == ["a.bias", "b.0.weight"] and unexpected == ["extra"]


def test_assignment_rules():
    m = Affine()
    with pytest.raises(TypeError, match="cannot assign 'ember.FloatTensor' as parameter "
                                        "'weight'"):
        m.weight = ember.ones(3)
    m.weight = None
    assert m.weight is None and "weight" in m._parameters
    m.extra = nn.Parameter(ember.ones(1))
    assert "extra" in dict(m.named_parameters())
    del m.extra
    assert "extra" not in dict(m.named_parameters())
    m.running = ember.ones(3)      # reassigning a buffer keeps it a buffer
    assert "running" in dict(m.named_buffers())
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'running'"):
        m.running = 3
    with pytest.raises(AttributeError, match="'Affine' object has no attribute 'nothing'"):
        m.nothing
    with pytest.raises(KeyError, match="attribute 'forward' already exists"):
        m.register_parameter("forward", None)
    with pytest.raises(KeyError, match='parameter name can.+t contain'):
        m.register_parameter("a.b", None)


def test_assignment_before_init_raises():
    class Broken(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ember.ones(1))
    with pytest.raises(AttributeError, match=r"cannot assign parameters before "
                                             r"Module.__init__\(\) call"):
        Broken()


def test_train_eval_zero_grad_requires_grad_apply():
    net = Net()
    assert net.training and net.b[0].training
    net.eval()
    assert not net.training and not net.b[1].training
    net.train()
    assert net.a.training
    net(ember.ones(3)).sum().backward()
    assert net.a.weight.grad is not None
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net(ember.ones(3)).sum().backward()
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any() for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Affine", "Affine", "Affine", "Sequential", "Net"]


def test_to_dtype_and_cuda_error():
    net = Net().double()
    assert all(p.dtype is ember.float64 for p in net.parameters())
    assert net.a.running.dtype is ember.float64
    assert isinstance(net.a.weight, nn.Parameter)
    net.to(ember.float32)
    assert net.scale.dtype is ember.float32
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        net.cuda()
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        net.to("cuda")


def test_missing_forward():
    class NoForward(nn.Module):
        pass
    with pytest.raises(NotImplementedError, match=r'Module \[NoForward\] is missing the '
                                                  r'required "forward" function'):
        NoForward()(ember.ones(1))


def test_forward_hooks_modify_and_remove():
    m = Affine()
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 10,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out.sum().item()) or out + 1)
    out = m(ember.ones(3))
    np.testing.assert_allclose(out.detach().numpy(), [11.0, 11.0, 11.0])
    assert calls == [30.0]
    h1.remove()
    h2.remove()
    np.testing.assert_allclose(m(ember.ones(3)).detach().numpy(), [1.0, 1.0, 1.0])


def test_forward_hook_with_kwargs_and_prepend():
    m = Affine()
    order = []
    m.register_forward_hook(lambda mod, args, out: order.append("second"))
    m.register_forward_hook(lambda mod, args, out: order.append("first"), prepend=True)
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, kwargs), with_kwargs=True)
    m(ember.ones(3))
    assert order == ["first", "second"]


def test_full_backward_hook_sees_and_replaces_grads():
    m = Affine()
    with ember.no_grad():
        m.weight.fill_(3.0)
    x = ember.ones(3, requires_grad=True)
    seen = {}

    def hook(mod, grad_input, grad_output):
        seen["in"] = grad_input[0].numpy().copy()
        seen["out"] = grad_output[0].numpy().copy()
        return (grad_input[0] * 2,)
    handle = m.register_full_backward_hook(hook)
    (m(x) * 5).sum().backward()
    np.testing.assert_allclose(seen["out"], [5.0, 5.0, 5.0])
    np.testing.assert_allclose(seen["in"], [15.0, 15.0, 15.0])
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0, 30.0])
    handle.remove()
    x.grad = None
    (m(x) * 5).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [15.0, 15.0, 15.0])


def test_backward_pre_hook_replaces_grad_output():
    m = Affine()
    m.register_full_backward_pre_hook(lambda mod, grad_output: (grad_output[0] * 0,))
    x = ember.ones(3, requires_grad=True)
    m(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_allclose(m.weight.grad.numpy(), [0.0, 0.0, 0.0])


def test_containers():
    seq = nn.Sequential(OrderedDict([("first", Affine()), ("second", Affine())]))
    assert isinstance(seq.first, Affine) and seq[1] is seq.second
    assert len(seq) == 2 and len(seq[:1]) == 1
    seq.append(Affine())
    assert len(seq) == 3
    ml = nn.ModuleList([Affine(), Affine()])
    ml.append(Affine())
    assert len(ml) == 3 and len(list(ml.parameters())) == 6
    md = nn.ModuleDict({"x": Affine()})
    md["y"] = Affine()
    assert list(md.keys()) == ["x", "y"] and len(list(md.parameters())) == 4
    pl = nn.ParameterList([ember.ones(2), nn.Parameter(ember.zeros(3))])
    assert len(pl) == 2 and all(isinstance(p, nn.Parameter) for p in pl)
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pd = nn.ParameterDict({"a": ember.ones(1)})
    assert isinstance(pd["a"], nn.Parameter) and "a" in pd
    with pytest.raises(IndexError):
        seq[5]


def test_repr_nested_with_extra_repr():
    class Leaf(nn.Module):
        def extra_repr(self):
            return "size=3"

    class Tree(nn.Module):
        def __init__(self):
            super().__init__()
            self.leaf = Leaf()
            self.seq = nn.Sequential(Leaf(), nn.Sequential(Leaf()))
    expected = ("Tree(\n"
                "  (leaf): Leaf(size=3)\n"
                "  (seq): Sequential(\n"
                "    (0): Leaf(size=3)\n"
                "    (1): Sequential(\n"
                "      (0): Leaf(size=3)\n"
                "    )\n"
                "  )\n"
                ")")
    assert repr(Tree()) == expected


def test_parameter_basics():
    p = nn.Parameter(ember.tensor([1.0, 2.0]))
    assert p.requires_grad and p.is_leaf and isinstance(p, ember.Tensor)
    assert repr(p).startswith("Parameter containing:\ntensor([1., 2.], requires_grad=True)")
    q = nn.Parameter(ember.zeros(2), requires_grad=False)
    assert not q.requires_grad
    assert type(p * 2) is ember.Tensor
    import copy
    c = copy.deepcopy(p)
    assert isinstance(c, nn.Parameter) and c is not p

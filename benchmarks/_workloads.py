"""The benchmark workloads, written once for both libraries (``lib`` is ``ember`` or ``torch``).

Every ``make_*`` function returns a zero-argument callable that performs one unit of the
workload (one training step, one matmul, ...) and returns its result (a loss tensor, a product),
so a caller can time it or check it. The same math runs on both libraries; models are built in
torch first and their weights copied into ember through ``state_dict`` and NumPy (see
``copy_weights``), so both start from identical float32 parameters. Used by ``benchmarks/run.py``
and by ``tests/examples/test_benchmarks_smoke.py``; nothing here imports torch (the lltm
workload reaches torch's ``utils.cpp_extension`` through the library it is given).
"""
import importlib
import os
import sys

import numpy as np

#: the targets for ember time / torch time (lower is better)
TARGETS = {
    "matmul": 1.0,
    "mlp": 1.0,
    "cnn": 1.0,
    "function": 0.8,
    "chain": 0.9,
    "lstm": 1.2,
    "transformer": 1.2,
    "memory": 1.0,
    "lltm": 1.2,
}

CHAIN_OPS = 200  # 50 rounds of 4 element-wise ops (the final sum is not counted)


def libname(lib):
    """'ember' or 'torch' (the module's top-level name)."""
    return lib.__name__.split(".")[0]


# ---------------------------------------------------------------------------------------------
# models and weight copying

def mlp_model(lib, hidden=512, in_features=784, classes=10):
    """784-hidden-hidden-10 MLP with ReLU."""
    nn = lib.nn
    return nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(),
                         nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, classes))


def cnn_model(lib, channels=32, hw=28, classes=10):
    """conv3x3 1->C (pad 1), relu, maxpool2, conv3x3 C->2C (pad 1), relu, maxpool2, flatten,
    linear 2C*(hw/4)^2->128, relu, linear 128->10 (C=32, hw=28: the small CNN)."""
    nn = lib.nn
    c = channels
    side = hw // 4
    return nn.Sequential(nn.Conv2d(1, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(2 * c * side * side, 128), nn.ReLU(),
                         nn.Linear(128, classes))


def lstm_lm_model(lib, vocab=10000, hidden=256, layers=2):
    """Word language model: embedding, 2-layer LSTM (hidden 256), linear decoder to the
    vocabulary (the shape of torch's word_language_model example on PTB-sized data)."""
    nn = lib.nn

    class LSTMLanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.rnn = nn.LSTM(hidden, hidden, layers)
            self.decoder = nn.Linear(hidden, vocab)

        def forward(self, tokens):
            out, _ = self.rnn(self.embed(tokens))
            return self.decoder(out).reshape(-1, vocab)
    return LSTMLanguageModel()


def transformer_model(lib, d_model=256, heads=4, layers=2, feedforward=1024, classes=10):
    """A 2-layer TransformerEncoder (batch first, dropout 0) and a linear head on the mean
    over the sequence."""
    nn = lib.nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=feedforward,
                                               dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.head = nn.Linear(d_model, classes)

        def forward(self, x):
            return self.head(self.encoder(x).mean(1))
    return Encoder()


def copy_weights(src, dst, dst_lib):
    """Load ``src``'s state_dict (any library) into ``dst`` (a ``dst_lib`` module) via NumPy."""
    state = {k: dst_lib.from_numpy(np.array(v.detach().numpy(), dtype=np.float32, copy=True))
             for k, v in src.state_dict().items()}
    dst.load_state_dict(state)
    return dst


def build_pair(builder, libs, **kw):
    """Build ``builder(lib, **kw)`` for every lib in ``libs`` ({name: module}) with identical
    weights: torch's initialization when torch is among them, else ember's."""
    models = {}
    ref = None
    if "torch" in libs:
        libs["torch"].manual_seed(0)
        ref = models["torch"] = builder(libs["torch"], **kw)
    for name, lib in libs.items():
        if name == "torch":
            continue
        if hasattr(lib, "manual_seed"):
            lib.manual_seed(0)
        models[name] = builder(lib, **kw)
        if ref is not None:
            copy_weights(ref, models[name], lib)
    return models


# ---------------------------------------------------------------------------------------------
# data

def batches(shape, classes=10, n=4, seed=0):
    """``n`` fixed float32 batches of ``shape`` with int64 labels (cycled by the training
    step, so the net does not just memorize one batch and drive its softmax into denormals)."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(shape).astype(np.float32),
             rng.integers(0, classes, size=shape[0]).astype(np.int64)) for _ in range(n)]


# ---------------------------------------------------------------------------------------------
# workloads

def synchronizer(lib, device):
    """A call that waits until ``device``'s queued work is done (a no-op on the CPU): a GPU
    step is timed to its end, not to the launch of its last kernel."""
    if device is None or str(device).startswith("cpu"):
        return lambda: None
    return lib.cuda.synchronize


def make_train_step(lib, model, data, lr=0.01, momentum=0.9, device=None, amp_dtype=None):
    """One SGD(momentum) + cross-entropy step: zero_grad, forward, loss, backward, step;
    model and data on ``device`` (None: where they are, the CPU). ``amp_dtype`` (a dtype
    name, "bfloat16" or "float16"): forward and loss in ``lib.autocast`` of that dtype, the
    loss scaled by a ``GradScaler`` (mixed-precision training as PyTorch's recipe)."""
    if device is not None:
        model.to(device)
    xs = [(lib.from_numpy(x.copy()), lib.from_numpy(y.copy())) for x, y in data]
    if device is not None:
        xs = [(x.to(device), y.to(device)) for x, y in xs]
    opt = lib.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    loss_fn = lib.nn.CrossEntropyLoss()
    sync = synchronizer(lib, device)
    state = {"i": 0}

    def step():
        x, y = xs[state["i"] % len(xs)]
        state["i"] += 1
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        sync()
        return loss
    if amp_dtype is None:
        return step
    device_type = "cpu" if device is None else str(device).split(":")[0]
    dtype = getattr(lib, amp_dtype)
    scaler = lib.amp.GradScaler(device_type)

    def amp_step():
        x, y = xs[state["i"] % len(xs)]
        state["i"] += 1
        opt.zero_grad()
        with lib.autocast(device_type, dtype=dtype):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        sync()
        return loss
    return amp_step


def make_matmul(lib, n=1024, seed=0, device=None):
    """One n x n float32 matrix product (forward only), on ``device`` (None: the CPU)."""
    rng = np.random.default_rng(seed)
    a = lib.from_numpy(rng.standard_normal((n, n)).astype(np.float32))
    b = lib.from_numpy(rng.standard_normal((n, n)).astype(np.float32))
    if device is not None:
        a, b = a.to(device), b.to(device)
    sync = synchronizer(lib, device)

    def run():
        out = a @ b
        sync()
        return out
    return run


def mul_constant_class(lib):
    """The seeds' MulConstant, subclassing ``lib.autograd.Function``."""
    class MulConstant(lib.autograd.Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None
    return MulConstant


def make_function(lib, n=16, seed=0):
    """``MulConstant.apply(x, 2.0).sum().backward()`` on an ``n``-element leaf."""
    MulConstant = mul_constant_class(lib)
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal(n).astype(np.float32), requires_grad=True)

    def run():
        y = MulConstant.apply(x, 2.0).sum()
        y.backward()
        return y
    return run


def chain(lib, x0, w, rounds=CHAIN_OPS // 4):
    """benchmarks/overhead.py's chain: 50 rounds of mul, add, tanh, sub; sum; backward."""
    x = x0
    for _ in range(rounds):
        x = x * w
        x = x + 0.1
        x = x.tanh()
        x = x - w
    loss = x.sum()
    loss.backward()
    return loss


def make_chain(lib, n=16, seed=0, ops=CHAIN_OPS):
    """overhead.py's 200-op chain forward + backward on ``n`` elements (leaves made each call)."""
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(n).astype(np.float32)
    wdata = rng.standard_normal(n).astype(np.float32)

    def run():
        x0 = lib.tensor(data, requires_grad=True)
        w = lib.tensor(wdata, requires_grad=True)
        return chain(lib, x0, w, rounds=ops // 4)
    return run


def make_mlp_steps(libs, hidden=512, batch=128, in_features=784, device=None, amp_dtype=None):
    """{name: train step} of the MLP for every lib, identical weights and data."""
    models = build_pair(mlp_model, libs, hidden=hidden, in_features=in_features)
    data = batches((batch, in_features))
    return {name: make_train_step(libs[name], m, data, device=device, amp_dtype=amp_dtype)
            for name, m in models.items()}


def make_lstm_steps(libs, vocab=10000, seq=35, batch=20, device=None):
    """{name: train step} of the LSTM language model: seq 35 x batch 20 tokens, each
    predicting the next (cross-entropy over the vocabulary), SGD as the other steps."""
    models = build_pair(lstm_lm_model, libs, vocab=vocab)
    rng = np.random.default_rng(0)
    data = []
    for _ in range(4):
        tokens = rng.integers(0, vocab, size=(seq + 1, batch)).astype(np.int64)
        data.append((tokens[:-1], tokens[1:].reshape(-1)))
    return {name: make_train_step(libs[name], m, data, device=device)
            for name, m in models.items()}


def make_transformer_steps(libs, d_model=256, seq=64, batch=16, device=None, amp_dtype=None):
    """{name: train step} of the TransformerEncoder: batch 16 x seq 64 x d_model 256
    inputs, a 10-class head, SGD and cross-entropy as the other steps."""
    models = build_pair(transformer_model, libs, d_model=d_model)
    data = batches((batch, seq, d_model))
    return {name: make_train_step(libs[name], m, data, device=device, amp_dtype=amp_dtype)
            for name, m in models.items()}


def make_cnn_steps(libs, channels=32, batch=64, hw=28, device=None, amp_dtype=None):
    """{name: train step} of the CNN for every lib, identical weights and data."""
    models = build_pair(cnn_model, libs, channels=channels, hw=hw)
    data = batches((batch, 1, hw, hw))
    return {name: make_train_step(libs[name], m, data, device=device, amp_dtype=amp_dtype)
            for name, m in models.items()}


# ---------------------------------------------------------------------------------------------
# the LLTM C++ extension (examples/extensions/lltm): one source, built by each library

HERE = os.path.dirname(os.path.abspath(__file__))
LLTM_DIR = os.path.join(os.path.dirname(HERE), "examples", "extensions", "lltm")
#: holds an <ember/extension.h> that maps lltm.cpp's ember names onto torch's
LLTM_TORCH_INCLUDE = os.path.join(HERE, "lltm_torch_include")


class LLTMUnavailable(RuntimeError):
    """The lltm workload cannot run here (no C++ compiler); the message says why."""


def lltm_module():
    """examples/extensions/lltm/lltm.py, imported (its LLTMFunction and ember's build)."""
    if LLTM_DIR not in sys.path:
        sys.path.insert(0, LLTM_DIR)
    return importlib.import_module("lltm")


def lltm_build_dir():
    """Where torch's build of lltm.cpp is cached ($EMBER_BENCH_BUILD_DIR, else
    ~/.cache/ember_benchmarks/lltm_torch): a later run only re-links nothing."""
    root = os.environ.get("EMBER_BENCH_BUILD_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "ember_benchmarks")
    path = os.path.join(root, "lltm_torch")
    os.makedirs(path, exist_ok=True)
    return path


def lltm_extension(lib):
    """lltm.cpp compiled for ``lib``: ember's cpp_extension (lltm.py's cached build), or
    torch's ``torch.utils.cpp_extension.load`` with the same flags (cached in
    ``lltm_build_dir()``; the first build takes about a minute). Raises LLTMUnavailable
    without a C++ compiler."""
    lltm = lltm_module()
    from ember.utils.cpp_extension._compiler import find_compiler
    if find_compiler() is None:
        raise LLTMUnavailable("no C++ compiler found ($CXX, c++, g++ or clang++)")
    if libname(lib) == "ember":
        return lltm.extension()
    cpp_extension = importlib.import_module(libname(lib) + ".utils.cpp_extension")
    return cpp_extension.load("lltm_bench_torch", [os.path.join(LLTM_DIR, "lltm.cpp")],
                              extra_cflags=list(lltm.EXTRA_CFLAGS),
                              extra_include_paths=[LLTM_TORCH_INCLUDE],
                              build_directory=lltm_build_dir(), verbose=False)


def lltm_function_class(lib, ext):
    """lltm.py's LLTMFunction written for ``lib`` around the compiled module ``ext`` (the
    torch side of the pair; ember's is lltm.py's own)."""
    once_differentiable = lib.autograd.function.once_differentiable

    class LLTMFunction(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input, weights, bias, old_h, old_cell):
            new_h, new_cell, *saved = ext.forward(input, weights, bias, old_h, old_cell)
            ctx.save_for_backward(new_cell, *saved, weights)
            return new_h, new_cell

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_h, grad_cell):
            d_old_h, d_input, d_weights, d_bias, d_old_cell = ext.backward(
                grad_h, grad_cell, *ctx.saved_tensors)
            return d_input, d_weights, d_bias, d_old_h, d_old_cell
    return LLTMFunction


def make_lltm_steps(libs, batch=16, features=32, state=128, seed=0):
    """{name: step} of the LLTM cell through its C++ extension, float32, the tutorial's
    sizes: ``new_h, new_cell = LLTMFunction.apply(x, W, b, h, c)``, then
    ``(new_h.sum() + new_cell.sum()).backward()`` (W and b require grad; their .grad
    accumulates). A library whose build fails is left out with a note on stderr; no
    compiler at all raises LLTMUnavailable."""
    rng = np.random.default_rng(seed)
    bound = 1.0 / np.sqrt(state)
    arrays = [rng.standard_normal((batch, features)),
              rng.uniform(-bound, bound, (3 * state, features + state)),
              rng.uniform(-bound, bound, 3 * state),
              rng.standard_normal((batch, state)), rng.standard_normal((batch, state))]
    arrays = [a.astype(np.float32) for a in arrays]
    steps = {}
    for name, lib in libs.items():
        try:
            ext = lltm_extension(lib)
        except LLTMUnavailable:
            raise
        except Exception as e:  # e.g. torch's JIT build needs ninja
            print(f"  lltm: {name}'s build of lltm.cpp failed, left out: {e}", file=sys.stderr)
            continue
        fn = (lltm_module().LLTMFunction if name == "ember" else lltm_function_class(lib, ext))
        x, w, b, h, c = (lib.from_numpy(a.copy()) for a in arrays)
        w.requires_grad_()
        b.requires_grad_()

        def step(fn=fn, x=x, w=w, b=b, h=h, c=c):
            new_h, new_cell = fn.apply(x, w, b, h, c)
            loss = new_h.sum() + new_cell.sum()
            loss.backward()
            return loss
        steps[name] = step
    return steps


def to_float(result):
    """A workload's result as a Python float (sum of a tensor's elements)."""
    arr = result.detach().numpy() if hasattr(result, "detach") else np.asarray(result)
    return float(np.asarray(arr, dtype=np.float64).sum())

"""ember.onnx.export writes ONNX files that onnxruntime runs to ember's outputs."""
import io

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 16),
                                 nn.LeakyReLU(0.1), nn.Linear(16, 4))

    def forward(self, x):
        h = self.net(x)
        return F.log_softmax(h, dim=1), (h.sigmoid() - 0.5) / 2 * h.tanh()


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=1, padding="same", groups=2)
        self.bn2 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.gap = nn.AdaptiveAvgPool2d((1, 1))
        self.conv1d = nn.Conv1d(8, 4, 3)
        self.fc = nn.Linear(8 * 2 * 2 + 8 + 4 * 2, 5)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))            # (N, 8, 4, 4)
        y = F.gelu(self.bn2(self.conv2(x)))
        pooled = F.avg_pool2d(y, 2)                               # (N, 8, 2, 2)
        g = self.gap(y).flatten(1)                                # (N, 8)
        seq = self.conv1d(y.mean(dim=3))                          # (N, 4, 2)
        h = ember.cat([pooled.view(pooled.shape[0], -1), g, seq.reshape(-1, 8)], dim=1)
        return F.softmax(self.fc(h), dim=-1)


class EmbeddingLN(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8)
        self.norm = nn.LayerNorm(8)
        self.proj = nn.Linear(8, 3)

    def forward(self, tokens):
        h = self.norm(self.emb(tokens))                           # (N, T, 8)
        h = F.gelu(h, approximate="tanh").permute(0, 2, 1)        # (N, 8, T)
        return self.proj(h.transpose(1, 2)) + 1.0


def _export(model, x, **kw):
    buf = io.BytesIO()
    proto = ember.onnx.export(model, (x,), buf, input_names=["x"], **kw)
    onnx.checker.check_model(proto)
    return proto, ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])


def _ember_outputs(model, x):
    model.eval()
    with ember.no_grad():
        out = model(x)
    return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def _check(session, model, x):
    got = session.run(None, {"x": x.numpy()})
    expected = _ember_outputs(model, x)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_mlp():
    ember.manual_seed(0)
    model = MLP()
    x = ember.randn(5, 6)
    proto, session = _export(model, x, output_names=["logp", "mixed"])
    assert model.training  # the model's mode is restored
    _check(session, model, x)
    assert [o.name for o in proto.graph.output] == ["logp", "mixed"]
    assert {i.name for i in proto.graph.initializer} >= set(model.state_dict())
    assert "Dropout" not in {n.op_type for n in proto.graph.node}  # eval: identity


def test_cnn_with_dynamic_batch():
    ember.manual_seed(1)
    model = CNN()
    model.train()
    with ember.no_grad():
        model(ember.randn(6, 3, 8, 8))  # moves the running statistics off their defaults
    x = ember.randn(2, 3, 8, 8)
    proto, session = _export(model, x, output_names=["probs"],
                             dynamic_axes={"x": {0: "batch"}, "probs": {0: "batch"}})
    ops = {n.op_type for n in proto.graph.node}
    assert {"Conv", "BatchNormalization", "MaxPool", "AveragePool", "GlobalAveragePool",
            "Gemm", "Concat", "Softmax"} <= ops
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    _check(session, model, x)
    _check(session, model, ember.randn(7, 3, 8, 8))  # another batch size


def test_embedding_layer_norm(tmp_path):
    ember.manual_seed(2)
    model = EmbeddingLN()
    tokens = ember.randint(0, 20, (3, 7))
    path = tmp_path / "emb.onnx"
    ember.onnx.export(model, (tokens,), path, input_names=["x"], opset_version=17,
                      dynamic_axes={"x": [0, 1]})
    proto = onnx.load(str(path))
    ops = [n.op_type for n in proto.graph.node]
    assert "Gather" in ops and "LayerNormalization" in ops
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    _check(session, model, tokens)
    _check(session, model, ember.randint(0, 20, (2, 11)))


def test_opset_20_writes_gelu_as_one_node():
    model = nn.Sequential(nn.Linear(3, 3), nn.GELU())
    x = ember.randn(2, 3)
    proto, session = _export(model, x, opset_version=20)
    assert [n.op_type for n in proto.graph.node] == ["Gemm", "Gelu"]
    _check(session, model, x)


def test_unsupported_op_is_named():
    class Cumulative(nn.Module):
        def forward(self, x):
            return x.cumsum(1)
    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError,
                       match=r"Exporting the operator 'ember.Cumsum' \(autograd node "
                             r"CumsumBackward0\) to ONNX opset version 18 is not supported"):
        ember.onnx.export(Cumulative(), (ember.randn(2, 3),), io.BytesIO())
    assert not ember.onnx.is_in_onnx_export()
    assert issubclass(ember.onnx.UnsupportedOperatorError, RuntimeError)


def test_export_arguments():
    model = nn.Linear(2, 2)
    x = ember.randn(1, 2)
    with pytest.raises(NotImplementedError, match="export_params=True"):
        ember.onnx.export(model, (x,), io.BytesIO(), export_params=False)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        ember.onnx.export(model, (x,), io.BytesIO(), bogus=1)
    with pytest.raises(ValueError, match="opset"):
        ember.onnx.export(model, (x,), io.BytesIO(), opset_version=5)
    with pytest.raises(ValueError, match="dynamic_axes names"):
        ember.onnx.export(model, (x,), io.BytesIO(), dynamic_axes={"nope": [0]})
    proto = ember.onnx.export(model, x, dynamo=False, do_constant_folding=True)
    assert proto.graph.input[0].name == "input"
    assert ember.nn.functional.linear.__name__ == "linear"  # the recorders are gone


def test_function_returning_one_value_twice_and_an_input():
    def fn(x, w):
        y = ember.matmul(x, w).relu()
        return y, y, x
    x, w = ember.randn(2, 3), ember.randn(3, 4)
    buf = io.BytesIO()
    proto = ember.onnx.export(fn, (x, w), buf, input_names=["x", "w"],
                              output_names=["a", "b", "c"])
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    a, b, c = session.run(None, {"x": x.numpy(), "w": w.numpy()})
    expected = fn(x, w)[0].numpy()
    np.testing.assert_allclose(a, expected, rtol=1e-6)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(c, x.numpy())
    assert [o.name for o in proto.graph.output] == ["a", "b", "c"]


def test_op_outside_the_recording_is_refused_not_folded():
    class Double(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    def fn(x):
        return Double.apply(x) + 1
    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError, match="DoubleBackward"):
        ember.onnx.export(fn, (ember.randn(2),))


def test_in_place_ops_are_followed():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(inplace=True),
                          nn.Flatten(), nn.Linear(2 * 4 * 4, 3))

    def fn(x):
        y = model(x) * 1.0
        y += 3
        return y.relu_() - 1

    x = ember.randn(2, 1, 6, 6)
    model.eval()
    buf = io.BytesIO()
    ember.onnx.export(fn, (x,), buf, input_names=["x"])
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    with ember.no_grad():
        expected = fn(x).numpy()
    np.testing.assert_allclose(session.run(None, {"x": x.numpy()})[0], expected, rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("index", [
    lambda x: x[:, 0], lambda x: x[0], lambda x: x[:, 1:3], lambda x: x[..., -1],
    lambda x: x[:, None, ::2], lambda x: x[1:, -2:, 1], lambda x: x[:, :, :]])
def test_basic_indexing(index):
    x = ember.randn(3, 4, 5)

    def fn(t):
        return index(t * 1.0)
    buf = io.BytesIO()
    ember.onnx.export(fn, (x,), buf, input_names=["x"])
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    got = session.run(None, {"x": x.numpy()})[0]
    np.testing.assert_array_equal(got, fn(x).detach().numpy())


class Recurrent(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.lstm = nn.LSTM(3, 5, batch_first=True, **kw)
        self.fc = nn.Linear(5 * (2 if kw.get("bidirectional") else 1), 2)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.fc(out), h, c


@pytest.mark.parametrize("opset", [11, 18])
@pytest.mark.parametrize("kw", [dict(num_layers=2, bidirectional=True), dict(bias=False)],
                         ids=str)
def test_lstm_layers_become_onnx_lstm_nodes(kw, opset):
    ember.manual_seed(5)
    model = Recurrent(**kw)
    x = ember.randn(2, 4, 3)
    proto, session = _export(model, x, opset_version=opset)
    _check(session, model, x)
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    assert [n.op_type for n in proto.graph.node].count("LSTM") == layers


@pytest.mark.parametrize("opset", [10, 11, 13, 17, 18])
def test_older_opsets(opset):
    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(5)
            self.fc = nn.Linear(5, 5)

        def forward(self, x):
            h = self.fc(self.norm(x)).clamp(-0.5, 0.5)
            return F.softmax(h, dim=1) + h.sum(dim=2, keepdim=True) + h.mean(dim=1, keepdim=True)

    ember.manual_seed(3)
    model = Mixed()
    x = ember.randn(2, 3, 5)
    _, session = _export(model, x, opset_version=opset, dynamic_axes={"x": {0: "batch"}})
    _check(session, model, x)
    _check(session, model, ember.randn(4, 3, 5))


def test_training_modes():
    model = nn.Linear(2, 2)
    x = ember.randn(1, 2)
    ember.onnx.export(model, x, training=ember.onnx.TrainingMode.EVAL)
    with pytest.raises(NotImplementedError, match="eval mode only"):
        ember.onnx.export(model, x, training=ember.onnx.TrainingMode.TRAINING)
    with pytest.raises(NotImplementedError, match="eval mode only"):
        ember.onnx.export(model, x, training=ember.onnx.TrainingMode.PRESERVE)  # training
    model.eval()
    ember.onnx.export(model, x, training=ember.onnx.TrainingMode.PRESERVE)
    assert not model.training

"""The per-sample-gradients recipe of torch.func's documentation, run with only the import
changed: ``vmap(grad(compute_loss), in_dims=(None, None, 0, 0))`` over ``functional_call``
of a small CNN, against torch."""
import numpy as np
import pytest
import torch

import ember


def _model(lib):
    nn, F = lib.nn, lib.nn.functional

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.fc1 = nn.Linear(8 * 4 * 4, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = lib.flatten(x, 1)
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x), dim=1)
    return SimpleCNN()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_per_sample_gradients_of_a_cnn(dtype):
    rng = np.random.default_rng(0)
    data_np = rng.standard_normal((6, 1, 12, 12)).astype(dtype)
    targets_np = rng.integers(0, 10, 6)
    torch.manual_seed(0)
    models = {torch: _model(torch), ember: _model(ember)}
    # torch's initial weights in both, so both compute the same function
    models[ember].load_state_dict({k: ember.tensor(v.numpy())
                                   for k, v in models[torch].state_dict().items()})
    results = []
    for lib in (torch, ember):
        model = models[lib].double() if dtype == np.float64 else models[lib]
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            batch, targets = sample.unsqueeze(0), target.unsqueeze(0)
            predictions = lib.func.functional_call(model, (params, buffers), (batch,))
            return lib.nn.functional.nll_loss(predictions, targets)

        per_sample = lib.func.vmap(lib.func.grad(compute_loss), in_dims=(None, None, 0, 0))(
            params, buffers, lib.tensor(data_np), lib.tensor(targets_np))
        results.append({k: v.detach().numpy() for k, v in per_sample.items()})
    tol = 1e-4 if dtype == np.float32 else 1e-10
    assert results[0].keys() == results[1].keys()
    for k in results[0]:
        assert results[1][k].shape == (6,) + results[0][k].shape[1:]
        np.testing.assert_allclose(results[1][k], results[0][k], rtol=tol, atol=tol, err_msg=k)

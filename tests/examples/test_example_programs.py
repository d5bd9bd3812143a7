"""The programs of examples/ run on ember and follow PyTorch's loss curve: the same program
is loaded once per library, both models start from the same weights (copied across), and
a few training steps in float64 give the same losses."""
import numpy as np
import pytest

import ember

from .example_loader import copy_state, load_example

torch = pytest.importorskip("torch")


def _language_model(lib_name, argv):
    mod = load_example("word_language_model", lib_name)
    args = mod.parse_args(argv)
    corpus = mod.Corpus(args.data)
    model = mod.build_model(args, len(corpus.dictionary))
    return mod, args, model, mod.batchify(corpus.train, args.batch_size)


@pytest.mark.parametrize("model_type", ["LSTM", "GRU", "Transformer"])
def test_word_language_model_follows_torch(model_type):
    argv = ["--model", model_type, "--dropout", "0", "--double", "--lr", "1.0"]
    ours, args, ember_model, ember_data = _language_model("ember", argv)
    theirs, _, torch_model, torch_data = _language_model("torch", argv)
    copy_state(torch_model, ember_model, ember)
    ember_losses = ours.train_epoch(ember_model, ember_data, args, args.lr, max_batches=6)
    torch_losses = theirs.train_epoch(torch_model, torch_data, args, args.lr, max_batches=6)
    assert len(ember_losses) == 6
    np.testing.assert_allclose(ember_losses, torch_losses, rtol=1e-8, atol=1e-8)
    assert ember_losses[-1] < ember_losses[0]  # it learns


def test_word_language_model_main_runs():
    mod = load_example("word_language_model", "ember")
    test_loss = mod.main(["--epochs", "2", "--model", "LSTM"])
    assert np.isfinite(test_loss)


def _shared_noise(monkeypatch, lib, seed):
    """Make ``lib.randn_like`` draw from a NumPy stream, so both libraries see the same
    reparameterization noise."""
    rng = np.random.default_rng(seed)

    def randn_like(t, **kwargs):
        return lib.tensor(rng.standard_normal(tuple(t.shape)), dtype=t.dtype)
    monkeypatch.setattr(lib, "randn_like", randn_like)


def test_vae_follows_torch(monkeypatch):
    setups = {}
    for lib_name, lib in (("torch", torch), ("ember", ember)):
        mod = load_example("vae", lib_name)
        _shared_noise(monkeypatch, lib, seed=3)
        dataset = mod.digits_dataset(lib.float64)
        loader = lib.utils.data.DataLoader(lib.utils.data.Subset(dataset, range(320)),
                                           batch_size=64)
        setups[lib_name] = mod, lib, mod.VAE().to(lib.float64), loader
    copy_state(setups["torch"][2], setups["ember"][2], ember)
    losses = {}
    for lib_name, (mod, lib, model, loader) in setups.items():
        optimizer = lib.optim.Adam(model.parameters(), lr=1e-2)
        losses[lib_name] = mod.train(model, optimizer, loader) + \
            mod.train(model, optimizer, loader)
    np.testing.assert_allclose(losses["ember"], losses["torch"], rtol=1e-8)
    assert losses["ember"][-1] < losses["ember"][0]


def test_vae_main_runs():
    assert np.isfinite(load_example("vae", "ember").main(["--epochs", "1"]))


def test_time_sequence_prediction_follows_torch():
    """LSTM cells trained by L-BFGS: from the same initial weights, ember's float64 loss
    curve is torch's (to 1e-8; they agree to about 1e-15 today)."""
    argv = ["--steps", "3", "--max-iter", "5"]
    runs = {}
    for lib_name, lib in (("torch", torch), ("ember", ember)):
        mod = load_example("time_sequence_prediction", lib_name)
        args = mod.parse_args(argv)
        runs[lib_name] = mod, args, mod.Sequence(args.hidden).double(), mod.make_data(args)
    copy_state(runs["torch"][2], runs["ember"][2], ember)
    losses, test_losses = {}, {}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the small ops of an LSTM cell run faster on one thread
    try:
        for lib_name, (mod, args, model, (x, y, test_x, test_y)) in runs.items():
            losses[lib_name] = mod.train(model, x, y, args.steps, args.lr, args.max_iter)
            test_losses[lib_name] = mod.predict(model, test_x, test_y, args.future)[0]
    finally:
        torch.set_num_threads(threads)
    assert len(losses["ember"]) == 3
    np.testing.assert_allclose(losses["ember"], losses["torch"], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(test_losses["ember"], test_losses["torch"], rtol=1e-8,
                               atol=1e-10)
    assert test_losses["ember"] < losses["ember"][0]  # it learns


def test_time_sequence_prediction_main_runs():
    mod = load_example("time_sequence_prediction", "ember")
    assert np.isfinite(mod.main(["--steps", "2", "--max-iter", "3", "--future", "5"]))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_amp_digits_follows_torch(dtype):
    """Mixed precision (autocast + GradScaler) from the same float32 weights and batches:
    the losses stay within the lower precision's rounding of torch's, and the model learns."""
    runs = {}
    for lib_name, lib in (("torch", torch), ("ember", ember)):
        mod = load_example("amp_digits", lib_name)
        args = mod.parse_args(["--dtype", dtype])
        model, optimizer, scaler, _, _ = mod.build(args)
        loader = lib.utils.data.DataLoader(
            lib.utils.data.Subset(mod.digits_dataset(), range(640)), batch_size=64)
        runs[lib_name] = mod, model, optimizer, scaler, loader
    copy_state(runs["torch"][1], runs["ember"][1], ember)
    losses = {}
    for lib_name, (mod, model, optimizer, scaler, loader) in runs.items():
        lib = torch if lib_name == "torch" else ember
        losses[lib_name] = mod.train(model, optimizer, scaler, loader, "cpu",
                                     getattr(lib, dtype))
    # bfloat16 keeps 8 mantissa bits: one rounding is ~0.4%; ten steps compound a few
    rtol = 3e-2 if dtype == "bfloat16" else 5e-3
    np.testing.assert_allclose(losses["ember"], losses["torch"], rtol=rtol)
    assert losses["ember"][-1] < losses["ember"][0]


def test_amp_digits_main_runs():
    assert load_example("amp_digits", "ember").main(["--epochs", "1"]) > 0.5

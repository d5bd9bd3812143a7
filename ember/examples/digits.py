"""ember's main job: train a small CNN on scikit-learn's 8x8 digits.

The model mixes what the "Extending PyTorch" notes teach with built-in layers:

* ``LinearFunction`` — a custom ``autograd.Function`` (forward and backward
  written by hand, exactly as the notes write it);
* ``Linear`` — a custom ``nn.Module`` holding Parameters and calling it;
* built-in Conv2d, ReLU, MaxPool2d, Flatten, Dropout and nn.Linear.

It trains with Adam, shows a progress bar with the running loss, saves the
model with ``ember.save`` (no pickle), reloads it into a fresh model and checks
that the reloaded model scores the same.

    python -m ember.examples.digits [--epochs 20] [--batch-size 64] [--lr 0.003]
                                    [--seed 0] [--out digits_cnn.ember]
"""
import argparse
import math
import sys
import time

import ember
from ember import nn
from ember.autograd import Function


class LinearFunction(Function):
    """y = x W^T + b, with the backward the notes derive."""

    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class Linear(nn.Module):
    """A fully connected layer built on LinearFunction, initialized like nn.Linear."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = nn.Parameter(ember.empty(out_features, in_features))
        self.bias = nn.Parameter(ember.empty(out_features)) if bias else None
        bound = 1 / math.sqrt(in_features)
        self.weight.data.uniform_(-bound, bound)
        if self.bias is not None:
            self.bias.data.uniform_(-bound, bound)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


def make_model():
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2),                       # 32 x 4 x 4
        nn.Flatten(),
        Linear(32 * 4 * 4, 64), nn.ReLU(),     # the custom Module (and Function)
        nn.Dropout(0.1),
        nn.Linear(64, 10),
    )


def load_digits(seed):
    """Digits as (N, 1, 8, 8) float32 in [0, 1], split 80/20 with a seeded shuffle."""
    try:
        from sklearn.datasets import load_digits as sk_load_digits
    except ImportError:
        sys.exit("the digits demo needs scikit-learn: pip install -e '.[examples]'")
    data = sk_load_digits()
    x = ember.tensor(data.images, dtype=ember.float32).unsqueeze(1) / 16.0
    y = ember.tensor(data.target, dtype=ember.int64)
    order = ember.randperm(len(y), generator=ember.Generator().manual_seed(seed))
    n_test = len(y) // 5
    test, train = order[:n_test], order[n_test:]
    return (x[train], y[train]), (x[test], y[test])


def accuracy(model, x, y, batch_size=512):
    model.eval()
    correct = 0
    with ember.no_grad():
        for start in range(0, len(y), batch_size):
            logits = model(x[start:start + batch_size])
            correct += int((logits.argmax(1) == y[start:start + batch_size]).sum())
    return correct / len(y)


def train(model, loader, epochs, lr, progress=True):
    from tqdm import tqdm
    optimizer = ember.optim.Adam(model.parameters(), lr=lr)
    scheduler = ember.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(1, epochs + 1):
        model.train()
        running = None
        bar = tqdm(loader, desc=f"epoch {epoch:2d}/{epochs}", leave=False, disable=not progress,
                   file=sys.stdout, ncols=80)
        for xb, yb in bar:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            running = loss.item() if running is None else 0.9 * running + 0.1 * loss.item()
            bar.set_postfix(loss=f"{running:.4f}")
        scheduler.step()
        if progress:
            print(f"epoch {epoch:2d}/{epochs}  running loss {running:.4f}")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m ember.examples.digits",
                                     description="Train a small CNN on the 8x8 digits.")
    parser.add_argument("--epochs", type=positive_int, default=20)
    parser.add_argument("--batch-size", type=positive_int, default=64)
    parser.add_argument("--lr", type=positive_float, default=0.003)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="digits_cnn.ember", help="where to save the model")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def positive_int(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def positive_float(text):
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def main(argv=None):
    args = parse_args(argv)
    ember.manual_seed(args.seed)
    (x_train, y_train), (x_test, y_test) = load_digits(args.seed)
    loader = ember.utils.data.DataLoader(
        ember.utils.data.TensorDataset(x_train, y_train), batch_size=args.batch_size,
        shuffle=True, generator=ember.Generator().manual_seed(args.seed))
    model = make_model()
    start = time.perf_counter()
    train(model, loader, args.epochs, args.lr, progress=not args.quiet)
    seconds = time.perf_counter() - start
    acc = accuracy(model, x_test, y_test)

    ember.save(model.state_dict(), args.out)
    reloaded = make_model()
    reloaded.load_state_dict(ember.load(args.out))
    reloaded_acc = accuracy(reloaded, x_test, y_test)
    if reloaded_acc != acc:
        sys.exit(f"reloaded model scores {reloaded_acc:.4f}, the trained one {acc:.4f}")
    print(f"trained {args.epochs} epochs in {seconds:.1f} s; test accuracy {acc:.2%} "
          f"({len(y_test)} digits); saved to {args.out}; reloaded accuracy {reloaded_acc:.2%}")
    return acc


if __name__ == "__main__":
    main()

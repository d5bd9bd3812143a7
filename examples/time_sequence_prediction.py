"""Time sequence prediction: two stacked LSTM cells learn to continue sine waves.

A PyTorch program in the style of PyTorch's own examples, run on ember by its import line
alone. Each sample is a sine wave with its own phase; the model reads it one value at a
time and predicts the next, trained in float64 by L-BFGS (every optimizer step re-runs the
closure several times). After training it extrapolates the held-out waves ``--future``
steps past their end, feeding its own predictions back in.

    python examples/time_sequence_prediction.py --steps 5
"""
import argparse
import random
import time

import ember as torch
import ember.nn as nn
import ember.optim as optim


def sine_waves(n_samples, length, period, seed):
    """``n_samples`` sine waves of ``length`` points, ``period`` points per radian, each
    shifted by a random whole number of points (Python's ``random``: the same in any
    library); float64, shape (n_samples, length)."""
    rng = random.Random(seed)
    shifts = [rng.randint(-4 * period, 4 * period) for _ in range(n_samples)]
    steps = torch.arange(length, dtype=torch.float64)
    x = steps.unsqueeze(0) + torch.tensor(shifts, dtype=torch.float64).unsqueeze(1)
    return torch.sin(x / period)


class Sequence(nn.Module):
    """LSTMCell -> LSTMCell -> Linear, stepped over time by hand."""

    def __init__(self, hidden=16):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input, future=0):
        """One prediction per input point, then ``future`` more from its own outputs."""
        n = input.size(0)
        state1 = (torch.zeros(n, self.hidden, dtype=input.dtype),
                  torch.zeros(n, self.hidden, dtype=input.dtype))
        state2 = (torch.zeros(n, self.hidden, dtype=input.dtype),
                  torch.zeros(n, self.hidden, dtype=input.dtype))
        outputs = []
        output = None
        for input_t in input.split(1, dim=1):
            state1 = self.lstm1(input_t, state1)
            state2 = self.lstm2(state1[0], state2)
            output = self.linear(state2[0])
            outputs.append(output)
        for _ in range(future):
            state1 = self.lstm1(output, state1)
            state2 = self.lstm2(state1[0], state2)
            output = self.linear(state2[0])
            outputs.append(output)
        return torch.cat(outputs, dim=1)


def make_data(args):
    """(train input, train target, test input, test target): the target is the input
    shifted by one point; the first three waves are held out."""
    data = sine_waves(args.samples, args.length, args.period, args.seed)
    return data[3:, :-1], data[3:, 1:], data[:3, :-1], data[:3, 1:]


def train(model, input, target, steps, lr=0.8, max_iter=20):
    """``steps`` L-BFGS steps on the MSE of next-point predictions; the loss at the start
    of each step (what ``step(closure)`` returns)."""
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(model.parameters(), lr=lr, max_iter=max_iter)
    losses = []
    for _ in range(steps):
        def closure():
            optimizer.zero_grad()
            loss = criterion(model(input), target)
            loss.backward()
            return loss
        losses.append(optimizer.step(closure).item())
    return losses


def predict(model, test_input, test_target, future):
    """Test MSE on the held-out waves and the predictions, ``future`` points beyond."""
    with torch.no_grad():
        pred = model(test_input, future=future)
        loss = nn.MSELoss()(pred[:, :test_target.size(1)], test_target)
    return loss.item(), pred


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="Sine-wave prediction with LSTM cells and LBFGS")
    p.add_argument("--steps", type=int, default=4, help="LBFGS steps")
    p.add_argument("--max-iter", type=int, default=6, help="LBFGS iterations per step")
    p.add_argument("--lr", type=float, default=0.8)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--samples", type=int, default=11)
    p.add_argument("--length", type=int, default=40)
    p.add_argument("--period", type=int, default=5)
    p.add_argument("--future", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    input, target, test_input, test_target = make_data(args)
    model = Sequence(args.hidden).double()
    start = time.time()
    losses = train(model, input, target, args.steps, args.lr, args.max_iter)
    for step, loss in enumerate(losses):
        print(f"step {step:2d} | train loss {loss:.6f}")
    test_loss, pred = predict(model, test_input, test_target, args.future)
    print(f"test loss {test_loss:.6f} | {time.time() - start:.1f}s | "
          f"predicted {pred.size(1) - test_target.size(1)} points past the end")
    return test_loss


if __name__ == "__main__":
    main()

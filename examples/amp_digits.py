"""Mixed-precision training of a small CNN on scikit-learn's 8x8 digits.

A PyTorch program following PyTorch's automatic-mixed-precision recipe, run on ember by its
import line alone: forward pass and loss under ``torch.autocast`` (bfloat16 on the CPU by
default, float16 on a GPU), the loss scaled by ``torch.amp.GradScaler`` so small float16
gradients survive, the optimizer stepped through the scaler, the float32 weights updated.

    python examples/amp_digits.py --epochs 3                 # CPU, bfloat16
    python examples/amp_digits.py --dtype float16            # CPU, float16
    python examples/amp_digits.py --device cuda              # GPU, float16 (needs CuPy)
"""
import argparse

import ember as torch
from ember import nn, optim
from ember.nn import functional as F
from ember.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = nn.Linear(32 * 2 * 2, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)   # 16 x 4 x 4
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)             # 32 x 2 x 2
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(x)


def digits_dataset():
    """The 1,797 digits as 1x8x8 images in [0, 1], with their labels."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    images = torch.tensor(digits.images / 16.0, dtype=torch.float32).unsqueeze(1)
    return TensorDataset(images, torch.tensor(digits.target))


def train(model, optimizer, scaler, loader, device, dtype, max_batches=None):
    """One epoch under autocast; the per-batch losses."""
    model.train()
    losses = []
    for batch_idx, (data, target) in enumerate(loader):
        if max_batches is not None and batch_idx >= max_batches:
            break
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        with torch.autocast(device_type=device, dtype=dtype):
            output = model(data)                    # convolutions and linears in `dtype`
            loss = F.cross_entropy(output, target)  # on autocast's float32 list
        scaler.scale(loss).backward()
        scaler.step(optimizer)                      # skipped if gradients overflowed
        scaler.update()
        losses.append(loss.item())
    return losses


def evaluate(model, loader, device, dtype):
    model.eval()
    correct = 0
    with torch.no_grad(), torch.autocast(device_type=device, dtype=dtype):
        for data, target in loader:
            output = model(data.to(device))
            correct += (output.argmax(1).cpu() == target).sum().item()
    return correct / len(loader.dataset)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="mixed-precision CNN on 8x8 digits")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="cpu")
    p.add_argument("--dtype", choices=("bfloat16", "float16"), default=None,
                   help="default: bfloat16 on the CPU, float16 on CUDA")
    return p.parse_args(argv)


def build(args):
    """The model, its optimizer, the gradient scaler and the train/test loaders."""
    torch.manual_seed(args.seed)
    dataset = digits_dataset()
    train_set = torch.utils.data.Subset(dataset, range(1500))
    test_set = torch.utils.data.Subset(dataset, range(1500, len(dataset)))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=args.batch_size)
    model = Net().to(args.device)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scaler = torch.amp.GradScaler(args.device)
    return model, optimizer, scaler, train_loader, test_loader


def main(argv=None):
    args = parse_args(argv)
    dtype = getattr(torch, args.dtype) if args.dtype else \
        torch.get_autocast_dtype(args.device)
    model, optimizer, scaler, train_loader, test_loader = build(args)
    for epoch in range(1, args.epochs + 1):
        losses = train(model, optimizer, scaler, train_loader, args.device, dtype)
        accuracy = evaluate(model, test_loader, args.device, dtype)
        print(f"epoch {epoch}: mean loss {sum(losses) / len(losses):.4f}, "
              f"test accuracy {accuracy:.3f} ({dtype})")
    return accuracy


if __name__ == "__main__":
    main()

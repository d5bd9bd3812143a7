"""Variational autoencoder on scikit-learn's 8x8 digits.

A PyTorch program in the style of PyTorch's own VAE example, run on ember by its import
line alone: an encoder to a Gaussian posterior, the reparameterization trick, a Bernoulli
decoder, and the loss ``BCE(reconstruction) + KL(q(z|x) || N(0, I))`` minimized with Adam.

    python examples/vae.py --epochs 5
"""
import argparse

import ember as torch
from ember import nn, optim
from ember.nn import functional as F
from ember.utils.data import DataLoader, TensorDataset


class VAE(nn.Module):
    def __init__(self, n_pixels=64, hidden=32, latent=4):
        super().__init__()
        self.fc1 = nn.Linear(n_pixels, hidden)
        self.fc21, self.fc22 = nn.Linear(hidden, latent), nn.Linear(hidden, latent)
        self.fc3, self.fc4 = nn.Linear(latent, hidden), nn.Linear(hidden, n_pixels)
        self.n_pixels = n_pixels

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, self.n_pixels))
        return self.decode(self.reparameterize(mu, logvar)), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    """Reconstruction (summed binary cross-entropy) plus the KL divergence to N(0, I)."""
    bce = F.binary_cross_entropy(recon_x, x.view(-1, recon_x.size(1)), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def digits_dataset(dtype):
    """The 1,797 digits as pixels in [0, 1], with their labels."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    pixels = torch.tensor(digits.data / 16.0, dtype=dtype)
    return TensorDataset(pixels, torch.tensor(digits.target))


def train(model, optimizer, loader, max_batches=None):
    """One epoch; the per-batch losses (summed over the batch)."""
    model.train()
    losses = []
    for batch_idx, (data, _) in enumerate(loader):
        if max_batches is not None and batch_idx >= max_batches:
            break
        optimizer.zero_grad()
        recon, mu, logvar = model(data)
        loss = loss_function(recon, data, mu, logvar)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test(model, loader):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for data, _ in loader:
            recon, mu, logvar = model(data)
            total += loss_function(recon, data, mu, logvar).item()
            count += len(data)
    return total / count


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="VAE on 8x8 digits")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--double", action="store_true", help="train in float64")
    return p.parse_args(argv)


def build(args):
    """The model, its optimizer and the train/test loaders."""
    torch.manual_seed(args.seed)
    dtype = torch.float64 if args.double else torch.float32
    dataset = digits_dataset(dtype)
    train_set, test_set = torch.utils.data.Subset(dataset, range(1500)), \
        torch.utils.data.Subset(dataset, range(1500, len(dataset)))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=args.batch_size)
    model = VAE().to(dtype)
    return model, optim.Adam(model.parameters(), lr=args.lr), train_loader, test_loader


def main(argv=None):
    args = parse_args(argv)
    model, optimizer, train_loader, test_loader = build(args)
    for epoch in range(1, args.epochs + 1):
        losses = train(model, optimizer, train_loader)
        print(f"====> Epoch: {epoch} Average loss: {sum(losses) / 1500:.4f}")
        test_loss = test(model, test_loader)
        print(f"====> Test set loss: {test_loss:.4f}")
    return test_loss


if __name__ == "__main__":
    main()

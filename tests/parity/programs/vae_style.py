"""A convolutional VAE (Conv2d encoder, ConvTranspose2d decoder, reparameterisation with
fixed noise, BCE + KL loss, Adam), then neural-style-transfer-like optimisation of an
image with LBFGS on Gram matrices of a small frozen conv net (content + style losses,
clamp_ of the image in a closure)."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from common_init import det_init

rs = np.random.RandomState(0)
class ConvVAE(nn.Module):
    def __init__(self, z=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 4, 2, 1), nn.LeakyReLU(0.1),
                                 nn.Conv2d(8, 16, 4, 2, 1, bias=False), nn.BatchNorm2d(16), nn.SiLU())
        self.fc_mu, self.fc_logvar = nn.Linear(16 * 4 * 4, z), nn.Linear(16 * 4 * 4, z)
        self.fc_dec = nn.Linear(z, 16 * 4 * 4)
        self.dec = nn.Sequential(nn.ConvTranspose2d(16, 8, 4, 2, 1), nn.Softplus(),
                                 nn.ConvTranspose2d(8, 1, 3, 2, 1, output_padding=1))
    def encode(self, x):
        h = self.enc(x).flatten(start_dim=1)
        return self.fc_mu(h), self.fc_logvar(h)
    def reparameterize(self, mu, logvar, eps):
        std = torch.exp(0.5 * logvar)
        return mu + eps * std
    def decode(self, z):
        return torch.sigmoid(self.dec(self.fc_dec(z).view(-1, 16, 4, 4)))
    def forward(self, x, eps):
        mu, logvar = self.encode(x)
        return self.decode(self.reparameterize(mu, logvar, eps)), mu, logvar

def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x.view(-1, 256), x.view(-1, 256), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD, BCE, KLD

model = ConvVAE(); det_init(model, 0, 0.15)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3, amsgrad=True)
data = torch.from_numpy((rs.rand(6, 1, 16, 16) > 0.6).astype("float32"))
for epoch in range(5):
    model.train()
    optimizer.zero_grad()
    eps = torch.from_numpy(rs.randn(6, 4).astype("float32"))
    recon, mu, logvar = model(data, eps)
    loss, bce, kld = loss_function(recon, data, mu, logvar)
    loss.backward(); optimizer.step()
    print("vae", epoch, "%.4f %.4f %.5f" % (loss.item() / 6, bce.item(), kld.item()))
model.eval()
with torch.no_grad():
    sample = model.decode(torch.from_numpy(rs.randn(3, 4).astype("float32")))
    recon, mu, logvar = model(data, torch.zeros(6, 4))
    print("eval %.5f %.5f %.5f" % (sample.mean().item(), F.mse_loss(recon, data).item(),
                                  F.binary_cross_entropy_with_logits(
                                      torch.logit(recon, eps=1e-6), data,
                                      pos_weight=torch.tensor([2.0])).item()))
    print("bn", "%.5f %.5f" % (model.enc[3].running_mean.sum().item(),
                              model.enc[3].running_var.sum().item()),
          model.enc[3].num_batches_tracked.item())

# style transfer
cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1),
                    nn.ReLU(), nn.AvgPool2d(2), nn.Conv2d(8, 12, 3, padding=1), nn.ReLU())
det_init(cnn, 7, 0.2)
cnn.requires_grad_(False).eval()
mean = torch.tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
std = torch.tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
def gram_matrix(input):
    a, b, c, d = input.size()
    features = input.view(a * b, c * d)
    G = torch.mm(features, features.t())
    return G.div(a * b * c * d)
def features(img):
    x, out = (img - mean) / std, []
    for i, layer in enumerate(cnn):
        x = layer(x)
        if isinstance(layer, nn.ReLU):
            out.append(x)
    return out
content_img = torch.from_numpy(rs.rand(1, 3, 12, 12).astype("float32"))
style_img = torch.from_numpy(rs.rand(1, 3, 12, 12).astype("float32"))
content_target = features(content_img)[1].detach()
style_targets = [gram_matrix(f).detach() for f in features(style_img)]
input_img = content_img.clone().requires_grad_(True)
optimizer = torch.optim.LBFGS([input_img], lr=1, max_iter=6, history_size=5)
for run in range(3):
    def closure():
        with torch.no_grad():
            input_img.clamp_(0, 1)
        optimizer.zero_grad()
        feats = features(input_img)
        style_score = sum(F.mse_loss(gram_matrix(f), t) for f, t in zip(feats, style_targets))
        content_score = F.mse_loss(feats[1], content_target)
        loss = style_score * 1e4 + content_score
        loss.backward()
        return loss
    loss = optimizer.step(closure)
    print("style", run, "%.5f" % loss.item(), optimizer.state[input_img]["n_iter"])
with torch.no_grad():
    input_img.clamp_(0, 1)
print("img %.5f %.5f" % (input_img.sum().item(), (input_img - content_img).abs().max().item()))
optimizer = torch.optim.LBFGS([input_img], lr=0.5, max_iter=8, line_search_fn="strong_wolfe")
def closure2():
    optimizer.zero_grad()
    loss = sum(F.l1_loss(gram_matrix(f), t) for f, t in zip(features(input_img), style_targets))
    loss.backward()
    return loss
print("wolfe %.6f %.6f" % (optimizer.step(closure2).item(), closure2().item()))

"""A class-conditional GAN in the SNGAN/StyleGAN-training style, shrunk: the generator
embeds the class (nn.Embedding) and grows the image by ConvTranspose2d and by
PixelShuffle, with affine InstanceNorm2d; the projection discriminator is spectrally
normalised (the old torch.nn.utils.spectral_norm hook and the newer
nn.utils.parametrizations.spectral_norm, their power-iteration vectors set from NumPy
because both libraries draw them from their own generators); hinge losses, an R1 gradient
penalty by torch.autograd.grad(create_graph=True) as a separate lazy phase, Adam(betas=(0.0, 0.99)), and checks on
the singular values the power iterations estimate."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parametrizations, spectral_norm
from common_init import det_init

rs = np.random.RandomState(0)
NZ, NUM_CLASSES, IMG = 8, 4, 8


class Generator(nn.Module):
    def __init__(self, nz=NZ, ngf=8):
        super().__init__()
        self.embed = nn.Embedding(NUM_CLASSES, nz)
        self.fc = nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0)            # 1x1 -> 4x4
        self.norm1 = nn.InstanceNorm2d(ngf * 2, affine=True)
        self.to_shuffle = nn.Conv2d(ngf * 2, ngf * 4, 3, padding=1)
        self.shuffle = nn.PixelShuffle(2)                            # 4x4 -> 8x8
        self.norm2 = nn.InstanceNorm2d(ngf, affine=True, track_running_stats=False)
        self.out = nn.Conv2d(ngf, 1, 3, padding=1)

    def forward(self, z, y):
        h = (z * self.embed(y)).unsqueeze(-1).unsqueeze(-1)
        h = F.leaky_relu(self.norm1(self.fc(h)), 0.2)
        h = F.relu(self.norm2(self.shuffle(self.to_shuffle(h))))
        return torch.tanh(self.out(h))


class Discriminator(nn.Module):
    def __init__(self, ndf=8):
        super().__init__()
        self.conv1 = spectral_norm(nn.Conv2d(1, ndf, 3, 1, 1), n_power_iterations=2)
        self.conv2 = spectral_norm(nn.Conv2d(ndf, ndf * 2, 4, 2, 1))
        self.conv3 = parametrizations.spectral_norm(nn.Conv2d(ndf * 2, ndf * 2, 3, 1, 1))
        self.linear = parametrizations.spectral_norm(nn.Linear(ndf * 2, 1))
        self.embed = spectral_norm(nn.Embedding(NUM_CLASSES, ndf * 2))

    def forward(self, x, y):
        h = F.leaky_relu(self.conv1(x), 0.2)
        h = F.leaky_relu(self.conv2(h), 0.2)
        h = F.avg_pool2d(F.leaky_relu(self.conv3(h), 0.2), 2)
        h = torch.sum(h, dim=(2, 3))
        return self.linear(h).squeeze(1) + (self.embed(y) * h).sum(1)


def reset_power_iteration_vectors(module):
    """Both spectral-norm flavours start u (and v) from the library's RNG: set from NumPy."""
    with torch.no_grad():
        for name, buf in sorted(module.named_buffers()):
            if name.endswith(("weight_u", "weight_v", "._u", "._v")):
                vec = torch.from_numpy(rs.randn(buf.numel()).astype("float32"))
                buf.copy_(F.normalize(vec, dim=0, eps=1e-12))


def d_hinge_loss(real_logits, fake_logits):
    return F.relu(1.0 - real_logits).mean() + F.relu(1.0 + fake_logits).mean()


def r1_penalty(real_logits, real_images):
    grad, = torch.autograd.grad(outputs=real_logits.sum(), inputs=real_images,
                                create_graph=True)
    return grad.pow(2).reshape(grad.shape[0], -1).sum(1).mean()


G, D = Generator(), Discriminator()
det_init(G, 1, 0.2)
det_init(D, 2, 0.2)
reset_power_iteration_vectors(D)
print("D params", [n for n, _ in D.named_parameters()][:4])
print("D buffers", sorted(n for n, _ in D.named_buffers())[:3])
optG = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.0, 0.99))
optD = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.0, 0.99), eps=1e-8)
fixed_z = torch.from_numpy(rs.randn(4, NZ).astype("float32"))
fixed_y = torch.arange(NUM_CLASSES)
gamma, r1_interval = 1.0, 2
for step in range(6):
    real = torch.from_numpy(np.tanh(rs.randn(8, 1, IMG, IMG)).astype("float32"))
    y = torch.from_numpy(rs.randint(0, NUM_CLASSES, 8)).long()
    z = torch.from_numpy(rs.randn(8, NZ).astype("float32"))
    # discriminator main step: hinge loss on real and (detached) fake images
    fake = G(z, y).detach()
    loss_d = d_hinge_loss(D(real, y), D(fake, y))
    optD.zero_grad()
    loss_d.backward()
    optD.step()
    # lazy R1 regularisation as its own phase (StyleGAN2): only the penalty is backpropagated
    r1 = torch.zeros(())
    if step % r1_interval == 0:
        real = real.detach().requires_grad_(True)
        r1 = r1_penalty(D(real, y), real)
        optD.zero_grad(set_to_none=True)
        (gamma * 0.5 * r1 * r1_interval).backward()
        no_grad = [n for n, p in D.named_parameters() if p.grad is None]
        zero_grad = [n for n, p in D.named_parameters()
                     if p.grad is not None and not p.grad.any()]
        optD.step()
    # generator step
    z = torch.from_numpy(rs.randn(8, NZ).astype("float32"))
    loss_g = -D(G(z, y), y).mean()
    optG.zero_grad()
    loss_g.backward()
    optG.step()
    print("step %d D %.6f R1 %.6f G %.6f" % (step, loss_d.item(), r1.item(), loss_g.item()))
print("after R1 no grad:", no_grad)
print("after R1 zero grad:", zero_grad)
print("adam steps", optD.state[D.conv1.bias]["step"].item(), optD.state[D.linear.bias]["step"].item())

with torch.no_grad():
    w = D.conv2.weight_orig.reshape(D.conv2.weight_orig.shape[0], -1)
    sigma_est = torch.dot(D.conv2.weight_u, torch.mv(w, D.conv2.weight_v))
    sigma_true = torch.linalg.matrix_norm(w, ord=2)
    print("sigma conv2 %.5f %.5f" % (sigma_est.item(), sigma_true.item()))
    w3 = D.conv3.parametrizations.weight.original
    print("sigma conv3 %.5f" % torch.linalg.svdvals(w3.flatten(1))[0].item())
    print("normalised conv3 %.5f" % torch.linalg.svdvals(D.conv3.weight.flatten(1))[0].item())
    print("embed u", "%.6f" % D.embed.weight_u.abs().sum().item())
D.eval(); G.eval()
with torch.no_grad():
    samples = G(fixed_z, fixed_y)
    scores = D(samples, fixed_y)
print("samples %.6f %.6f" % (samples.mean().item(), samples.std().item()))
print("scores", " ".join("%.5f" % s for s in scores.tolist()))
print("in norm", "%.6f %.6f" % (G.norm1.weight.sum().item(), G.norm2.bias.sum().item()))
removed = torch.nn.utils.remove_spectral_norm(D.conv1)
print("removed", sorted(n for n, _ in removed.named_parameters()),
      "%.6f" % removed.weight.abs().sum().item())
parametrizations_left = torch.nn.utils.parametrize.is_parametrized(D.conv3)
torch.nn.utils.parametrize.remove_parametrizations(D.conv3, "weight")
print("parametrized", parametrizations_left, torch.nn.utils.parametrize.is_parametrized(D.conv3),
      "%.6f" % D.conv3.weight.abs().sum().item())

"""The DCGAN training loop of PyTorch's examples, shrunk (8 channels, 16x16 images)."""
import torch
import torch.nn as nn
import torch.optim as optim
torch.manual_seed(0)
nz, ngf, ndf = 8, 8, 8
class G(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, 1, 4, 2, 1, bias=False), nn.Tanh())
    def forward(self, x): return self.main(x)
class D(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())
    def forward(self, x): return self.main(x).view(-1, 1).squeeze(1)
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        torch.nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        torch.nn.init.normal_(m.weight, 1.0, 0.02)
        torch.nn.init.zeros_(m.bias)
netG, netD = G(), D()
netG.apply(weights_init); netD.apply(weights_init)
import numpy as np
rs = np.random.RandomState(0)
# same init: load from numpy
for net in (netG, netD):
    for k, v in net.state_dict().items():
        if v.dtype == torch.float32:
            v.copy_(torch.from_numpy(rs.randn(*v.shape).astype("float32") * 0.05 + (1.0 if 'weight' in k and v.dim() == 1 else 0.0)))
criterion = nn.BCELoss()
fixed_noise = torch.from_numpy(rs.randn(4, nz, 1, 1).astype("float32"))
optD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
real_label, fake_label = 1., 0.
for i in range(5):
    real = torch.from_numpy(rs.rand(4, 1, 16, 16).astype("float32") * 2 - 1)
    netD.zero_grad()
    label = torch.full((4,), real_label, dtype=real.dtype)
    output = netD(real)
    errD_real = criterion(output, label); errD_real.backward()
    D_x = output.mean().item()
    noise = torch.from_numpy(rs.randn(4, nz, 1, 1).astype("float32"))
    fake = netG(noise)
    label.fill_(fake_label)
    output = netD(fake.detach())
    errD_fake = criterion(output, label); errD_fake.backward()
    errD = errD_real + errD_fake
    optD.step()
    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake)
    errG = criterion(output, label); errG.backward()
    optG.step()
    print('[%d] Loss_D: %.6f Loss_G: %.6f D(x): %.6f' % (i, errD.item(), errG.item(), D_x))
with torch.no_grad():
    print(netG(fixed_noise).sum().item())

"""The spatial transformer tutorial of PyTorch, shrunk: a localisation net predicts an
affine theta, affine_grid + grid_sample warp the input, then a small conv classifier
(max_pool, dropout, log_softmax + nll_loss), trained with SGD + momentum."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from common_init import det_init

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=5)
        self.conv2 = nn.Conv2d(4, 8, kernel_size=3)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(8 * 3 * 3, 16)
        self.fc2 = nn.Linear(16, 10)
        self.localization = nn.Sequential(
            nn.Conv2d(1, 4, kernel_size=5), nn.MaxPool2d(2, stride=2), nn.ReLU(True),
            nn.Conv2d(4, 6, kernel_size=3), nn.MaxPool2d(2, stride=2), nn.ReLU(True))
        self.fc_loc = nn.Sequential(nn.Linear(6 * 3 * 3, 12), nn.ReLU(True), nn.Linear(12, 3 * 2))

    def stn(self, x, align_corners, mode, padding_mode):
        xs = self.localization(x)
        xs = xs.view(-1, 6 * 3 * 3)
        theta = self.fc_loc(xs).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=align_corners)
        return F.grid_sample(x, grid, mode=mode, padding_mode=padding_mode,
                             align_corners=align_corners)

    def forward(self, x, align_corners=False, mode="bilinear", padding_mode="zeros"):
        x = self.stn(x, align_corners, mode, padding_mode)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 8 * 3 * 3)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training and False)
        return F.log_softmax(self.fc2(x), dim=1)

model = Net()
det_init(model, 0, 0.2)
# the identity transform as the tutorial initialises it
model.fc_loc[2].weight.data.zero_()
model.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))
rs = np.random.RandomState(0)
data = torch.from_numpy(rs.rand(6, 1, 20, 20).astype("float32"))
target = torch.from_numpy(rs.randint(0, 10, size=(6,)))
model.conv2_drop.eval()  # dropout off: its masks cannot match
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
for step in range(4):
    optimizer.zero_grad()
    output = model(data)
    loss = F.nll_loss(output, target)
    loss.backward()
    g = model.fc_loc[2].weight.grad
    optimizer.step()
    print("train", step, "%.6f %.6f" % (loss.item(), g.abs().sum().item()))

model.eval()
with torch.no_grad():
    for ac in (False, True):
        for mode in ("bilinear", "nearest"):
            for pm in ("zeros", "border", "reflection"):
                out = model(data, ac, mode, pm)
                pred = out.argmax(dim=1, keepdim=True)
                correct = pred.eq(target.view_as(pred)).sum().item()
                print("eval", ac, mode, pm, "%.6f" % out.sum().item(), correct)
# gradients through grid_sample w.r.t. input and grid, and a rotation / scale theta
x = data[:2].clone().requires_grad_()
ang = torch.tensor([0.3, -0.5], requires_grad=True)
for ac in (False, True):
    c, s = ang.cos(), ang.sin()
    theta = torch.stack([torch.stack([c, -s, 0.1 * c], -1), torch.stack([s, c, 0.2 * s], -1)], 1)
    grid = F.affine_grid(theta * 1.1, [2, 1, 12, 14], align_corners=ac)
    out = F.grid_sample(x, grid, mode="bicubic", padding_mode="border", align_corners=ac)
    out.pow(2).mean().backward()
    print("warp", ac, "%.6f %.6f %.6f" % (out.sum().item(), x.grad.abs().sum().item(),
                                       ang.grad.sum().item()))
    x.grad = None; ang.grad = None
# 3-d affine grid (volumetric)
theta3 = torch.from_numpy((np.eye(3, 4) + 0.1 * rs.randn(2, 3, 4)).astype("float32"))
vol = torch.from_numpy(rs.rand(2, 1, 4, 5, 6).astype("float32"))
g3 = F.affine_grid(theta3, [2, 1, 3, 4, 5], align_corners=False)
print("vol", tuple(g3.shape), "%.6f" % F.grid_sample(vol, g3, align_corners=False).sum().item())

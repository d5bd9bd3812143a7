"""A keyword-spotting / small ASR pipeline: a log-mel front end written with torch ops
(torch.stft with a periodic hann window and reflect centering, magnitude, a triangular mel
filterbank built from linspace/clamp/min, 10*log10 with clamp_min, per-channel mean/std
normalization over valid frames only), SpecAugment-style time and frequency masks from
arange comparisons, a Conv1d + BatchNorm1d front, a two-layer bidirectional GRU over a
pack_padded_sequence(enforce_sorted=False) / pad_packed_sequence round trip, CTC training
with nn.CTCLoss(zero_infinity=True) on concatenated targets, Adam with a LambdaLR warmup and
clip_grad_norm_, and greedy CTC decoding with unique_consecutive and an edit distance; then
MFCCs through an orthonormal DCT matrix, deltas as a grouped conv1d over replicate padding, a
depthwise-separable block with a weight_norm parametrization and GLU, GRUCell streaming
checked against the full GRU, PackedSequence fields, and istft / polar / angle / rfft.
The waveforms and label sequences come from NumPy so both libraries see the same data."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import math
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
from common_init import det_init

SAMPLE_RATE, N_FFT, HOP, N_MELS = 4000, 128, 32, 16
VOCAB = ["<blank>", "a", "b", "c", "d", "e"]


def hz_to_mel(f):
    return 2595.0 * torch.log10(1.0 + f / 700.0)


def mel_to_hz(m):
    return 700.0 * (10.0 ** (m / 2595.0) - 1.0)


def mel_filterbank(n_freqs, n_mels, sample_rate, f_min=0.0, f_max=None):
    f_max = f_max or sample_rate / 2
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)
    m_pts = torch.linspace(hz_to_mel(torch.tensor(f_min)).item(),
                           hz_to_mel(torch.tensor(f_max)).item(), n_mels + 2)
    f_pts = mel_to_hz(m_pts)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    fb = torch.max(torch.zeros(1), torch.min(down, up))
    return fb  # (n_freqs, n_mels)


class LogMel(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("window", torch.hann_window(N_FFT))
        self.register_buffer("fb", mel_filterbank(N_FFT // 2 + 1, N_MELS, SAMPLE_RATE))

    def forward(self, wave, lengths):
        spec = torch.stft(wave, N_FFT, hop_length=HOP, win_length=N_FFT, window=self.window,
                          center=True, pad_mode="reflect", return_complex=True)
        power = spec.abs().pow(2.0)                       # (B, freq, frames)
        mel = torch.matmul(power.transpose(1, 2), self.fb)  # (B, frames, mels)
        logmel = 10.0 * torch.log10(torch.clamp_min(mel, 1e-10))
        frames = lengths // HOP + 1
        valid = (torch.arange(logmel.size(1))[None, :] < frames[:, None]).unsqueeze(-1)
        count = valid.sum(dim=1, keepdim=True).clamp(min=1)
        mean = (logmel * valid).sum(dim=1, keepdim=True) / count
        var = ((logmel - mean).pow(2) * valid).sum(dim=1, keepdim=True) / count
        normed = (logmel - mean) / torch.sqrt(var + 1e-5)
        return normed.masked_fill(~valid, 0.0), frames


def spec_augment(x, t0, t_width, f0, f_width):
    frames = torch.arange(x.size(1)).view(1, -1, 1)
    bins = torch.arange(x.size(2)).view(1, 1, -1)
    t_mask = (frames >= t0.view(-1, 1, 1)) & (frames < (t0 + t_width).view(-1, 1, 1))
    f_mask = (bins >= f0.view(-1, 1, 1)) & (bins < (f0 + f_width).view(-1, 1, 1))
    return x.masked_fill(t_mask | f_mask, 0.0)


class KWSModel(nn.Module):
    def __init__(self, n_mels=N_MELS, hidden=24, n_classes=len(VOCAB)):
        super().__init__()
        self.conv = nn.Conv1d(n_mels, hidden, kernel_size=5, stride=1, padding=2, bias=False)
        self.bn = nn.BatchNorm1d(hidden)
        self.gru = nn.GRU(hidden, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, n_classes)

    def forward(self, feats, frames):
        x = F.relu(self.bn(self.conv(feats.transpose(1, 2)))).transpose(1, 2)
        packed = pack_padded_sequence(x, frames.cpu(), batch_first=True, enforce_sorted=False)
        out, h_n = self.gru(packed)
        out, out_lens = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
        return F.log_softmax(self.fc(out), dim=-1), out_lens, h_n


def make_batch(rs, batch):
    lengths = rs.randint(600, 1025, size=batch)
    waves = np.zeros((batch, 1024), dtype=np.float32)
    labels = []
    for i, n in enumerate(lengths):
        seq = rs.randint(1, len(VOCAB), size=rs.randint(2, 5))
        t = np.arange(n) / SAMPLE_RATE
        seg = n // len(seq)
        for j, tok in enumerate(seq):
            freq = 200.0 * tok + 50.0
            waves[i, j * seg:(j + 1) * seg] = np.sin(2 * math.pi * freq * t[j * seg:(j + 1) * seg])
        waves[i, :n] += 0.05 * rs.randn(n)
        labels.append(seq)
    return torch.from_numpy(waves), torch.from_numpy(lengths), labels


def greedy_decode(log_probs, lengths):
    best = log_probs.argmax(dim=-1)
    hyps = []
    for seq, n in zip(best, lengths.tolist()):
        collapsed = torch.unique_consecutive(seq[:n])
        hyps.append([int(tok) for tok in collapsed if tok != 0])
    return hyps


def edit_distance(a, b):
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


torch.manual_seed(0)
rs = np.random.RandomState(0)
front = LogMel()
print("filterbank", tuple(front.fb.shape), "%.6f %.6f" % (front.fb.sum().item(),
                                                           front.fb.max().item()))
model = KWSModel()
det_init(model, 1, 0.2)
ctc = nn.CTCLoss(blank=0, reduction="mean", zero_infinity=True)
opt = torch.optim.Adam(model.parameters(), lr=5e-3, betas=(0.9, 0.98), eps=1e-8)
warmup = 3
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup))

for step in range(8):
    model.train()
    waves, lengths, labels = make_batch(rs, 4)
    feats, frames = front(waves, lengths)
    t0 = torch.from_numpy(rs.randint(0, 20, size=4))
    f0 = torch.from_numpy(rs.randint(0, N_MELS - 3, size=4))
    feats = spec_augment(feats, t0, 3, f0, 2)
    targets = torch.cat([torch.tensor(s, dtype=torch.long) for s in labels])
    target_lengths = torch.tensor([len(s) for s in labels], dtype=torch.long)
    log_probs, out_lens, h_n = model(feats, frames)
    loss = ctc(log_probs.transpose(0, 1), targets, out_lens, target_lengths)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    gnorm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
    opt.step()
    sched.step()
    print("step", step, "loss %.5f gnorm %.5f lr %.5f" % (loss.item(), gnorm.item(),
                                                           sched.get_last_lr()[0]),
          "h_n", tuple(h_n.shape), "frames", frames.tolist())

model.eval()
with torch.no_grad():
    waves, lengths, labels = make_batch(rs, 5)
    feats, frames = front(waves, lengths)
    print("feats %.5f %.5f" % (feats.mean().item(), feats.std().item()))
    log_probs, out_lens, _ = model(feats, frames)
    per_seq = F.ctc_loss(log_probs.transpose(0, 1),
                         torch.cat([torch.tensor(s) for s in labels]), out_lens,
                         torch.tensor([len(s) for s in labels]), reduction="none")
    print("eval ctc", " ".join("%.4f" % v for v in per_seq.tolist()))
    hyps = greedy_decode(log_probs, out_lens)
    errors = sum(edit_distance(h, list(r)) for h, r in zip(hyps, labels))
    total = sum(len(r) for r in labels)
    print("hyp lengths", [len(h) for h in hyps], "cer %.4f" % (errors / total))
    print("log_probs %.5f" % log_probs.sum().item(), "out_lens", out_lens.tolist())

# ---- MFCCs, deltas, a streaming depthwise-separable model, resynthesis ----
def dct_matrix(n_mfcc, n_mels):
    n = torch.arange(float(n_mels))
    k = torch.arange(float(n_mfcc)).unsqueeze(1)
    dct = torch.cos(math.pi / float(n_mels) * (n + 0.5) * k)
    dct[0] *= 1.0 / math.sqrt(2.0)
    return (dct * math.sqrt(2.0 / float(n_mels))).t()  # (n_mels, n_mfcc), ortho


def deltas(feats, win=2):
    # feats (B, C, T): regression deltas as a grouped conv1d with a fixed kernel
    kernel = torch.arange(-win, win + 1, dtype=feats.dtype).repeat(feats.size(1), 1, 1)
    padded = F.pad(feats, (win, win), mode="replicate")
    denom = 2 * sum(i * i for i in range(1, win + 1))
    return F.conv1d(padded, kernel, groups=feats.size(1)) / denom


class SeparableBlock(nn.Module):
    def __init__(self, channels, kernel_size):
        super().__init__()
        self.depthwise = nn.Conv1d(channels, channels, kernel_size, groups=channels,
                                   padding=kernel_size // 2)
        self.pointwise = nn.utils.parametrizations.weight_norm(
            nn.Conv1d(channels, 2 * channels, 1))

    def forward(self, x):
        return x + F.glu(self.pointwise(self.depthwise(x)), dim=1)


waves, lengths, labels = make_batch(rs, 3)
with torch.no_grad():
    feats, frames = front(waves, lengths)
mfcc = torch.matmul(feats, dct_matrix(8, N_MELS)).transpose(1, 2)      # (B, 8, T)
d1 = deltas(mfcc)
d2 = deltas(d1)
stacked = torch.cat([mfcc, d1, d2], dim=1)
print("mfcc %.5f delta %.5f delta2 %.5f" % (mfcc.abs().mean().item(), d1.abs().mean().item(),
                                             d2.abs().mean().item()), tuple(stacked.shape))
block = SeparableBlock(24, 3)
det_init(block, 4, 0.2)
pooled = F.adaptive_max_pool1d(block(stacked), 1).squeeze(-1)
print("separable %.5f" % pooled.sum().item(),
      sorted(n for n, _ in block.named_parameters()))

cell = nn.GRUCell(N_MELS, 12)
full = nn.GRU(N_MELS, 12, batch_first=True)
det_init(cell, 5, 0.3)
with torch.no_grad():
    full.weight_ih_l0.copy_(cell.weight_ih)
    full.weight_hh_l0.copy_(cell.weight_hh)
    full.bias_ih_l0.copy_(cell.bias_ih)
    full.bias_hh_l0.copy_(cell.bias_hh)
    h = torch.zeros(feats.size(0), 12)
    stream = []
    for t in range(feats.size(1)):
        h = cell(feats[:, t], h)
        stream.append(h)
    stream = torch.stack(stream, dim=1)
    offline, _ = full(feats)
print("streaming vs offline %.6f" % (stream - offline).abs().max().item(),
      "%.5f" % stream.pow(2).mean().item())

packed = pack_padded_sequence(feats, frames, batch_first=True, enforce_sorted=False)
print("packed", packed.batch_sizes.tolist()[:3], packed.sorted_indices.tolist(),
      packed.unsorted_indices.tolist(), tuple(packed.data.shape))

window = torch.hann_window(N_FFT, dtype=torch.float64)
wave64 = waves[0].double()
spec = torch.stft(wave64, N_FFT, hop_length=HOP, window=window, return_complex=True)
recon = torch.istft(spec, N_FFT, hop_length=HOP, window=window, length=wave64.numel())
phase = torch.angle(spec[1:-1, 2:12])  # frames inside the signal: no zero bins
rebuilt = torch.polar(spec.abs(), torch.angle(spec))
print("istft error %.3e" % (recon - wave64).abs().max().item(),
      "polar error %.3e" % (rebuilt - spec).abs().max().item(),
      "phase %.5f" % phase.cos().mean().item(),
      "rfft %.5f" % torch.fft.rfft(wave64[:256]).abs().sum().item())

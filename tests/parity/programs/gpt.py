"""A nanoGPT-style character model and its training script: a GPT with tied input/output
embeddings, pre-LayerNorm blocks (a LayerNorm with optional bias over F.layer_norm),
fused-qkv causal attention through scaled_dot_product_attention and through an explicit
masked softmax on a registered tril buffer, tanh-GELU MLP, AdamW groups chosen by
parameter rank with the `fused` keyword probed by inspect.signature, warmup + cosine
learning rate set by hand on param_groups, gradient accumulation under a disabled
GradScaler, clip_grad_norm_, np.memmap batches, an estimate_loss under torch.no_grad,
checkpoint save/load with the '_orig_mod.' prefix fix-up, torch.compile(backend='eager'),
crop_block_size, and top-k generation with list indexing."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import inspect
import math
import os
import tempfile
from contextlib import nullcontext
from dataclasses import dataclass
import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F
from common_init import det_init


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None
    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config, flash):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout
        self.flash = flash and hasattr(torch.nn.functional, "scaled_dot_product_attention")
        if not self.flash:
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                 .view(1, 1, config.block_size, config.block_size))
    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0,
                is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)
    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config, flash):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config, flash)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)
    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


@dataclass
class GPTConfig:
    block_size: int = 16
    vocab_size: int = 29
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 16
    dropout: float = 0.0
    bias: bool = True


class GPT(nn.Module):
    def __init__(self, config, flash=True):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config, flash) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        det_init(self, 0, 0.1)
        with torch.no_grad():
            for pn, p in self.named_parameters():
                if pn.endswith("c_proj.weight"):
                    p.mul_(1 / math.sqrt(2 * config.n_layer))
    def _init_weights(self, module):
        if isinstance(module, nn.Linear) and module.bias is not None:
            torch.nn.init.zeros_(module.bias)
    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params
    def forward(self, idx, targets=None):
        b, t = idx.size()
        assert t <= self.config.block_size, f"Cannot forward sequence of length {t}"
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss
    def crop_block_size(self, block_size):
        assert block_size <= self.config.block_size
        self.config.block_size = block_size
        self.transformer.wpe.weight = nn.Parameter(self.transformer.wpe.weight[:block_size])
        for block in self.transformer.h:
            if hasattr(block.attn, "bias"):
                block.attn.bias = block.attn.bias[:, :, :block_size, :block_size]
    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [{"params": decay_params, "weight_decay": weight_decay},
                        {"params": nodecay_params, "weight_decay": 0.0}]
        print(f"num decayed parameter tensors: {len(decay_params)}, with "
              f"{sum(p.numel() for p in decay_params):,} parameters")
        print(f"num non-decayed parameter tensors: {len(nodecay_params)}, with "
              f"{sum(p.numel() for p in nodecay_params):,} parameters")
        fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == "cuda"
        extra_args = dict(fused=True) if use_fused else dict()
        print("using fused AdamW:", use_fused, fused_available)
        return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, draws=None):
        for i in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            u = torch.from_numpy(draws[i])[:, None]  # inverse-CDF sampling, same in both
            idx_next = (probs.cumsum(-1) < u).sum(-1, keepdim=True).clamp(max=probs.size(-1) - 1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


# ---- the training script -----------------------------------------------------------------
out_dir = tempfile.mkdtemp()
device = "cuda" if torch.cuda.is_available() and False else "cpu"
device_type = "cuda" if "cuda" in device else "cpu"
dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"
dtype = "float32" if device_type == "cpu" else dtype
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
torch.manual_seed(1337)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True

text = "the quick brown fox jumps over the lazy dog and the cat sat on the mat " * 8
chars = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(chars)}
ids = np.array([stoi[c] for c in text], dtype=np.uint16)
n = int(0.9 * len(ids))
for split, part in (("train", ids[:n]), ("val", ids[n:])):
    part.tofile(os.path.join(out_dir, f"{split}.bin"))
block_size, batch_size, grad_accum = 16, 4, 2
rs = np.random.RandomState(0)

def get_batch(split):
    data = np.memmap(os.path.join(out_dir, f"{split}.bin"), dtype=np.uint16, mode="r")
    ix = rs.randint(0, len(data) - block_size, batch_size)
    x = torch.stack([torch.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
    return x.to(device), y.to(device)

model_args = dict(n_layer=2, n_head=2, n_embd=16, block_size=block_size, bias=True,
                  vocab_size=len(chars), dropout=0.0)
model = GPT(GPTConfig(**model_args))
print("number of parameters: %.4fM" % (model.get_num_params() / 1e6,))
model.to(device)
scaler = torch.amp.GradScaler("cpu", enabled=(dtype == "float16"))
optimizer = model.configure_optimizers(0.1, 6e-3, (0.9, 0.95), device_type)
model = torch.compile(model, backend="eager")
raw_model = model

@torch.no_grad()
def estimate_loss(eval_iters=3):
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            with ctx:
                logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out

def get_lr(it, warmup_iters=3, lr_decay_iters=10, learning_rate=6e-3, min_lr=6e-4):
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)

X, Y = get_batch("train")
best_val_loss = 1e9
for iter_num in range(8):
    lr = get_lr(iter_num)
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    if iter_num % 4 == 0:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
        if losses["val"] < best_val_loss:
            best_val_loss = losses["val"]
            checkpoint = {"model": raw_model.state_dict(), "optimizer": optimizer.state_dict(),
                          "model_args": model_args, "iter_num": iter_num,
                          "best_val_loss": best_val_loss}
            torch.save(checkpoint, os.path.join(out_dir, "ckpt.pt"))
    for micro_step in range(grad_accum):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / grad_accum
        X, Y = get_batch("train")
        scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    print(f"iter {iter_num}: loss {loss.item() * grad_accum:.6f}, norm {norm.item():.6f}, lr {lr:.6f}")

# resume from the checkpoint, as train.py's init_from='resume'
checkpoint = torch.load(os.path.join(out_dir, "ckpt.pt"), map_location=device)
resumed = GPT(GPTConfig(**checkpoint["model_args"]), flash=False)
state_dict = checkpoint["model"]
unwanted_prefix = "_orig_mod."
for k, v in list(state_dict.items()):
    if k.startswith(unwanted_prefix):
        state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
missing = resumed.load_state_dict(state_dict, strict=False)
print("resume", checkpoint["iter_num"], "%.6f" % float(checkpoint["best_val_loss"]),
      sorted(missing.missing_keys), sorted(missing.unexpected_keys))
opt2 = resumed.configure_optimizers(0.1, 6e-3, (0.9, 0.95), device_type)
opt2.load_state_dict(checkpoint["optimizer"])
X, Y = get_batch("val")
print("flash vs explicit %.6f %.6f" % (raw_model(X, Y)[1].item(), resumed(X, Y)[1].item()))
resumed.crop_block_size(8)
print("cropped", resumed.transformer.wpe.weight.shape[0], tuple(resumed.transformer.h[0].attn.bias.shape))
start = torch.tensor([[stoi["t"], stoi["h"]], [stoi["c"], stoi["a"]]], dtype=torch.long)
out = resumed.generate(start, 10, temperature=0.8, top_k=5, draws=rs.rand(10, 2).astype("float32"))
print("sample", ["".join(chars[i] for i in row) for row in out.tolist()])

"""A LLaMA-style decoder: RMSNorm written by hand and nn.RMSNorm, rotary embeddings through
complex numbers (torch.polar, view_as_complex, view_as_real), grouped-query attention with
repeat_interleave-style repeat_kv, SwiGLU feed-forward, a KV cache filled in place by
slicing, training with AdamW + gradient clipping + CosineAnnealingLR, then generation under
torch.inference_mode with the cache (checked against full recomputation) and top-p
sampling (sort, cumsum, mask, scatter) with NumPy's uniform draws."""
import sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import math
from dataclasses import dataclass
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from common_init import det_init

@dataclass
class ModelArgs:
    dim: int = 32
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int = 2
    vocab_size: int = 40
    multiple_of: int = 16
    norm_eps: float = 1e-5
    max_batch_size: int = 2
    max_seq_len: int = 24

class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
    def forward(self, x):
        return self._norm(x.float()).type_as(x) * self.weight

def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device, dtype=torch.float32)
    freqs = torch.outer(t, freqs)
    return torch.polar(torch.ones_like(freqs), freqs)

def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)

def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)

def repeat_kv(x, n_rep):
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return (x[:, :, :, None, :].expand(bs, slen, n_kv_heads, n_rep, head_dim)
            .reshape(bs, slen, n_kv_heads * n_rep, head_dim))

class Attention(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.n_kv_heads = args.n_kv_heads
        self.n_local_heads = args.n_heads
        self.n_rep = args.n_heads // args.n_kv_heads
        self.head_dim = args.dim // args.n_heads
        self.wq = nn.Linear(args.dim, args.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(args.dim, self.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(args.n_heads * self.head_dim, args.dim, bias=False)
        self.register_buffer("cache_k", torch.zeros(args.max_batch_size, args.max_seq_len,
                                                    self.n_kv_heads, self.head_dim), persistent=False)
        self.register_buffer("cache_v", torch.zeros(args.max_batch_size, args.max_seq_len,
                                                    self.n_kv_heads, self.head_dim), persistent=False)
    def forward(self, x, start_pos, freqs_cis, mask, use_cache):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
        if use_cache:
            self.cache_k = self.cache_k.to(xq)
            self.cache_v = self.cache_v.to(xq)
            self.cache_k[:bsz, start_pos: start_pos + seqlen] = xk
            self.cache_v[:bsz, start_pos: start_pos + seqlen] = xv
            keys = self.cache_k[:bsz, : start_pos + seqlen]
            values = self.cache_v[:bsz, : start_pos + seqlen]
        else:
            keys, values = xk, xv
        keys, values = repeat_kv(keys, self.n_rep), repeat_kv(values, self.n_rep)
        xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)

class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim, multiple_of):
        super().__init__()
        hidden_dim = int(2 * hidden_dim / 3)
        hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)
    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))

class TransformerBlock(nn.Module):
    def __init__(self, layer_id, args):
        super().__init__()
        self.attention = Attention(args)
        self.feed_forward = FeedForward(args.dim, 4 * args.dim, args.multiple_of)
        self.attention_norm = RMSNorm(args.dim, eps=args.norm_eps)
        self.ffn_norm = nn.RMSNorm(args.dim, eps=args.norm_eps)
    def forward(self, x, start_pos, freqs_cis, mask, use_cache):
        h = x + self.attention(self.attention_norm(x), start_pos, freqs_cis, mask, use_cache)
        return h + self.feed_forward(self.ffn_norm(h))

class Transformer(nn.Module):
    def __init__(self, params):
        super().__init__()
        self.params = params
        self.tok_embeddings = nn.Embedding(params.vocab_size, params.dim)
        self.layers = torch.nn.ModuleList(TransformerBlock(i, params) for i in range(params.n_layers))
        self.norm = RMSNorm(params.dim, eps=params.norm_eps)
        self.output = nn.Linear(params.dim, params.vocab_size, bias=False)
        self.freqs_cis = precompute_freqs_cis(params.dim // params.n_heads, params.max_seq_len * 2)
    def forward(self, tokens, start_pos=0, use_cache=False):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        self.freqs_cis = self.freqs_cis.to(h.device)
        freqs_cis = self.freqs_cis[start_pos: start_pos + seqlen]
        mask = None
        if seqlen > 1:
            mask = torch.full((seqlen, seqlen), float("-inf"), device=tokens.device)
            mask = torch.triu(mask, diagonal=1)
            mask = torch.hstack([torch.zeros((seqlen, start_pos), device=tokens.device), mask]).type_as(h)
        for layer in self.layers:
            h = layer(h, start_pos, freqs_cis, mask, use_cache)
        return self.output(self.norm(h)).float()

def sample_top_p(probs, p, u):
    probs_sort, probs_idx = torch.sort(probs, dim=-1, descending=True)
    probs_sum = torch.cumsum(probs_sort, dim=-1)
    mask = probs_sum - probs_sort > p
    probs_sort[mask] = 0.0
    probs_sort.div_(probs_sort.sum(dim=-1, keepdim=True))
    pick = (probs_sort.cumsum(-1) < u[:, None]).sum(-1, keepdim=True).clamp(max=probs.shape[-1] - 1)
    return torch.gather(probs_idx, -1, pick)

rs = np.random.RandomState(0)
args = ModelArgs()
model = Transformer(args); det_init(model, 0, 0.15)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1, betas=(0.9, 0.95))
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, eta_min=1e-4)
data = torch.from_numpy(rs.randint(0, args.vocab_size, (8, 17)))
for step in range(6):
    batch = data[torch.from_numpy(rs.randint(0, 8, 2))]
    logits = model(batch[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, args.vocab_size), batch[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step(); sched.step()
    print("train", step, "%.6f %.6f %.6f" % (loss.item(), gn.item(), sched.get_last_lr()[0]))

model.eval()
prompt = data[:2, :5]
with torch.inference_mode():
    full = model(prompt)
    cached = model(prompt, 0, use_cache=True)
    print("prefill agree", (full - cached).abs().max().item() < 1e-5)
    tokens, prev_pos = prompt.clone(), 0
    out = torch.zeros(2, 12, dtype=torch.long)
    out[:, :5] = prompt
    for cur_pos in range(5, 12):
        logits = model(out[:, prev_pos:cur_pos], prev_pos, use_cache=True)
        probs = torch.softmax(logits[:, -1] / 0.8, dim=-1)
        next_token = sample_top_p(probs, 0.9, torch.from_numpy(rs.rand(2).astype("float32")))
        out[:, cur_pos] = next_token.reshape(-1)
        prev_pos = cur_pos
    recompute = model(out[:, :11])[:, -1]
    print("decode agree", (recompute - logits[:, -1]).abs().max().item() < 1e-4)
    print("tokens", out.tolist())
print("inference mode after", torch.is_inference_mode_enabled())

"""Part of the eighth held-out zoo (bench/zoo/make_heldout8.py builds it): the sequence, audio,
tabular and recommender models. Importing it registers these models in make_models.MODELS.

Torch 1.13 exports (opset 17), seeded weights, dynamic dims fed DIM_VALUES:
- hifigan: a HiFi-GAN-V2-like vocoder (mel [batch, 80, frames] -> waveform: ConvTranspose1d
  upsampling by 8, 8, 2, 2, multi-receptive-field residual blocks of dilated Conv1d with
  LeakyReLU, Tanh);
- conv_tasnet: Conv-TasNet (a stride-8 Conv1d encoder over [batch, samples], global layer norm
  over channels and time, 1x1 / PReLU / dilated depthwise Conv1d blocks with skip sums, sigmoid
  masks for two sources, a ConvTranspose1d decoder);
- gmlp: gMLP (spatial gating unit: LayerNorm then a Conv1d over the token axis, u * v);
- performer_causal: causal linear attention (elu + 1 features, CumSum of the k v outer products
  and of k), dynamic batch and sequence;
- mamba_like: a selective-state-space block (depthwise causal Conv1d, softplus dt, exp(dt A),
  the scan unrolled over 64 steps, SiLU gating, RMSNorm);
- tabnet: TabNet (ghost-BN GLU feature transformers, attentive transformer with sparsemax via
  sort / CumSum / gather, prior scales);
- dcn_v2: DCN-V2 (26 embedding lookups in one table by offsets, three full-rank cross layers
  x0 * (W x + b) + x, a parallel deep MLP);
- din: Deep Interest Network (target attention over a behaviour history: [q, k, q - k, q * k]
  into a PReLU MLP, key-padding mask by Where, softmax, weighted sum), dynamic history;
- patchtst: PatchTST (RevIN normalization, edge Pad, patches by a Gather of a [patches, 16] index, channel-independent
  transformer with BatchNorm, flatten head, de-normalization);
- kan: a Kolmogorov-Arnold network (B-spline bases by the Cox-de Boor recursion: comparisons,
  And, Cast, element-wise chains; SiLU base branch);
- longformer_local: sliding-window (chunked) attention over 512 tokens with a band mask and a
  key-padding mask.
Asides: aside_linear_attn (non-causal linear attention through Einsum), aside_mamba_wide.
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as zoo  # noqa: E402
from heldout7_parts import build  # noqa: E402

model = zoo.model
DIM_VALUES = {"batch": 1, "seq": 256, "frames": 32, "samples": 8000, "hist": 50}


def ids(length, high=1000, name="ids"):
    return [(name, "int64", ["batch", length], {"kind": "int", "high": high})]


# ---------------------------------------------------------------- audio

class ResBlock1(nn.Module):
    def __init__(self, c, k, dilations=(1, 3, 5)):
        super().__init__()
        self.c1 = nn.ModuleList(nn.Conv1d(c, c, k, 1, d * (k - 1) // 2, dilation=d) for d in dilations)
        self.c2 = nn.ModuleList(nn.Conv1d(c, c, k, 1, (k - 1) // 2) for _ in dilations)

    def forward(self, x):
        for a, b in zip(self.c1, self.c2):
            x = x + b(F.leaky_relu(a(F.leaky_relu(x, 0.1)), 0.1))
        return x


class HifiGan(nn.Module):
    def __init__(self, c=128, rates=(8, 8, 2, 2), kernels=(16, 16, 4, 4), rk=(3, 7, 11)):
        super().__init__()
        self.pre = nn.Conv1d(80, c, 7, 1, 3)
        self.ups, self.res = nn.ModuleList(), nn.ModuleList()
        for r, k in zip(rates, kernels):
            self.ups.append(nn.ConvTranspose1d(c, c // 2, k, r, (k - r) // 2))
            c //= 2
            self.res.append(nn.ModuleList(ResBlock1(c, kk) for kk in rk))
        self.post = nn.Conv1d(c, 1, 7, 1, 3)

    def forward(self, mel):
        x = self.pre(mel)
        for up, res in zip(self.ups, self.res):
            x = up(F.leaky_relu(x, 0.1))
            x = sum(r(x) for r in res) / len(res)
        return torch.tanh(self.post(F.leaky_relu(x)))


@model("hifigan")
def hifigan(path):
    return build(HifiGan, [("mel", "float32", ["batch", 80, "frames"], {"kind": "uniform"})], path)


class GLN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.g, self.b = nn.Parameter(1 + 0.1 * torch.randn(1, c, 1)), nn.Parameter(0.1 * torch.randn(1, c, 1))

    def forward(self, x):
        mean = x.mean((1, 2), keepdim=True)
        var = ((x - mean) ** 2).mean((1, 2), keepdim=True)
        return self.g * (x - mean) / torch.sqrt(var + 1e-8) + self.b


class TcnBlock(nn.Module):
    def __init__(self, b, h, d):
        super().__init__()
        self.c1, self.p1, self.n1 = nn.Conv1d(b, h, 1), nn.PReLU(), GLN(h)
        self.dw, self.p2, self.n2 = nn.Conv1d(h, h, 3, 1, d, dilation=d, groups=h), nn.PReLU(), GLN(h)
        self.res, self.skip = nn.Conv1d(h, b, 1), nn.Conv1d(h, b, 1)

    def forward(self, x):
        y = self.n2(self.p2(self.dw(self.n1(self.p1(self.c1(x))))))
        return x + self.res(y), self.skip(y)


class ConvTasNet(nn.Module):
    def __init__(self, n=256, b=128, h=256, x=6, r=2, sources=2):
        super().__init__()
        self.n, self.s = n, sources
        self.enc = nn.Conv1d(1, n, 16, 8, bias=False)
        self.norm, self.bottleneck = GLN(n), nn.Conv1d(n, b, 1)
        self.blocks = nn.ModuleList(TcnBlock(b, h, 2 ** i) for _ in range(r) for i in range(x))
        self.mask = nn.Sequential(nn.PReLU(), nn.Conv1d(b, sources * n, 1))
        self.dec = nn.ConvTranspose1d(n, 1, 16, 8, bias=False)

    def forward(self, wav):
        w = F.relu(self.enc(wav.unsqueeze(1)))
        y = self.bottleneck(self.norm(w))
        skips = 0
        for blk in self.blocks:
            y, s = blk(y)
            skips = skips + s
        m = torch.sigmoid(self.mask(skips)).reshape(wav.shape[0], self.s, self.n, -1)
        est = (m * w.unsqueeze(1)).reshape(-1, self.n, w.shape[-1])
        return self.dec(est).reshape(wav.shape[0], self.s, -1)


@model("conv_tasnet")
def conv_tasnet(path):
    return build(ConvTasNet, [("wav", "float32", ["batch", "samples"], {"kind": "uniform"})], path)


# ---------------------------------------------------------------- token models

class GmlpBlock(nn.Module):
    def __init__(self, d, ff, seq):
        super().__init__()
        self.norm, self.snorm = nn.LayerNorm(d), nn.LayerNorm(ff // 2)
        self.fc1, self.fc2 = nn.Linear(d, ff), nn.Linear(ff // 2, d)
        self.spatial = nn.Conv1d(seq, seq, 1)
        nn.init.normal_(self.spatial.weight, std=0.02)
        nn.init.ones_(self.spatial.bias)

    def forward(self, x):
        u, v = F.gelu(self.fc1(self.norm(x))).chunk(2, -1)
        return x + self.fc2(u * self.spatial(self.snorm(v)))


class Gmlp(nn.Module):
    def __init__(self, d=256, ff=1024, seq=128, depth=6):
        super().__init__()
        self.emb = nn.Embedding(1000, d)
        self.blocks = nn.Sequential(*[GmlpBlock(d, ff, seq) for _ in range(depth)])
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, 1000)

    def forward(self, ids):
        return self.head(self.norm(self.blocks(self.emb(ids))))


@model("gmlp")
def gmlp(path):
    return build(Gmlp, ids(128), path)


class LinearAttnLayer(nn.Module):
    def __init__(self, d, heads, causal):
        super().__init__()
        self.h, self.causal = heads, causal
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def attend(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        q, k = F.elu(q) + 1, F.elu(k) + 1
        if self.causal:
            kv = torch.cumsum(k.unsqueeze(-1) * v.unsqueeze(-2), 2)
            num = (q.unsqueeze(-2) @ kv).squeeze(-2)
            den = (q * torch.cumsum(k, 2)).sum(-1, keepdim=True)
        else:
            kv = torch.einsum("bhld,bhle->bhde", k, v)
            num = torch.einsum("bhld,bhde->bhle", q, kv)
            den = torch.einsum("bhld,bhd->bhl", q, k.sum(2)).unsqueeze(-1)
        return self.proj((num / (den + 1e-6)).transpose(1, 2).reshape(b, n, d))

    def forward(self, x):
        x = x + self.attend(self.n1(x))
        return x + self.ffn(self.n2(x))


class LinearLM(nn.Module):
    def __init__(self, d=128, heads=4, depth=4, causal=True, maxlen=1024):
        super().__init__()
        self.emb, self.pos = nn.Embedding(1000, d), nn.Parameter(0.02 * torch.randn(maxlen, d))
        self.layers = nn.Sequential(*[LinearAttnLayer(d, heads, causal) for _ in range(depth)])
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, 1000)

    def forward(self, ids):
        x = self.emb(ids) + self.pos[:ids.shape[1]]
        return self.head(self.norm(self.layers(x)))


@model("performer_causal")
def performer_causal(path):
    return build(LinearLM, ids("seq"), path)


@model("aside_linear_attn")
def aside_linear_attn(path):
    return build(lambda: LinearLM(192, 6, 3, causal=False), ids("seq"), path, seed=4)


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(1 + 0.1 * torch.randn(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.w


class MambaBlock(nn.Module):
    def __init__(self, d, di, n=16, rank=4, k=4):
        super().__init__()
        self.di, self.n, self.rank = di, n, rank
        self.norm = RMSNorm(d)
        self.inp = nn.Linear(d, 2 * di, bias=False)
        self.conv = nn.Conv1d(di, di, k, 1, k - 1, groups=di)
        self.xp, self.dtp = nn.Linear(di, rank + 2 * n, bias=False), nn.Linear(rank, di)
        self.a_log = nn.Parameter(torch.log(torch.arange(1, n + 1, dtype=torch.float32)).repeat(di, 1))
        self.dskip = nn.Parameter(torch.ones(di))
        self.out = nn.Linear(di, d, bias=False)

    def forward(self, x0):
        length = x0.shape[1]
        x, z = self.inp(self.norm(x0)).chunk(2, -1)
        x = F.silu(self.conv(x.transpose(1, 2))[..., :length].transpose(1, 2))
        dt, bm, cm = self.xp(x).split([self.rank, self.n, self.n], -1)
        dt = F.softplus(self.dtp(dt))
        da = torch.exp(dt.unsqueeze(-1) * -torch.exp(self.a_log))
        dbx = (dt * x).unsqueeze(-1) * bm.unsqueeze(2)
        h = torch.zeros_like(dbx[:, 0])
        ys = []
        for t in range(length):
            h = da[:, t] * h + dbx[:, t]
            ys.append((h @ cm[:, t].unsqueeze(-1)).squeeze(-1))
        y = torch.stack(ys, 1) + x * self.dskip
        return x0 + self.out(y * F.silu(z))


class MambaLM(nn.Module):
    def __init__(self, d=64, di=128, depth=2):
        super().__init__()
        self.emb = nn.Embedding(1000, d)
        self.blocks = nn.Sequential(*[MambaBlock(d, di) for _ in range(depth)])
        self.norm, self.head = RMSNorm(d), nn.Linear(d, 1000)

    def forward(self, ids):
        return self.head(self.norm(self.blocks(self.emb(ids))))


@model("mamba_like")
def mamba_like(path):
    return build(MambaLM, ids(64), path)


@model("aside_mamba_wide")
def aside_mamba_wide(path):
    return build(lambda: MambaLM(96, 256, 3), ids(48), path, seed=6)


class LocalAttn(nn.Module):
    def __init__(self, d, heads, w):
        super().__init__()
        self.h, self.w = heads, w
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        i = torch.arange(w)[:, None]
        j = torch.arange(2 * w)[None, :]
        band = (j > i) & (j <= i + w)
        self.register_buffer("band", band)

    def forward(self, x, keymask):
        b, n, d = x.shape
        nc, w, dh = n // self.w, self.w, d // self.h
        q, k, v = self.qkv(x).reshape(b, nc, w, 3, self.h, dh).permute(3, 0, 4, 1, 2, 5)
        kk = torch.cat([F.pad(k, (0, 0, 0, 0, 1, 0))[:, :, :-1], k], 3)
        vv = torch.cat([F.pad(v, (0, 0, 0, 0, 1, 0))[:, :, :-1], v], 3)
        s = q @ kk.transpose(-2, -1) * dh ** -0.5
        allowed = self.band & keymask[:, None, :, None, :]
        att = s.masked_fill(~allowed, -1e9).softmax(-1)
        return self.proj((att @ vv).permute(0, 2, 3, 1, 4).reshape(b, n, d))


class Longformer(nn.Module):
    def __init__(self, d=256, heads=4, w=64, depth=2, maxlen=512):
        super().__init__()
        self.w = w
        self.emb, self.pos = nn.Embedding(1000, d), nn.Parameter(0.02 * torch.randn(maxlen, d))
        self.attn = nn.ModuleList(LocalAttn(d, heads, w) for _ in range(depth))
        self.n1 = nn.ModuleList(nn.LayerNorm(d) for _ in range(depth))
        self.n2 = nn.ModuleList(nn.LayerNorm(d) for _ in range(depth))
        self.ffn = nn.ModuleList(nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
                                 for _ in range(depth))
        self.head = nn.Linear(d, 2)

    def forward(self, ids, mask):
        b, n = ids.shape
        m = mask > 0
        m = m.reshape(b, n // self.w, self.w)
        keymask = torch.cat([F.pad(m, (0, 0, 1, 0))[:, :-1], m], 2)
        x = self.emb(ids) + self.pos
        for attn, n1, n2, ffn in zip(self.attn, self.n1, self.n2, self.ffn):
            x = n1(x + attn(x, keymask))
            x = n2(x + ffn(x))
        return self.head(x)


@model("longformer_local")
def longformer_local(path):
    specs = ids(512) + [("mask", "int64", ["batch", 512], {"kind": "int", "high": 2})]
    return build(Longformer, specs, path)


# ---------------------------------------------------------------- tabular and recommenders

def sparsemax(z):
    n = z.shape[-1]
    zs, _ = torch.sort(z, -1, descending=True)
    rng = torch.arange(1, n + 1, dtype=z.dtype)
    cs = zs.cumsum(-1) - 1
    kz = (rng * zs > cs).sum(-1, keepdim=True)
    tau = cs.gather(-1, kz - 1) / kz.to(z.dtype)
    return torch.clamp(z - tau, min=0)


class Glu(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.fc, self.bn = nn.Linear(cin, 2 * cout, bias=False), nn.BatchNorm1d(2 * cout)

    def forward(self, x):
        return F.glu(self.bn(self.fc(x)), -1)


class FeatTransformer(nn.Module):
    def __init__(self, shared, cin, c):
        super().__init__()
        self.layers = nn.ModuleList(list(shared) + [Glu(c, c), Glu(c, c)])

    def forward(self, x):
        x = self.layers[0](x)
        for layer in self.layers[1:]:
            x = (x + layer(x)) * math.sqrt(0.5)
        return x


class TabNet(nn.Module):
    def __init__(self, features=54, nd=16, na=16, steps=3, gamma=1.3, classes=7):
        super().__init__()
        self.nd, self.steps, self.gamma = nd, steps, gamma
        self.bn = nn.BatchNorm1d(features)
        shared = [Glu(features, nd + na), Glu(nd + na, nd + na)]
        self.ft = nn.ModuleList(FeatTransformer(shared, features, nd + na) for _ in range(steps + 1))
        self.att = nn.ModuleList(nn.Sequential(nn.Linear(na, features, bias=False), nn.BatchNorm1d(features))
                                 for _ in range(steps))
        self.head = nn.Linear(nd, classes)

    def forward(self, x):
        x = self.bn(x)
        prior = torch.ones_like(x)
        a = self.ft[0](x)[:, self.nd:]
        out = 0
        for i in range(self.steps):
            m = sparsemax(self.att[i](a) * prior)
            prior = prior * (self.gamma - m)
            h = self.ft[i + 1](m * x)
            out = out + F.relu(h[:, :self.nd])
            a = h[:, self.nd:]
        return self.head(out)


@model("tabnet")
def tabnet(path):
    return build(TabNet, [("x", "float32", ["batch", 54], {"kind": "uniform"})], path)


class DcnV2(nn.Module):
    def __init__(self, dense=13, sparse=26, vocab=1000, e=16, cross=3):
        super().__init__()
        self.emb = nn.Embedding(sparse * vocab, e)
        self.register_buffer("offsets", torch.arange(sparse) * vocab)
        d = dense + sparse * e
        self.cross = nn.ModuleList(nn.Linear(d, d) for _ in range(cross))
        self.deep = nn.Sequential(nn.Linear(d, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU())
        self.out = nn.Linear(d + 256, 1)

    def forward(self, dense, sparse):
        x0 = torch.cat([dense, self.emb(sparse + self.offsets).flatten(1)], 1)
        x = x0
        for lin in self.cross:
            x = x0 * lin(x) + x
        return torch.sigmoid(self.out(torch.cat([x, self.deep(x0)], 1)))


@model("dcn_v2")
def dcn_v2(path):
    specs = [("dense", "float32", ["batch", 13], {"kind": "uniform"}),
             ("sparse", "int64", ["batch", 26], {"kind": "int", "high": 1000})]
    return build(DcnV2, specs, path)


class Din(nn.Module):
    def __init__(self, items=5000, e=32):
        super().__init__()
        self.emb = nn.Embedding(items, e)
        self.att = nn.Sequential(nn.Linear(4 * e, 64), nn.PReLU(), nn.Linear(64, 32), nn.PReLU(), nn.Linear(32, 1))
        self.mlp = nn.Sequential(nn.Linear(3 * e, 200), nn.PReLU(), nn.Linear(200, 80), nn.PReLU(),
                                 nn.Linear(80, 1))

    def forward(self, hist, target, mask):
        k = self.emb(hist)
        q = self.emb(target).unsqueeze(1).expand_as(k)
        s = self.att(torch.cat([q, k, q - k, q * k], -1)).squeeze(-1)
        w = s.masked_fill(mask == 0, float("-inf")).softmax(-1)
        interest = (w.unsqueeze(-1) * k).sum(1)
        return torch.sigmoid(self.mlp(torch.cat([interest, q[:, 0], k.mean(1)], -1)))


@model("din")
def din(path):
    specs = [("hist", "int64", ["batch", "hist"], {"kind": "int", "high": 5000}),
             ("target", "int64", ["batch"], {"kind": "int", "high": 5000}),
             ("mask", "int64", ["batch", "hist"], {"kind": "int", "high": 2})]
    return build(Din, specs, path)


class PatchTst(nn.Module):
    def __init__(self, length=336, chans=7, patch=16, stride=8, d=128, heads=8, depth=3, horizon=96):
        super().__init__()
        self.patch, self.stride, self.h = patch, stride, heads
        np_ = (length - patch) // stride + 2
        self.register_buffer("index", torch.arange(np_)[:, None] * stride + torch.arange(patch)[None, :])
        self.wp, self.pos = nn.Linear(patch, d), nn.Parameter(0.02 * torch.randn(np_, d))
        self.layers = nn.ModuleList()
        for _ in range(depth):
            self.layers.append(nn.ModuleDict({
                "qkv": nn.Linear(d, 3 * d), "o": nn.Linear(d, d), "bn1": nn.BatchNorm1d(d), "bn2": nn.BatchNorm1d(d),
                "ffn": nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))}))
        self.head = nn.Linear(np_ * d, horizon)

    def forward(self, x):
        b, _, c = x.shape
        mean = x.mean(1, keepdim=True)
        std = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + 1e-5)
        x = ((x - mean) / std).permute(0, 2, 1)
        # Patches by one Gather of a [patches, patch] index (Tensor.unfold does not export with a dynamic batch).
        x = F.pad(x, (0, self.stride), mode="replicate")[:, :, self.index]
        z = (self.wp(x) + self.pos).reshape(b * c, x.shape[2], -1)
        n, d = z.shape[1], z.shape[2]
        for ly in self.layers:
            q, k, v = ly["qkv"](z).reshape(-1, n, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
            att = (q @ k.transpose(-2, -1) * (d // self.h) ** -0.5).softmax(-1)
            z = z + ly["o"]((att @ v).transpose(1, 2).reshape(-1, n, d))
            z = ly["bn1"](z.transpose(1, 2)).transpose(1, 2)
            z = ly["bn2"]((z + ly["ffn"](z)).transpose(1, 2)).transpose(1, 2)
        y = self.head(z.reshape(b, c, -1)).permute(0, 2, 1)
        return y * std + mean


@model("patchtst")
def patchtst(path):
    return build(PatchTst, [("series", "float32", ["batch", 336, 7], {"kind": "uniform"})], path)


class KanLayer(nn.Module):
    def __init__(self, cin, cout, grid=5, order=3):
        super().__init__()
        self.order = order
        h = 2.0 / grid
        g = torch.arange(-order, grid + order + 1, dtype=torch.float32) * h - 1
        self.register_buffer("grid", g.expand(cin, -1).contiguous())
        self.base = nn.Linear(cin, cout, bias=False)
        self.spline = nn.Linear(cin * (grid + order), cout, bias=False)

    def forward(self, x):
        g, xe = self.grid, x.unsqueeze(-1)
        bases = ((xe >= g[:, :-1]) & (xe < g[:, 1:])).to(x.dtype)
        for k in range(1, self.order + 1):
            bases = ((xe - g[:, :-(k + 1)]) / (g[:, k:-1] - g[:, :-(k + 1)]) * bases[..., :-1]
                     + (g[:, k + 1:] - xe) / (g[:, k + 1:] - g[:, 1:-k]) * bases[..., 1:])
        return self.base(F.silu(x)) + self.spline(bases.flatten(1))


class Kan(nn.Module):
    def __init__(self, widths=(784, 64, 64, 10)):
        super().__init__()
        self.layers = nn.Sequential(*[KanLayer(a, b) for a, b in zip(widths[:-1], widths[1:])])

    def forward(self, x):
        return self.layers(torch.tanh(x))


@model("kan")
def kan(path):
    return build(Kan, [("x", "float32", ["batch", 784], {"kind": "uniform"})], path)

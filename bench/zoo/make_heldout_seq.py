#!/usr/bin/python3
"""Builds the second held-out zoo, sequence and tabular part: models ged was never tuned on.

    /usr/bin/python3 bench/zoo/make_heldout_seq.py OUT [--only NAME,NAME]
    bench/zoo/run.sh --zoo OUT --threads 1,2 --batches 1,8 --rounds 3 --no-docs

Same format as the zoo (OUT/<name>.onnx, OUT/manifest.json, batch-1 inputs and torch
references under OUT/data), so run.sh times it against ONNX Runtime and check.py checks
it against torch. Kept aside and only measured: a change should hold for the class,
not for these instances.

The models, torch 1.13 exports with seeded weights, dynamic batch and sequence dims fed
concrete values (DIM_VALUES): a GPT-2-style decoder (tanh GELU written out, causal mask
through Where, tied LM head), a T5-style encoder (RMSNorm as Pow/ReduceMean/Sqrt/Div,
bucketed relative position bias computed in the graph from the sequence length, gated
GELU FFN), a wav2vec2-like audio model (conv1d feature extractor with GroupNorm and GELU,
grouped positional convolution, post-norm transformer), a conformer (half-step SiLU FFNs,
self-attention, convolution module with GLU, depthwise conv1d and BatchNorm1d),
nn.TransformerDecoder with cross-attention over a memory input, DLRM (26 embedding
Gathers, bottom and top MLPs, pairwise dot interaction through BMM and a triangle
gather) and a GRU seq2seq with dot attention and greedy decoding unrolled over 8 steps.
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as zoo  # noqa: E402

zoo.MODELS.clear()
model, export_torch = zoo.model, zoo.export_torch
DIM_VALUES = {"batch": 1, "seq": 64, "src": 48, "samples": 16000, "frames": 100}


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Gpt2Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.c_attn, self.c_proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.c_fc, self.mlp_proj = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x, causal):
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, hd).permute(0, 2, 1, 3) for z in (q, k, v))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd)
        w = torch.where(causal, w, torch.tensor(-10000.0))
        a = torch.matmul(F.softmax(w, dim=-1), v).permute(0, 2, 1, 3).reshape(b, t, d)
        x = x + self.c_proj(a)
        return x + self.mlp_proj(gelu_tanh(self.c_fc(self.ln_2(x))))


class Gpt2(nn.Module):
    """GPT-2 small's structure at width 384, 6 heads, 4 blocks; logits of every position."""

    def __init__(self, vocab=6000, dim=384, heads=6, depth=4, positions=256):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(positions, dim)
        self.blocks = nn.ModuleList(Gpt2Block(dim, heads) for _ in range(depth))
        self.ln_f = nn.LayerNorm(dim)
        self.register_buffer("bias", torch.tril(torch.ones(positions, positions, dtype=torch.bool)))

    def forward(self, ids):
        t = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(t).unsqueeze(0))
        causal = self.bias[:t, :t].view(1, 1, t, t)
        for block in self.blocks:
            x = block(x, causal)
        return torch.matmul(self.ln_f(x), self.wte.weight.t())


@model("gpt2_dyn")
def gpt2(path):
    torch.manual_seed(0)
    specs = [("ids", "int64", ["batch", "seq"], {"kind": "int", "high": 6000})]
    return specs, export_torch(Gpt2(), specs, path)


class RmsNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(1.0 + 0.1 * torch.randn(dim)), eps

    def forward(self, x):
        variance = torch.pow(x, 2).mean(-1, keepdim=True)
        return self.weight * (x / torch.sqrt(variance + self.eps))


def t5_buckets(relative, buckets=32, max_distance=128):
    """T5's bidirectional bucketing: half the buckets per sign, exact below buckets/4, log above."""
    half = buckets // 2
    result = (relative > 0).long() * half
    n = relative.abs()
    exact = half // 2
    large = exact + (torch.log(n.float() / exact + 1e-6) / math.log(max_distance / exact) * (half - exact)).long()
    large = torch.min(large, torch.full_like(large, half - 1))
    return result + torch.where(n < exact, n, large)


class T5Layer(nn.Module):
    def __init__(self, dim, heads, ff):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = RmsNorm(dim), RmsNorm(dim)
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.wi_0, self.wi_1 = nn.Linear(dim, ff, bias=False), nn.Linear(dim, ff, bias=False)
        self.wo = nn.Linear(ff, dim, bias=False)

    def forward(self, x, bias):
        b, t, d = x.shape
        h = self.norm1(x)
        q, k, v = (p(h).view(b, t, self.heads, -1).transpose(1, 2) for p in (self.q, self.k, self.v))
        scores = torch.matmul(q, k.transpose(3, 2)) + bias
        x = x + self.o(torch.matmul(scores.softmax(-1), v).transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.wo(F.gelu(self.wi_0(h), approximate="tanh") * self.wi_1(h))


class T5Encoder(nn.Module):
    """T5 v1.1-style encoder: width 256, 4 heads, 4 layers, shared relative position bias."""

    def __init__(self, vocab=8000, dim=256, heads=4, depth=4, ff=640, buckets=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rel = nn.Embedding(buckets, heads)
        self.layers = nn.ModuleList(T5Layer(dim, heads, ff) for _ in range(depth))
        self.final = RmsNorm(dim)

    def forward(self, ids):
        t = ids.shape[1]
        pos = torch.arange(t)
        bias = self.rel(t5_buckets(pos.unsqueeze(0) - pos.unsqueeze(1))).permute(2, 0, 1).unsqueeze(0)
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x, bias)
        return self.final(x)


@model("t5_encoder_dyn")
def t5_encoder(path):
    torch.manual_seed(0)
    specs = [("ids", "int64", ["batch", "seq"], {"kind": "int", "high": 8000})]
    return specs, export_torch(T5Encoder(), specs, path)


class Wav2Vec2(nn.Module):
    """wav2vec2-base's shape at half width: 7 conv1d feature layers (GroupNorm after the
    first, GELU), LayerNorm + projection, grouped positional conv, 4 post-norm layers."""

    def __init__(self, conv=256, dim=384, heads=6, depth=4, classes=32):
        super().__init__()
        layers, cin = [], 1
        for i, (k, s) in enumerate([(10, 5), (3, 2), (3, 2), (3, 2), (3, 2), (2, 2), (2, 2)]):
            layers.append(nn.Conv1d(cin, conv, k, s, bias=False))
            if i == 0:
                layers.append(nn.GroupNorm(conv, conv))
            layers.append(nn.GELU())
            cin = conv
        self.features = nn.Sequential(*layers)
        self.norm, self.proj = nn.LayerNorm(conv), nn.Linear(conv, dim)
        self.pos_conv = nn.Conv1d(dim, dim, 64, padding=32, groups=16)
        self.enc_norm = nn.LayerNorm(dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 4, dropout=0.0, activation="gelu", batch_first=True)
        self.layers = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head = nn.Linear(dim, classes)

    def forward(self, audio):
        f = self.features(audio.unsqueeze(1)).transpose(1, 2)
        x = self.proj(self.norm(f))
        p = F.gelu(self.pos_conv(x.transpose(1, 2))[:, :, :-1]).transpose(1, 2)
        return self.head(self.layers(self.enc_norm(x + p)))


@model("wav2vec2_dyn")
def wav2vec2(path):
    torch.manual_seed(0)
    specs = [("audio", "float32", ["batch", "samples"], {"kind": "uniform"})]
    return specs, export_torch(Wav2Vec2(), specs, path)


class ConvModule(nn.Module):
    def __init__(self, dim, kernel=31):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.pw1, self.pw2 = nn.Conv1d(dim, 2 * dim, 1), nn.Conv1d(dim, dim, 1)
        self.dw = nn.Conv1d(dim, dim, kernel, padding=kernel // 2, groups=dim)
        self.bn = nn.BatchNorm1d(dim)

    def forward(self, x):
        y = F.glu(self.pw1(self.norm(x).transpose(1, 2)), dim=1)
        return self.pw2(F.silu(self.bn(self.dw(y)))).transpose(1, 2)


class ConformerBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ff1, self.ff2 = (nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 4 * dim), nn.SiLU(),
                                            nn.Linear(4 * dim, dim)) for _ in range(2))
        self.att_norm = nn.LayerNorm(dim)
        self.att = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.conv = ConvModule(dim)
        self.out_norm = nn.LayerNorm(dim)

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        h = self.att_norm(x)
        x = x + self.att(h, h, h, need_weights=False)[0]
        x = x + self.conv(x)
        return self.out_norm(x + 0.5 * self.ff2(x))


class Conformer(nn.Module):
    """Conformer encoder over 80-bin features: 2x conv2d subsampling, width 256, 4 blocks."""

    def __init__(self, bins=80, dim=256, heads=4, depth=4, classes=64):
        super().__init__()
        self.sub = nn.Sequential(nn.Conv2d(1, dim, 3, 2), nn.ReLU(), nn.Conv2d(dim, dim, 3, 2), nn.ReLU())
        self.inp = nn.Linear(dim * (((bins - 1) // 2 - 1) // 2), dim)
        self.blocks = nn.ModuleList(ConformerBlock(dim, heads) for _ in range(depth))
        self.head = nn.Linear(dim, classes)
        g = torch.Generator().manual_seed(1)
        for m in self.modules():
            if isinstance(m, nn.BatchNorm1d):
                m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)

    def forward(self, feats):
        s = self.sub(feats.unsqueeze(1))
        b, c, t, f = s.shape
        x = self.inp(s.permute(0, 2, 1, 3).reshape(b, t, c * f))
        for block in self.blocks:
            x = block(x)
        return self.head(x).log_softmax(-1)


@model("conformer_dyn")
def conformer(path):
    torch.manual_seed(0)
    specs = [("feats", "float32", ["batch", "frames", 80], {"kind": "uniform"})]
    return specs, export_torch(Conformer(), specs, path)


class Seq2SeqDecoder(nn.Module):
    """nn.TransformerDecoder (causal self-attention, cross-attention on memory), width 256."""

    def __init__(self, vocab=5000, dim=256, heads=8, depth=3):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(256, dim)
        layer = nn.TransformerDecoderLayer(dim, heads, 1024, dropout=0.0, batch_first=True)
        self.dec = nn.TransformerDecoder(layer, depth)
        self.out = nn.Linear(dim, vocab)

    def forward(self, ids, memory):
        t = ids.shape[1]
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        x = self.tok(ids) + self.pos(torch.arange(t).unsqueeze(0))
        return self.out(self.dec(x, memory, tgt_mask=mask))


@model("transformer_decoder_dyn")
def transformer_decoder(path):
    torch.manual_seed(0)
    specs = [("ids", "int64", ["batch", "seq"], {"kind": "int", "high": 5000}),
             ("memory", "float32", ["batch", "src", 256], {"kind": "uniform"})]
    return specs, export_torch(Seq2SeqDecoder(), specs, path)


class Dlrm(nn.Module):
    """DLRM (Criteo shape, small tables): 13 dense features through a bottom MLP, 26 sparse
    ids through embedding tables of width 64, pairwise dot interaction, top MLP, sigmoid."""

    def __init__(self, dense=13, tables=26, dim=64):
        super().__init__()
        g = torch.Generator().manual_seed(2)
        sizes = torch.randint(100, 20000, (tables,), generator=g).tolist()
        self.emb = nn.ModuleList(nn.Embedding(n, dim) for n in sizes)
        self.bottom = nn.Sequential(nn.Linear(dense, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                                    nn.Linear(256, dim), nn.ReLU())
        n = tables + 1
        self.register_buffer("li", torch.tensor([i for i in range(n) for j in range(i)]))
        self.register_buffer("lj", torch.tensor([j for i in range(n) for j in range(i)]))
        self.top = nn.Sequential(nn.Linear(dim + n * (n - 1) // 2, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                                 nn.Linear(256, 1), nn.Sigmoid())
        self.sizes = sizes

    def forward(self, dense, ids):
        x = self.bottom(dense)
        t = torch.stack([x] + [e(ids[:, i]) for i, e in enumerate(self.emb)], dim=1)
        z = torch.bmm(t, t.transpose(1, 2))
        return self.top(torch.cat([x, z[:, self.li, self.lj]], dim=1))


@model("dlrm")
def dlrm(path):
    torch.manual_seed(0)
    specs = [("dense", "float32", ["batch", 13], {"kind": "uniform"}),
             ("ids", "int64", ["batch", 26], {"kind": "int", "high": 100})]
    return specs, export_torch(Dlrm(), specs, path)


class GruSeq2Seq(nn.Module):
    """Bidirectional GRU encoder, GRU decoder with dot attention over the encoder states and
    greedy decoding (ArgMax feeds the next step's embedding), 8 steps unrolled."""

    def __init__(self, vocab=3000, emb=128, hidden=256, steps=8):
        super().__init__()
        self.steps = steps
        self.src_emb, self.tgt_emb = nn.Embedding(vocab, emb), nn.Embedding(vocab, emb)
        self.enc = nn.GRU(emb, hidden // 2, bidirectional=True, batch_first=True)
        self.bridge = nn.Linear(hidden, hidden)
        self.dec = nn.GRU(emb + hidden, hidden, batch_first=True)
        self.combine = nn.Linear(2 * hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, src):
        enc, _ = self.enc(self.src_emb(src))
        h = torch.tanh(self.bridge(enc.mean(dim=1))).unsqueeze(0)
        tok = src[:, :1] * 0
        ctx = torch.zeros_like(enc[:, :1])
        logits = []
        for _ in range(self.steps):
            y, h = self.dec(torch.cat([self.tgt_emb(tok), ctx], dim=2), h)
            att = torch.softmax(torch.bmm(y, enc.transpose(1, 2)), dim=-1)
            ctx = torch.bmm(att, enc)
            step = self.out(torch.tanh(self.combine(torch.cat([y, ctx], dim=2))))
            logits.append(step)
            tok = step.argmax(-1)
        return torch.cat(logits, dim=1)


@model("gru_seq2seq_attn")
def gru_seq2seq(path):
    torch.manual_seed(0)
    specs = [("src", "int64", ["batch", "seq"], {"kind": "int", "high": 3000})]
    return specs, export_torch(GruSeq2Seq(), specs, path)


def main():
    zoo.main_with_dim_values(DIM_VALUES)


if __name__ == "__main__":
    main()

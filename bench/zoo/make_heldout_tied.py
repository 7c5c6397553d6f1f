#!/usr/bin/python3
"""Builds the tied-weights held-out set: one constant weight read by nodes that fall into
different partitions (issue 20, docs/perf.md "One weight, several partitions").

    /usr/bin/python3 bench/zoo/make_heldout_tied.py OUT [--only NAME,NAME]
    bench/zoo/run.sh --zoo OUT --threads 1,2 --batches 1,8 --rounds 1 --no-docs

Same format as the zoo (make_models.write_zoo: OUT/<name>.onnx, OUT/manifest.json,
batch-1 inputs and torch references under OUT/data). Every model reads one weight from
several places that end in different units: greedy decoding unrolled over a few steps puts
an ArgMax / ArgMin (host_cpu, so a dynamic unit) between the steps, and every step's
static unit reads the same weights.

- `gpt_tied_greedy`: a GPT-2-like decoder (pre-norm blocks, tanh GELU) with its token
  embedding tied to the LM head (Gemm transB=1 on the embedding itself), 4 greedy steps
  recomputing the growing sequence: the embedding and every block's weights are read by
  4 units.
- `seq2seq_shared_emb`: a transformer encoder-decoder (BART / T5 style) whose source
  embedding, target embedding and output projection are one matrix, 4 greedy steps.
- `vq_codebook`: a VQ-VAE bottleneck whose codebook feeds a Gemm on cpu_dense (the
  distances), ArgMin on host_cpu, then a Gather of the codebook rows: one weight read by
  ops on engines of two partitions.
- `gru_seq2seq_shared`: make_heldout_seq.py's gru_seq2seq_attn with its initializers
  deduplicated (`dedupe_initializers`: Identity(initializer) readers rewired to the
  initializer, byte-equal initializers merged, as ONNX tools that deduplicate
  initializers give it): the form scout6 found repacked on every run (session 15).
- `aside_lstm_seq2seq_shared` (kept aside, measured only at the end): an LSTM decoder
  with Luong attention, other widths, deduplicated the same way.

torch's exporter unties `F.linear(x, W)` (it folds W^T into an initializer of its own) and
emits an Identity for each reuse of a weight; `tie_transposed` and `dedupe_initializers`
give the models the form hand-written models and initializer-deduplicating tools give.
"""
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_models as zoo  # noqa: E402
import make_heldout_seq as seq  # noqa: E402

zoo.MODELS.clear()
model, export_torch = zoo.model, zoo.export_torch
DIM_VALUES = {"batch": 1, "seq": 32, "src": 48, "frames": 64}


def dedupe_initializers(path):
    """Rewrites the model at `path` so every weight is one initializer: byte-equal
    initializers merge into the first, and an Identity of an initializer is dropped, its
    readers reading the initializer."""
    m = onnx.load(path)
    g = m.graph
    canon, by_bytes = {}, {}
    for init in g.initializer:
        a = numpy_helper.to_array(init)
        key = (init.data_type, tuple(init.dims), a.tobytes())
        canon[init.name] = by_bytes.setdefault(key, init.name)
    outputs = {o.name for o in g.output}
    keep = []
    for n in g.node:
        if n.op_type == "Identity" and n.input[0] in canon and n.output[0] not in outputs:
            canon[n.output[0]] = canon[n.input[0]]
            continue
        keep.append(n)
    for n in keep:
        for i, name in enumerate(n.input):
            if name in canon:
                n.input[i] = canon[name]
    del g.node[:]
    g.node.extend(keep)
    used = {x for n in g.node for x in n.input} | outputs
    kept = [i for i in g.initializer if i.name in used and canon[i.name] == i.name]
    del g.initializer[:]
    g.initializer.extend(kept)
    onnx.checker.check_model(m)
    onnx.save(m, path)


def tie_transposed(path, weight):
    """torch's exporter folds `F.linear(x, W)` into MatMul(x, W^T) with W^T a new
    initializer, which unties a tied weight; this puts the tie back: every MatMul by an
    initializer that is exactly `weight` transposed becomes Gemm(x, weight, transB=1) (the
    form hand-written models and other exporters give). The models here only multiply
    rank-2 values by it (checked by onnx's checker and by the references)."""
    m = onnx.load(path)
    g = m.graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    w = inits[weight]
    tied = 0
    for n in g.node:
        b = inits.get(n.input[1]) if n.op_type == "MatMul" else None
        if b is None or b.shape != w.T.shape or not np.array_equal(b, w.T):
            continue
        n.op_type = "Gemm"
        n.input[1] = weight
        n.attribute.append(helper.make_attribute("transB", 1))
        tied += 1
    if tied == 0:
        sys.exit("%s: no MatMul reads %s transposed" % (path, weight))
    onnx.checker.check_model(m)
    onnx.save(m, path)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Attention(nn.Module):
    def __init__(self, dim, heads, cross=False):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        self.o = nn.Linear(dim, dim)

    def forward(self, x, mem=None, causal=None):
        b, t, d = x.shape
        mem = x if mem is None else mem
        s = mem.shape[1]
        hd = d // self.heads
        q = self.q(x).view(b, t, self.heads, hd).transpose(1, 2)
        k, v = self.kv(mem).split(d, dim=2)
        k = k.view(b, s, self.heads, hd).transpose(1, 2)
        v = v.view(b, s, self.heads, hd).transpose(1, 2)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd)
        if causal is not None:
            w = w + causal
        a = torch.matmul(F.softmax(w, dim=-1), v).transpose(1, 2).reshape(b, t, d)
        return self.o(a)


class Block(nn.Module):
    def __init__(self, dim, heads, cross=False):
        super().__init__()
        self.ln1, self.ln3 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.ln2 = nn.LayerNorm(dim) if cross else None
        self.cross = Attention(dim, heads) if cross else None
        self.fc, self.proj = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x, mem=None, causal=None):
        x = x + self.attn(self.ln1(x), causal=causal)
        if self.cross is not None:
            x = x + self.cross(self.ln2(x), mem)
        return x + self.proj(gelu_tanh(self.fc(self.ln3(x))))


def causal_mask(t):
    return torch.triu(torch.full((t, t), -1e4), diagonal=1)


class GptTiedGreedy(nn.Module):
    """GPT-2-like, embedding tied to the LM head, `steps` greedy tokens after the prompt."""

    def __init__(self, vocab=4000, dim=256, heads=4, depth=2, positions=64, steps=4):
        super().__init__()
        self.steps = steps
        self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(positions, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, ids):
        logits = []
        for _ in range(self.steps):
            t = ids.shape[1]
            x = self.wte(ids) + self.wpe.weight[:t].unsqueeze(0)
            mask = causal_mask(t)
            for block in self.blocks:
                x = block(x, causal=mask)
            step = F.linear(self.ln_f(x[:, -1]), self.wte.weight)  # Gemm transB=1 on the embedding
            logits.append(step)
            ids = torch.cat([ids, step.argmax(-1, keepdim=True)], dim=1)
        return torch.stack(logits, dim=1)


@model("gpt_tied_greedy")
def gpt_tied_greedy(path):
    torch.manual_seed(0)
    specs = [("ids", "int64", ["batch", 32], {"kind": "int", "high": 4000})]
    reference = export_torch(GptTiedGreedy(), specs, path)
    dedupe_initializers(path)
    tie_transposed(path, "wte.weight")
    dedupe_initializers(path)
    return specs, reference


class Seq2SeqSharedEmb(nn.Module):
    """Encoder-decoder whose source and target embeddings and output projection are one
    matrix (scaled by sqrt(dim) on input, as T5 / BART tie them), `steps` greedy tokens."""

    def __init__(self, vocab=3000, dim=192, heads=4, depth=2, positions=64, steps=4):
        super().__init__()
        self.steps, self.dim = steps, dim
        self.shared = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(positions, dim)
        self.enc = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.dec = nn.ModuleList(Block(dim, heads, cross=True) for _ in range(depth))
        self.ln_e, self.ln_d = nn.LayerNorm(dim), nn.LayerNorm(dim)

    def forward(self, src):
        s = src.shape[1]
        mem = self.shared(src) * math.sqrt(self.dim) + self.pos.weight[:s].unsqueeze(0)
        for block in self.enc:
            mem = block(mem)
        mem = self.ln_e(mem)
        tgt = src[:, :1] * 0
        logits = []
        for _ in range(self.steps):
            t = tgt.shape[1]
            y = self.shared(tgt) * math.sqrt(self.dim) + self.pos.weight[:t].unsqueeze(0)
            mask = causal_mask(t)
            for block in self.dec:
                y = block(y, mem, causal=mask)
            step = F.linear(self.ln_d(y[:, -1]), self.shared.weight)
            logits.append(step)
            tgt = torch.cat([tgt, step.argmax(-1, keepdim=True)], dim=1)
        return torch.stack(logits, dim=1)


@model("seq2seq_shared_emb")
def seq2seq_shared_emb(path):
    torch.manual_seed(0)
    specs = [("src", "int64", ["batch", 24], {"kind": "int", "high": 3000})]
    reference = export_torch(Seq2SeqSharedEmb(), specs, path)
    dedupe_initializers(path)
    tie_transposed(path, "shared.weight")
    dedupe_initializers(path)
    return specs, reference


class VqCodebook(nn.Module):
    """Conv1d encoder, nearest-codebook quantization (distances through a Gemm on the
    codebook, ArgMin, Gather of the codebook rows), conv1d decoder; the output and the
    code indices."""

    def __init__(self, channels=80, dim=128, codes=1024):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv1d(channels, dim, 3, padding=1), nn.GELU(), nn.Conv1d(dim, dim, 3, padding=1))
        self.codebook = nn.Parameter(torch.randn(codes, dim))
        self.dec = nn.Sequential(nn.Conv1d(dim, dim, 3, padding=1), nn.GELU(), nn.Conv1d(dim, channels, 3, padding=1))

    def forward(self, x):
        z = self.enc(x).transpose(1, 2)  # [B, T, D]
        b, t, d = z.shape
        flat = z.reshape(b * t, d)
        dist = (flat * flat).sum(-1, keepdim=True) - 2 * F.linear(flat, self.codebook) + \
            (self.codebook * self.codebook).sum(-1).unsqueeze(0)
        idx = dist.argmin(-1)
        q = F.embedding(idx, self.codebook).view(b, t, d).transpose(1, 2)
        return self.dec(q), idx.view(b, t)


@model("vq_codebook")
def vq_codebook(path):
    torch.manual_seed(0)
    specs = [("mel", "float32", ["batch", 80, "frames"], {"kind": "uniform"})]
    reference = export_torch(VqCodebook(), specs, path)
    tie_transposed(path, "codebook")
    dedupe_initializers(path)
    return specs, reference


@model("gru_seq2seq_shared")
def gru_seq2seq_shared(path):
    torch.manual_seed(0)
    specs = [("src", "int64", ["batch", "src"], {"kind": "int", "high": 3000})]
    reference = export_torch(seq.GruSeq2Seq(), specs, path)
    dedupe_initializers(path)
    return specs, reference


class LstmSeq2Seq(nn.Module):
    """LSTM encoder, LSTM decoder with Luong (general) attention, greedy, unrolled."""

    def __init__(self, vocab=2000, emb=96, hidden=192, steps=6):
        super().__init__()
        self.steps = steps
        self.src_emb, self.tgt_emb = nn.Embedding(vocab, emb), nn.Embedding(vocab, emb)
        self.enc = nn.LSTM(emb, hidden, batch_first=True)
        self.dec = nn.LSTM(emb + hidden, hidden, batch_first=True)
        self.att = nn.Linear(hidden, hidden, bias=False)
        self.combine = nn.Linear(2 * hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, src):
        enc, (h, c) = self.enc(self.src_emb(src))
        keys = self.att(enc)
        tok = src[:, :1] * 0
        ctx = torch.zeros_like(enc[:, :1])
        logits = []
        for _ in range(self.steps):
            y, (h, c) = self.dec(torch.cat([self.tgt_emb(tok), ctx], dim=2), (h, c))
            att = torch.softmax(torch.bmm(y, keys.transpose(1, 2)), dim=-1)
            ctx = torch.bmm(att, enc)
            step = self.out(torch.tanh(self.combine(torch.cat([y, ctx], dim=2))))
            logits.append(step)
            tok = step.argmax(-1)
        return torch.cat(logits, dim=1)


@model("aside_lstm_seq2seq_shared")
def aside_lstm_seq2seq_shared(path):
    torch.manual_seed(0)
    specs = [("src", "int64", ["batch", "src"], {"kind": "int", "high": 2000})]
    reference = export_torch(LstmSeq2Seq(), specs, path)
    dedupe_initializers(path)
    return specs, reference


def main():
    zoo.main_with_dim_values(DIM_VALUES)


if __name__ == "__main__":
    main()

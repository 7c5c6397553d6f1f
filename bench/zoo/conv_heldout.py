#!/usr/bin/env python3
"""Held-out convolution models: ged against ONNX Runtime on shapes the zoo does not have.

Builds small ONNX models (opset 17, seeded weights) around the kernels the zoo's
convolution outliers exercise, runs each through `gectl run` (default options) and
ONNX Runtime (bench/ort_run.js), with the same inputs, at batch 1 and 3 (the batch dim
is dynamic, as in the zoo), and prints the max |ged - ORT| per model (and the largest |ORT| value: the tolerance
is relative to it when it exceeds 1):

- ConvTranspose: 1-D, 2-D and 3-D; strides, pads, output_padding, groups, dilations;
  between convolutions (blocked layouts on both sides) and alone;
- Resize: nearest (every nearest_mode) and linear, scales and sizes, up and down,
  half_pixel, pytorch_half_pixel, align_corners, asymmetric; 1-D, 2-D, 3-D, after and
  before convolutions;
- dilated and causal Conv1d (dilations 1 to 16, pads as wide as the dilation) with
  GELU, residual Adds and LogSoftmax over the channels;
- residual blocks whose convolution may accumulate in its shortcut's buffer: channels
  that fill blocks of 8 and that do not, the shortcut on either side of the Add, read
  again after it, a graph input, a strided projection, 1-D;
- small outputs with wide channels (cpu_dense's own small-output convolution: the 14x14 and
  7x7 stages of ResNet-34 and VGG-like stacks (14x14 ones on oneDNN), stride-2 entries,
  residual adds, ReLU6, a dilated and asymmetrically padded 3x3, a 5x5, a 1x3, and
  output channels not in 16s that stay on oneDNN).

    bench/zoo/conv_heldout.py [--gectl build/bin/gectl] [--out build/conv_heldout]
                              [--tolerance 1e-4]

Exits non-zero when a model fails to run or differs by more than the tolerance.
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout_common import compare_with_ort  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Builder:
    """A graph under construction: one dynamic-batch float input."""

    def __init__(self, name, dims, seed):
        self.name, self.nodes, self.inits, self.count = name, [], [], 0
        self.rng = np.random.default_rng(seed)
        self.input = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch"] + list(dims[1:]))
        self.dims = dims

    def fresh(self, prefix):
        self.count += 1
        return "%s_%d" % (prefix, self.count)

    def const(self, value, dtype=np.float32):
        name = self.fresh("c")
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def node(self, op, inputs, **attrs):
        out = self.fresh(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def conv(self, x, cin, cout, k, nd, std=0.3, **attrs):
        kernel = list(k) if isinstance(k, (list, tuple)) else [k] * nd
        w = self.const(self.rng.normal(0, std, [cout, cin // attrs.get("group", 1)] + kernel))
        b = self.const(self.rng.normal(0, 0.1, [cout]))
        return self.node("Conv", [x, w, b], kernel_shape=kernel, **attrs)

    def deconv(self, x, cin, cout, k, nd, group=1, bias=True, **attrs):
        w = self.const(self.rng.normal(0, 0.3, [cin, cout // group] + [k] * nd))
        inputs = [x, w] + ([self.const(self.rng.normal(0, 0.1, [cout]))] if bias else [])
        return self.node("ConvTranspose", inputs, kernel_shape=[k] * nd, group=group, **attrs)

    def resize(self, x, scales=None, sizes=None, **attrs):
        inputs = [x, ""]
        if scales is not None:
            inputs.append(self.const(scales))
        else:
            inputs += ["", self.const(sizes, np.int64)]
        return self.node("Resize", inputs, **attrs)

    def gelu(self, x):
        d = self.node("Div", [x, self.const(np.sqrt(2.0))])
        e = self.node("Erf", [d])
        a = self.node("Add", [e, self.const(1.0)])
        m = self.node("Mul", [x, a])
        return self.node("Mul", [m, self.const(0.5)])

    def save(self, y, out_dir):
        output = helper.make_tensor_value_info(y, TensorProto.FLOAT, None)
        graph = helper.make_graph(self.nodes, self.name, [self.input], [output], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True)  # validates every node
        path = os.path.join(out_dir, self.name + ".onnx")
        onnx.save(model, path)
        return path


def models(out_dir):
    made = []

    def add(name, dims, build, batches=(1, 3)):
        b = Builder(name, dims, seed=len(made) + 1)
        made.append((b.save(build(b), out_dir), dims, batches))

    # ConvTranspose between convolutions (the layout pass gives both sides blocked layouts).
    add("deconv2d_s2_pad_outpad", [1, 16, 9, 11], lambda b: b.conv(
        b.node("Relu", [b.deconv(b.conv("x", 16, 16, 3, 2, pads=[1] * 4), 16, 8, 3, 2, strides=[2, 2],
                                 pads=[1, 1, 1, 1], output_padding=[1, 1])]), 8, 8, 3, 2, pads=[1] * 4))
    add("deconv2d_groups", [1, 16, 8, 8], lambda b: b.deconv(b.conv("x", 16, 16, 1, 2), 16, 16, 4, 2, group=2,
                                                                strides=[2, 2], pads=[1, 1, 1, 1]))
    add("deconv2d_unet_up", [1, 64, 16, 16], lambda b: b.node("Concat", [
        b.deconv(b.conv("x", 64, 64, 3, 2, pads=[1] * 4), 64, 32, 2, 2, strides=[2, 2]),
        b.conv(b.resize("x", scales=[1, 1, 2, 2], mode="nearest"), 64, 32, 1, 2)], axis=1))
    add("deconv2d_dilated_nobias", [1, 8, 7, 5], lambda b: b.deconv("x", 8, 16, 3, 2, bias=False, strides=[1, 2],
                                                                   dilations=[2, 1], pads=[2, 0, 1, 1]))
    add("deconv1d_s2", [1, 32, 50], lambda b: b.deconv(b.conv("x", 32, 32, 3, 1, pads=[1, 1]), 32, 16, 4, 1,
                                                         strides=[2], pads=[1, 1]))
    add("deconv3d", [1, 8, 4, 5, 6], lambda b: b.deconv("x", 8, 8, 2, 3, strides=[2, 2, 2]))
    # Resize in every mode the zoo's exporters write, after and before convolutions.
    add("resize_bilinear_half_pixel", [1, 16, 20, 24], lambda b: b.conv(b.resize(
        b.conv("x", 16, 32, 3, 2, pads=[1] * 4), scales=[1, 1, 2, 2], mode="linear",
        coordinate_transformation_mode="half_pixel"), 32, 16, 3, 2, pads=[1] * 4))
    add("resize_nearest_asymmetric_floor", [1, 8, 13, 9], lambda b: b.conv(b.resize(
        b.conv("x", 8, 16, 1, 2), scales=[1, 1, 2, 3], mode="nearest", coordinate_transformation_mode="asymmetric",
        nearest_mode="floor"), 16, 8, 3, 2, pads=[1] * 4))
    add("resize_linear_align_corners_sizes", [1, 16, 10, 10], lambda b: b.resize(
        b.conv("x", 16, 16, 3, 2, pads=[1] * 4), sizes=[1, 16, 17, 23], mode="linear",
        coordinate_transformation_mode="align_corners"), batches=(1,))  # sizes fix the batch
    add("resize_nearest_down_ceil", [1, 8, 15, 16], lambda b: b.resize(
        b.conv("x", 8, 8, 3, 2, pads=[1] * 4), scales=[1, 1, 0.5, 0.5], mode="nearest",
        coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil"))
    add("resize_linear_pytorch_half_pixel_frac", [1, 8, 7, 9], lambda b: b.resize(
        "x", scales=[1, 1, 1.5, 2.5], mode="linear", coordinate_transformation_mode="pytorch_half_pixel"))
    add("resize_trilinear", [1, 8, 3, 4, 5], lambda b: b.resize(
        b.conv("x", 8, 8, 1, 3), scales=[1, 1, 2, 2, 2], mode="linear"))
    add("resize_linear_1d", [1, 16, 31], lambda b: b.resize(
        b.conv("x", 16, 16, 3, 1, pads=[1, 1]), scales=[1, 1, 2], mode="linear",
        coordinate_transformation_mode="asymmetric"))

    # Dilated and causal Conv1d blocks (a TCN), GELU, residuals, LogSoftmax over channels.
    def tcn(b, causal):
        x = b.conv("x", 24, 32, 1, 1)
        for i in range(5):
            d = 2 ** i
            pads = [2 * d, 0] if causal else [d, d]
            x = b.node("Add", [x, b.gelu(b.conv(x, 32, 32, 3, 1, dilations=[d], pads=pads))])
        return b.node("LogSoftmax", [b.conv(x, 32, 10, 1, 1)], axis=1)

    add("tcn_dilated", [1, 24, 120], lambda b: tcn(b, False))
    add("tcn_causal", [1, 24, 77], lambda b: tcn(b, True))

    # Residual blocks: a convolution's sum post-op may write into its shortcut's buffer
    # when the shortcut dies there (channel counts that fill blocks of 8 and that do not;
    # the shortcut on either side of the Add; read again after; a graph input; strided
    # projections; 1-D).
    def basic(b, c, nd, shortcut_first=True, blocks=2):
        pads = [1] * (2 * nd)
        y = b.node("Relu", [b.conv("x", b.dims[1], c, 3, nd, pads=pads)])
        for _ in range(blocks):
            r = b.conv(b.node("Relu", [b.conv(y, c, c, 3, nd, pads=pads)]), c, c, 3, nd, pads=pads)
            y = b.node("Relu", [b.node("Add", [y, r] if shortcut_first else [r, y])])
        return y

    def reused(b):
        y = b.node("Relu", [b.conv("x", 16, 16, 3, 2, pads=[1] * 4)])
        z = b.node("Relu", [b.node("Add", [y, b.conv(y, 16, 16, 3, 2, pads=[1] * 4)])])
        return b.node("Add", [b.conv(z, 16, 16, 1, 2), y])  # y is read after the first Add

    def projection(b):
        y = b.node("Relu", [b.conv("x", 16, 32, 3, 2, pads=[1] * 4)])
        main = b.conv(b.node("Relu", [b.conv(y, 32, 64, 3, 2, strides=[2, 2], pads=[1] * 4)]), 64, 64, 3, 2,
                      pads=[1] * 4)
        return b.node("Relu", [b.node("Add", [b.conv(y, 32, 64, 1, 2, strides=[2, 2]), main])])

    add("residual_c16", [1, 16, 14, 14], lambda b: basic(b, 16, 2))
    add("residual_c12_add_swapped", [1, 8, 11, 9], lambda b: basic(b, 12, 2, shortcut_first=False))
    add("residual_c64", [1, 3, 28, 28], lambda b: basic(b, 64, 2, blocks=3))
    add("residual_shortcut_read_again", [1, 16, 10, 10], reused)
    add("residual_of_the_input", [1, 16, 9, 9], lambda b: b.node("Relu", [b.node("Add", [
        "x", b.conv(b.node("Relu", [b.conv("x", 16, 16, 3, 2, pads=[1] * 4)]), 16, 16, 3, 2, pads=[1] * 4)])]))
    add("residual_projection_s2", [1, 16, 15, 15], projection)
    add("residual_1d", [1, 24, 40], lambda b: basic(b, 24, 1))

    # Small outputs with wide channels (weights scaled by 1/sqrt(fan-in), as trained
    # networks keep activations in range).
    def wide(b, x, cin, cout, k=3, relu=True, **attrs):
        kernel = k if isinstance(k, (list, tuple)) else [k, k]
        y = b.conv(x, cin, cout, kernel, 2, std=1.0 / np.sqrt(cin * kernel[0] * kernel[1]), **attrs)
        return b.node("Relu", [y]) if relu else y

    def resnet_stage(b, x, cin, cout, blocks):
        y = x
        for i in range(blocks):
            stride = 2 if i == 0 and cin != cout else 1
            c = cin if i == 0 else cout
            main = wide(b, wide(b, y, c, cout, strides=[stride] * 2, pads=[1] * 4), cout, cout, relu=False,
                        pads=[1] * 4)
            short = wide(b, y, c, cout, 1, relu=False, strides=[stride] * 2) if stride == 2 else y
            y = b.node("Relu", [b.node("Add", [main, short])])
        return y

    add("resnet34_stages_14_7", [1, 128, 28, 28], lambda b: resnet_stage(b, resnet_stage(b, "x", 128, 256, 3),
                                                                         256, 512, 2))
    add("vgg_stack_14_7", [1, 256, 14, 14], lambda b: wide(b, wide(b, b.node("MaxPool", [
        wide(b, wide(b, "x", 256, 256, pads=[1] * 4), 256, 256, pads=[1] * 4)], kernel_shape=[2, 2], strides=[2, 2]),
        256, 512, pads=[1] * 4), 512, 512, pads=[1] * 4))
    add("wide_relu6_dilated_asym", [1, 64, 7, 8], lambda b: b.node("Clip", [
        wide(b, "x", 64, 64, relu=False, dilations=[2, 2], pads=[2, 1, 2, 1]), b.const(0.0), b.const(6.0)]))
    add("wide_5x5_and_1x3", [1, 32, 7, 7], lambda b: wide(b, wide(b, "x", 32, 192, 5, pads=[2] * 4), 192, 64,
                                                          [1, 3], pads=[0, 1, 0, 1]))
    add("wide_outputs_not_in_16s", [1, 64, 7, 7], lambda b: wide(b, wide(b, "x", 64, 40, pads=[1] * 4), 40, 64,
                                                                 pads=[1] * 4))
    return made


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gectl", default=os.path.join(ROOT, "build", "bin", "gectl"))
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "conv_heldout"))
    parser.add_argument("--ort-dir", default=os.path.join(ROOT, "build", "ort", "node_modules"))
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    env = dict(os.environ, NODE_PATH=args.ort_dir)
    failed = 0
    for path, dims, batches in models(args.out):
        name = os.path.splitext(os.path.basename(path))[0]
        for batch in batches:
            x = np.random.default_rng(batch).uniform(-1, 1, [batch] + dims[1:]).astype(np.float32)
            data = os.path.join(args.out, "%s_b%d" % (name, batch))
            row = compare_with_ort(args.gectl, path, x, data, env, args.tolerance, scale_floor=1.0)
            failed += 0 if row.get("ok") else 1
            print(json.dumps(dict({"model": name, "batch": batch}, **row)), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

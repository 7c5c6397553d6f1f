// Conformance cases of cpu_dense's dense kernels: Conv (1-D to 3-D, groups,
// depthwise, strides, dilations, asymmetric pads, every auto_pad), MatMul
// (promotion, batches, broadcasting), Gemm (transposes, alpha, beta, every
// C broadcast), ConvTranspose, Resize (plain and channel-blocked), pooling
// and the fused op, with zero-sized tensors.
#include <cmath>

#include "runtime/engines/cpu_dense/post_ops.h"
#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"

namespace ge::engine::cpu_dense {
namespace {

using Ints = std::vector<int64_t>;

ir::AttrValue IntsAttr(Ints v) { return ir::AttrValue(std::move(v)); }

// A random window configuration for `nd` spatial dims (Conv and pooling).
struct Window {
  Ints kernel, strides, dilations, pads;
  std::string auto_pad = "NOTSET";
};

Window RandomWindow(Rng& rng, int64_t nd, bool dilations) {
  Window w;
  for (int64_t i = 0; i < nd; ++i) {
    w.kernel.push_back(rng.Int(1, 3));
    w.strides.push_back(rng.Int(1, 3));
    w.dilations.push_back(dilations ? rng.Int(1, 2) : 1);
  }
  for (int64_t i = 0; i < 2 * nd; ++i) w.pads.push_back(rng.Int(0, 2));
  const int64_t mode = rng.Int(0, 5);
  w.auto_pad = mode == 3 ? "SAME_UPPER" : mode == 4 ? "SAME_LOWER" : mode == 5 ? "VALID" : "NOTSET";
  return w;
}

void SetWindowAttrs(const Window& w, ir::AttrMap& attrs, bool dilations, Rng& rng) {
  attrs["strides"] = IntsAttr(w.strides);
  if (dilations) attrs["dilations"] = IntsAttr(w.dilations);
  attrs["auto_pad"] = ir::AttrValue(w.auto_pad);
  if (w.auto_pad == "NOTSET") attrs["pads"] = IntsAttr(w.pads);
  if (rng.Bool()) attrs["kernel_shape"] = IntsAttr(w.kernel);
}

Shape SpatialShape(Rng& rng, int64_t n, int64_t c, int64_t nd) {
  Shape s{n, c};
  for (int64_t i = 0; i < nd; ++i) s.push_back(rng.Int(1, nd == 3 ? 6 : 10));
  return s;
}

// Whether inference accepts the case and gives every spatial output dim > 0.
bool HasPositiveSpatialOutput(const Case& c) {
  auto types = test::InferOutputTypes(c.op, c.inputs);
  if (!types.ok()) return false;
  const Shape& y = (*types)[0].shape();
  for (size_t i = 2; i < y.dims().size(); ++i) {
    if (y.dim(i) <= 0) return false;
  }
  return true;
}

// ---- Conv ----

std::vector<Case> ConvCases(Rng& rng) {
  std::vector<Case> cases;
  for (DataType dt : DenseFloatTypes()) {
    for (int trial = 0; trial < 60; ++trial) {
      const int64_t nd = rng.Int(1, 3);
      const int64_t kind = rng.Int(0, 2);  // 0 dense, 1 grouped, 2 depthwise
      const int64_t group = kind == 0 ? 1 : kind == 1 ? 2 : rng.Int(2, 6);
      const int64_t c = kind == 2 ? group : group * rng.Int(1, 4);
      const int64_t m = kind == 2 ? group * rng.Int(1, 2) : group * rng.Int(1, 4);
      const Shape x = SpatialShape(rng, trial == 0 ? 0 : rng.Int(1, 2), c, nd);
      const Window w = RandomWindow(rng, nd, /*dilations=*/true);
      Shape ws{m, c / group};
      for (int64_t k : w.kernel) ws.push_back(k);
      ir::AttrMap attrs;
      SetWindowAttrs(w, attrs, /*dilations=*/true, rng);
      attrs["group"] = ir::AttrValue(group);
      std::vector<Value> inputs = {rng.Random(dt, x), rng.Random(dt, ws)};
      if (rng.Bool()) inputs.push_back(rng.Random(dt, Shape{m}));
      Case cc = MakeCase("Conv", std::move(inputs), std::move(attrs));
      if (!HasPositiveSpatialOutput(cc)) continue;
      cases.push_back(std::move(cc));
    }
    // Zero channels: the output is the bias alone (the reference path).
    cases.push_back(MakeCase(
        "Conv", {rng.Random(dt, Shape{1, 0, 4, 4}), rng.Random(dt, Shape{3, 0, 3, 3}), rng.Random(dt, Shape{3})}));
    // Dilated 1-D (a TCN's layers, padding = dilation, or causal: all on
    // the left) and 2-D convolutions with pads wider than oneDNN's JIT
    // kernels take: the kernel pads explicitly (ExplicitPad), edges too
    // (outputs no wider than the dilated kernel).
    for (int trial = 0; trial < 10; ++trial) {
      const int64_t d = rng.Pick<int64_t>({2, 4, 8, 16});
      const int64_t c = rng.Pick<int64_t>({8, 16, 64});
      const bool two_d = trial >= 8;
      const int64_t length = trial % 4 == 3 ? 2 * d + 1 : rng.Int(d, 5 * d);
      Shape x{rng.Int(1, 2), c, length}, ws{rng.Pick<int64_t>({8, 16, 30}), c, 3};
      Ints pads = trial % 2 == 0 ? Ints{d, d} : Ints{2 * d, 0}, dilations{d};
      if (two_d) {
        x.push_back(rng.Int(d, 3 * d));
        ws.push_back(3);
        pads = {d, d, d, d};
        dilations = {d, d};
      }
      ir::AttrMap attrs = {{"dilations", IntsAttr(dilations)}, {"pads", IntsAttr(pads)}};
      std::vector<Value> inputs = {rng.Random(dt, x), rng.Random(dt, ws)};
      if (trial % 3 != 0) inputs.push_back(rng.Random(dt, Shape{ws.dim(0)}));
      cases.push_back(MakeCase("Conv", std::move(inputs), std::move(attrs)));
    }
  }
  // Image heads: few output channels (1, 2, 3, 5, 9, 11) over 256+ output
  // pixels with constant weights (the own few-output-channel path for
  // f32): odd widths, strides, dilations 2/4/6, pads wider than the
  // kernel reaches (windows all in padding), 1x1 to 9x9 and non-square
  // kernels, input channels 1 to 16 (plain source: blocked in scratch).
  // After the other cases, so that their draws stay.
  const DataType dt = DataType::kFloat;
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t m = std::vector<int64_t>{1, 3, 9, 2, 5, 11}[trial % 6];
    const int64_t c = rng.Pick<int64_t>({1, 3, 8, 12, 16});
    const int64_t kh = rng.Pick<int64_t>({1, 3, 5}), kw = trial == 5 ? 9 : rng.Pick<int64_t>({1, 3, 5});
    const int64_t d = trial % 4 == 1 ? rng.Pick<int64_t>({2, 4, 6}) : 1, s = trial % 4 == 2 ? 2 : 1;
    const Shape x{rng.Int(1, 2), c, rng.Int(16, 40) * s, rng.Int(16, 41) * s};
    Ints pads = {rng.Int(0, 2) * d, rng.Int(0, 2) * d, rng.Int(0, 2) * d, rng.Int(0, 2) * d};
    if (trial == 7) pads = {kh + 1, kw + 1, kh + 1, kw + 1};
    ir::AttrMap attrs = {{"dilations", IntsAttr({d, d})}, {"pads", IntsAttr(pads)}, {"strides", IntsAttr({s, s})}};
    std::vector<Value> inputs = {rng.Random(dt, x), rng.Random(dt, Shape{m, c, kh, kw})};
    if (trial % 3 != 2) inputs.push_back(rng.Random(dt, Shape{m}));
    Case cc = MakeCase("Conv", std::move(inputs), std::move(attrs));
    cc.const_inputs = {1, 2};
    if (HasPositiveSpatialOutput(cc)) cases.push_back(std::move(cc));
  }
  // WaveNet's causal dilated Conv1d over long signals (kernel 2, the padding
  // all on the left, dilations 2-64, 32 -> 64 channels), one as long as its
  // padded window, and a strided one padded on the right only: run without
  // their padding over an explicitly padded source (PadFirst).
  for (int trial = 0; trial < 4; ++trial) {
    const int64_t d = std::vector<int64_t>{2, 16, 64, 3}[trial];
    const int64_t length = trial == 2 ? 1 : rng.Int(500, 2000);
    Ints pads = trial == 3 ? Ints{0, 2 * d} : Ints{d, 0};
    ir::AttrMap attrs = {{"dilations", IntsAttr({d})}, {"pads", IntsAttr(pads)}};
    if (trial == 3) attrs["strides"] = IntsAttr({2});
    std::vector<Value> inputs = {rng.Random(dt, Shape{rng.Int(1, 2), 32, length}), rng.Random(dt, Shape{64, 32, 2})};
    if (trial != 1) inputs.push_back(rng.Random(dt, Shape{64}));
    cases.push_back(MakeCase("Conv", std::move(inputs), std::move(attrs)));
  }
  return cases;
}

// ---- ConvTranspose ----

std::vector<Case> ConvTransposeCases(Rng& rng) {
  std::vector<Case> cases;
  for (DataType dt : DenseFloatTypes()) {
    // Trials from 40 on: channels that fill 8- and 16-lane blocks, where
    // oneDNN runs its JIT deconvolution in blocked layouts (a UNet's up
    // path), with a group now and then.
    for (int trial = 0; trial < 48; ++trial) {
      const bool wide = trial >= 40;
      const int64_t nd = wide ? rng.Int(1, 2) : rng.Int(1, 3);
      const int64_t group = rng.Int(1, 2);
      const int64_t c = wide ? group * rng.Pick<int64_t>({8, 16, 32}) : group * rng.Int(1, 3);
      const int64_t mg = wide ? rng.Pick<int64_t>({8, 16}) : rng.Int(1, 3);
      const Shape x = SpatialShape(rng, rng.Int(1, 2), c, nd);
      Shape ws{c, mg};
      std::vector<int64_t> kernel, strides, dilations, pads(2 * nd), output_padding;
      for (int64_t i = 0; i < nd; ++i) {
        kernel.push_back(rng.Int(1, 3));
        strides.push_back(rng.Int(1, 3));
        dilations.push_back(rng.Int(1, 2));
        ws.push_back(kernel.back());
      }
      const int64_t mode = rng.Int(0, 2);  // pads, SAME_UPPER, output_shape
      // Only shapes oneDNN takes (no negative pads): output_padding within
      // the end pad; a stride no longer than the dilated kernel when the
      // output is in * stride.
      for (int64_t i = 0; i < nd; ++i) {
        pads[i] = rng.Int(0, kernel[i] - 1);
        pads[i + nd] = rng.Int(0, kernel[i] - 1);
        output_padding.push_back(std::min(pads[i + nd], rng.Int(0, std::max(strides[i], dilations[i]) - 1)));
        if (mode != 0) strides[i] = std::min(strides[i], (kernel[i] - 1) * dilations[i] + 1);
      }
      ir::AttrMap attrs = {
          {"group", ir::AttrValue(group)}, {"strides", IntsAttr(strides)}, {"dilations", IntsAttr(dilations)}};
      if (mode == 0) {
        attrs["pads"] = IntsAttr(pads);
        attrs["output_padding"] = IntsAttr(output_padding);
      } else if (mode == 1) {
        attrs["auto_pad"] = ir::AttrValue(std::string("SAME_UPPER"));
      } else {
        std::vector<int64_t> out;
        for (int64_t i = 0; i < nd; ++i) out.push_back(x.dim(i + 2) * strides[i]);
        attrs["output_shape"] = IntsAttr(out);
      }
      std::vector<Value> inputs = {rng.Random(dt, x), rng.Random(dt, ws)};
      if (rng.Bool()) inputs.push_back(rng.Random(dt, Shape{mg * group}));
      Case cc = MakeCase("ConvTranspose", std::move(inputs), std::move(attrs));
      if (!HasPositiveSpatialOutput(cc)) continue;
      cases.push_back(std::move(cc));
    }
  }
  return cases;
}

// ---- Resize ----

// Nearest (every nearest_mode) and linear over ranks 1 to 5, every
// coordinate transformation but tf_crop_and_resize, by scales (up, down,
// fractional, the batch and channels too) or sizes; zero-sized outputs.
// Channel-blocked layouts: CpuDenseResize in conformance_test.cc.
std::vector<Case> ResizeCases(Rng& rng) {
  std::vector<Case> cases;
  const std::vector<std::string> transforms = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                               "tf_half_pixel_for_nn"};
  const std::vector<std::string> nearest = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  const std::vector<double> factors = {0.5, 0.6, 1.0, 1.5, 2.0, 3.0};
  for (int trial = 0; trial < 64; ++trial) {
    const int64_t rank = rng.Int(1, 5);
    Shape x;
    for (int64_t d = 0; d < rank; ++d) x.push_back(rng.Int(1, 6));
    const bool linear = rng.Bool();
    ir::AttrMap attrs = {{"mode", ir::AttrValue(std::string(linear ? "linear" : "nearest"))},
                         {"coordinate_transformation_mode", ir::AttrValue(rng.Pick(transforms))}};
    if (!linear) attrs["nearest_mode"] = ir::AttrValue(rng.Pick(nearest));
    std::vector<Value> inputs = {rng.Random(DataType::kFloat, x), Value()};
    const bool by_sizes = trial % 3 == 2;
    if (by_sizes) {
      Tensor sizes = *Tensor::Allocate(DataType::kInt64, Shape{rank});
      for (int64_t d = 0; d < rank; ++d) sizes.data<int64_t>()[d] = trial == 5 && d == rank - 1 ? 0 : rng.Int(1, 7);
      inputs.push_back(Value());
      inputs.push_back(Value(sizes));
    } else {
      Tensor scales = *Tensor::Allocate(DataType::kFloat, Shape{rank});
      for (int64_t d = 0; d < rank; ++d) {
        const bool spatial = rank < 3 || d >= 2 || trial % 7 == 0;
        scales.data<float>()[d] = spatial ? static_cast<float>(rng.Pick(factors)) : 1.0f;
      }
      inputs.push_back(Value(scales));
    }
    cases.push_back(MakeCase("Resize", std::move(inputs), std::move(attrs)));
  }
  return cases;
}

// ---- Pooling ----

std::vector<Case> PoolCases(Rng& rng, const std::string& type) {
  const bool max = type == "MaxPool";
  std::vector<DataType> types = DenseFloatTypes();
  if (max) types.insert(types.end(), {DataType::kInt8, DataType::kUint8});
  std::vector<Case> cases;
  for (DataType dt : types) {
    // Trials from 40 on: 2-D with 8 or 16 channels, where plain f32 pools
    // run blocked between reorders (oneDNN has only its reference there).
    for (int trial = 0; trial < 48; ++trial) {
      const bool blocked = trial >= 40;
      const int64_t nd = blocked ? 2 : rng.Int(1, 3);
      const Shape x = blocked ? SpatialShape(rng, 1, rng.Pick<int64_t>({8, 16}), nd)
                              : SpatialShape(rng, trial == 0 ? 0 : rng.Int(1, 2), rng.Int(1, 5), nd);
      Window w = RandomWindow(rng, nd, /*dilations=*/max);
      for (size_t i = 0; i < w.pads.size(); ++i) w.pads[i] = std::min(w.pads[i], w.kernel[i % nd] - 1);
      ir::AttrMap attrs;
      SetWindowAttrs(w, attrs, /*dilations=*/max, rng);
      attrs["kernel_shape"] = IntsAttr(w.kernel);
      const bool ceil = rng.Bool();
      attrs["ceil_mode"] = ir::AttrValue(int64_t{ceil});
      if (!max) attrs["count_include_pad"] = ir::AttrValue(int64_t{rng.Bool()});
      Case c = MakeCase(type, {rng.Random(dt, x, -50, 50)}, std::move(attrs));
      const bool positive = HasPositiveSpatialOutput(c);
      // count_include_pad with ceil_mode past the pads is cpu_dense's documented gap.
      if (!positive || !Rejection(c).ok()) continue;
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

std::vector<Case> GlobalPoolCases(Rng& rng, const std::string& type) {
  std::vector<Case> cases;
  for (DataType dt : DenseFloatTypes()) {
    for (int trial = 0; trial < 12; ++trial) {
      const Shape x = SpatialShape(rng, rng.Int(1, 2), rng.Int(1, 20), rng.Int(1, 3));
      cases.push_back(MakeCase(type, {rng.Random(dt, x)}));
    }
    cases.push_back(MakeCase(type, {rng.Random(dt, Shape{2, 3, 0, 4})}));  // empty planes
    cases.push_back(MakeCase(type, {rng.Random(dt, Shape{0, 3, 4, 4})}));
  }
  return cases;
}

// ---- MatMul and Gemm ----

Case FusedCase(const std::string& base, std::vector<Value> inputs, ir::AttrMap attrs, const PostOpChain& chain,
               const Value& addend, int base_inputs);
PostOpChain RandomChain(Rng& rng, bool with_add);

// Products with a constant B: the packed-weights path (packed_matmul.h) up
// to kPackedGemmMaxWideRows rows (every row-tile size, panel tails, depths past
// 256, transposed B, a bias, post-ops and both kinds of add),
// oneDNN's above. Appended after the older cases so that their draws stay.
void AppendPackedCases(const std::string& type, Rng& rng, std::vector<Case>& cases) {
  const DataType dt = DataType::kFloat;
  const test::Tolerance tolerance{1e-4, 1e-4};
  for (int trial = 0; trial < 24; ++trial) {
    const int64_t m = rng.Pick<int64_t>({1, 2, 3, 4, 5, 6, 7, 12, 13, 17, 40, 64, 65});
    const int64_t n = rng.Pick<int64_t>({1, 5, 16, 17, 33, 48, 70});
    const int64_t k = rng.Pick<int64_t>({1, 7, 33, 257, 300});
    Case c;
    if (type == "MatMul") {
      const std::vector<std::pair<Shape, Shape>> forms = {
          {Shape{m, k}, Shape{k, n}}, {Shape{2, m, k}, Shape{k, n}}, {Shape{k}, Shape{k, n}}, {Shape{m, k}, Shape{k}}};
      const auto& [a, b] = forms[trial % forms.size()];
      c = MakeCase("MatMul", {rng.Random(dt, a), rng.Random(dt, b)}, {}, tolerance);
    } else if (type == "Gemm") {
      const bool tb = rng.Bool();
      std::vector<Value> inputs = {rng.Random(dt, Shape{m, k}), rng.Random(dt, tb ? Shape{n, k} : Shape{k, n})};
      if (trial % 3 != 0) inputs.push_back(rng.Random(dt, trial % 3 == 1 ? Shape{n} : Shape{1, n}));
      c = MakeCase("Gemm", std::move(inputs), {{"transB", ir::AttrValue(int64_t{tb})}}, tolerance);
    } else {
      const bool gemm = trial % 2 == 1;
      const PostOpChain chain = RandomChain(rng, rng.Bool());
      std::vector<Value> inputs = {rng.Random(dt, gemm ? Shape{m, k} : Shape{2, m, k}),
                                   rng.Random(dt, gemm ? Shape{n, k} : Shape{k, n})};
      if (gemm || rng.Bool()) inputs.push_back(rng.Random(dt, Shape{n}));
      const Shape add_shape = gemm ? rng.Pick<Shape>({Shape{m, n}, Shape{1, n}})
                                   : rng.Pick<Shape>({Shape{2, m, n}, Shape{n}, Shape{1, 1, n}});
      Value addend = chain.has_add() ? Value(rng.Random(dt, add_shape)) : Value();
      ir::AttrMap attrs;
      if (gemm) attrs["transB"] = ir::AttrValue(int64_t{1});
      c = FusedCase(gemm ? "Gemm" : "MatMul", std::move(inputs), std::move(attrs), chain, addend, gemm ? 3 : 2);
    }
    c.const_inputs = {1};
    cases.push_back(std::move(c));
  }
}

std::vector<Case> MatMulCases(Rng& rng) {
  std::vector<Case> cases;
  for (DataType dt : DenseFloatTypes()) {
    for (int trial = 0; trial < 40; ++trial) {
      const int64_t m = rng.Int(1, 17), n = rng.Int(1, 17), k = rng.Int(1, 33), b = rng.Int(2, 3);
      const std::vector<std::pair<Shape, Shape>> forms = {
          {Shape{k}, Shape{k}},
          {Shape{k}, Shape{k, n}},
          {Shape{m, k}, Shape{k}},
          {Shape{m, k}, Shape{k, n}},
          {Shape{b, m, k}, Shape{b, k, n}},
          {Shape{b, m, k}, Shape{k, n}},
          {Shape{m, k}, Shape{b, k, n}},
          {Shape{2, 1, m, k}, Shape{3, k, n}},
          {Shape{1, m, k}, Shape{b, k, n}},
          // batch dims folded into rows: B is one matrix, possibly with unit batch dims
          {Shape{2, 3, m, k}, Shape{1, k, n}},
          {Shape{b, 1, k}, Shape{k, n}}};
      const auto& [a, bs] = forms[trial % forms.size()];
      cases.push_back(MakeCase("MatMul", {rng.Random(dt, a), rng.Random(dt, bs)}));
    }
    cases.push_back(MakeCase("MatMul", {rng.Random(dt, Shape{0, 4}), rng.Random(dt, Shape{4, 3})}));
    cases.push_back(MakeCase("MatMul", {rng.Random(dt, Shape{2, 0}), rng.Random(dt, Shape{0, 3})}));  // K = 0
    cases.push_back(MakeCase("MatMul", {rng.Random(dt, Shape{0, 2, 4}), rng.Random(dt, Shape{4, 3})}));
  }
  AppendPackedCases("MatMul", rng, cases);
  return cases;
}

std::vector<Case> GemmCases(Rng& rng) {
  std::vector<Case> cases;
  for (DataType dt : DenseFloatTypes()) {
    for (int trial = 0; trial < 48; ++trial) {
      const int64_t m = rng.Int(1, 17), n = rng.Int(1, 17), k = rng.Int(1, 33);
      const bool ta = rng.Bool(), tb = rng.Bool();
      ir::AttrMap attrs = {{"transA", ir::AttrValue(int64_t{ta})}, {"transB", ir::AttrValue(int64_t{tb})}};
      if (rng.Bool()) attrs["alpha"] = ir::AttrValue(rng.Pick<float>({0.5f, -2.0f, 1.0f}));
      if (rng.Bool()) attrs["beta"] = ir::AttrValue(rng.Pick<float>({0.0f, 0.3f, 1.0f}));
      std::vector<Value> inputs = {rng.Random(dt, ta ? Shape{k, m} : Shape{m, k}),
                                   rng.Random(dt, tb ? Shape{n, k} : Shape{k, n})};
      const std::vector<Shape> c_shapes = {Shape{n}, Shape{1, n}, Shape{m, 1}, Shape{m, n},
                                           Shape{},  Shape{1},    Shape{1, 1}};
      if (trial % 8 != 0) inputs.push_back(rng.Random(dt, c_shapes[trial % c_shapes.size()]));
      cases.push_back(MakeCase("Gemm", std::move(inputs), std::move(attrs)));
    }
    cases.push_back(
        MakeCase("Gemm", {rng.Random(dt, Shape{0, 4}), rng.Random(dt, Shape{4, 3}), rng.Random(dt, Shape{3})}));
    cases.push_back(
        MakeCase("Gemm", {rng.Random(dt, Shape{2, 0}), rng.Random(dt, Shape{0, 3}), rng.Random(dt, Shape{3})}));
  }
  AppendPackedCases("Gemm", rng, cases);
  return cases;
}

// ---- The fused op ----

// Applies `chain` to `y` with host_cpu kernels (the definition of each step).
absl::StatusOr<Tensor> ApplyChainOnHost(Tensor y, const PostOpChain& chain, const Value& addend) {
  const DataType dt = y.dtype();
  auto scalar = [&](double v) { return test::MakeTensor(dt, {v}, Shape{}); };
  for (const PostOp& p : chain.ops) {
    absl::StatusOr<Tensor> next;
    switch (p.kind) {
      case PostOpKind::kAdd: next = HostOp("Add", {y, addend}); break;
      case PostOpKind::kRelu: next = HostOp("LeakyRelu", {y}, {{"alpha", ir::AttrValue(p.alpha)}}); break;
      case PostOpKind::kClip: next = HostOp("Clip", {y, scalar(p.alpha), scalar(p.beta)}); break;
      case PostOpKind::kSigmoid: next = HostOp("Sigmoid", {y}); break;
      case PostOpKind::kTanh: next = HostOp("Tanh", {y}); break;
      case PostOpKind::kElu: next = HostOp("Elu", {y}, {{"alpha", ir::AttrValue(p.alpha)}}); break;
      case PostOpKind::kGeluErf: {
        GE_ASSIGN_OR_RETURN(Tensor d, HostOp("Div", {y, scalar(std::sqrt(2.0))}));
        GE_ASSIGN_OR_RETURN(Tensor e, HostOp("Erf", {d}));
        GE_ASSIGN_OR_RETURN(Tensor a, HostOp("Add", {e, scalar(1.0)}));
        GE_ASSIGN_OR_RETURN(Tensor m, HostOp("Mul", {y, a}));
        next = HostOp("Mul", {m, scalar(0.5)});
        break;
      }
      case PostOpKind::kGeluTanh: {  // torch's export: x * 0.5 * (1 + tanh(c (x + 0.044715 x x x)))
        GE_ASSIGN_OR_RETURN(Tensor x2, HostOp("Mul", {y, y}));
        GE_ASSIGN_OR_RETURN(Tensor x3, HostOp("Mul", {x2, y}));
        GE_ASSIGN_OR_RETURN(Tensor c3, HostOp("Mul", {x3, scalar(0.044715)}));
        GE_ASSIGN_OR_RETURN(Tensor in, HostOp("Add", {y, c3}));
        GE_ASSIGN_OR_RETURN(Tensor sc, HostOp("Mul", {in, scalar(std::sqrt(2.0 / 3.14159265358979323846))}));
        GE_ASSIGN_OR_RETURN(Tensor t, HostOp("Tanh", {sc}));
        GE_ASSIGN_OR_RETURN(Tensor a, HostOp("Add", {t, scalar(1.0)}));
        GE_ASSIGN_OR_RETURN(Tensor m, HostOp("Mul", {y, a}));
        next = HostOp("Mul", {m, scalar(0.5)});
        break;
      }
      case PostOpKind::kHardSwish: next = HostOp("HardSwish", {y}); break;
      case PostOpKind::kSwish: {
        GE_ASSIGN_OR_RETURN(Tensor s, HostOp("Mul", {y, scalar(p.alpha)}));
        GE_ASSIGN_OR_RETURN(Tensor g, HostOp("Sigmoid", {s}));
        next = HostOp("Mul", {y, g});
        break;
      }
      case PostOpKind::kLinear: {
        GE_ASSIGN_OR_RETURN(Tensor m, HostOp("Mul", {y, scalar(p.alpha)}));
        next = HostOp("Add", {m, scalar(p.beta)});
        break;
      }
    }
    GE_ASSIGN_OR_RETURN(y, std::move(next));
  }
  return y;
}

PostOpChain RandomChain(Rng& rng, bool with_add) {
  PostOpChain chain;
  const int steps = static_cast<int>(rng.Int(0, 3));
  const int add_at = with_add ? static_cast<int>(rng.Int(0, steps)) : -1;
  for (int i = 0; i <= steps; ++i) {
    if (i == add_at) chain.ops.push_back({PostOpKind::kAdd, 0, 0});
    if (i == steps) break;
    switch (rng.Int(0, 9)) {
      case 0: chain.ops.push_back({PostOpKind::kRelu, rng.Pick<float>({0.0f, 0.1f}), 0}); break;
      case 1: chain.ops.push_back({PostOpKind::kClip, -0.5f, rng.Pick<float>({0.5f, 6.0f})}); break;
      case 2: chain.ops.push_back({PostOpKind::kSigmoid, 0, 0}); break;
      case 3: chain.ops.push_back({PostOpKind::kTanh, 0, 0}); break;
      case 4: chain.ops.push_back({PostOpKind::kElu, 0.7f, 0}); break;
      case 5: chain.ops.push_back({PostOpKind::kHardSwish, 0, 0}); break;
      case 6: chain.ops.push_back({PostOpKind::kSwish, 1.0f, 0}); break;
      case 7: chain.ops.push_back({PostOpKind::kLinear, 0.2f, 0.5f}); break;
      case 8: chain.ops.push_back({PostOpKind::kGeluTanh, 0, 0}); break;
      default: chain.ops.push_back({PostOpKind::kGeluErf, 0, 0}); break;
    }
  }
  // oneDNN cannot mix parameters of one algorithm in a chain (cpu_dense
  // rejects that; see the rejection test): keep the first of each kind.
  PostOpChain kept;
  for (const PostOp& p : chain.ops) {
    bool clash = false;
    for (const PostOp& q : kept.ops) {
      clash = clash || (q.kind == p.kind && p.kind != PostOpKind::kAdd && (q.alpha != p.alpha || q.beta != p.beta));
    }
    if (!clash) kept.ops.push_back(p);
  }
  return kept;
}

Case FusedCase(const std::string& base, std::vector<Value> inputs, ir::AttrMap attrs, const PostOpChain& chain,
               const Value& addend, int base_inputs) {
  // The base op's result on host_cpu, then the chain.
  std::vector<Value> base_values(inputs.begin(), inputs.begin() + std::min<size_t>(base_inputs, inputs.size()));
  ir::AttrMap base_attrs = attrs;
  ir::OpDesc holder;
  SetPostOps(chain, holder);
  for (const auto& [k, v] : holder.attrs()) attrs[k] = v;
  attrs[std::string(kAttrFusedBase)] = ir::AttrValue(base);
  const Value bias = inputs.size() > 2 && base == "MatMul" ? inputs[2] : Value();
  if (addend.is_tensor()) {
    while (inputs.size() < 3) inputs.push_back(Value());
    inputs.push_back(addend);
  }
  Case c = MakeCase(std::string(kDenseFusedOp), std::move(inputs), std::move(attrs), test::Tolerance{1e-4, 1e-4});
  c.reference = [base, base_values, base_attrs, bias, chain, addend]() -> absl::StatusOr<Tensor> {
    GE_ASSIGN_OR_RETURN(Tensor y, HostOp(base, base_values, base_attrs));
    if (bias.is_tensor()) {
      GE_ASSIGN_OR_RETURN(y, HostOp("Add", {y, bias}));
    }
    return ApplyChainOnHost(y, chain, addend);
  };
  return c;
}

std::vector<Case> FusedCases(Rng& rng) {
  std::vector<Case> cases;
  const DataType dt = DataType::kFloat;
  for (int trial = 0; trial < 20; ++trial) {  // Conv
    const int64_t c = rng.Int(1, 8), m = rng.Int(1, 8);
    const Shape x{1, c, rng.Int(3, 9), rng.Int(3, 9)};
    ir::AttrMap attrs = {{"pads", IntsAttr({1, 1, 1, 1})}};
    std::vector<Value> inputs = {rng.Random(dt, x), rng.Random(dt, Shape{m, c, 3, 3})};
    if (rng.Bool()) inputs.push_back(rng.Random(dt, Shape{m}));
    const PostOpChain chain = RandomChain(rng, rng.Bool());
    Value addend = chain.has_add() ? Value(rng.Random(dt, Shape{1, m, x.dim(2), x.dim(3)})) : Value();
    cases.push_back(FusedCase("Conv", std::move(inputs), std::move(attrs), chain, addend, 3));
  }
  for (int trial = 0; trial < 20; ++trial) {  // MatMul with an [N] bias
    const int64_t m = rng.Int(1, 9), n = rng.Int(1, 9), k = rng.Int(1, 20);
    std::vector<Value> inputs = {rng.Random(dt, Shape{2, m, k}), rng.Random(dt, Shape{k, n})};
    if (rng.Bool()) inputs.push_back(rng.Random(dt, Shape{n}));
    const PostOpChain chain = RandomChain(rng, rng.Bool());
    const Shape add_shape = rng.Pick<Shape>({Shape{2, m, n}, Shape{m, n}, Shape{n}, Shape{2, 1, n}});
    Value addend = chain.has_add() ? Value(rng.Random(dt, add_shape)) : Value();
    cases.push_back(FusedCase("MatMul", std::move(inputs), {}, chain, addend, 2));
  }
  for (int trial = 0; trial < 8; ++trial) {  // attention scores plus a bias broadcast over the batch
    const int64_t b = rng.Int(1, 5), h = rng.Int(1, 4), m = rng.Int(1, 9), n = rng.Int(1, 9), k = rng.Int(1, 20);
    std::vector<Value> inputs = {rng.Random(dt, Shape{b, h, m, k}), rng.Random(dt, Shape{b, h, k, n})};
    PostOpChain chain = RandomChain(rng, true);
    if (trial % 2 == 0) chain.ops = {{PostOpKind::kAdd, 0, 0}};
    const Shape add_shape = rng.Pick<Shape>({Shape{1, h, m, n}, Shape{h, m, n}, Shape{b, 1, m, n}});
    cases.push_back(FusedCase("MatMul", std::move(inputs), {}, chain, Value(rng.Random(dt, add_shape)), 2));
  }
  for (int trial = 0; trial < 12; ++trial) {  // Gemm with C
    const int64_t m = rng.Int(1, 9), n = rng.Int(1, 9), k = rng.Int(1, 20);
    ir::AttrMap attrs = {{"transB", ir::AttrValue(int64_t{1})}};
    if (trial % 3 == 0) attrs["beta"] = ir::AttrValue(0.5f);
    std::vector<Value> inputs = {rng.Random(dt, Shape{m, k}), rng.Random(dt, Shape{n, k}), rng.Random(dt, Shape{n})};
    const PostOpChain chain = RandomChain(rng, trial % 2 == 0);
    Value addend = chain.has_add() ? Value(rng.Random(dt, Shape{m, n})) : Value();
    cases.push_back(FusedCase("Gemm", std::move(inputs), std::move(attrs), chain, addend, 3));
  }
  AppendPackedCases(std::string(kDenseFusedOp), rng, cases);
  for (int trial = 0; trial < 8; ++trial) {  // Conv with few outputs at 256+ pixels, constant weights
    const int64_t c = rng.Pick<int64_t>({3, 8, 16}), m = rng.Pick<int64_t>({1, 3, 9});
    const Shape x{1, c, rng.Int(16, 24), rng.Int(16, 25)};
    ir::AttrMap attrs = {{"pads", IntsAttr({1, 1, 1, 1})}};
    std::vector<Value> inputs = {rng.Random(dt, x), rng.Random(dt, Shape{m, c, 3, 3}), rng.Random(dt, Shape{m})};
    const PostOpChain chain = RandomChain(rng, trial % 2 == 0);
    Value addend = chain.has_add() ? Value(rng.Random(dt, Shape{1, m, x.dim(2), x.dim(3)})) : Value();
    Case cc = FusedCase("Conv", std::move(inputs), std::move(attrs), chain, addend, 3);
    cc.const_inputs = {1, 2};
    cases.push_back(std::move(cc));
  }
  // Tanh steps, which oneDNN runs as 2 sigmoid(2 x) - 1 unless the chain
  // has a linear step of its own (oneDNN 2.6 gives all linear steps the
  // first one's parameters): with a sigmoid, twice, after a linear step.
  const std::vector<std::vector<PostOp>> tanh_chains = {
      {{PostOpKind::kTanh, 0.0f, 0.0f}},
      {{PostOpKind::kSigmoid, 0.0f, 0.0f}, {PostOpKind::kTanh, 0.0f, 0.0f}, {PostOpKind::kTanh, 0.0f, 0.0f}},
      {{PostOpKind::kLinear, 0.5f, 0.25f}, {PostOpKind::kTanh, 0.0f, 0.0f}},
      {{PostOpKind::kAdd, 0.0f, 0.0f}, {PostOpKind::kTanh, 0.0f, 0.0f}, {PostOpKind::kLinear, 3.0f, -1.0f}},
  };
  for (const auto& steps : tanh_chains) {
    PostOpChain chain;
    chain.ops = steps;
    const Shape x{1, 8, 12, 13};
    std::vector<Value> inputs = {rng.Random(dt, x), rng.Random(dt, Shape{16, 8, 3, 3}), rng.Random(dt, Shape{16})};
    Value addend = chain.has_add() ? Value(rng.Random(dt, Shape{1, 16, 12, 13})) : Value();
    cases.push_back(FusedCase("Conv", std::move(inputs), {{"pads", IntsAttr({1, 1, 1, 1})}}, chain, addend, 3));
  }
  return cases;
}

}  // namespace

void AddDenseCases(CaseTable& table) {
  table["Conv"] = ConvCases;
  table["ConvTranspose"] = ConvTransposeCases;
  table["Resize"] = ResizeCases;
  table["MatMul"] = MatMulCases;
  table["Gemm"] = GemmCases;
  for (const char* type : {"MaxPool", "AveragePool"}) {
    table[type] = [type](Rng& rng) { return PoolCases(rng, type); };
  }
  for (const char* type : {"GlobalAveragePool", "GlobalMaxPool"}) {
    table[type] = [type](Rng& rng) { return GlobalPoolCases(rng, type); };
  }
  table[std::string(kDenseFusedOp)] = FusedCases;
  AddInt8Cases(table);
}

}  // namespace ge::engine::cpu_dense

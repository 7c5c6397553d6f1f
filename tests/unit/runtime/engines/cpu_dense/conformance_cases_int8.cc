// Conformance cases of cpu_dense's int8 kernels against host_cpu's exact
// reference: QLinearConv and ConvInteger (1-D to 3-D, groups, depthwise,
// strides, dilations, pads), QLinearMatMul and MatMulInteger (1-D
// promotion, batches), with u8 and s8 activations over their full range,
// s8 weights over their full range and within 7 bits (the two convolution
// paths of int8_util.h), per-tensor and per-channel scales, random zero
// points, int32 biases, and constant weights (packed once) or weights
// computed at run time. Requantized outputs may differ by one integer step
// (the float rounding of the requantization); int32 outputs are exact.
#include <algorithm>
#include <cmath>
#include <utility>

#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"

namespace ge::engine::cpu_dense {
namespace {

using Ints = std::vector<int64_t>;

Tensor Ints8(Rng& rng, DataType dtype, const Shape& shape, int64_t lo, int64_t hi) {
  Tensor t = *Tensor::Allocate(dtype, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    const int64_t v = rng.Int(lo, hi);
    if (dtype == DataType::kUint8) {
      t.data<uint8_t>()[i] = static_cast<uint8_t>(v);
    } else if (dtype == DataType::kInt8) {
      t.data<int8_t>()[i] = static_cast<int8_t>(v);
    } else {
      t.data<int32_t>()[i] = static_cast<int32_t>(v);
    }
  }
  return t;
}

// Activations over the dtype's full range, with extremes over-represented.
Tensor Activation(Rng& rng, DataType dtype, const Shape& shape) {
  const int64_t lo = dtype == DataType::kUint8 ? 0 : -128, hi = dtype == DataType::kUint8 ? 255 : 127;
  Tensor t = Ints8(rng, dtype, shape, lo, hi);
  for (int64_t i = 0; i < t.NumElements(); i += 3) {
    if (dtype == DataType::kUint8) {
      t.data<uint8_t>()[i] = static_cast<uint8_t>(hi);
    } else {
      t.data<int8_t>()[i] = static_cast<int8_t>(rng.Bool() ? hi : lo);
    }
  }
  return t;
}

// s8 weights: full range (extremes over-represented) or within 7 bits.
Tensor Weights(Rng& rng, const Shape& shape, bool full_range) {
  Tensor t = Ints8(rng, DataType::kInt8, shape, full_range ? -128 : -64, full_range ? 127 : 64);
  if (full_range) {
    for (int64_t i = 0; i < t.NumElements(); i += 2) t.data<int8_t>()[i] = static_cast<int8_t>(rng.Bool() ? 127 : -128);
  }
  return t;
}

Tensor ZeroPoint(Rng& rng, DataType dtype) {
  return Ints8(rng, dtype, Shape{}, dtype == DataType::kUint8 ? 0 : -128, dtype == DataType::kUint8 ? 255 : 127);
}

// Per-tensor ([] or [1]) or per-channel ([n]) scales in [lo, hi].
Tensor Scales(Rng& rng, int64_t n, bool per_channel, float lo, float hi) {
  const int64_t count = per_channel ? n : 1;
  std::vector<float> v;
  for (int64_t i = 0; i < count; ++i) v.push_back(rng.Float(lo, hi));
  return Tensor::FromVector<float>(v, per_channel ? Shape{n} : (rng.Bool() ? Shape{} : Shape{1}));
}

// A weight zero point of zero: scalar, or one per channel.
Tensor ZeroWeightZeroPoint(Rng& rng, int64_t n) {
  return *Tensor::Allocate(DataType::kInt8, rng.Bool() ? Shape{} : Shape{n});
}

// y_scale that spreads outputs over the integer range for a reduction of
// `k` products of the given scales.
float OutputScale(float sx, float sw, int64_t k) {
  return sx * sw * 5500.0f * std::sqrt(static_cast<float>(std::max<int64_t>(k, 1))) / 40.0f;
}

struct ConvGeometry {
  Shape x, w;
  ir::AttrMap attrs;
  int64_t k = 1;  // products per output
};

ConvGeometry RandomConv(Rng& rng) {
  ConvGeometry g;
  const int64_t nd = rng.Pick<int64_t>({1, 2, 2, 2, 3});
  const int64_t group = rng.Pick<int64_t>({1, 1, 2, 0});  // 0: depthwise
  const int64_t cg = group == 0 ? 1 : rng.Int(1, 5);
  const int64_t c = group == 0 ? rng.Int(2, 6) : cg * group;
  const int64_t groups = group == 0 ? c : group;
  const int64_t m = groups * rng.Int(1, 4);
  g.x = Shape{rng.Int(1, 2), c};
  g.w = Shape{m, c / groups};
  Ints kernel, strides, dilations, pads(2 * nd);
  g.k = c / groups;
  for (int64_t i = 0; i < nd; ++i) {
    kernel.push_back(rng.Int(1, 3));
    dilations.push_back(rng.Int(1, 2));
    // At least the dilated kernel, so every output dim is positive.
    g.x.push_back(std::max(rng.Int(3, nd == 3 ? 6 : 10), (kernel.back() - 1) * dilations.back() + 1));
    g.w.push_back(kernel.back());
    g.k *= kernel.back();
    strides.push_back(rng.Int(1, 2));
  }
  for (int64_t& p : pads) p = rng.Int(0, 1);
  g.attrs["group"] = ir::AttrValue(groups);
  g.attrs["strides"] = ir::AttrValue(strides);
  g.attrs["dilations"] = ir::AttrValue(dilations);
  g.attrs["pads"] = ir::AttrValue(pads);
  if (rng.Bool()) g.attrs["kernel_shape"] = ir::AttrValue(kernel);
  return g;
}

std::vector<Case> QLinearConvCases(Rng& rng) {
  std::vector<Case> cases;
  for (int i = 0; i < 14; ++i) {
    const ConvGeometry g = RandomConv(rng);
    const int64_t m = g.w.dim(0);
    const DataType xt = i % 2 == 0 ? DataType::kUint8 : DataType::kInt8;
    const DataType yt = rng.Bool() ? DataType::kUint8 : DataType::kInt8;
    const bool per_channel = rng.Bool();
    const float sx = rng.Float(0.01f, 0.05f), sw = rng.Float(0.002f, 0.01f);
    const Tensor w_scale = Scales(rng, m, per_channel, sw * 0.5f, sw * 1.5f);
    std::vector<Value> inputs = {Activation(rng, xt, g.x),
                                 Tensor::Scalar<float>(sx),
                                 ZeroPoint(rng, xt),
                                 Weights(rng, g.w, /*full_range=*/i % 4 < 2),
                                 w_scale,
                                 ZeroWeightZeroPoint(rng, m),
                                 Tensor::Scalar<float>(OutputScale(sx, sw, g.k)),
                                 ZeroPoint(rng, yt)};
    if (rng.Bool()) inputs.push_back(Ints8(rng, DataType::kInt32, Shape{m}, -20000, 20000));
    Case c = MakeCase("QLinearConv", inputs, g.attrs, test::Tolerance{1, 0});
    if (i % 3 != 2) c.const_inputs = {1, 2, 3, 4, 5, 6, 7, 8};
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<Case> ConvIntegerCases(Rng& rng) {
  std::vector<Case> cases;
  for (int i = 0; i < 10; ++i) {
    const ConvGeometry g = RandomConv(rng);
    const DataType xt = i % 2 == 0 ? DataType::kUint8 : DataType::kInt8;
    std::vector<Value> inputs = {Activation(rng, xt, g.x), Weights(rng, g.w, i % 4 < 2)};
    if (i % 5 != 4) {
      inputs.push_back(ZeroPoint(rng, xt));
      if (rng.Bool()) inputs.push_back(ZeroWeightZeroPoint(rng, g.w.dim(0)));
    }
    Case c = MakeCase("ConvInteger", inputs, g.attrs);
    if (i % 3 != 2) c.const_inputs = {1};
    cases.push_back(std::move(c));
  }
  return cases;
}

// A [.., M, K] and B [.., K, N] with broadcast batches, or 1-D operands.
// Batches of A times one B (cases 1 and 3) run as one [rows, K] product.
std::pair<Shape, Shape> RandomProduct(Rng& rng) {
  const int64_t m = rng.Int(1, 9), k = rng.Int(1, 40), n = rng.Int(1, 12);
  switch (rng.Int(0, 4)) {
    case 0: return {Shape{k}, Shape{k, n}};
    case 1: return {Shape{rng.Int(2, 3), m, k}, Shape{k, n}};
    case 3: return {Shape{2, rng.Int(1, 3), m, k}, Shape{1, 1, k, n}};
    case 2: {
      const int64_t b = rng.Int(2, 3);
      return {Shape{b, m, k}, Shape{b, k, n}};
    }
    default: return {Shape{m, k}, Shape{k, n}};
  }
}

std::vector<Case> QLinearMatMulCases(Rng& rng) {
  std::vector<Case> cases;
  for (int i = 0; i < 12; ++i) {
    const auto [a, b] = RandomProduct(rng);
    const int64_t n = b.dim(b.rank() - 1), k = b.dim(b.rank() - 2);
    const DataType at = i % 2 == 0 ? DataType::kUint8 : DataType::kInt8;
    const DataType yt = rng.Bool() ? DataType::kUint8 : DataType::kInt8;
    const bool per_column = rng.Bool();
    const float sa = rng.Float(0.01f, 0.05f), sb = rng.Float(0.002f, 0.01f);
    std::vector<Value> inputs = {Activation(rng, at, a),
                                 Tensor::Scalar<float>(sa),
                                 ZeroPoint(rng, at),
                                 Weights(rng, b, i % 4 < 2),
                                 Scales(rng, n, per_column, sb * 0.5f, sb * 1.5f),
                                 ZeroWeightZeroPoint(rng, n),
                                 Tensor::Scalar<float>(OutputScale(sa, sb, k)),
                                 ZeroPoint(rng, yt)};
    Case c = MakeCase("QLinearMatMul", inputs, {}, test::Tolerance{1, 0});
    if (i % 3 != 2) c.const_inputs = {3};
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<Case> MatMulIntegerCases(Rng& rng) {
  std::vector<Case> cases;
  for (int i = 0; i < 10; ++i) {
    const auto [a, b] = RandomProduct(rng);
    const DataType at = i % 2 == 0 ? DataType::kUint8 : DataType::kInt8;
    std::vector<Value> inputs = {Activation(rng, at, a), Weights(rng, b, i % 4 < 2)};
    if (i % 4 != 3) {
      inputs.push_back(ZeroPoint(rng, at));
      if (rng.Bool()) inputs.push_back(ZeroWeightZeroPoint(rng, b.dim(b.rank() - 1)));
    }
    Case c = MakeCase("MatMulInteger", inputs);
    if (i % 3 != 2) c.const_inputs = {1};
    cases.push_back(std::move(c));
  }
  return cases;
}

// Per-tensor QuantizeLinear / DequantizeLinear (scale [] or [1], zero
// point present or absent), values spread over and beyond the range.
std::vector<Case> QuantizeCases(Rng& rng, bool quantize) {
  std::vector<Case> cases;
  for (int i = 0; i < 8; ++i) {
    const Shape shape{rng.Int(1, 3), rng.Int(1, 40)};
    const DataType qt = i % 2 == 0 ? DataType::kUint8 : DataType::kInt8;
    const float scale = rng.Float(0.01f, 0.2f);
    std::vector<Value> inputs = {
        quantize ? rng.Random(DataType::kFloat, shape, -40.0, 40.0) : Value(Activation(rng, qt, shape)),
        rng.Bool() ? Tensor::Scalar<float>(scale) : Tensor::FromVector<float>({scale}, Shape{1})};
    if (i % 4 != 3 || !quantize) inputs.push_back(ZeroPoint(rng, qt));
    if (!quantize && i % 4 == 3) inputs.pop_back();
    cases.push_back(MakeCase(quantize ? "QuantizeLinear" : "DequantizeLinear", inputs));
  }
  if (quantize) {
    // Every quotient a multiple of one half (ties round to even), within
    // and beyond the range, over several parallel chunks and a tail.
    for (const DataType qt : {DataType::kUint8, DataType::kInt8}) {
      Tensor x = *Tensor::Allocate(DataType::kFloat, Shape{3, 20001});
      for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] = static_cast<float>(i % 1201 - 600) * 0.125f;
      cases.push_back(MakeCase("QuantizeLinear", {x, Tensor::Scalar<float>(0.25f), ZeroPoint(rng, qt)}));
    }
  }
  return cases;
}

// DynamicQuantizeLinear (its three outputs): ranges across zero, all
// positive and all negative (the range is widened to 0), all zeros (scale
// 0), one element, none, and a tensor of several parallel chunks with a
// tail of the 8-lane loops.
std::vector<Case> DynamicQuantizeCases(Rng& rng) {
  std::vector<Case> cases;
  const std::vector<std::pair<double, double>> ranges = {{-40.0, 40.0}, {0.5, 3.0}, {-7.0, -0.25}, {-1.0, 1.0}};
  for (int i = 0; i < 8; ++i) {
    const auto [lo, hi] = ranges[i % ranges.size()];
    const Shape shape{rng.Int(1, 3), rng.Int(1, 40)};
    cases.push_back(
        MakeCase("DynamicQuantizeLinear", {rng.Random(DataType::kFloat, shape, lo, hi)}, {}, std::nullopt, 3));
  }
  for (const Shape& shape : {Shape{2, 5}, Shape{1}, Shape{0, 4}}) {
    Tensor zeros = *Tensor::Allocate(DataType::kFloat, shape);
    std::fill(zeros.data<float>(), zeros.data<float>() + zeros.NumElements(), 0.0f);
    cases.push_back(MakeCase("DynamicQuantizeLinear", {zeros}, {}, std::nullopt, 3));
  }
  cases.push_back(
      MakeCase("DynamicQuantizeLinear", {rng.Random(DataType::kFloat, Shape{1}, 0.1, 2.0)}, {}, std::nullopt, 3));
  cases.push_back(MakeCase("DynamicQuantizeLinear", {rng.Random(DataType::kFloat, Shape{3, 20001}, -5.0, 9.0)}, {},
                           std::nullopt, 3));
  return cases;
}

// ged's int8 Add: two same-shape tensors of one int8 type (or B a bias over
// A's last axis or a scalar), per-tensor scales and zero points, with and
// without saturation.
std::vector<Case> QLinearAddCases(Rng& rng) {
  std::vector<Case> cases;
  for (int i = 0; i < 8; ++i) {
    const Shape shape = i % 3 == 0 ? Shape{rng.Int(1, 2), rng.Int(1, 8), rng.Int(1, 6), rng.Int(1, 6)}
                                   : Shape{rng.Int(1, 3), rng.Int(1, 70)};
    const DataType t = i % 2 == 0 ? DataType::kUint8 : DataType::kInt8;
    const float sa = rng.Float(0.01f, 0.1f), sb = rng.Float(0.01f, 0.1f);
    // A small output scale saturates part of the range.
    const float sc = i % 4 == 3 ? std::min(sa, sb) * 0.5f : rng.Float(0.02f, 0.2f);
    std::vector<Value> inputs = {Activation(rng, t, shape), Tensor::Scalar<float>(sa), ZeroPoint(rng, t),
                                 Activation(rng, t, shape), Tensor::Scalar<float>(sb), ZeroPoint(rng, t),
                                 Tensor::Scalar<float>(sc), ZeroPoint(rng, t)};
    Case c = MakeCase("_QLinearAdd", inputs, {}, test::Tolerance{1, 0});
    if (i % 3 != 2) c.const_inputs = {1, 2, 4, 5, 6, 7};
    cases.push_back(std::move(c));
  }
  // B a bias over A's last axis, or one element.
  for (int i = 0; i < 4; ++i) {
    const Shape a{rng.Int(1, 3), rng.Int(1, 9), rng.Int(1, 70)};
    const Shape b = i % 2 == 0 ? Shape{a.dim(2)} : Shape{};
    const DataType t = i < 2 ? DataType::kUint8 : DataType::kInt8;
    std::vector<Value> inputs = {Activation(rng, t, a),
                                 Tensor::Scalar<float>(rng.Float(0.01f, 0.1f)),
                                 ZeroPoint(rng, t),
                                 Activation(rng, t, b),
                                 Tensor::Scalar<float>(rng.Float(0.01f, 0.1f)),
                                 ZeroPoint(rng, t),
                                 Tensor::Scalar<float>(rng.Float(0.02f, 0.2f)),
                                 ZeroPoint(rng, t)};
    Case c = MakeCase("_QLinearAdd", inputs, {}, test::Tolerance{1, 0});
    c.const_inputs = {1, 2, 3, 4, 5, 6, 7};
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace

void AddInt8Cases(CaseTable& table) {
  table["QuantizeLinear"] = [](Rng& rng) { return QuantizeCases(rng, true); };
  table["DequantizeLinear"] = [](Rng& rng) { return QuantizeCases(rng, false); };
  table["DynamicQuantizeLinear"] = DynamicQuantizeCases;
  table["QLinearConv"] = QLinearConvCases;
  table["ConvInteger"] = ConvIntegerCases;
  table["QLinearMatMul"] = QLinearMatMulCases;
  table["MatMulInteger"] = MatMulIntegerCases;
  table["_QLinearAdd"] = QLinearAddCases;
}

}  // namespace ge::engine::cpu_dense

// Conformance cases of cpu_dense's normalization, softmax and element-wise
// kernels: random ranks, axes, parameter broadcasts, operand broadcasting
// (the forms the engine accepts), scalars and zero-sized tensors.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/ops/shape_utils.h"
#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"

namespace ge::engine::cpu_dense {
namespace {

Shape RandomShape(Rng& rng, int64_t min_rank, int64_t max_rank, int64_t max_dim = 7) {
  Shape s;
  const int64_t rank = rng.Int(min_rank, max_rank);
  for (int64_t i = 0; i < rank; ++i) s.push_back(rng.Int(1, max_dim));
  return s;
}

std::vector<Case> BatchNormCases(Rng& rng) {
  std::vector<Case> cases;
  for (DataType dt : DenseFloatTypes()) {
    for (int trial = 0; trial < 16; ++trial) {
      Shape x = RandomShape(rng, 2, 5, 6);
      if (trial == 0) x.set_dim(0, 0);
      const Shape c{x.dim(1)};
      ir::AttrMap attrs;
      if (rng.Bool()) attrs["epsilon"] = ir::AttrValue(rng.Pick<float>({1e-5f, 1e-3f, 0.1f}));
      cases.push_back(MakeCase("BatchNormalization",
                               {rng.Random(dt, x, -3, 3), rng.Random(dt, c), rng.Random(dt, c), rng.Random(dt, c),
                                rng.Random(dt, c, 0.1, 2.0)},
                               std::move(attrs)));
    }
  }
  return cases;
}

std::vector<Case> InstanceNormCases(Rng& rng) {
  std::vector<Case> cases;
  for (int trial = 0; trial < 16; ++trial) {
    Shape x = RandomShape(rng, 3, 5, 7);
    if (trial == 0) x.set_dim(0, 0);
    if (trial == 1) x = Shape{2, 3, 300};  // planes longer than the kernel's vector of sums
    const Shape c{x.dim(1)};
    ir::AttrMap attrs;
    if (rng.Bool()) attrs["epsilon"] = ir::AttrValue(rng.Pick<float>({1e-5f, 1e-3f, 0.1f}));
    // An offset keeps the mean away from 0, as activations after a ReLU.
    cases.push_back(MakeCase("InstanceNormalization",
                             {rng.Random(DataType::kFloat, x, trial % 2 == 0 ? -3 : 2, 5),
                              rng.Random(DataType::kFloat, c), rng.Random(DataType::kFloat, c)},
                             std::move(attrs)));
  }
  return cases;
}

// DepthToSpace in both modes and SpaceToDepth: block sizes 1 to 4, batches,
// odd sizes, ESPCN's 9 channels at 96x96 into one at 288x288.
std::vector<Case> DepthSpaceCases(Rng& rng, const std::string& type) {
  std::vector<Case> cases;
  const bool to_space = type == "DepthToSpace";
  for (int trial = 0; trial < 16; ++trial) {
    const int64_t b = trial == 15 ? 3 : rng.Int(1, 4), c = rng.Int(1, 5), n = rng.Int(1, 2);
    Shape x = to_space ? Shape{n, c * b * b, rng.Int(1, 9), rng.Int(1, 11)}
                       : Shape{n, c, b * rng.Int(1, 6), b * rng.Int(1, 7)};
    if (trial == 15) x = to_space ? Shape{1, 9, 96, 96} : Shape{1, 1, 288, 288};
    ir::AttrMap attrs = {{"blocksize", ir::AttrValue(b)}};
    if (to_space && trial % 2 == 1) attrs["mode"] = ir::AttrValue(std::string("CRD"));
    cases.push_back(MakeCase(type, {rng.Random(DataType::kFloat, x)}, std::move(attrs)));
  }
  return cases;
}

// The channels-last view (channels_last_view.h) of plain [N, S..., C],
// ranks 3 to 5, f32 and bf16: the output is the transposed [N, C, S...]
// stored channels-last, whose storage order is X's own, so the reference is
// X's elements under the output's shape (the view's contract: the bytes do
// not move; the layout pass tells the readers the layout).
std::vector<Case> ChannelsLastViewCases(Rng& rng) {
  std::vector<Case> cases;
  for (int trial = 0; trial < 9; ++trial) {
    const DataType dt = trial % 3 == 2 ? DataType::kBFloat16 : DataType::kFloat;
    const int64_t rank = 3 + trial % 3;
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d) dims.push_back(rng.Int(1, 6));
    const Tensor x = rng.Random(dt, Shape(dims));
    Case cs = MakeCase("_ChannelsLastView", {x});
    Shape y = x.shape();
    y.set_dim(1, x.shape().dim(rank - 1));
    for (int64_t d = 2; d < rank; ++d) y.set_dim(d, x.shape().dim(d - 1));
    cs.reference = [x, y]() -> absl::StatusOr<Tensor> { return x.Reshaped(y); };
    cases.push_back(std::move(cs));
  }
  return cases;
}

// The channel shuffle (channel_shuffle.h) of plain tensors: groups 1 to 4,
// ranks 3 to 5, every part from any channel, batches, one input or the join
// of two, f32 and bf16; the
// reference spells the shuffle out (host_cpu has no such op).
std::vector<Case> ChannelShuffleCases(Rng& rng) {
  std::vector<Case> cases;
  for (int trial = 0; trial < 24; ++trial) {
    const DataType dt = trial % 4 == 3 ? DataType::kBFloat16 : DataType::kFloat;
    const int64_t rank = 3 + trial % 3, g = rng.Int(1, 4), c = g * rng.Int(1, 7);
    std::vector<int64_t> dims = {rng.Int(1, 3), c};
    for (int64_t d = 2; d < rank; ++d) dims.push_back(rng.Int(1, 7));
    const int64_t begin = trial % 3 == 0 ? 0 : rng.Int(0, c - 1);
    const int64_t count = trial % 3 == 0 ? c - begin : rng.Int(1, c - begin);
    const Tensor x = rng.Random(dt, Shape(dims));
    // Every fourth case: x as the join of two parts along the channels.
    std::vector<Value> inputs;
    if (trial % 4 == 1 && c >= 2) {
      const int64_t first = rng.Int(1, c - 1), outer = dims[0], inner = x.NumElements() / (outer * c);
      const size_t elem = DataTypeSize(dt);
      for (auto [from, width] : {std::pair<int64_t, int64_t>{0, first}, {first, c - first}}) {
        std::vector<int64_t> part_dims = dims;
        part_dims[1] = width;
        Tensor part = *Tensor::Allocate(dt, Shape(part_dims));
        for (int64_t b = 0; b < outer; ++b) {
          std::memcpy(static_cast<char*>(part.raw_data()) + b * width * inner * elem,
                      static_cast<const char*>(x.raw_data()) + (b * c + from) * inner * elem,
                      static_cast<size_t>(width * inner) * elem);
        }
        inputs.emplace_back(std::move(part));
      }
    } else {
      inputs.emplace_back(x);
    }
    Case cs = MakeCase("_ChannelShuffle", std::move(inputs),
                       {{"group", ir::AttrValue(g)}, {"begin", ir::AttrValue(begin)}, {"count", ir::AttrValue(count)}});
    cs.reference = [x, g, begin, count]() -> absl::StatusOr<Tensor> {
      const int64_t n = x.shape().dim(0), ch = x.shape().dim(1), inner = x.NumElements() / (n * ch);
      std::vector<int64_t> shuffled;  // [N, g, C/g] with the channel axes swapped
      for (int64_t ci = 0; ci < ch / g; ++ci) {
        for (int64_t gi = 0; gi < g; ++gi) shuffled.push_back(gi * (ch / g) + ci);
      }
      Shape y = x.shape();
      y.set_dim(1, count);
      GE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(x.dtype(), y));
      const size_t elem = DataTypeSize(x.dtype());
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t j = 0; j < count; ++j) {
          std::memcpy(static_cast<char*>(out.raw_data()) + (b * count + j) * inner * elem,
                      static_cast<const char*>(x.raw_data()) + (b * ch + shuffled[begin + j]) * inner * elem,
                      static_cast<size_t>(inner) * elem);
        }
      }
      return out;
    };
    cases.push_back(std::move(cs));
  }
  return cases;
}

// Pads of every sign (negative ones crop) in each mode; reflect pads stay
// below the dim (ONNX's range) except in a few periodic cases host_cpu
// defines.
std::vector<Case> PadCases(Rng& rng) {
  std::vector<Case> cases;
  const std::vector<std::string> modes = {"constant", "reflect", "edge"};
  for (int trial = 0; trial < 48; ++trial) {
    const std::string mode = modes[trial % 3];
    const Shape x = RandomShape(rng, trial < 3 ? 0 : 1, 5, 6);
    const int64_t rank = x.rank();
    Tensor pads = *Tensor::Allocate(DataType::kInt64, Shape{2 * rank});
    for (int64_t i = 0; i < 2 * rank; ++i) {
      const int64_t n = x.dim(i % rank);
      int64_t p = rng.Int(0, 3);
      if (mode == "reflect" && trial % 8 != 1) p = std::min(p, n - 1);
      if (mode == "constant" && trial % 5 == 4) p = -std::min<int64_t>(rng.Int(0, 2), n / 2);
      pads.data<int64_t>()[i] = p;
    }
    ir::AttrMap attrs = {{"mode", ir::AttrValue(mode)}};
    std::vector<Value> inputs = {rng.Random(DataType::kFloat, x), Value(pads)};
    if (mode == "constant" && trial % 2 == 0)
      inputs.push_back(Value(test::MakeTensor(DataType::kFloat, {1.5}, Shape{})));
    cases.push_back(MakeCase("Pad", std::move(inputs), std::move(attrs)));
  }
  return cases;
}

std::vector<Case> LayerNormCases(Rng& rng) {
  std::vector<Case> cases;
  for (DataType dt : DenseFloatTypes()) {
    for (int trial = 0; trial < 24; ++trial) {
      const Shape x = RandomShape(rng, 1, 4, 9);
      const int64_t axis = rng.Int(-x.rank(), x.rank() - 1);
      const int64_t a = axis < 0 ? axis + x.rank() : axis;
      Shape scale(x.span().subspan(a));
      if (trial % 4 == 1) scale = Shape(scale.span().subspan(scale.rank() - 1));  // broadcast along leading dims
      std::vector<Value> inputs = {rng.Random(dt, x, -3, 3), rng.Random(dt, scale)};
      if (rng.Bool()) inputs.push_back(rng.Random(dt, scale));
      cases.push_back(MakeCase("LayerNormalization", std::move(inputs),
                               {{"axis", ir::AttrValue(axis)}, {"epsilon", ir::AttrValue(1e-5f)}},
                               dt == DataType::kFloat ? std::optional(test::Tolerance{2e-5, 2e-5}) : std::nullopt));
    }
    cases.push_back(MakeCase("LayerNormalization", {rng.Random(dt, Shape{0, 4}), rng.Random(dt, Shape{4})}));
  }
  return cases;
}

std::vector<Case> SoftmaxCases(Rng& rng, const std::string& type) {
  std::vector<Case> cases;
  for (DataType dt : DenseFloatTypes()) {
    for (int trial = 0; trial < 20; ++trial) {
      const Shape x = RandomShape(rng, 1, 4, 12);
      const int64_t axis = rng.Int(-x.rank(), x.rank() - 1);
      cases.push_back(MakeCase(type, {rng.Random(dt, x, -5, 5)}, {{"axis", ir::AttrValue(axis)}}));
    }
    cases.push_back(MakeCase(type, {rng.Random(dt, Shape{3, 0})}));
  }
  return cases;
}

// Input ranges where each unary op is defined and well conditioned.
std::pair<double, double> UnaryRange(const std::string& type) {
  if (type == "Log" || type == "Sqrt") return {0.05, 4.0};
  if (type == "Reciprocal") return {0.25, 4.0};
  if (type == "Exp") return {-5.0, 5.0};
  return {-4.0, 4.0};
}

std::vector<Case> UnaryCases(Rng& rng, const std::string& type) {
  std::vector<Case> cases;
  const auto [lo, hi] = UnaryRange(type);
  // oneDNN 2.6 rounds f32 only (cpu_dense rejects bf16 Round).
  const std::vector<DataType> types = type == "Round" ? std::vector<DataType>{DataType::kFloat} : DenseFloatTypes();
  for (DataType dt : types) {
    for (int trial = 0; trial < 12; ++trial) {
      Shape x = RandomShape(rng, 0, 4, 13);
      if (trial == 1) x = Shape{2, 0, 3};
      std::vector<Value> inputs;
      inputs.reserve(3);  // Clip adds bounds (an initializer list here trips GCC 12's -Warray-bounds)
      inputs.push_back(rng.Random(dt, x, lo, hi));
      ir::AttrMap attrs;
      if (type == "LeakyRelu" || type == "Elu") attrs["alpha"] = ir::AttrValue(rng.Pick<float>({0.1f, 0.5f, 1.3f}));
      if (type == "Clip") {
        const int form = trial % 4;  // both bounds, min only, none, min > max
        if (form != 2) inputs.push_back(test::MakeTensor(dt, {form == 3 ? 1.0 : -0.5}, Shape{}));
        if (form == 0 || form == 3) inputs.push_back(test::MakeTensor(dt, {form == 3 ? -1.0 : 0.75}, Shape{}));
      }
      cases.push_back(MakeCase(type, std::move(inputs), std::move(attrs)));
    }
  }
  if (type == "Round") {  // ties round to even
    cases.push_back(
        MakeCase(type, {test::MakeTensor(DataType::kFloat, {0.5, 1.5, 2.5, -0.5, -1.5, 2.4999}, Shape{6})}));
  }
  return cases;
}

// A pair of shapes that broadcast: `out` with some dims of each set to 1
// or dropped from the front.
std::pair<Shape, Shape> BroadcastPair(Rng& rng) {
  const Shape out = RandomShape(rng, 0, 4, 6);
  auto variant = [&]() {
    Shape s;
    const int64_t drop = rng.Int(0, out.rank());
    for (int64_t i = drop; i < out.rank(); ++i) s.push_back(rng.Int(0, 2) == 0 ? 1 : out.dim(i));
    return s;
  };
  switch (rng.Int(0, 3)) {
    case 0: return {out, out};
    case 1: return {out, variant()};
    case 2: return {variant(), out};
    default: return {variant(), variant()};
  }
}

std::vector<Case> BinaryCases(Rng& rng, const std::string& type) {
  std::vector<Case> cases;
  for (DataType dt : DenseFloatTypes()) {
    for (int trial = 0; trial < 30; ++trial) {
      const auto [a, b] = BroadcastPair(rng);
      const double lo = type == "Div" ? 0.5 : -2.0;
      Case c = MakeCase(type, {rng.Random(dt, a, -2, 2), rng.Random(dt, b, lo, 2)});
      if (!Rejection(c).ok()) continue;  // forms oneDNN cannot broadcast: see the rejection test
      cases.push_back(std::move(c));
    }
    cases.push_back(MakeCase(type, {rng.Random(dt, Shape{0, 3}), rng.Random(dt, Shape{3})}));
    // Broadcasts oneDNN's JIT kernel takes only with dims merged (a Swin
    // window mask; a middle dim; two broadcast dims in a row). Those no
    // merge helps ([2, 3, 4, 5] + [1, 3, 1, 5]) are rejected: CpuDenseBinary.
    const double lo = type == "Div" ? 0.5 : -2.0;
    for (const auto& [a, b] : std::vector<std::pair<Shape, Shape>>{{Shape{1, 4, 3, 5, 6}, Shape{1, 4, 1, 5, 6}},
                                                                   {Shape{2, 3, 7}, Shape{2, 1, 7}},
                                                                   {Shape{3, 2, 4, 5}, Shape{3, 1, 1, 5}}}) {
      cases.push_back(MakeCase(type, {rng.Random(dt, a, -2, 2), rng.Random(dt, b, lo, 2)}));
    }
  }
  return cases;
}

// `plain` (row-major [N, C, spatial...]) stored channels-blocked by
// `block` (block 0: channels-last), element by element.
Tensor Relayout(const Tensor& plain, int64_t block) {
  const Shape& s = plain.shape();
  const int64_t n = s.dim(0), c = s.dim(1), inner = plain.NumElements() / std::max<int64_t>(1, n * c);
  Tensor out = *Tensor::Allocate(plain.dtype(), s);
  const size_t size = DataTypeSize(plain.dtype());
  const char* src = static_cast<const char*>(plain.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t in = 0; in < n; ++in) {
    for (int64_t ic = 0; ic < c; ++ic) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t from = (in * c + ic) * inner + i;
        const int64_t to =
            block == 0 ? (in * inner + i) * c + ic : ((in * (c / block) + ic / block) * inner + i) * block + ic % block;
        std::memcpy(dst + to * size, src + from * size, size);
      }
    }
  }
  return out;
}

std::vector<Case> TransDataCases(Rng& rng) {
  std::vector<Case> cases;
  const std::vector<std::pair<std::string, int64_t>> formats = {{"NChw16c", 16}, {"NChw8c", 8}, {"NHWC", 0}};
  for (DataType dt : DenseFloatTypes()) {
    for (int trial = 0; trial < 12; ++trial) {
      const auto& [format, block] = formats[trial % formats.size()];
      Shape x{rng.Int(1, 2), 16 * rng.Int(1, 3)};
      const int64_t spatial = format == "NHWC" ? 2 : rng.Int(1, 3);
      for (int64_t i = 0; i < spatial; ++i) x.push_back(rng.Int(1, 6));
      const Tensor plain = rng.Random(dt, x);
      const Tensor laid_out = Relayout(plain, block);
      Case to =
          MakeCase("TransData", {plain}, {{"src_format", ir::AttrValue("ND")}, {"dst_format", ir::AttrValue(format)}});
      to.reference = [laid_out]() -> absl::StatusOr<Tensor> { return laid_out; };
      Case back = MakeCase("TransData", {laid_out},
                           {{"src_format", ir::AttrValue(format)}, {"dst_format", ir::AttrValue("ND")}});
      back.reference = [plain]() -> absl::StatusOr<Tensor> { return plain; };
      cases.push_back(std::move(to));
      cases.push_back(std::move(back));
    }
  }
  return cases;
}

// Concat along every axis (negative ones too), with empty inputs among
// the others; float and int8.
std::vector<Case> ConcatCases(Rng& rng) {
  std::vector<Case> cases;
  std::vector<DataType> types = DenseFloatTypes();
  types.push_back(DataType::kUint8);  // QLinearConcat's joins
  types.push_back(DataType::kInt8);
  for (DataType dt : types) {
    for (int trial = 0; trial < 16; ++trial) {
      const int64_t rank = rng.Int(1, 4);
      Shape base;
      for (int64_t d = 0; d < rank; ++d) base.push_back(rng.Int(1, 5));
      const int64_t axis = rng.Int(-rank, rank - 1);
      const int64_t a = axis < 0 ? axis + rank : axis;
      std::vector<Value> inputs;
      const int64_t n = rng.Int(1, 4);
      for (int64_t i = 0; i < n; ++i) {
        Shape s = base;
        s.set_dim(a, trial % 5 == 0 && i == 1 ? 0 : rng.Int(1, 4));
        const bool u8 = dt == DataType::kUint8, s8 = dt == DataType::kInt8;
        inputs.push_back(rng.Random(dt, s, u8 ? 0.0 : s8 ? -128.0 : -1.0, u8 ? 255.0 : s8 ? 127.0 : 1.0));
      }
      cases.push_back(MakeCase("Concat", std::move(inputs), {{"axis", ir::AttrValue(axis)}}));
    }
  }
  return cases;
}

}  // namespace

// `_GroupNorm` (group_norm.h) on plain tensors: ranks 3 to 5, groups 1 to C,
// batches, one position, with and without SiLU; the reference spells the
// definition out in double (host_cpu has no such op). The layouts:
// group_norm_test.cc.
std::vector<Case> GroupNormCases(Rng& rng) {
  std::vector<Case> cases;
  for (int trial = 0; trial < 12; ++trial) {
    const int64_t rank = 3 + trial % 3, g = rng.Int(1, 4), c = g * rng.Int(1, 6);
    std::vector<int64_t> dims = {rng.Int(1, 3), c};
    for (int64_t d = 2; d < rank; ++d) dims.push_back(trial % 4 == 3 ? 1 : rng.Int(1, 7));
    const Tensor x = rng.Random(DataType::kFloat, Shape(dims));
    const Tensor scale = rng.Random(DataType::kFloat, Shape{c});
    const Tensor bias = rng.Random(DataType::kFloat, Shape{c});
    const bool silu = trial % 2 == 1;
    ir::AttrMap attrs = {{"num_groups", ir::AttrValue(g)}, {"epsilon", ir::AttrValue(1e-5f)}};
    if (silu) attrs["activation"] = ir::AttrValue(std::string("silu"));
    Case cs = MakeCase("_GroupNorm", {x, scale, bias}, std::move(attrs), test::Tolerance{1e-4, 1e-4});
    cs.reference = [x, scale, bias, g, silu]() -> absl::StatusOr<Tensor> {
      const int64_t n = x.shape().dim(0), ch = x.shape().dim(1), inner = x.NumElements() / (n * ch);
      const int64_t per = ch / g * inner;
      GE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(DataType::kFloat, x.shape()));
      for (int64_t b = 0; b < n * g; ++b) {
        const float* in = x.data<float>() + b * per;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < per; ++i) mean += in[i];
        mean /= static_cast<double>(per);
        for (int64_t i = 0; i < per; ++i) var += (in[i] - mean) * (in[i] - mean);
        var /= static_cast<double>(per);
        for (int64_t i = 0; i < per; ++i) {
          const int64_t channel = (b % g) * (ch / g) + i / inner;
          double v =
              (in[i] - mean) / std::sqrt(var + 1e-5) * scale.data<float>()[channel] + bias.data<float>()[channel];
          if (silu) v /= 1.0 + std::exp(-v);
          out.data<float>()[b * per + i] = static_cast<float>(v);
        }
      }
      return out;
    };
    cases.push_back(std::move(cs));
  }
  return cases;
}

// `_ChannelSoftmax` (channel_softmax.h) with one output: random groups of a
// sample's values and random sources (repeats allowed), [N, T] and
// [N, T, 1, 1] inputs; the reference spells the grouped softmax out.
std::vector<Case> ChannelSoftmaxCases(Rng& rng) {
  std::vector<Case> cases;
  for (int trial = 0; trial < 10; ++trial) {
    const int64_t n = rng.Int(1, 3), t = rng.Int(1, 40), groups = rng.Int(1, t), size = rng.Int(1, 50);
    std::vector<int64_t> group(static_cast<size_t>(t)), source(static_cast<size_t>(size));
    for (int64_t i = 0; i < t; ++i) group[i] = i < groups ? i : rng.Int(0, groups - 1);
    for (int64_t i = 0; i < size; ++i) source[i] = rng.Int(0, t - 1);
    const Tensor x = rng.Random(DataType::kFloat, trial % 2 == 0 ? Shape{n, t} : Shape{n, t, 1, 1});
    Case cs = MakeCase("_ChannelSoftmax", {x},
                       {{"groups", ir::AttrValue(group)},
                        {"sources", ir::AttrValue(source)},
                        {"ranks", ir::AttrValue(std::vector<int64_t>{1})},
                        {"dims", ir::AttrValue(std::vector<int64_t>{size})}},
                       test::Tolerance{1e-6, 1e-5});
    cs.reference = [x, group, source, n, t, size]() -> absl::StatusOr<Tensor> {
      GE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(DataType::kFloat, Shape{n, size}));
      for (int64_t b = 0; b < n; ++b) {
        const float* in = x.data<float>() + b * t;
        for (int64_t i = 0; i < size; ++i) {
          double sum = 0;
          for (int64_t j = 0; j < t; ++j) {
            if (group[j] == group[source[i]]) sum += std::exp(static_cast<double>(in[j]));
          }
          out.data<float>()[b * size + i] = static_cast<float>(std::exp(static_cast<double>(in[source[i]])) / sum);
        }
      }
      return out;
    };
    cases.push_back(std::move(cs));
  }
  return cases;
}

void AddNnCases(CaseTable& table) {
  table["TransData"] = TransDataCases;
  table["Concat"] = ConcatCases;
  table["BatchNormalization"] = BatchNormCases;
  table["InstanceNormalization"] = InstanceNormCases;
  table["Pad"] = PadCases;
  for (const char* type : {"DepthToSpace", "SpaceToDepth"}) {
    table[type] = [type](Rng& rng) { return DepthSpaceCases(rng, type); };
  }
  table["_ChannelShuffle"] = ChannelShuffleCases;
  table["_ChannelsLastView"] = ChannelsLastViewCases;
  table["_GroupNorm"] = GroupNormCases;
  table["_ChannelSoftmax"] = ChannelSoftmaxCases;
  table["LayerNormalization"] = LayerNormCases;
  for (const char* type : {"Softmax", "LogSoftmax"}) {
    table[type] = [type](Rng& rng) { return SoftmaxCases(rng, type); };
  }
  for (const char* type : {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Softplus", "HardSwish", "Sqrt", "Exp", "Log",
                           "Abs", "Neg", "Reciprocal", "Round", "Clip"}) {
    table[type] = [type](Rng& rng) { return UnaryCases(rng, type); };
  }
  for (const char* type : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    table[type] = [type](Rng& rng) { return BinaryCases(rng, type); };
  }
}

}  // namespace ge::engine::cpu_dense

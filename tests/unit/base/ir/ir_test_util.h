// Small builders shared by the base/ir unit tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/ir/graph.h"
#include "base/ir/text_format.h"
#include "gtest/gtest.h"

namespace ge::ir::testing {

// This thread's CPU time for fn(), in nanoseconds, the least of `rounds`
// calls: CPU time and the minimum keep a loaded machine's waiting out, so
// tests compare the growth of work (linear against quadratic), never a bound
// in seconds.
template <typename Fn>
int64_t LeastThreadCpuNanos(int rounds, const Fn& fn) {
  int64_t best = INT64_MAX;
  for (int round = 0; round < rounds; ++round) {
    timespec a{}, b{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    fn();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    best = std::min<int64_t>(best, (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
  }
  return best;
}

inline ValueType F32(std::initializer_list<int64_t> dims) {
  return ValueType::Tensor(DataType::kFloat, Shape(dims));
}

// Adds a node with `num_inputs` inputs of the given types (undefined when
// `input_types` is shorter) and one output per entry of `outputs`.
inline Node* AddOp(Graph& g, std::string name, std::string type, int num_inputs,
                   std::vector<ValueType> outputs = {ValueType()},
                   std::vector<ValueType> input_types = {}) {
  OpDesc op(std::move(name), std::move(type));
  for (int i = 0; i < num_inputs; ++i) {
    op.AddInput(
        IoDesc{"", i < static_cast<int>(input_types.size()) ? input_types[i] : ValueType()});
  }
  for (auto& t : outputs) op.AddOutput(IoDesc{"", std::move(t)});
  auto node = g.AddNode(std::move(op));
  EXPECT_TRUE(node.ok()) << node.status();
  return node.ok() ? *node : nullptr;
}

// Parses or fails the test (returns null).
inline std::unique_ptr<Graph> MustParse(std::string_view text) {
  auto g = ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : nullptr;
}

inline float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

template <typename T>
inline Tensor RawTensor(DataType dtype, const Shape& shape, const std::vector<T>& values) {
  auto t = Tensor::Allocate(dtype, shape);
  EXPECT_TRUE(t.ok());
  std::memcpy(t->raw_data(), values.data(), values.size() * sizeof(T));
  return *t;
}

// One tensor per dtype, with the awkward values of each.
inline std::vector<Tensor> TensorsOfEveryDtype() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<Tensor> t;
  t.push_back(Tensor::FromVector<float>(
      {0.1f, -0.0f, 1e-45f, 3.4028235e38f, kInf, -kInf, FloatFromBits(0x7fc00000),
       FloatFromBits(0xffc00001), 1.0f, 16777217.0f, 1e20f, -2.5e-7f},
      Shape{3, 4}));
  t.push_back(Tensor::FromVector<double>({0.1, 5e-324, -1e300, std::nan("")}, Shape{4}));
  t.push_back(RawTensor<uint16_t>(DataType::kFloat16, Shape{6},
                                  {0x3c00, 0x0001, 0x7bff, 0x7c00, 0x7e01, 0x8000}));
  t.push_back(
      RawTensor<uint16_t>(DataType::kBFloat16, Shape{5}, {0x3f80, 0x0001, 0x7f80, 0xffc1, 0x7fc0}));
  t.push_back(Tensor::FromVector<int8_t>({-128, 127, 0}, Shape{3}));
  t.push_back(Tensor::FromVector<int16_t>({-32768, 32767}, Shape{2}));
  t.push_back(Tensor::FromVector<int32_t>({INT32_MIN, INT32_MAX}, Shape{2}));
  t.push_back(Tensor::FromVector<int64_t>({INT64_MIN, INT64_MAX, 0}, Shape{3, 1}));
  t.push_back(Tensor::FromVector<uint8_t>({0, 255}, Shape{2}));
  t.push_back(Tensor::FromVector<uint16_t>({0, 65535}, Shape{2}));
  t.push_back(Tensor::FromVector<uint32_t>({0, UINT32_MAX}, Shape{2}));
  t.push_back(Tensor::FromVector<uint64_t>({0, UINT64_MAX}, Shape{1, 2}));
  t.push_back(Tensor::FromVector<bool>({true, false, true}, Shape{3}));
  t.push_back(Tensor::FromVector<std::string>(
      {"", "a \"quoted\" \\ string", std::string("nul\0byte\n\t\x01\xff", 12), "\xc3\xa9t\xc3\xa9"},
      Shape{2, 2}));
  t.push_back(RawTensor<float>(DataType::kComplex64, Shape{2}, {1.5f, -2.0f, 0.0f, 1e-40f}));
  t.push_back(RawTensor<double>(DataType::kComplex128, Shape{1}, {0.1, -0.2}));
  t.push_back(Tensor::FromVector<float>({}, Shape{0, 3}));  // no elements
  t.push_back(Tensor::Scalar<int64_t>(7));
  t.push_back(Tensor::FromVector<float>({2.0f, 2.0f, 2.0f, 2.0f}, Shape{2, 2}));  // splat
  t.push_back(Tensor::FromVector<std::string>({"s", "s"}, Shape{2}));             // splat
  t.push_back(Tensor());                                                          // undefined
  return t;
}

inline AttrMap AttrsOfEveryKind() {
  AttrMap attrs;
  attrs["i"] = AttrValue(int64_t{-9223372036854775807 - 1});
  attrs["f_one"] = AttrValue(1.0f);
  attrs["f_neg_zero"] = AttrValue(-0.0f);
  attrs["f_nan_payload"] = AttrValue(FloatFromBits(0x7fa00001));
  attrs["f_inf"] = AttrValue(-std::numeric_limits<float>::infinity());
  attrs["f_subnormal"] = AttrValue(1e-44f);
  attrs["f_big"] = AttrValue(1e20f);
  attrs["s"] = AttrValue(std::string("line\nbreak \"q\" \xff"));
  attrs["b"] = AttrValue(true);
  attrs["t"] = AttrValue(Tensor::FromVector<float>({1.5f, 2.0f}, Shape{2}));
  attrs["g"] = AttrValue(GraphRef{"then branch"});
  attrs["shape"] = AttrValue(Shape{1, -1, 3});
  attrs["shape_unknown_rank"] = AttrValue(Shape::UnknownRank());
  attrs["shape_scalar"] = AttrValue(Shape{});
  attrs["ints"] = AttrValue(std::vector<int64_t>{1, -2, 3});
  attrs["floats"] = AttrValue(std::vector<float>{1.0f, 0.5f, -0.0f});
  attrs["strings"] = AttrValue(std::vector<std::string>{"a", "", "c d"});
  attrs["bools"] = AttrValue(std::vector<bool>{true, false});
  attrs["tensors"] = AttrValue(TensorsOfEveryDtype());
  attrs["graphs"] = AttrValue(std::vector<GraphRef>{GraphRef{"a"}, GraphRef{"b/c"}});
  attrs["shapes"] = AttrValue(std::vector<Shape>{Shape{2}, Shape::UnknownRank(), Shape{}});
  attrs["empty_ints"] = AttrValue(std::vector<int64_t>{});
  attrs["empty_floats"] = AttrValue(std::vector<float>{});
  attrs["empty_strings"] = AttrValue(std::vector<std::string>{});
  attrs["empty_bools"] = AttrValue(std::vector<bool>{});
  attrs["empty_tensors"] = AttrValue(std::vector<Tensor>{});
  attrs["empty_graphs"] = AttrValue(std::vector<GraphRef>{});
  attrs["empty_shapes"] = AttrValue(std::vector<Shape>{});
  attrs["needs quotes"] = AttrValue(int64_t{1});
  return attrs;
}

}  // namespace ge::ir::testing

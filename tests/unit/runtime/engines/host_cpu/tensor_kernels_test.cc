// Data-movement and shape kernels of host_cpu: Transpose, Concat, Split,
// Slice, Gather, Expand, the view ops, Identity, Shape, Size and
// ConstantOfShape, over numeric and string dtypes and zero-sized tensors.
#include <cmath>

#include "tests/unit/runtime/engines/host_cpu/host_cpu_test_util.h"

namespace ge::engine::host_cpu {
namespace {

using test::TensorEq;

Tensor Iota(DataType dtype, const Shape& shape) {
  std::vector<double> v(shape.NumElementsUnchecked());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return test::MakeTensor(dtype, v, shape);
}

std::vector<Tensor> Outputs(const absl::StatusOr<std::vector<Value>>& out) {
  std::vector<Tensor> t;
  EXPECT_TRUE(out.ok()) << out.status();
  if (out.ok()) {
    for (const Value& v : *out) t.push_back(v.tensor());
  }
  return t;
}

TEST(TransposeKernel, PermutationsAndDtypes) {
  const Tensor x = Iota(DataType::kFloat, Shape{2, 3});
  EXPECT_TRUE(TensorEq(Host("Transpose", {x}), F32({0, 3, 1, 4, 2, 5}, {3, 2})));
  const Tensor y = Iota(DataType::kInt16, Shape{2, 3, 4});
  const Tensor t = Host("Transpose", {y}, {{"perm", std::vector<int64_t>{1, 2, 0}}});
  ASSERT_EQ(t.shape(), (Shape{3, 4, 2}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k)
        EXPECT_EQ(t.data<int16_t>()[(j * 4 + k) * 2 + i], y.data<int16_t>()[(i * 3 + j) * 4 + k]);
  // Identity permutation, strings, zero-sized.
  EXPECT_TRUE(TensorEq(Host("Transpose", {y}, {{"perm", std::vector<int64_t>{0, 1, 2}}}), y));
  EXPECT_TRUE(TensorEq(Host("Transpose", {T1<std::string>({"a", "b", "c", "d"}, {2, 2})}),
                       T1<std::string>({"a", "c", "b", "d"}, {2, 2})));
  EXPECT_EQ(Host("Transpose", {*Tensor::Allocate(DataType::kFloat, Shape{0, 5})}).shape(), (Shape{5, 0}));
}

TEST(TransposeKernel, BadPermIsAnError) {
  test::RunOptions options;
  options.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{3, 2})};
  const absl::Status s = RunError("Transpose", {Iota(DataType::kFloat, Shape{2, 3})},
                                  {{"perm", std::vector<int64_t>{0, 0}}}, 1, options);
  EXPECT_NE(s.message().find("perm"), absl::string_view::npos) << s;
}

TEST(ConcatKernel, AlongEveryAxis) {
  const Tensor a = Iota(DataType::kFloat, Shape{2, 2}), b = F32({10, 11}, {2, 1});
  EXPECT_TRUE(TensorEq(Host("Concat", {a, b}, {{"axis", 1}}), F32({0, 1, 10, 2, 3, 11}, {2, 3})));
  EXPECT_TRUE(TensorEq(Host("Concat", {a, F32({7, 8}, {1, 2})}, {{"axis", -2}}), F32({0, 1, 2, 3, 7, 8}, {3, 2})));
  // Zero-sized inputs contribute nothing; strings.
  EXPECT_TRUE(TensorEq(Host("Concat", {a, *Tensor::Allocate(DataType::kFloat, Shape{2, 0})}, {{"axis", 1}}), a));
  EXPECT_TRUE(TensorEq(Host("Concat", {T1<std::string>({"x"}, {1}), T1<std::string>({"y", "z"}, {2})}, {{"axis", 0}}),
                       T1<std::string>({"x", "y", "z"}, {3})));
}

TEST(SplitKernel, ExplicitAndEqualParts) {
  const Tensor x = Iota(DataType::kInt32, Shape{2, 5});
  std::vector<Tensor> parts = Outputs(test::RunOp(Engine(), "Split", {x, I64s({2, 3})}, {{"axis", 1}}, 2));
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_TRUE(TensorEq(parts[0], T1<int32_t>({0, 1, 5, 6}, {2, 2})));
  EXPECT_TRUE(TensorEq(parts[1], T1<int32_t>({2, 3, 4, 7, 8, 9}, {2, 3})));
  parts = Outputs(test::RunOp(Engine(), "Split", {Iota(DataType::kFloat, Shape{6})}, {}, 3));
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_TRUE(TensorEq(parts[2], F32({4, 5}, {2})));
  // A zero-sized part.
  parts = Outputs(test::RunOp(Engine(), "Split", {x, I64s({0, 2})}, {}, 2));
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].shape(), (Shape{0, 5}));
  EXPECT_TRUE(TensorEq(parts[1], x));
}

TEST(SliceKernel, StartsEndsAxesAndSteps) {
  const Tensor x = Iota(DataType::kFloat, Shape{3, 4});
  EXPECT_TRUE(TensorEq(Host("Slice", {x, I64s({1, 0}), I64s({3, 3})}), F32({4, 5, 6, 8, 9, 10}, {2, 3})));
  // Negative step over axis 1 only; ends clamp.
  EXPECT_TRUE(TensorEq(Host("Slice", {x, I64s({-1}), I64s({-1000}), I64s({1}), I64s({-2})}),
                       F32({3, 1, 7, 5, 11, 9}, {3, 2})));
  // Reverse the whole tensor along both axes.
  EXPECT_TRUE(TensorEq(Host("Slice", {Iota(DataType::kFloat, Shape{2, 2}), I64s({-1, -1}),
                                      I64s({INT64_MIN, INT64_MIN}), I64s({0, 1}), I64s({-1, -1})}),
                       F32({3, 2, 1, 0}, {2, 2})));
  // i32 indices, strings, an empty result.
  EXPECT_TRUE(TensorEq(Host("Slice", {T1<std::string>({"a", "b", "c"}, {3}), T1<int32_t>({1}, {1}),
                                      T1<int32_t>({3}, {1})}),
                       T1<std::string>({"b", "c"}, {2})));
  EXPECT_EQ(Host("Slice", {x, I64s({2}), I64s({1}), I64s({0})}).shape(), (Shape{0, 4}));
}

TEST(SliceKernel, ZeroStepIsAnError) {
  test::RunOptions options;
  options.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{3})};
  const absl::Status s = RunError("Slice", {F32({1, 2, 3}, {3}), I64s({0}), I64s({3}), I64s({0}), I64s({0})},
                                  {}, 1, options);
  EXPECT_FALSE(s.ok());
}

TEST(GatherKernel, AxesNegativeIndicesAndRange) {
  const Tensor data = Iota(DataType::kFloat, Shape{3, 2});
  EXPECT_TRUE(TensorEq(Host("Gather", {data, I64({2, -3, 1}, {3})}), F32({4, 5, 0, 1, 2, 3}, {3, 2})));
  EXPECT_TRUE(TensorEq(Host("Gather", {data, T1<int32_t>({1, 0, -1, 1}, {2, 2})}, {{"axis", 1}}),
                       F32({1, 0, 1, 1, 3, 2, 3, 3, 5, 4, 5, 5}, {3, 2, 2})));
  // A scalar index drops the axis.
  EXPECT_TRUE(TensorEq(Host("Gather", {data, Tensor::Scalar<int64_t>(1)}), F32({2, 3}, {2})));
  EXPECT_EQ(Host("Gather", {data, *Tensor::Allocate(DataType::kInt64, Shape{0})}).shape(), (Shape{0, 2}));
  const absl::Status s = RunError("Gather", {data, I64({0, 3}, {2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("test_Gather"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("index 3"), absl::string_view::npos) << s;
  EXPECT_FALSE(RunError("Gather", {data, I64({-4}, {1})}).ok());
}

TEST(ExpandKernel, BroadcastsBothWays) {
  EXPECT_TRUE(TensorEq(Host("Expand", {F32({1, 2}, {2, 1}), I64s({2, 3})}), F32({1, 1, 1, 2, 2, 2}, {2, 3})));
  // The target may be smaller than the input in a dim (numpy semantics).
  EXPECT_TRUE(TensorEq(Host("Expand", {F32({1, 2}, {1, 2}), I64s({3, 1})}), F32({1, 2, 1, 2, 1, 2}, {3, 2})));
  EXPECT_TRUE(TensorEq(Host("Expand", {T1<std::string>({"s"}, {1}), I64s({2})}), T1<std::string>({"s", "s"}, {2})));
  EXPECT_EQ(Host("Expand", {F32({1}, {1}), I64s({0, 3})}).shape(), (Shape{0, 3}));
}

TEST(ViewKernels, ForwardStorageUnderTheNewShape) {
  const Tensor x = Iota(DataType::kFloat, Shape{2, 3, 1});
  const Tensor r = Host("Reshape", {x, I64s({3, -1})});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(r.raw_data(), x.raw_data());
  EXPECT_EQ(Host("Reshape", {x, I64s({0, 0, 0})}).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(Host("Reshape", {*Tensor::Allocate(DataType::kFloat, Shape{0, 3}), I64s({3, 0})}, {{"allowzero", 1}}).shape(),
            (Shape{3, 0}));
  EXPECT_EQ(Host("Flatten", {x}).shape(), (Shape{2, 3}));
  EXPECT_EQ(Host("Flatten", {x}, {{"axis", 0}}).shape(), (Shape{1, 6}));
  EXPECT_EQ(Host("Flatten", {x}, {{"axis", -1}}).shape(), (Shape{6, 1}));
  EXPECT_EQ(Host("Squeeze", {x}).shape(), (Shape{2, 3}));
  EXPECT_EQ(Host("Squeeze", {Iota(DataType::kFloat, Shape{1, 2, 1}), I64s({-1})}).shape(), (Shape{1, 2}));
  EXPECT_EQ(Host("Unsqueeze", {x, I64s({0, -1})}).shape(), (Shape{1, 2, 3, 1, 1}));
  EXPECT_EQ(Host("Unsqueeze", {Tensor::Scalar<float>(1.0f), I64s({0})}).shape(), (Shape{1}));
  const Tensor id = Host("Identity", {x});
  EXPECT_EQ(id.raw_data(), x.raw_data());
}

TEST(ViewKernels, SqueezingANonUnitDimIsAnError) {
  test::RunOptions options;
  options.output_types = {ir::ValueType::Tensor(DataType::kFloat, Shape{3})};
  const absl::Status s = RunError("Squeeze", {Iota(DataType::kFloat, Shape{2, 3}), I64s({0})}, {}, 1, options);
  EXPECT_NE(s.message().find("not 1"), absl::string_view::npos) << s;
}

TEST(IdentityKernel, ForwardsSequences) {
  const Value seq = Value::Sequence({F32({1}, {1}), F32({2, 3}, {2})}, DataType::kFloat);
  test::RunOptions options;
  options.output_types = {test::TypeOf(seq)};
  auto out = test::RunOp(Engine(), "Identity", {seq}, {}, 1, options);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE((*out)[0].is_sequence());
  EXPECT_EQ((*out)[0].sequence().size(), 2u);
}

TEST(ShapeKernels, ShapeSizeAndConstantOfShape) {
  const Tensor x = *Tensor::Allocate(DataType::kString, Shape{2, 3, 4});
  EXPECT_TRUE(TensorEq(Host("Shape", {x}), I64s({2, 3, 4})));
  EXPECT_TRUE(TensorEq(Host("Shape", {x}, {{"start", 1}}), I64s({3, 4})));
  EXPECT_TRUE(TensorEq(Host("Shape", {x}, {{"start", -2}, {"end", -1}}), I64s({3})));
  EXPECT_TRUE(TensorEq(Host("Shape", {x}, {{"start", 2}, {"end", 1}}), I64s({})));
  EXPECT_TRUE(TensorEq(Host("Shape", {Tensor::Scalar<float>(1.0f)}), I64s({})));
  EXPECT_TRUE(TensorEq(Host("Size", {x}), Tensor::Scalar<int64_t>(24)));
  EXPECT_TRUE(TensorEq(Host("Size", {*Tensor::Allocate(DataType::kFloat, Shape{0, 7})}), Tensor::Scalar<int64_t>(0)));
  EXPECT_TRUE(TensorEq(Host("ConstantOfShape", {I64s({2, 2})}), F32({0, 0, 0, 0}, {2, 2})));
  EXPECT_TRUE(TensorEq(Host("ConstantOfShape", {I64s({3})}, {{"value", T1<int32_t>({7}, {1})}}),
                       T1<int32_t>({7, 7, 7}, {3})));
  EXPECT_TRUE(TensorEq(Host("ConstantOfShape", {I64s({})}, {{"value", T1<bool>({true}, {1})}}),
                       Tensor::Scalar<bool>(true)));
  EXPECT_EQ(Host("ConstantOfShape", {I64s({0, 5})}).shape(), (Shape{0, 5}));
  // Every element size, zero and not, negative zero kept bit for bit.
  EXPECT_TRUE(TensorEq(Host("ConstantOfShape", {I64s({2, 3})}, {{"value", F32({-2.5f}, {1})}}),
                       F32({-2.5f, -2.5f, -2.5f, -2.5f, -2.5f, -2.5f}, {2, 3})));
  EXPECT_TRUE(TensorEq(Host("ConstantOfShape", {I64s({3})}, {{"value", T1<int64_t>({-1}, {1})}}),
                       T1<int64_t>({-1, -1, -1}, {3})));
  EXPECT_TRUE(TensorEq(Host("ConstantOfShape", {I64s({5})}, {{"value", T1<int8_t>({-3}, {1})}}),
                       T1<int8_t>({-3, -3, -3, -3, -3}, {5})));
  EXPECT_TRUE(
      TensorEq(Host("ConstantOfShape", {I64s({2})}, {{"value", test::MakeTensor(DataType::kFloat16, {1.5}, {1})}}),
               test::MakeTensor(DataType::kFloat16, {1.5, 1.5}, {2})));
  EXPECT_TRUE(
      TensorEq(Host("ConstantOfShape", {I64s({2})}, {{"value", T1<double>({0.0}, {1})}}), T1<double>({0.0, 0.0}, {2})));
  const Tensor negative_zero = Host("ConstantOfShape", {I64s({4})}, {{"value", F32({-0.0f}, {1})}});
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(std::signbit(negative_zero.data<float>()[i])) << i;
}

}  // namespace
}  // namespace ge::engine::host_cpu

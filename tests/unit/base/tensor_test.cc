// Tensors and buffers: allocation, strings, clone, reshape, element access,
// DebugString, byte sizes with overflow checks.
#include "base/tensor.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace ge {
namespace {

class FailingAllocator final : public Allocator {
 public:
  void* Allocate(size_t, size_t) override { return nullptr; }
  void Free(void*, size_t) override {}
  std::string_view name() const override { return "cpu:7"; }
};

class CountingAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes, size_t alignment) override {
    ++allocations;
    return HostAllocator()->Allocate(bytes, alignment);
  }
  void Free(void* ptr, size_t bytes) override {
    ++frees;
    HostAllocator()->Free(ptr, bytes);
  }
  std::string_view name() const override { return "counting"; }
  int allocations = 0;
  int frees = 0;
};

TEST(TensorTest, AllocateIsZeroFilledAndAligned) {
  auto t = Tensor::Allocate(DataType::kInt32, Shape{3, 5});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->defined());
  EXPECT_EQ(t->NumElements(), 15);
  EXPECT_EQ(t->SizeInBytes(), 60u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->raw_data()) % kTensorAlignment, 0u);
  for (int32_t v : t->span<int32_t>()) EXPECT_EQ(v, 0);
  auto scalar = Tensor::Allocate(DataType::kDouble, Shape{});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->NumElements(), 1);
  auto empty = Tensor::Allocate(DataType::kFloat, Shape{0, 4});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->SizeInBytes(), 0u);
}

TEST(TensorTest, AllocateRejectsWhatCannotExist) {
  EXPECT_FALSE(Tensor::Allocate(DataType::kFloat, Shape{-1, 2}).ok());
  EXPECT_FALSE(Tensor::Allocate(DataType::kFloat, Shape::UnknownRank()).ok());
  EXPECT_FALSE(Tensor::Allocate(DataType::kUndefined, Shape{2}).ok());
  auto overflow = Tensor::Allocate(DataType::kDouble, Shape{int64_t{1} << 61});
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.status().code(), absl::StatusCode::kInvalidArgument);
  auto huge = Tensor::Allocate(DataType::kInt8, Shape{int64_t{1} << 50});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted);
  FailingAllocator failing;
  auto none = Tensor::Allocate(DataType::kFloat, Shape{4}, &failing);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(none.status().message()).find("cpu:7"), std::string::npos);
}

TEST(TensorTest, BuffersReturnToTheirAllocator) {
  CountingAllocator counting;
  {
    auto t = Tensor::Allocate(DataType::kFloat, Shape{8}, &counting);
    ASSERT_TRUE(t.ok());
    Tensor copy = *t;  // shares the buffer
    EXPECT_EQ(copy.raw_data(), t->raw_data());
  }
  EXPECT_EQ(counting.allocations, 1);
  EXPECT_EQ(counting.frees, 1);
  int released = 0;
  {
    float storage[4] = {1, 2, 3, 4};
    Tensor wrapped(DataType::kFloat, Shape{4},
                   Buffer::Wrap(storage, sizeof(storage), [&] { ++released; }));
    EXPECT_EQ(wrapped.data<float>()[2], 3.0f);
  }
  EXPECT_EQ(released, 1);
}

TEST(TensorTest, Strings) {
  auto t = Tensor::Allocate(DataType::kString, Shape{2});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->data<std::string>()[0], "");
  EXPECT_EQ(t->SizeInBytes(), 2 * sizeof(std::string));
  t->data<std::string>()[1] = std::string(1000, 'x');  // heap-allocated, freed by the buffer
  Tensor s = Tensor::FromVector<std::string>({"a", "bc"}, Shape{2});
  EXPECT_EQ(s.DebugString(), "string[2] {\"a\", \"bc\"}");
  auto clone = s.Clone();
  ASSERT_TRUE(clone.ok());
  clone->data<std::string>()[0] = "changed";
  EXPECT_EQ(s.data<std::string>()[0], "a");
  EXPECT_FALSE(TensorsEqual(s, *clone));
  clone->data<std::string>()[0] = "a";
  EXPECT_TRUE(TensorsEqual(s, *clone));
}

TEST(TensorTest, CloneIsDeepAndReshapeShares) {
  Tensor t = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  auto clone = t.Clone();
  ASSERT_TRUE(clone.ok());
  EXPECT_NE(clone->raw_data(), t.raw_data());
  EXPECT_TRUE(TensorsEqual(t, *clone));
  clone->data<float>()[0] = 9;
  EXPECT_EQ(t.data<float>()[0], 1.0f);
  Tensor r = t.Reshaped(Shape{3, 2});
  EXPECT_EQ(r.shape(), Shape({3, 2}));
  EXPECT_EQ(r.raw_data(), t.raw_data());
  r.data<float>()[5] = 60;
  EXPECT_EQ(t.data<float>()[5], 60.0f);
  EXPECT_FALSE(TensorsEqual(t, r));  // same bytes, other shape
}

TEST(TensorTest, ElementAccessAcrossDtypes) {
  EXPECT_EQ(Tensor::Scalar<int8_t>(-5).GetAsInt64(0), -5);
  EXPECT_EQ(Tensor::Scalar<uint16_t>(65535).GetAsInt64(0), 65535);
  EXPECT_EQ(Tensor::Scalar<uint64_t>(7).GetAsDouble(0), 7.0);
  EXPECT_EQ(Tensor::Scalar<bool>(true).GetAsInt64(0), 1);
  EXPECT_EQ(Tensor::Scalar<Float16>(Float16(1.5f)).GetAsDouble(0), 1.5);
  EXPECT_EQ(Tensor::Scalar<BFloat16>(BFloat16(-2.0f)).GetAsInt64(0), -2);
  EXPECT_EQ(Tensor::Scalar<double>(2.75).GetAsInt64(0), 2);
  Tensor v = Tensor::FromVector<int64_t>({3, -1, 4}, Shape{3});
  EXPECT_EQ(v.ToInt64Vector(), (std::vector<int64_t>{3, -1, 4}));
  Tensor b = Tensor::FromVector<bool>({true, false}, Shape{2});
  EXPECT_EQ(b.ToInt64Vector(), (std::vector<int64_t>{1, 0}));
}

TEST(TensorTest, DebugString) {
  Tensor t = Tensor::FromVector<float>({1, 2.5f, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(t.DebugString(), "f32[2,3] {1, 2.5, 3, 4, 5, 6}");
  EXPECT_EQ(t.DebugString(2), "f32[2,3] {1, 2.5, ...}");
  EXPECT_EQ(Tensor::Scalar<int32_t>(-7).DebugString(), "i32[] {-7}");
  EXPECT_EQ(Tensor::FromVector<float>({}, Shape{0}).DebugString(), "f32[0] {}");
}

TEST(TensorTest, ByteSizeOf) {
  EXPECT_EQ(ByteSizeOf(DataType::kFloat, 10).value(), 40u);
  EXPECT_EQ(ByteSizeOf(DataType::kComplex128, 3).value(), 48u);
  EXPECT_EQ(ByteSizeOf(DataType::kString, 2).value(), 2 * sizeof(std::string));
  EXPECT_EQ(ByteSizeOf(DataType::kInt8, 0).value(), 0u);
  EXPECT_FALSE(ByteSizeOf(DataType::kFloat, -1).ok());
  EXPECT_FALSE(ByteSizeOf(DataType::kUndefined, 1).ok());
  EXPECT_FALSE(ByteSizeOf(DataType::kDouble, int64_t{1} << 60).ok());
  EXPECT_FALSE(ByteSizeOf(DataType::kInt8, std::numeric_limits<int64_t>::max()).ok());
  EXPECT_TRUE(ByteSizeOf(DataType::kInt8, int64_t{1} << 62).ok());
  EXPECT_FALSE(ByteSizeOf(DataType::kInt16, int64_t{1} << 62).ok());
}

TEST(TensorTest, TensorsEqualComparesDtypeShapeAndBytes) {
  Tensor a = Tensor::FromVector<int32_t>({1, 2}, Shape{2});
  EXPECT_TRUE(TensorsEqual(a, Tensor::FromVector<int32_t>({1, 2}, Shape{2})));
  EXPECT_FALSE(TensorsEqual(a, Tensor::FromVector<int32_t>({1, 3}, Shape{2})));
  EXPECT_FALSE(TensorsEqual(a, Tensor::FromVector<uint32_t>({1, 2}, Shape{2})));
  EXPECT_FALSE(TensorsEqual(a, Tensor::FromVector<int32_t>({1, 2}, Shape{1, 2})));
  EXPECT_TRUE(TensorsEqual(Tensor(), Tensor()));
}

}  // namespace
}  // namespace ge

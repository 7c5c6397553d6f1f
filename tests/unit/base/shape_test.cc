// Shapes: the "[d0,d1,...]" spelling, element counts with overflow checks,
// GE's flat dims, strides.
#include "base/shape.h"

#include "absl/hash/hash.h"
#include "gtest/gtest.h"

namespace ge {
namespace {

TEST(ShapeTest, PrintsAndParses) {
  EXPECT_EQ(Shape({1, 3, -1}).ToString(), "[1,3,-1]");
  EXPECT_EQ(Shape().ToString(), "[]");
  EXPECT_EQ(Shape::UnknownRank().ToString(), "[?]");
  for (const char* text : {"[1,3,-1]", "[]", "[?]", "[0]", "[9223372036854775807]"}) {
    auto s = Shape::Parse(text);
    ASSERT_TRUE(s.ok()) << text << ": " << s.status();
    EXPECT_EQ(s->ToString(), text);
  }
  auto spaced = Shape::Parse("[ 2 , 3 ]");
  ASSERT_TRUE(spaced.ok());
  EXPECT_EQ(*spaced, Shape({2, 3}));
  for (const char* bad : {"", "1,2", "[1,2", "1,2]", "[1,,2]", "[-2]", "[a]", "[1.5]",
                          "[99999999999999999999]", "[?,1]", "[,]"}) {
    auto s = Shape::Parse(bad);
    EXPECT_FALSE(s.ok()) << bad;
    if (!s.ok()) {
      EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    }
  }
}

TEST(ShapeTest, RankAndKnownness) {
  EXPECT_TRUE(Shape().is_scalar());
  EXPECT_EQ(Shape().rank(), 0);
  EXPECT_TRUE(Shape().IsFullyKnown());
  EXPECT_EQ(Shape({2, -1}).rank(), 2);
  EXPECT_FALSE(Shape({2, -1}).IsFullyKnown());
  const Shape unknown = Shape::UnknownRank();
  EXPECT_TRUE(unknown.unknown_rank());
  EXPECT_EQ(unknown.rank(), -1);
  EXPECT_FALSE(unknown.is_scalar());
  EXPECT_FALSE(unknown.IsFullyKnown());
  EXPECT_NE(unknown, Shape());
  Shape s{1, 2};
  s.set_dim(1, 5);
  s.push_back(7);
  EXPECT_EQ(s, Shape({1, 5, 7}));
  EXPECT_EQ(s.dim(2), 7);
}

TEST(ShapeTest, NumElements) {
  EXPECT_EQ(Shape().NumElements().value(), 1);
  EXPECT_EQ(Shape({2, 3, 4}).NumElements().value(), 24);
  EXPECT_EQ(Shape({0, 5}).NumElements().value(), 0);
  EXPECT_EQ(Shape({5, 0, int64_t{1} << 62, 4}).NumElements().value(), 0);
  EXPECT_EQ(Shape({INT64_MAX}).NumElements().value(), INT64_MAX);
  EXPECT_EQ(Shape({int64_t{1} << 31, int64_t{1} << 31}).NumElements().value(), int64_t{1} << 62);
  EXPECT_EQ(Shape({2, 3}).NumElementsUnchecked(), 6);
}

TEST(ShapeTest, NumElementsRejectsOverflowAndUnknowns) {
  for (const Shape& s : {Shape({int64_t{1} << 32, int64_t{1} << 32}), Shape({INT64_MAX, 2}),
                         Shape({3, 3074457345618258603}), Shape({2, -1}), Shape::UnknownRank()}) {
    auto n = s.NumElements();
    EXPECT_FALSE(n.ok()) << s.ToString();
    if (!n.ok()) {
      EXPECT_EQ(n.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(std::string(n.status().message()).find(s.ToString()), std::string::npos);
    }
  }
}

TEST(ShapeTest, GeDims) {
  EXPECT_EQ(Shape::UnknownRank().ToGeDims(), std::vector<int64_t>{kUnknownRank});
  EXPECT_EQ(Shape({1, -1}).ToGeDims(), (std::vector<int64_t>{1, -1}));
  EXPECT_TRUE(Shape::FromGeDims(std::vector<int64_t>{-2}).unknown_rank());
  EXPECT_EQ(Shape::FromGeDims(std::vector<int64_t>{4, 5}), Shape({4, 5}));
  EXPECT_TRUE(Shape::FromGeDims(std::vector<int64_t>{}).is_scalar());
}

TEST(ShapeTest, ContiguousStrides) {
  std::vector<int64_t> dims = {2, 3, 4};
  EXPECT_EQ(ContiguousStrides(dims), (Shape::Dims{12, 4, 1}));
  EXPECT_TRUE(ContiguousStrides({}).empty());
}

TEST(ShapeTest, HashAgreesWithEquality) {
  absl::Hash<Shape> hash;
  EXPECT_EQ(hash(Shape({1, 2})), hash(Shape({1, 2})));
  EXPECT_NE(hash(Shape({1, 2})), hash(Shape({2, 1})));
  EXPECT_NE(hash(Shape()), hash(Shape::UnknownRank()));
}

}  // namespace
}  // namespace ge

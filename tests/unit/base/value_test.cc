// Value: sequences share their storage between copies (copy-on-write), grow
// in place when not shared, and remember whether their shapes agree.
#include "base/value.h"

#include "gtest/gtest.h"

namespace ge {
namespace {

Tensor Floats(Shape shape) {
  auto t = Tensor::Allocate(DataType::kFloat, shape);
  EXPECT_TRUE(t.ok());
  return *t;
}

TEST(ValueSequence, CopiesShareStorageUntilOneChanges) {
  Value a = Value::Sequence({Floats(Shape{2}), Floats(Shape{2})}, DataType::kFloat);
  Value b = a;
  EXPECT_TRUE(a.SharesSequenceWith(b));
  const int64_t before = Value::SequenceElementsCopied();
  b.AppendToSequence(Floats(Shape{2}));
  // b copied the two handles it shared, then appended; a is unchanged.
  EXPECT_EQ(Value::SequenceElementsCopied() - before, 2);
  EXPECT_FALSE(a.SharesSequenceWith(b));
  EXPECT_EQ(a.sequence().size(), 2u);
  EXPECT_EQ(b.sequence().size(), 3u);
  // The elements are the same tensors (handles), not copies of their data.
  EXPECT_EQ(a.sequence()[0].raw_data(), b.sequence()[0].raw_data());
  EXPECT_EQ(b.element_dtype(), DataType::kFloat);
}

TEST(ValueSequence, AnUnsharedSequenceGrowsInPlace) {
  Value v = Value::Sequence({}, DataType::kFloat);
  const int64_t before = Value::SequenceElementsCopied();
  for (int i = 0; i < 1000; ++i) {
    Value moved = std::move(v);  // a loop passes it on by moving
    moved.AppendToSequence(Floats(Shape{1}));
    v = std::move(moved);
  }
  EXPECT_EQ(Value::SequenceElementsCopied() - before, 0);
  EXPECT_EQ(v.sequence().size(), 1000u);
}

TEST(ValueSequence, InsertEraseAndSetKeepValueSemantics) {
  const Tensor x = Floats(Shape{1}), y = Floats(Shape{2}), z = Floats(Shape{3});
  Value a = Value::Sequence({x, y}, DataType::kFloat);
  Value b = a;
  b.InsertIntoSequence(1, z);
  ASSERT_EQ(b.sequence().size(), 3u);
  EXPECT_EQ(b.sequence()[1].raw_data(), z.raw_data());
  Value c = b;
  c.EraseFromSequence(0);
  ASSERT_EQ(c.sequence().size(), 2u);
  EXPECT_EQ(c.sequence()[0].raw_data(), z.raw_data());
  Value d = c;
  d.SetSequenceItem(1, x);
  EXPECT_EQ(d.sequence()[1].raw_data(), x.raw_data());
  EXPECT_EQ(c.sequence()[1].raw_data(), y.raw_data());
  EXPECT_EQ(a.sequence().size(), 2u);
  EXPECT_EQ(b.sequence().size(), 3u);
  Value e = d;
  e.mutable_sequence().clear();
  EXPECT_TRUE(e.sequence().empty());
  EXPECT_EQ(d.sequence().size(), 2u);
}

TEST(ValueSequence, RemembersWhetherShapesAgree) {
  Value v = Value::Sequence({}, DataType::kFloat);
  EXPECT_TRUE(v.sequence_shapes_uniform());
  v.AppendToSequence(Floats(Shape{2, 3}));
  v.AppendToSequence(Floats(Shape{2, 3}));
  EXPECT_TRUE(v.sequence_shapes_uniform());
  v.AppendToSequence(Floats(Shape{3, 2}));
  EXPECT_FALSE(v.sequence_shapes_uniform());
  v.SetSequenceItem(2, Floats(Shape{2, 3}));
  EXPECT_TRUE(v.sequence_shapes_uniform());
  v.InsertIntoSequence(1, Floats(Shape{1}));
  EXPECT_FALSE(v.sequence_shapes_uniform());
  v.EraseFromSequence(1);
  EXPECT_TRUE(v.sequence_shapes_uniform());
  // The first element changes what the others are compared with.
  v.InsertIntoSequence(0, Floats(Shape{7}));
  EXPECT_FALSE(v.sequence_shapes_uniform());
  v.EraseFromSequence(0);
  EXPECT_TRUE(v.sequence_shapes_uniform());
  v.SetSequenceItem(0, Floats(Shape{5}));
  EXPECT_FALSE(v.sequence_shapes_uniform());
  v.mutable_sequence().resize(1);
  EXPECT_TRUE(v.sequence_shapes_uniform());
  // Built from a vector: worked out on the first read.
  EXPECT_FALSE(Value::Sequence({Floats(Shape{1}), Floats(Shape{2})}, DataType::kFloat).sequence_shapes_uniform());
  EXPECT_TRUE(Value::Sequence({Floats(Shape{2}), Floats(Shape{2})}, DataType::kFloat).sequence_shapes_uniform());
}

TEST(ValueSequence, NonSequenceValuesReadAsEmpty) {
  Value none;
  EXPECT_TRUE(none.sequence().empty());
  Value tensor(Floats(Shape{1}));
  EXPECT_TRUE(tensor.sequence().empty());
  EXPECT_FALSE(none.SharesSequenceWith(tensor));
}

}  // namespace
}  // namespace ge

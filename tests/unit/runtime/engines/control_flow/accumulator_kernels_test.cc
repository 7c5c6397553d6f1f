// The loop accumulators' kernels through the kernel test harness (their
// inference is tested with the op tables in tests/unit/base/ops).
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/control_flow/cf_test_util.h"

namespace ge::test {
namespace {

using ::testing::HasSubstr;

const engine::Engine& ControlFlow() { return *BuiltinEngines().Find("control_flow"); }

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// Appends `items` to an accumulator made by LoopAccumulatorInit.
absl::StatusOr<Value> Accumulate(DataType dtype, const std::vector<Tensor>& items) {
  GE_ASSIGN_OR_RETURN(std::vector<Value> init,
                      RunOp(ControlFlow(), "LoopAccumulatorInit", {}, {{"dtype", static_cast<int64_t>(dtype)}}));
  Value seq = init[0];
  for (const Tensor& item : items) {
    GE_ASSIGN_OR_RETURN(std::vector<Value> next, RunOp(ControlFlow(), "LoopAccumulatorAppend", {seq, item}));
    seq = next[0];
  }
  return seq;
}

absl::StatusOr<Tensor> Stack(const Value& seq, ir::AttrMap attrs) {
  RunOptions options;
  options.check_output_types = false;  // the stacked length is known only at run time
  return RunOp1(ControlFlow(), "LoopAccumulatorStack", {seq}, attrs, options);
}

TEST(LoopAccumulators, GatherAndStackAlongAnAxis) {
  auto seq = Accumulate(DataType::kFloat, {Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2}),
                                           Tensor::FromVector<float>({5, 6, 7, 8}, Shape{2, 2}),
                                           Tensor::FromVector<float>({9, 10, 11, 12}, Shape{2, 2})});
  ASSERT_TRUE(seq.ok()) << seq.status();
  ASSERT_EQ(seq->sequence().size(), 3u);
  auto axis0 = Stack(*seq, {});
  ASSERT_TRUE(axis0.ok()) << axis0.status();
  EXPECT_TRUE(TensorEq(*axis0, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Shape{3, 2, 2})));
  auto axis1 = Stack(*seq, {{"axis", int64_t{1}}});
  ASSERT_TRUE(axis1.ok()) << axis1.status();
  EXPECT_TRUE(TensorEq(*axis1, Tensor::FromVector<float>({1, 2, 5, 6, 9, 10, 3, 4, 7, 8, 11, 12}, Shape{2, 3, 2})));
  auto last = Stack(*seq, {{"axis", int64_t{-1}}, {"reverse", int64_t{1}}});
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_TRUE(TensorEq(*last, Tensor::FromVector<float>({9, 5, 1, 10, 6, 2, 11, 7, 3, 12, 8, 4}, Shape{2, 2, 3})));
}

TEST(LoopAccumulators, StackStringsAndEmptySequences) {
  auto words = Accumulate(DataType::kString, {Tensor::FromVector<std::string>({"a", "b"}, Shape{2}),
                                              Tensor::FromVector<std::string>({"c", "d"}, Shape{2})});
  ASSERT_TRUE(words.ok()) << words.status();
  auto stacked = Stack(*words, {{"axis", int64_t{1}}});
  ASSERT_TRUE(stacked.ok()) << stacked.status();
  EXPECT_TRUE(TensorEq(*stacked, Tensor::FromVector<std::string>({"a", "c", "b", "d"}, Shape{2, 2})));
  auto empty = Accumulate(DataType::kInt32, {});
  ASSERT_TRUE(empty.ok());
  auto known = Stack(*empty, {{"axis", int64_t{1}}, {"element_shape", Shape{3, 4}}});
  ASSERT_TRUE(known.ok()) << known.status();
  EXPECT_EQ(known->shape(), (Shape{3, 0, 4}));
  EXPECT_EQ(known->dtype(), DataType::kInt32);
  auto unknown = Stack(*empty, {});
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  EXPECT_EQ(unknown->shape(), Shape{0});
}

TEST(LoopAccumulators, Errors) {
  auto mixed = Accumulate(DataType::kFloat, {Tensor::FromVector<float>({1, 2}, Shape{2}),
                                             Tensor::FromVector<float>({1, 2, 3}, Shape{3})});
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_THAT(Message(Stack(*mixed, {}).status()), HasSubstr("element 1 has shape [3], element 0 has [2]"));
  auto seq = Accumulate(DataType::kFloat, {Tensor::FromVector<float>({1, 2}, Shape{2})});
  EXPECT_THAT(Message(Stack(*seq, {{"axis", int64_t{2}}}).status()), HasSubstr("axis 2 is outside [-2, 1]"));
  EXPECT_THAT(Message(Accumulate(DataType::kFloat, {Tensor::Scalar(int64_t{1})}).status()),
              HasSubstr("i64"));
  EXPECT_THAT(Message(RunOp(ControlFlow(), "LoopAccumulatorInit", {}, {{"dtype", int64_t{99}}}).status()),
              HasSubstr("'dtype' is 99"));
}

absl::StatusOr<Tensor> Join(const Value& seq, ir::AttrMap attrs) {
  RunOptions options;
  options.check_output_types = false;  // the joined length is known only at run time
  return RunOp1(ControlFlow(), "LoopAccumulatorConcat", {seq}, attrs, options);
}

TEST(LoopAccumulators, ConcatJoinsPiecesOfDifferentLengths) {
  // [1, 2] + [2, 2] + [0, 2] + [1, 2] on axis 0, then the same on axis 1 of
  // their transposes.
  auto rows =
      Accumulate(DataType::kFloat,
                 {Tensor::FromVector<float>({1, 2}, Shape{1, 2}), Tensor::FromVector<float>({3, 4, 5, 6}, Shape{2, 2}),
                  Tensor::FromVector<float>({}, Shape{0, 2}), Tensor::FromVector<float>({7, 8}, Shape{1, 2})});
  ASSERT_TRUE(rows.ok()) << rows.status();
  auto axis0 = Join(*rows, {});
  ASSERT_TRUE(axis0.ok()) << axis0.status();
  EXPECT_TRUE(TensorEq(*axis0, Tensor::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}, Shape{4, 2})));
  auto reversed = Join(*rows, {{"reverse", int64_t{1}}});
  ASSERT_TRUE(reversed.ok()) << reversed.status();
  EXPECT_TRUE(TensorEq(*reversed, Tensor::FromVector<float>({7, 8, 3, 4, 5, 6, 1, 2}, Shape{4, 2})));
  auto cols = Accumulate(DataType::kFloat, {Tensor::FromVector<float>({1, 2}, Shape{2, 1}),
                                            Tensor::FromVector<float>({3, 4, 5, 6}, Shape{2, 2}),
                                            Tensor::FromVector<float>({}, Shape{2, 0})});
  ASSERT_TRUE(cols.ok()) << cols.status();
  auto axis1 = Join(*cols, {{"axis", int64_t{-1}}});
  ASSERT_TRUE(axis1.ok()) << axis1.status();
  EXPECT_TRUE(TensorEq(*axis1, Tensor::FromVector<float>({1, 3, 4, 2, 5, 6}, Shape{2, 3})));
  // One piece (a loop that ran no iteration) is copied as it is; strings too.
  auto words = Accumulate(DataType::kString, {Tensor::FromVector<std::string>({"a", "b"}, Shape{2})});
  ASSERT_TRUE(words.ok()) << words.status();
  auto one = Join(*words, {});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_TRUE(TensorEq(*one, Tensor::FromVector<std::string>({"a", "b"}, Shape{2})));
  // Middle axis of rank 3: the outer dims interleave the pieces.
  auto mid = Accumulate(DataType::kInt32, {Tensor::FromVector<int32_t>({1, 2, 3, 4}, Shape{2, 1, 2}),
                                           Tensor::FromVector<int32_t>({5, 6, 7, 8}, Shape{2, 1, 2})});
  ASSERT_TRUE(mid.ok()) << mid.status();
  auto axis_mid = Join(*mid, {{"axis", int64_t{1}}});
  ASSERT_TRUE(axis_mid.ok()) << axis_mid.status();
  EXPECT_TRUE(TensorEq(*axis_mid, Tensor::FromVector<int32_t>({1, 2, 5, 6, 3, 4, 7, 8}, Shape{2, 2, 2})));
}

TEST(LoopAccumulators, ConcatErrors) {
  auto ranks = Accumulate(
      DataType::kFloat, {Tensor::FromVector<float>({1, 2}, Shape{2}), Tensor::FromVector<float>({1, 2}, Shape{1, 2})});
  ASSERT_TRUE(ranks.ok()) << ranks.status();
  EXPECT_THAT(Message(Join(*ranks, {}).status()), HasSubstr("piece 1 has shape [1,2], piece 0 has [2]"));
  auto dims = Accumulate(DataType::kFloat, {Tensor::FromVector<float>({1, 2}, Shape{1, 2}),
                                            Tensor::FromVector<float>({1, 2, 3}, Shape{1, 3})});
  ASSERT_TRUE(dims.ok()) << dims.status();
  EXPECT_THAT(Message(Join(*dims, {}).status()), HasSubstr("may differ on axis 0 only"));
  EXPECT_THAT(Message(Join(*dims, {{"axis", int64_t{2}}}).status()), HasSubstr("axis 2 is outside [-2, 1]"));
  auto empty = Accumulate(DataType::kFloat, {});
  ASSERT_TRUE(empty.ok());
  EXPECT_THAT(Message(Join(*empty, {}).status()), HasSubstr("no piece"));
  auto scalar = Accumulate(DataType::kFloat, {Tensor::Scalar(1.0f)});
  ASSERT_TRUE(scalar.ok());
  EXPECT_THAT(Message(Join(*scalar, {}).status()), HasSubstr("axis 0 is outside [0, -1]"));
  EXPECT_THAT(Message(RunOp(ControlFlow(), "LoopAccumulatorConcat", {*dims}, {{"reverse", int64_t{2}}}).status()),
              HasSubstr("'reverse' is 2"));
}

TEST(LoopAccumulators, AppendWithAMergeAxisJoinsSmallPiecesAsTheyCome) {
  auto init = RunOp(ControlFlow(), "LoopAccumulatorInit", {}, {{"dtype", static_cast<int64_t>(DataType::kFloat)}});
  ASSERT_TRUE(init.ok()) << init.status();
  const ir::AttrMap append = {{"merge_axis", int64_t{-1}}};
  const ir::AttrMap prepend = {{"merge_axis", int64_t{1}}, {"merge_reverse", int64_t{1}}};
  Value forward = (*init)[0], backward = (*init)[0];
  for (float k : {1.0f, 2.0f, 3.0f}) {
    const Tensor piece = Tensor::FromVector<float>({k, 10 * k}, Shape{2, 1});
    auto f = RunOp(ControlFlow(), "LoopAccumulatorAppend", {forward, piece}, append);
    auto b = RunOp(ControlFlow(), "LoopAccumulatorAppend", {backward, piece}, prepend);
    ASSERT_TRUE(f.ok() && b.ok()) << f.status() << b.status();
    forward = (*f)[0];
    backward = (*b)[0];
  }
  ASSERT_EQ(forward.sequence().size(), 1u);
  EXPECT_TRUE(TensorEq(forward.sequence()[0], Tensor::FromVector<float>({1, 2, 3, 10, 20, 30}, Shape{2, 3})));
  ASSERT_EQ(backward.sequence().size(), 1u);
  EXPECT_TRUE(TensorEq(backward.sequence()[0], Tensor::FromVector<float>({3, 2, 1, 30, 20, 10}, Shape{2, 3})));
  auto joined = Join(backward, {{"axis", int64_t{1}}, {"reverse", int64_t{1}}});
  ASSERT_TRUE(joined.ok()) << joined.status();
  EXPECT_TRUE(TensorEq(*joined, backward.sequence()[0]));
  // Pieces of 64 KiB or more stay pieces; so do pieces that differ off the axis.
  const Tensor big = Tensor::FromVector<float>(std::vector<float>(16384, 1.0f), Shape{1, 16384});
  auto two_big = RunOp(ControlFlow(), "LoopAccumulatorAppend", {forward, big}, append);
  ASSERT_TRUE(two_big.ok()) << two_big.status();
  EXPECT_EQ((*two_big)[0].sequence().size(), 2u);
  auto odd = RunOp(ControlFlow(), "LoopAccumulatorAppend", {forward, Tensor::FromVector<float>({1, 2, 3}, Shape{3, 1})},
                   append);
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_EQ((*odd)[0].sequence().size(), 2u);
  // Without the attribute (scan outputs) every piece stays an element.
  auto plain = Accumulate(DataType::kFloat,
                          {Tensor::FromVector<float>({1}, Shape{1, 1}), Tensor::FromVector<float>({2}, Shape{1, 1})});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->sequence().size(), 2u);
}

}  // namespace
}  // namespace ge::test

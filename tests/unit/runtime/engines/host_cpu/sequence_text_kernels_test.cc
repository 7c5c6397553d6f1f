// The sequence, optional and text kernels of host_cpu on the edges the ONNX
// backend tests leave out: negative and out-of-range positions, uneven
// splits, mismatched concatenations, empty optionals, IDF / TFIDF weights,
// string pools and skipped n-grams.
#include "gmock/gmock.h"
#include "tests/unit/runtime/engines/host_cpu/host_cpu_test_util.h"

namespace ge::engine::host_cpu {
namespace {

using ::testing::HasSubstr;

test::RunOptions Unchecked() {
  test::RunOptions options;
  options.check_output_types = false;  // sequence element shapes are run-time facts
  return options;
}

Value RunValue(const std::string& type, const std::vector<Value>& inputs, const ir::AttrMap& attrs = {}) {
  auto out = test::RunOp(Engine(), type, inputs, attrs, 1, Unchecked());
  EXPECT_TRUE(out.ok()) << type << ": " << out.status();
  return out.ok() ? (*out)[0] : Value();
}

Value Seq(std::vector<Tensor> items) {
  const DataType dtype = items.empty() ? DataType::kFloat : items[0].dtype();
  return Value::Sequence(std::move(items), dtype);
}

TEST(SequenceKernels, InsertAtAndEraseTakeNegativePositions) {
  const Value seq = Seq({F32({1}, Shape{1}), F32({2}, Shape{1}), F32({3}, Shape{1})});
  const Value inserted = RunValue("SequenceInsert", {seq, F32({9, 9}, Shape{2}), Tensor::Scalar<int64_t>(-1)});
  ASSERT_TRUE(inserted.is_sequence());
  ASSERT_EQ(inserted.sequence().size(), 4u);
  EXPECT_TRUE(test::TensorEq(inserted.sequence()[2], F32({9, 9}, Shape{2})));
  const Value at = RunValue("SequenceAt", {inserted, Tensor::Scalar<int32_t>(-4)});
  EXPECT_TRUE(test::TensorEq(at.tensor(), F32({1}, Shape{1})));
  const Value erased = RunValue("SequenceErase", {inserted, Tensor::Scalar<int64_t>(-2)});
  ASSERT_EQ(erased.sequence().size(), 3u);
  EXPECT_TRUE(test::TensorEq(erased.sequence()[2], F32({3}, Shape{1})));
  const Value last_gone = RunValue("SequenceErase", {erased});
  EXPECT_EQ(last_gone.sequence().size(), 2u);
}

TEST(SequenceKernels, PositionsOutOfRangeAndWrongDtypesFail) {
  const Value seq = Seq({F32({1}, Shape{1})});
  EXPECT_THAT(std::string(RunError("SequenceAt", {seq, Tensor::Scalar<int64_t>(1)}).message()),
              HasSubstr("position 1 is outside [-1, 0]"));
  EXPECT_THAT(std::string(RunError("SequenceInsert", {seq, F32({1}, Shape{1}), Tensor::Scalar<int64_t>(3)}).message()),
              HasSubstr("outside [-1, 1]"));
  EXPECT_FALSE(RunError("SequenceInsert", {seq, I64s({1})}).ok());
  EXPECT_THAT(std::string(RunError("SequenceErase", {Seq({})}).message()), HasSubstr("empty sequence"));
}

TEST(SequenceKernels, EmptyConstructAndLength) {
  const Value empty = RunValue("SequenceEmpty", {}, {{"dtype", static_cast<int64_t>(DataType::kInt64)}});
  ASSERT_TRUE(empty.is_sequence());
  EXPECT_EQ(empty.element_dtype(), DataType::kInt64);
  EXPECT_TRUE(empty.sequence().empty());
  const Value built = RunValue("SequenceConstruct", {I64s({1, 2}), I64s({3})});
  const Value length = RunValue("SequenceLength", {built});
  EXPECT_TRUE(test::TensorEq(length.tensor(), Tensor::Scalar<int64_t>(2)));
  EXPECT_FALSE(RunError("SequenceConstruct", {I64s({1}), F32({1}, Shape{1})}).ok());
}

TEST(SequenceKernels, SplitToSequenceWithAScalarSplitLeavesAShortLastPiece) {
  const Tensor x = F32({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{2, 5});
  const Value pieces = RunValue("SplitToSequence", {x, Tensor::Scalar<int64_t>(2)}, {{"axis", int64_t{1}}});
  ASSERT_EQ(pieces.sequence().size(), 3u);
  EXPECT_TRUE(test::TensorEq(pieces.sequence()[0], F32({0, 1, 5, 6}, Shape{2, 2})));
  EXPECT_TRUE(test::TensorEq(pieces.sequence()[2], F32({4, 9}, Shape{2, 1})));
  const Value rows = RunValue("SplitToSequence", {x}, {{"keepdims", int64_t{0}}});
  ASSERT_EQ(rows.sequence().size(), 2u);
  EXPECT_TRUE(test::TensorEq(rows.sequence()[1], F32({5, 6, 7, 8, 9}, Shape{5})));
  EXPECT_THAT(std::string(RunError("SplitToSequence", {x, I64s({2, 2})}, {{"axis", int64_t{1}}}).message()),
              HasSubstr("sums to 4"));
  EXPECT_FALSE(RunError("SplitToSequence", {x, Tensor::Scalar<int64_t>(0)}).ok());
}

TEST(SequenceKernels, ConcatFromSequenceConcatenatesOrStacks) {
  const Value seq = Seq({F32({1, 2}, Shape{1, 2}), F32({3, 4, 5, 6}, Shape{2, 2})});
  const Value rows = RunValue("ConcatFromSequence", {seq}, {{"axis", int64_t{0}}});
  EXPECT_TRUE(test::TensorEq(rows.tensor(), F32({1, 2, 3, 4, 5, 6}, Shape{3, 2})));
  EXPECT_THAT(std::string(RunError("ConcatFromSequence", {seq}, {{"axis", int64_t{1}}}).message()),
              HasSubstr("element 1 has shape [2,2]"));
  const Value same = Seq({F32({1, 2}, Shape{2}), F32({3, 4}, Shape{2})});
  const Value stacked = RunValue("ConcatFromSequence", {same}, {{"axis", int64_t{-1}}, {"new_axis", int64_t{1}}});
  EXPECT_TRUE(test::TensorEq(stacked.tensor(), F32({1, 3, 2, 4}, Shape{2, 2})));
  EXPECT_THAT(std::string(RunError("ConcatFromSequence", {Seq({})}, {{"axis", int64_t{0}}}).message()),
              HasSubstr("empty sequence"));
}

TEST(OptionalKernels, EmptyOptionalsHaveNoElement) {
  const Value none = RunValue("Optional", {Value()}, {{"type", std::string("f32[2]")}});
  EXPECT_TRUE(none.is_none());
  EXPECT_TRUE(test::TensorEq(RunValue("OptionalHasElement", {none}).tensor(), Tensor::Scalar<bool>(false)));
  const Value held = RunValue("Optional", {F32({1, 2}, Shape{2})});
  EXPECT_TRUE(test::TensorEq(RunValue("OptionalHasElement", {held}).tensor(), Tensor::Scalar<bool>(true)));
  EXPECT_TRUE(test::TensorEq(RunValue("OptionalGetElement", {held}).tensor(), F32({1, 2}, Shape{2})));
  EXPECT_FALSE(RunError("OptionalGetElement", {none}).ok());  // nothing to get
}

TEST(TextKernels, StringNormalizerIgnoresCaseOfStopwordsUnlessCaseSensitive) {
  const Tensor words = Tensor::FromVector<std::string>({"Monday", "tuesday", "MONDAY"}, Shape{3});
  const ir::AttrMap insensitive = {{"stopwords", std::vector<std::string>{"monday"}},
                                   {"case_change_action", std::string("UPPER")}};
  EXPECT_TRUE(test::TensorEq(RunValue("StringNormalizer", {words}, insensitive).tensor(),
                             Tensor::FromVector<std::string>({"TUESDAY"}, Shape{1})));
  ir::AttrMap sensitive = insensitive;
  sensitive["is_case_sensitive"] = int64_t{1};
  sensitive["case_change_action"] = std::string("LOWER");
  EXPECT_TRUE(test::TensorEq(RunValue("StringNormalizer", {words}, sensitive).tensor(),
                             Tensor::FromVector<std::string>({"monday", "tuesday", "monday"}, Shape{3})));
}

TEST(TextKernels, TfIdfWeightsStringPoolsAndSkips) {
  // Pool: unigram "a" (column 1), bigram "a b" (column 0).
  const ir::AttrMap attrs = {{"max_gram_length", int64_t{2}},
                             {"min_gram_length", int64_t{1}},
                             {"max_skip_count", int64_t{1}},
                             {"mode", std::string("TFIDF")},
                             {"ngram_counts", std::vector<int64_t>{0, 1}},
                             {"ngram_indexes", std::vector<int64_t>{1, 0}},
                             {"pool_strings", std::vector<std::string>{"a", "a", "b"}},
                             {"weights", std::vector<float>{0.5f, 2.0f}}};
  // "a b" adjacent once, "a _ b" with one skipped once; "a" twice.
  const Tensor text = Tensor::FromVector<std::string>({"a", "b", "a", "c", "b"}, Shape{5});
  EXPECT_TRUE(test::TensorEq(RunValue("TfIdfVectorizer", {text}, attrs).tensor(), F32({2 * 2.0f, 2 * 0.5f}, Shape{2})));
  ir::AttrMap idf = attrs;
  idf["mode"] = std::string("IDF");
  EXPECT_TRUE(test::TensorEq(RunValue("TfIdfVectorizer", {text}, idf).tensor(), F32({2.0f, 0.5f}, Shape{2})));
  ir::AttrMap bad = attrs;
  bad["ngram_counts"] = std::vector<int64_t>{0, 2};
  EXPECT_FALSE(RunError("TfIdfVectorizer", {text}, bad).ok());
}

}  // namespace
}  // namespace ge::engine::host_cpu

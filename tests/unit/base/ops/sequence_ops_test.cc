// Inference of the ops of base/ops/sequence_ops.cc: sequences, sequence <->
// tensor conversions, SequenceMap (without a graph: declared types kept)
// and optionals.
#include "gtest/gtest.h"
#include "tests/unit/base/ops/op_test_util.h"

namespace ge::ops::testing {
namespace {

const int64_t kI64 = static_cast<int64_t>(DataType::kInt64);

void AddSequenceCases(std::vector<InferCase>& t) {
  t.push_back({.op = "SequenceEmpty", .inputs = {}, .outputs = {"seq<f32[?]>"}});
  t.push_back({.op = "SequenceEmpty", .inputs = {}, .attrs = {{"dtype", kI64}}, .outputs = {"seq<i64[?]>"}});
  t.push_back({.op = "SequenceEmpty", .inputs = {}, .attrs = {{"dtype", int64_t{99}}}, .outputs = {""},
               .error = "not a data type"});
  t.push_back({.op = "SequenceConstruct", .inputs = {"f32[2,3]", "f32[2,3]"}, .outputs = {"seq<f32[2,3]>"}});
  t.push_back({.op = "SequenceConstruct", .inputs = {"f32[2,3]", "f32[4,3]"}, .outputs = {"seq<f32[-1,3]>"}});
  t.push_back({.op = "SequenceConstruct", .inputs = {"f32[?]", "f32[2]"}, .outputs = {"seq<f32[?]>"}});
  t.push_back({.op = "SequenceConstruct", .inputs = {"f32[2]", "i64[2]"}, .outputs = {""}, .error = "i64"});
  t.push_back({.op = "SequenceInsert", .inputs = {"seq<f32[?]>", "f32[3]"}, .outputs = {"seq<f32[?]>"}});
  t.push_back({.op = "SequenceInsert", .inputs = {"seq<f32[3]>", "f32[-1]", "i64[]"}, .outputs = {"seq<f32[-1]>"}});
  t.push_back({.op = "SequenceInsert", .inputs = {"seq<f32[3]>", "f32[4]", "i64[2]"}, .outputs = {""},
               .error = "must be a scalar"});
  t.push_back({.op = "SequenceInsert", .inputs = {"seq<i64[3]>", "f32[3]"}, .outputs = {""}, .error = "cannot hold"});
  t.push_back({.op = "SequenceAt", .inputs = {"seq<f32[2,3]>", "i64[]"}, .outputs = {"f32[2,3]"}});
  t.push_back({.op = "SequenceAt", .inputs = {"seq<f32[-1,3]>", "i32[]"}, .outputs = {"f32[-1,3]"}});
  t.push_back({.op = "SequenceAt", .inputs = {"f32[2]", "i64[]"}, .outputs = {""}, .error = "f32"});
  t.push_back({.op = "SequenceErase", .inputs = {"seq<f32[2]>", "i64[]"}, .outputs = {"seq<f32[2]>"}});
  t.push_back({.op = "SequenceErase", .inputs = {"seq<f32[-1]>", ""}, .outputs = {"seq<f32[-1]>"}});
  t.push_back({.op = "SequenceErase", .inputs = {"seq<f32[2]>", "i64[1,2]"}, .outputs = {""},
               .error = "must be a scalar"});
  t.push_back({.op = "SequenceLength", .inputs = {"seq<f32[2]>"}, .outputs = {"i64[]"}});
  t.push_back({.op = "SequenceLength", .inputs = {"seq<f32[?]>"}, .outputs = {"i64[]"}});
  t.push_back({.op = "SequenceLength", .inputs = {"f32[2]"}, .outputs = {""}, .error = "f32"});
}

void AddConversionCases(std::vector<InferCase>& t) {
  t.push_back({.op = "SplitToSequence", .inputs = {"f32[2,6]"}, .attrs = {{"axis", int64_t{1}}},
               .outputs = {"seq<f32[2,1]>"}});
  t.push_back({.op = "SplitToSequence", .inputs = {"f32[2,6]"}, .attrs = {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}},
               .outputs = {"seq<f32[2]>"}});
  t.push_back({.op = "SplitToSequence", .inputs = {"f32[2,6]", "i64[]"}, .attrs = {{"axis", int64_t{1}}},
               .values = {{1, I64s({3})}}, .outputs = {"seq<f32[2,3]>"}});
  t.push_back({.op = "SplitToSequence", .inputs = {"f32[2,6]", "i64[2]"}, .attrs = {{"axis", int64_t{1}}},
               .values = {{1, I64s({2, 4})}}, .outputs = {"seq<f32[2,-1]>"}});
  t.push_back({.op = "SplitToSequence", .inputs = {"f32[-1,6]", "i64[2]"}, .outputs = {"seq<f32[-1,6]>"}});
  t.push_back({.op = "SplitToSequence", .inputs = {"f32[?]"}, .outputs = {"seq<f32[?]>"}});
  t.push_back({.op = "SplitToSequence", .inputs = {"f32[2]"}, .attrs = {{"axis", int64_t{1}}}, .outputs = {""},
               .error = "axis"});
  t.push_back({.op = "ConcatFromSequence", .inputs = {"seq<f32[2,3]>"}, .attrs = {{"axis", int64_t{1}}},
               .outputs = {"f32[2,-1]"}});
  t.push_back({.op = "ConcatFromSequence", .inputs = {"seq<f32[2,3]>"},
               .attrs = {{"axis", int64_t{-1}}, {"new_axis", int64_t{1}}}, .outputs = {"f32[2,3,-1]"}});
  t.push_back({.op = "ConcatFromSequence", .inputs = {"seq<f32[-1,3]>"}, .attrs = {{"axis", int64_t{0}}},
               .outputs = {"f32[-1,3]"}});
  t.push_back({.op = "ConcatFromSequence", .inputs = {"seq<f32[2]>"}, .attrs = {{"axis", int64_t{2}}},
               .outputs = {""}, .error = "axis"});
  t.push_back({.op = "SequenceMap", .inputs = {"seq<f32[-1]>"}, .declared = {"seq<i64[1]>"},
               .outputs = {"seq<i64[1]>"}});
  t.push_back({.op = "SequenceMap", .inputs = {"seq<f32[2]>", "f32[2]"}, .declared = {"seq<f32[2]>"},
               .outputs = {"seq<f32[2]>"}});
  t.push_back({.op = "SequenceMap", .inputs = {"f32[2]"}, .outputs = {""}, .error = "f32"});
}

void AddOptionalCases(std::vector<InferCase>& t) {
  t.push_back({.op = "Optional", .inputs = {"f32[2]"}, .outputs = {"opt<f32[2]>"}});
  t.push_back({.op = "Optional", .inputs = {"seq<f32[-1]>"}, .outputs = {"opt<seq<f32[-1]>>"}});
  t.push_back({.op = "Optional", .inputs = {}, .attrs = {{"type", std::string("seq<f32[5]>")}},
               .outputs = {"opt<seq<f32[5]>>"}});
  t.push_back({.op = "Optional", .inputs = {}, .outputs = {""}, .error = "'type'"});
  t.push_back({.op = "OptionalHasElement", .inputs = {"opt<f32[2]>"}, .outputs = {"bool[]"}});
  t.push_back({.op = "OptionalHasElement", .inputs = {"opt<f32[?]>"}, .outputs = {"bool[]"}});
  t.push_back({.op = "OptionalHasElement", .inputs = {"opt<f32[2]>", "f32[2]"}, .outputs = {""},
               .error = "input"});
  t.push_back({.op = "OptionalGetElement", .inputs = {"opt<f32[2]>"}, .outputs = {"f32[2]"}});
  t.push_back({.op = "OptionalGetElement", .inputs = {"opt<seq<f32[-1]>>"}, .outputs = {"seq<f32[-1]>"}});
  t.push_back({.op = "OptionalGetElement", .inputs = {}, .outputs = {""}, .error = "input"});
}

}  // namespace

const std::vector<InferCase>& SequenceOpCases() {
  static const auto* cases = [] {
    auto* t = new std::vector<InferCase>();
    AddSequenceCases(*t);
    AddConversionCases(*t);
    AddOptionalCases(*t);
    return t;
  }();
  return *cases;
}

TEST(SequenceOpsTest, Inference) { RunCases(SequenceOpCases()); }

}  // namespace ge::ops::testing

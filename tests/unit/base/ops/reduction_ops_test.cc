// Shape inference of the reductions: the ReduceX family (axes attribute),
// ReduceSum-13 (axes input), ArgMax and ArgMin.
#include "gtest/gtest.h"
#include "tests/unit/base/ops/op_test_util.h"

namespace ge::ops::testing {
namespace {

using Ints = std::vector<int64_t>;

const char* const kAttrAxesReductions[] = {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                           "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                                           "ReduceSumSquare"};

void AddAttrAxesCases(std::vector<InferCase>& t) {
  for (const char* op : kAttrAxesReductions) {
    t.push_back({.op = op, .inputs = {"f32[2,3,4]"}, .attrs = {{"axes", Ints{1}}}, .outputs = {"f32[2,1,4]"}});
    t.push_back({.op = op, .inputs = {"f32[2,3,4]"}, .attrs = {{"axes", Ints{0, -1}}, {"keepdims", 0}},
                 .outputs = {"f32[3]"}});
    t.push_back({.op = op, .inputs = {"f32[2,3,4]"}, .outputs = {"f32[1,1,1]"}});
    t.push_back({.op = op, .inputs = {"f32[2,3,4]"}, .attrs = {{"keepdims", 0}}, .outputs = {"f32[]"}});
    t.push_back({.op = op, .inputs = {"f32[-1,3,4]"}, .attrs = {{"axes", Ints{-1}}}, .outputs = {"f32[-1,3,1]"}});
    t.push_back({.op = op, .inputs = {"f32[?]"}, .attrs = {{"axes", Ints{1}}}, .outputs = {"f32[?]"}});
    // Reducing everything without keepdims gives a scalar even from unknown rank.
    t.push_back({.op = op, .inputs = {"f32[?]"}, .attrs = {{"keepdims", 0}}, .outputs = {"f32[]"}});
    t.push_back({.op = op, .inputs = {"f32[2,3]"}, .attrs = {{"axes", Ints{2}}}, .outputs = {""},
                 .error = "axis 2 is out of range for rank 2"});
    t.push_back({.op = op, .inputs = {"f32[2,3]"}, .attrs = {{"axes", Ints{1, -1}}}, .outputs = {""},
                 .error = "repeat axis 1"});
    t.push_back({.op = op, .inputs = {"bool[2,3]"}, .outputs = {""}, .error = "not allowed for T"});
  }
  t.push_back({.op = "ReduceMax", .inputs = {"u8[2,3]"}, .attrs = {{"axes", Ints{0}}}, .outputs = {"u8[1,3]"}});
  t.push_back({.op = "ReduceMean", .inputs = {"u8[2,3]"}, .outputs = {""}, .error = "not allowed for T"});
}

void AddInputAxesCases(std::vector<InferCase>& t) {
  t.push_back({.op = "ReduceSum", .inputs = {"f32[2,3,4]", "i64[1]"}, .values = {{1, I64s({1})}},
               .outputs = {"f32[2,1,4]"}});
  t.push_back({.op = "ReduceSum", .inputs = {"f32[2,3,4]", "i64[2]"}, .attrs = {{"keepdims", 0}},
               .values = {{1, I64s({0, 2})}}, .outputs = {"f32[3]"}});
  t.push_back({.op = "ReduceSum", .inputs = {"f32[2,3,4]"}, .outputs = {"f32[1,1,1]"}});
  t.push_back({.op = "ReduceSum", .inputs = {"f32[2,3,4]"}, .attrs = {{"keepdims", 0}}, .outputs = {"f32[]"}});
  // Unknown axes: with keepdims only dims that are 1 stay known.
  t.push_back({.op = "ReduceSum", .inputs = {"f32[2,1,4]", "i64[1]"}, .outputs = {"f32[-1,1,-1]"}});
  t.push_back({.op = "ReduceSum", .inputs = {"f32[2,1,4]", "i64[1]"}, .attrs = {{"keepdims", 0}},
               .outputs = {"f32[-1,-1]"}});
  t.push_back({.op = "ReduceSum", .inputs = {"f32[2,1,4]", "i64[-1]"}, .attrs = {{"keepdims", 0}},
               .outputs = {"f32[?]"}});
  t.push_back({.op = "ReduceSum", .inputs = {"f32[?]", "i64[1]"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "ReduceSum", .inputs = {"f32[2,3,4]", "i64[0]"}, .attrs = {{"noop_with_empty_axes", 1}},
               .values = {{1, I64s({})}}, .outputs = {"f32[2,3,4]"}});
  t.push_back({.op = "ReduceSum", .inputs = {"f32[2,3,4]", "i64[0]"}, .attrs = {{"noop_with_empty_axes", 1}},
               .outputs = {"f32[2,3,4]"}});
  t.push_back({.op = "ReduceSum", .inputs = {"f32[2,-1]"}, .attrs = {{"noop_with_empty_axes", 1}},
               .outputs = {"f32[2,-1]"}});
  t.push_back({.op = "ReduceSum", .inputs = {"f32[2,3]", "i64[2]"}, .values = {{1, I64s({0, -2})}},
               .outputs = {""}, .error = "repeat axis 0"});
  t.push_back({.op = "ReduceSum", .inputs = {"f32[2,3]"}, .attrs = {{"axes", Ints{0}}}, .outputs = {""},
               .error = "unknown attribute 'axes'"});
}

void AddArgCases(std::vector<InferCase>& t) {
  for (const char* op : {"ArgMax", "ArgMin"}) {
    t.push_back({.op = op, .inputs = {"f32[2,3,4]"}, .attrs = {{"axis", 1}}, .outputs = {"i64[2,1,4]"}});
    t.push_back({.op = op, .inputs = {"i32[2,-1,4]"}, .attrs = {{"axis", -1}, {"keepdims", 0}},
                 .outputs = {"i64[2,-1]"}});
    t.push_back({.op = op, .inputs = {"f32[5]"}, .attrs = {{"keepdims", 0}}, .outputs = {"i64[]"}});
    t.push_back({.op = op, .inputs = {"f32[?]"}, .outputs = {"i64[?]"}});
    t.push_back({.op = op, .inputs = {"f32[2,3]"}, .attrs = {{"axis", 3}}, .outputs = {""},
                 .error = "axis 3 is out of range for rank 2"});
    t.push_back({.op = op, .inputs = {"string[2]"}, .outputs = {""}, .error = "not allowed for T"});
  }
}

}  // namespace

const std::vector<InferCase>& ReductionCases() {
  static const auto* cases = [] {
    auto* t = new std::vector<InferCase>();
    AddAttrAxesCases(*t);
    AddInputAxesCases(*t);
    AddArgCases(*t);
    return t;
  }();
  return *cases;
}

TEST(ReductionOpsTest, Inference) { RunCases(ReductionCases()); }

}  // namespace ge::ops::testing

// Inference of the ops of base/ops/control_flow_ops.cc: the import forms of
// ONNX Loop and Scan (declared types kept) and the loop accumulators.
#include "base/ir/op_types.h"
#include "gtest/gtest.h"
#include "tests/unit/base/ops/op_test_util.h"

namespace ge::ops::testing {
namespace {

const int64_t kF32 = static_cast<int64_t>(DataType::kFloat);

void AddImportFormCases(std::vector<InferCase>& t) {
  const ir::AttrMap body = {{"body", ir::GraphRef{"b"}}};
  t.push_back({.op = "Loop", .inputs = {"i64[]", "bool[]", "f32[-1]"}, .attrs = body, .declared = {"f32[-1]"},
               .outputs = {"f32[-1]"}});
  t.push_back({.op = "Loop", .inputs = {"", "", "f32[2]"}, .attrs = body, .declared = {"f32[2]", "f32[-1,2]"},
               .outputs = {"f32[2]", "f32[-1,2]"}});
  t.push_back({.op = "Loop", .inputs = {"i64[]", "bool[]"}, .outputs = {""}, .error = "'body'"});
  t.push_back({.op = "Loop", .inputs = {"f32[]", "bool[]"}, .attrs = body, .outputs = {""}, .error = "f32"});
  ir::AttrMap scan = body;
  scan["num_scan_inputs"] = int64_t{1};
  t.push_back({.op = "Scan", .inputs = {"f32[2]", "f32[-1,2]"}, .attrs = scan, .declared = {"f32[2]", "f32[-1,2]"},
               .outputs = {"f32[2]", "f32[-1,2]"}});
  t.push_back({.op = "Scan", .inputs = {"f32[2]"}, .attrs = body, .outputs = {""}, .error = "'num_scan_inputs'"});
}

void AddAccumulatorCases(std::vector<InferCase>& t) {
  t.push_back({.op = "LoopAccumulatorInit", .inputs = {}, .attrs = {{"dtype", kF32}}, .outputs = {"seq<f32[?]>"}});
  t.push_back({.op = "LoopAccumulatorInit", .inputs = {}, .attrs = {{"dtype", int64_t{0}}}, .outputs = {""},
               .error = "attribute 'dtype' is 0, not a data type"});
  t.push_back({.op = "LoopAccumulatorAppend", .inputs = {"seq<f32[?]>", "f32[2,3]"}, .outputs = {"seq<f32[2,3]>"}});
  t.push_back({.op = "LoopAccumulatorAppend", .inputs = {"seq<f32[2,3]>", "f32[2,-1]"},
               .outputs = {"seq<f32[2,-1]>"}});
  t.push_back({.op = "LoopAccumulatorAppend", .inputs = {"seq<f32[2]>", "f32[3]"}, .outputs = {"seq<f32[-1]>"}});
  t.push_back({.op = "LoopAccumulatorAppend", .inputs = {"seq<f32[?]>", "i64[]"}, .outputs = {""},
               .error = "appends i64[] to a sequence of f32[?]"});
  t.push_back({.op = "LoopAccumulatorStack", .inputs = {"seq<f32[2,3]>"}, .outputs = {"f32[-1,2,3]"}});
  t.push_back({.op = "LoopAccumulatorStack", .inputs = {"seq<f32[2,3]>"}, .attrs = {{"axis", int64_t{-1}}},
               .outputs = {"f32[2,3,-1]"}});
  t.push_back({.op = "LoopAccumulatorStack", .inputs = {"seq<f32[?]>"}, .attrs = {{"element_shape", Shape{4}}},
               .outputs = {"f32[-1,4]"}});
  t.push_back({.op = "LoopAccumulatorStack", .inputs = {"seq<f32[?]>"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "LoopAccumulatorStack", .inputs = {"seq<f32[2]>"}, .attrs = {{"axis", int64_t{3}}},
               .outputs = {""}, .error = "axis 3 is outside [-2, 1]"});
  t.push_back({.op = "LoopAccumulatorStack", .inputs = {"f32[2]"}, .outputs = {""}, .error = "f32"});
  t.push_back({.op = "LoopAccumulatorConcat", .inputs = {"seq<f32[1,4,5]>"}, .outputs = {"f32[-1,4,5]"}});
  t.push_back({.op = "LoopAccumulatorConcat",
               .inputs = {"seq<f32[2,3]>"},
               .attrs = {{"axis", int64_t{-1}}},
               .outputs = {"f32[2,-1]"}});
  t.push_back({.op = "LoopAccumulatorConcat", .inputs = {"seq<i64[?]>"}, .outputs = {"i64[?]"}});
  t.push_back({.op = "LoopAccumulatorConcat",
               .inputs = {"seq<f32[2]>"},
               .attrs = {{"axis", int64_t{1}}},
               .outputs = {""},
               .error = "axis 1 is outside [-1, 0]"});
  t.push_back({.op = "LoopAccumulatorConcat", .inputs = {"f32[2]"}, .outputs = {""}, .error = "f32"});
}

}  // namespace

const std::vector<InferCase>& LoopOpCases() {
  static const auto* cases = [] {
    auto* t = new std::vector<InferCase>();
    AddImportFormCases(*t);
    AddAccumulatorCases(*t);
    return t;
  }();
  return *cases;
}

TEST(ControlFlowOpsTest, Inference) { RunCases(LoopOpCases()); }

}  // namespace ge::ops::testing

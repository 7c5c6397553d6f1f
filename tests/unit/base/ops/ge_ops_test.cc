// Shape inference of ged's own ops without a graph around them: declared
// types are kept, attribute-typed ops (Const, FileConstant, Variable) take
// their attributes' types, and control-flow ops without a graph to resolve
// their subgraphs keep their declared outputs. Their behaviour with
// subgraphs is tested in op_registry_test.cc.
#include "base/ir/op_types.h"
#include "gtest/gtest.h"
#include "tests/unit/base/ops/op_test_util.h"

namespace ge::ops::testing {
namespace {

void AddStructuralCases(std::vector<InferCase>& t) {
  t.push_back({.op = "Data", .inputs = {}, .attrs = {{"index", 0}}, .declared = {"f32[1,-1]"},
               .outputs = {"f32[1,-1]"}});
  t.push_back({.op = "Data", .inputs = {}, .attrs = {{"shape", Shape{2, 3}}, {"dtype", 1}}, .outputs = {"f32[2,3]"}});
  // The declared type wins over the attributes.
  t.push_back({.op = "Data", .inputs = {}, .attrs = {{"shape", Shape{2, 3}}, {"dtype", 1}},
               .declared = {"i64[?]"}, .outputs = {"i64[?]"}});
  t.push_back({.op = "Data", .inputs = {"f16[-1]"}, .outputs = {"f16[-1]"}});
  t.push_back({.op = "Data", .inputs = {}, .attrs = {{"shape", Shape{2}}, {"dtype", 99}}, .outputs = {""},
               .error = "attribute 'dtype' is 99, not a data type"});
  t.push_back({.op = "Data", .inputs = {}, .attrs = {{"index", "zero"}}, .outputs = {""},
               .error = "attribute 'index' is string, expected int"});
  t.push_back({.op = "NetOutput", .inputs = {"f32[2]", "i64[?]"}, .outputs = {}});
  t.push_back({.op = "NetOutput", .inputs = {}, .outputs = {}});
  t.push_back({.op = "NetOutput", .inputs = {"f32[2]"}, .outputs = {""}, .error = "has 1 outputs, expected 0"});
  t.push_back({.op = "Const", .inputs = {}, .attrs = {{"value", I64s({1, 2, 3})}}, .outputs = {"i64[3]"}});
  t.push_back({.op = "Const", .inputs = {}, .attrs = {{"value", Tensor::Scalar<float>(1.0f)}}, .outputs = {"f32[]"}});
  t.push_back({.op = "Const", .inputs = {}, .outputs = {""}, .error = "missing required attribute 'value'"});
  t.push_back({.op = "Const", .inputs = {}, .attrs = {{"value", 3}}, .outputs = {""},
               .error = "attribute 'value' is int, expected tensor"});
  t.push_back({.op = "Const", .inputs = {}, .attrs = {{"value", I64s({1})}}, .declared = {"i64[2]"},
               .outputs = {"i64[1]"}});
  for (const char* op : {"FileConstant", "Variable"}) {
    t.push_back({.op = op, .inputs = {}, .attrs = {{"shape", Shape{4, 4}}, {"dtype", 1}}, .outputs = {"f32[4,4]"}});
    t.push_back({.op = op, .inputs = {}, .attrs = {{"shape", Shape{}}, {"dtype", 7}}, .outputs = {"i64[]"}});
    t.push_back({.op = op, .inputs = {}, .attrs = {{"dtype", 1}}, .outputs = {""},
                 .error = "missing required attribute 'shape'"});
    t.push_back({.op = op, .inputs = {}, .attrs = {{"shape", Shape{1}}, {"dtype", 0}}, .outputs = {""},
                 .error = "not a data type"});
  }
  t.push_back({.op = "FileConstant", .inputs = {},
               .attrs = {{"shape", Shape{8}}, {"dtype", 10}, {"location", "w.bin"}, {"offset", 64}, {"length", 16}},
               .outputs = {"f16[8]"}});
  t.push_back({.op = "NoOp", .inputs = {}, .outputs = {}});
  t.push_back({.op = "NoOp", .inputs = {"f32[1]"}, .outputs = {}, .error = "has 1 inputs, expected 0"});
  t.push_back({.op = "Identity", .inputs = {"f32[2,-1]"}, .outputs = {"f32[2,-1]"}});
  t.push_back({.op = "Identity", .inputs = {"f32[?]"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "Identity", .inputs = {"seq<f32[2]>"}, .outputs = {"seq<f32[2]>"}});
  t.push_back({.op = "Identity", .inputs = {"opt<i64[-1]>"}, .outputs = {"opt<i64[-1]>"}});
  t.push_back({.op = "Identity", .inputs = {"f32[2]", "f32[2]"}, .outputs = {""}, .error = "has 2 inputs, expected 1"});
  t.push_back({.op = "TransData", .inputs = {"f32[1,16,8,8]@NCHW"},
               .attrs = {{"src_format", "NCHW"}, {"dst_format", "NChw16c"}}, .outputs = {"f32[1,16,8,8]@NChw16c"}});
  t.push_back({.op = "TransData", .inputs = {"f32[-1,16,8,8]"},
               .attrs = {{"src_format", "NCHW"}, {"dst_format", "NHWC"}}, .outputs = {"f32[-1,16,8,8]@NHWC"}});
  t.push_back({.op = "TransData", .inputs = {"f32[1,16,8,8]"}, .attrs = {{"src_format", "NCHW"}, {"dst_format", "X"}},
               .outputs = {""}, .error = "dst_format 'X' is not a format"});
  t.push_back({.op = "TransData", .inputs = {"f32[1,16,8,8]@NHWC"},
               .attrs = {{"src_format", "NCHW"}, {"dst_format", "NChw8c"}}, .outputs = {""},
               .error = "input 0 has format NHWC but src_format is NCHW"});
}

void AddPartitionCases(std::vector<InferCase>& t) {
  t.push_back({.op = "InnerData", .inputs = {}, .attrs = {{"_parent_index", 1}}, .declared = {"f32[3]"},
               .outputs = {"f32[3]"}});
  t.push_back({.op = "InnerData", .inputs = {}, .outputs = {""}, .error = "missing required attribute '_parent_index'"});
  t.push_back({.op = "InnerNetOutput", .inputs = {"f32[2]", "f32[-1]"}, .outputs = {}});
  t.push_back({.op = "InnerNetOutput", .inputs = {"f32[2]"}, .outputs = {""}, .error = "has 1 outputs, expected 0"});
  t.push_back({.op = "PlaceHolder", .inputs = {}, .attrs = {{"_peer_index", 0}}, .declared = {"bf16[-1,8]"},
               .outputs = {"bf16[-1,8]"}});
  t.push_back({.op = "PlaceHolder", .inputs = {"f32[2]"}, .outputs = {""}, .error = "has 1 inputs, expected 0"});
  t.push_back({.op = "End", .inputs = {"f32[2]"}, .outputs = {}});
  t.push_back({.op = "End", .inputs = {"f32[?]"}, .outputs = {}});
  t.push_back({.op = "End", .inputs = {}, .outputs = {}, .error = "has 0 inputs, expected 1"});
  // Without a graph to find `f` in, the declared outputs stay.
  t.push_back({.op = "PartitionedCall", .inputs = {"f32[-1]", "i64[]"}, .declared = {"f32[2]", ""},
               .outputs = {"f32[2]", "undefined[]"}});
}

void AddControlFlowCases(std::vector<InferCase>& t) {
  t.push_back({.op = "If", .inputs = {"bool[]", "f32[-1,2]"}, .declared = {"f32[-1]"}, .outputs = {"f32[-1]"}});
  t.push_back({.op = "If", .inputs = {"bool[1]"}, .declared = {"f32[?]"}, .outputs = {"f32[?]"}});
  t.push_back({.op = "If", .inputs = {"f32[]", "f32[2]"}, .outputs = {""}, .error = "input 0 (cond) has dtype f32"});
  t.push_back({.op = "If", .inputs = {"bool[2]"}, .outputs = {""}, .error = "input 0 must hold one element"});
  t.push_back({.op = "If", .inputs = {}, .outputs = {""}, .error = "has 0 inputs, expected at least 1"});
  t.push_back({.op = "Case", .inputs = {"i32[]", "f32[?]"}, .declared = {"f32[2]"}, .outputs = {"f32[2]"}});
  t.push_back({.op = "Case", .inputs = {"f32[]"}, .outputs = {""}, .error = "not allowed for I"});
  t.push_back({.op = "While", .inputs = {"i64[]", "f32[-1,2]"}, .declared = {"i64[]", "f32[-1]"},
               .outputs = {"i64[]", "f32[-1]"}});
  t.push_back({.op = "While", .inputs = {"i64[]", "f32[2]"}, .outputs = {""},
               .error = "has 2 inputs but 1 outputs"});
}

}  // namespace

// variable_ops.cc: the writers return the variable; values must match it.
void AddVariableCases(std::vector<InferCase>& t) {
  for (const char* op : {"Assign", "AssignAdd", "AssignSub"}) {
    t.push_back({.op = op, .inputs = {"f32[2,3]", "f32[2,3]"}, .outputs = {"f32[2,3]"}});
    t.push_back({.op = op, .inputs = {"f32[2,-1]", "f32[?]"}, .outputs = {"f32[2,-1]"}});
    t.push_back({.op = op, .inputs = {"f32[2,3]", "f32[3,2]"}, .outputs = {""},
                 .error = "value shape [3,2] does not match the variable's shape [2,3]"});
  }
  t.push_back({.op = "Assign", .inputs = {"bool[4]", "bool[4]"}, .outputs = {"bool[4]"}});
  t.push_back({.op = "AssignAdd", .inputs = {"bool[4]", "bool[4]"}, .outputs = {""}, .error = "bool"});
  t.push_back({.op = "VarIsInitializedOp", .inputs = {"f32[-1,2]"}, .outputs = {"bool[]"}});
  t.push_back({.op = "VarIsInitializedOp", .inputs = {""}, .outputs = {"bool[]"}});
  t.push_back({.op = "VarIsInitializedOp", .inputs = {"f32[2]", "f32[2]"}, .outputs = {""},
               .error = "has 2 inputs"});
}

// GearIndex: the branch of a multi-batch Case, an i32 scalar.
void AddGearCases(std::vector<InferCase>& t) {
  t.push_back({.op = "GearIndex", .inputs = {"f32[4,3]", "i64[4]"}, .outputs = {"i32[]"}});
  t.push_back({.op = "GearIndex", .inputs = {"f32[-1,3]"}, .outputs = {"i32[]"}});
  t.push_back({.op = "GearIndex", .inputs = {"seq<f32[2]>"}, .outputs = {""}, .error = "gears select by tensor shapes"});
}

const std::vector<InferCase>& GeOpCases() {
  static const auto* cases = [] {
    auto* t = new std::vector<InferCase>();
    AddStructuralCases(*t);
    AddPartitionCases(*t);
    AddControlFlowCases(*t);
    AddVariableCases(*t);
    AddGearCases(*t);
    return t;
  }();
  return *cases;
}

TEST(GeOpsTest, Inference) { RunCases(GeOpCases()); }

TEST(GeOpsTest, Properties) {
  const OpRegistry& r = OpRegistry::Global();
  EXPECT_TRUE(r.Find("Variable")->stateful);
  EXPECT_TRUE(r.Find("AssignSub")->stateful);
  EXPECT_FALSE(r.Find("Const")->stateful);
  using Pairs = std::vector<std::pair<int, int>>;
  EXPECT_EQ(r.Find("Identity")->views, (Pairs{{0, 0}}));
}

}  // namespace ge::ops::testing

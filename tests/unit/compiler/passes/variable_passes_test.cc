// The variable passes, text in and text out: VariablePrepareOpPass,
// VariableRefDeleteOpPass, VarIsInitializedOpPass,
// SplitVariableIntoSubgraphPass and VariableFormatPass.
#include <memory>
#include <string>

#include "base/ir/text_format.h"
#include "compiler/passes/split_variable_into_subgraph_pass.h"
#include "compiler/passes/var_is_initialized_op_pass.h"
#include "compiler/passes/variable_format_pass.h"
#include "compiler/passes/variable_prepare_op_pass.h"
#include "compiler/passes/variable_ref_delete_op_pass.h"
#include "gtest/gtest.h"

namespace ge::compiler {
namespace {

std::unique_ptr<ir::Graph> Parse(const std::string& text) {
  auto g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : std::make_unique<ir::Graph>("invalid");
}

// Runs `pass` on `input` and compares the printed result with `expected`
// (parsed and printed too, so spacing does not matter).
void ExpectPass(GraphPass& pass, const std::string& input, const std::string& expected, bool changed = true) {
  auto graph = Parse(input);
  auto result = pass.Run(*graph);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, changed);
  EXPECT_EQ(ir::PrintGraph(*graph), ir::PrintGraph(*Parse(expected)));
}

constexpr const char* kWrites = R"(graph g {
  x = Data() {index = 0} -> (f32[2])
  v = Variable() {dtype = 1, shape = shape[2]} -> (f32[2])
  y = Mul(v:0, x:0) -> (f32[2])
  a1 = AssignAdd(v:0, x:0) -> (f32[2])
  a2 = AssignSub(v:0, x:0) -> (f32[2])
  out = NetOutput(y:0, a2:0)
})";

constexpr const char* kPrepared = R"(graph g {
  x = Data() {index = 0} -> (f32[2])
  v = Variable() {dtype = 1, shape = shape[2]} -> (f32[2])
  y = Mul(v:0, x:0) -> (f32[2])
  a1 = AssignAdd(v:0, x:0) ^y {_var_name = "v"} -> (f32[2])
  a2 = AssignSub(v:0, x:0) ^a1 {_var_name = "v"} -> (f32[2])
  out = NetOutput(y:0, v_ref:0)
  v_ref = Variable() ^a2 {_ref_var_src_var_name = "v", dtype = 1, shape = shape[2]} -> (f32[2])
})";

TEST(VariablePrepareOpPassTest, ChainsWritersOrdersReadsAndAddsAVarRef) {
  VariablePrepareOpPass pass;
  ExpectPass(pass, kWrites, kPrepared);
}

TEST(VariablePrepareOpPassTest, LeavesReadOnlyVariablesAlone) {
  VariablePrepareOpPass pass;
  const std::string read_only = R"(graph g {
    v = Variable() {dtype = 1, shape = shape[2]} -> (f32[2])
    y = Relu(v:0) -> (f32[2])
    out = NetOutput(y:0)
  })";
  ExpectPass(pass, read_only, read_only, /*changed=*/false);
}

TEST(VariableRefDeleteOpPassTest, WritersOutputsReplaceTheVarRefs) {
  VariableRefDeleteOpPass pass;
  ExpectPass(pass, kPrepared, R"(graph g {
    x = Data() {index = 0} -> (f32[2])
    v = Variable() {dtype = 1, shape = shape[2]} -> (f32[2])
    y = Mul(v:0, x:0) -> (f32[2])
    a1 = AssignAdd(v:0, x:0) ^y {_var_name = "v"} -> (f32[2])
    a2 = AssignSub(v:0, x:0) ^a1 {_var_name = "v"} -> (f32[2])
    out = NetOutput(y:0, a2:0)
  })");
}

TEST(VarIsInitializedOpPassTest, ConstantWithAnInitValueRunTimeQueryWithout) {
  VarIsInitializedOpPass pass;
  ExpectPass(pass, R"(graph g {
    a = Variable() {dtype = 1, shape = shape[1], value = tensor<f32[1]>[1.0]} -> (f32[1])
    b = Variable() {dtype = 1, shape = shape[1]} -> (f32[1])
    ia = VarIsInitializedOp(a:0) -> (bool[])
    ib = VarIsInitializedOp(b:0) -> (bool[])
    out = NetOutput(ia:0, ib:0)
  })", R"(graph g {
    a = Variable() {dtype = 1, shape = shape[1], value = tensor<f32[1]>[1.0]} -> (f32[1])
    b = Variable() {dtype = 1, shape = shape[1]} -> (f32[1])
    ib = VarIsInitializedOp(_ : f32[1]) {_var_name = "b"} -> (bool[])
    out = NetOutput(ia_const:0, ib:0)
    ia_const = Const() {value = tensor<bool[]>[true]} -> (bool[])
  })");
  auto bad = Parse(R"(graph g {
    x = Data() {index = 0} -> (f32[1])
    i = VarIsInitializedOp(x:0) -> (bool[])
    out = NetOutput(i:0)
  })");
  auto s = pass.Run(*bad);
  EXPECT_NE(s.status().message().find("not a Variable"), std::string_view::npos) << s.status();
}

TEST(SplitVariableIntoSubgraphPassTest, BranchesReadTheVariableDirectly) {
  SplitVariableIntoSubgraphPass pass;
  ExpectPass(pass, R"(graph main {
    p = Data() {index = 0} -> (bool[])
    v = Variable() {dtype = 1, shape = shape[2]} -> (f32[2])
    c = If(p:0, v:0) subgraphs(then_0, else_0) -> (f32[2])
    out = NetOutput(c:0)
  }
  graph then_0 parent(main, c) {
    d = Data() {index = 0} -> (f32[2])
    r = Relu(d:0) -> (f32[2])
    o = NetOutput(r:0)
  }
  graph else_0 parent(main, c) {
    d = Data() {index = 0} -> (f32[2])
    o = NetOutput(d:0)
  })", R"(graph main {
    p = Data() {index = 0} -> (bool[])
    v = Variable() {dtype = 1, shape = shape[2]} -> (f32[2])
    c = If(p:0, v:0) subgraphs(then_0, else_0) -> (f32[2])
    out = NetOutput(c:0)
  }
  graph then_0 parent(main, c) {
    d = Data() {index = 0} -> (f32[2])
    r = Relu(v_in_then_0:0) -> (f32[2])
    o = NetOutput(r:0)
    v_in_then_0 = Variable() {_ref_var_src_var_name = "v", dtype = 1, shape = shape[2]} -> (f32[2])
  }
  graph else_0 parent(main, c) {
    d = Data() {index = 0} -> (f32[2])
    o = NetOutput(v_in_else_0:0)
    v_in_else_0 = Variable() {_ref_var_src_var_name = "v", dtype = 1, shape = shape[2]} -> (f32[2])
  })");
}

TEST(VariableFormatPassTest, FoldsAUniformTransposeOnce) {
  VariableFormatPass pass;
  const std::string input = R"(graph g {
    v = Variable() {dtype = 1, shape = shape[2,3], value = tensor<f32[2,3]>[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]} -> (f32[2,3])
    t1 = Transpose(v:0) {perm = [1, 0]} -> (f32[3,2])
    t2 = Transpose(v:0) {perm = [1, 0]} -> (f32[3,2])
    a = Relu(t1:0) -> (f32[3,2])
    b = Neg(t2:0) -> (f32[3,2])
    out = NetOutput(a:0, b:0)
  })";
  const std::string folded = R"(graph g {
    v = Variable() {_var_format_changes = 1, _var_original_dtype = 1, _var_original_shape = shape[2,3],
                    _var_trans_road = ["Transpose"], dtype = 1, shape = shape[3,2],
                    value = tensor<f32[3,2]>[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]} -> (f32[3,2])
    a = Relu(v:0) -> (f32[3,2])
    b = Neg(v:0) -> (f32[3,2])
    out = NetOutput(a:0, b:0)
  })";
  ExpectPass(pass, input, folded);
  // At most one change: a second compile keeps the stored form.
  auto again = Parse(R"(graph g {
    v = Variable() {_var_format_changes = 1, dtype = 1, shape = shape[3,2]} -> (f32[3,2])
    c = Cast(v:0) {to = 11} -> (f64[3,2])
    out = NetOutput(c:0)
  })");
  auto result = pass.Run(*again);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(*result);
}

TEST(VariableFormatPassTest, FoldsCastThenReshapeChainsButNotWrittenVariables) {
  VariableFormatPass pass;
  ExpectPass(pass, R"(graph g {
    v = Variable() {dtype = 1, shape = shape[4], value = tensor<f32[4]>[1.5, 2.5, -1.0, 0.0]} -> (f32[4])
    c = Cast(v:0) {to = 7} -> (i64[4])
    s = Const() {value = tensor<i64[2]>[2, 2]} -> (i64[2])
    r = Reshape(c:0, s:0) -> (i64[2,2])
    out = NetOutput(r:0)
  })", R"(graph g {
    v = Variable() {_var_format_changes = 1, _var_original_dtype = 1, _var_original_shape = shape[4],
                    _var_trans_road = ["Cast", "Reshape"], dtype = 7, shape = shape[2,2],
                    value = tensor<i64[2,2]>[1, 2, -1, 0]} -> (i64[2,2])
    s = Const() {value = tensor<i64[2]>[2, 2]} -> (i64[2])
    out = NetOutput(v:0)
  })");
  const std::string written = R"(graph g {
    x = Data() {index = 0} -> (i64[4])
    v = Variable() {dtype = 7, shape = shape[4]} -> (i64[4])
    c = Cast(v:0) {to = 1} -> (f32[4])
    a = Assign(v:0, x:0) -> (i64[4])
    out = NetOutput(c:0, a:0)
  })";
  ExpectPass(pass, written, written, /*changed=*/false);
}

}  // namespace
}  // namespace ge::compiler

// The registry itself (filling, lookups, canonical versions, schema
// consistency, test coverage of every op), ValidateOp, InferNode and
// InferShapes over graphs with If, Case, While and PartitionedCall
// subgraphs.
#include "base/ops/op_registry.h"

#include <set>
#include <thread>

#include "base/ir/op_types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/base/ops/op_test_util.h"

namespace ge::ops::testing {
namespace {

using ::testing::HasSubstr;

// ---- Graph building ----

ir::ValueType Type(const std::string& text) {
  if (text.empty()) return ir::ValueType();
  auto t = ir::ValueType::Parse(text);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : ir::ValueType();
}

// Adds a node whose inputs are connected to `inputs` (null: unconnected)
// and whose outputs have the given declared types.
ir::Node* AddOp(ir::Graph& g, const std::string& name, const std::string& type,
                std::vector<ir::OutPort> inputs, std::vector<std::string> outputs, ir::AttrMap attrs = {}) {
  ir::OpDesc op(name, type);
  for (size_t i = 0; i < inputs.size(); ++i) op.AddInput({});
  for (const std::string& out : outputs) op.AddOutput({"", Type(out)});
  for (auto& [k, v] : attrs) op.SetAttr(k, v);
  auto node = g.AddNode(std::move(op));
  EXPECT_TRUE(node.ok()) << node.status();
  if (!node.ok()) return nullptr;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]) {
      EXPECT_TRUE(g.AddEdge(inputs[i].node, inputs[i].index, *node, static_cast<int>(i)).ok());
    }
  }
  return *node;
}

ir::OutPort Out(ir::Node* node, int index = 0) { return ir::OutPort{node, index}; }

std::string OutType(const ir::Node* node, int i = 0) { return node->op_desc().output(i).type.ToString(); }

ir::Graph* AddSubgraph(ir::Graph& root, ir::Node* parent, const std::string& name) {
  auto g = root.AddSubgraph(std::make_unique<ir::Graph>(name), parent);
  EXPECT_TRUE(g.ok()) << g.status();
  parent->mutable_op_desc().mutable_subgraph_names().push_back(name);
  return g.ok() ? *g : nullptr;
}

// ---- The registry ----

TEST(OpRegistryTest, GlobalIsFilledOnceFromAnyThread) {
  OpRegistry* seen[2] = {nullptr, nullptr};
  std::thread a([&] { seen[0] = &OpRegistry::Global(); });
  std::thread b([&] { seen[1] = &OpRegistry::Global(); });
  a.join();
  b.join();
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[0], &OpRegistry::Global());
  EXPECT_GT(OpRegistry::Global().size(), 100u);
}

TEST(OpRegistryTest, AllIsSortedAndFindUsesTheDomain) {
  const auto all = OpRegistry::Global().All();
  ASSERT_EQ(all.size(), OpRegistry::Global().size());
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_LT(std::tie(all[i - 1]->domain, all[i - 1]->type), std::tie(all[i]->domain, all[i]->type));
  }
  EXPECT_NE(OpRegistry::Global().Find("Conv"), nullptr);
  EXPECT_EQ(OpRegistry::Global().Find("Conv", "com.microsoft"), nullptr);
  EXPECT_EQ(OpRegistry::Global().Find("NoSuchOp"), nullptr);
}

TEST(OpRegistryTest, RegisterRejectsDuplicates) {
  OpRegistry registry;
  RegisterBuiltinOps(registry);
  EXPECT_EQ(registry.size(), OpRegistry::Global().size());
  absl::Status s = registry.Register(OpSchemaBuilder("Relu", 14).Build());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'Relu'"));
  OpSchemaBuilder custom("Relu", 1);
  custom.Domain("ai.custom");
  EXPECT_TRUE(registry.Register(std::move(custom).Build()).ok());
  EXPECT_NE(registry.Find("Relu", "ai.custom"), nullptr);
}

TEST(OpRegistryTest, CanonicalOpsets) {
  const std::map<std::string, int> expected = {
      {"Split", 13}, {"Squeeze", 13}, {"Unsqueeze", 13}, {"Slice", 13}, {"Clip", 13},
      {"Softmax", 13}, {"ReduceMean", 13}, {"ReduceSum", 13}, {"Dropout", 13}, {"Pow", 15},
      {"Reshape", 14}, {"BatchNormalization", 15}, {"Gather", 13}, {"Concat", 13}, {"Cast", 13},
      {"Where", 16}, {"Equal", 13}, {"Shape", 15}, {"LayerNormalization", 17}, {"Relu", 14},
      {"Add", 14}, {"Conv", 11}, {"MaxPool", 12}, {"AveragePool", 11}, {"Gemm", 13},
      {"MatMul", 13}, {"Flatten", 13}, {"Identity", 16}, {"If", 16}, {"Data", 1}};
  for (const auto& [type, version] : expected) {
    const OpSchema* s = OpRegistry::Global().Find(type);
    ASSERT_NE(s, nullptr) << type;
    EXPECT_EQ(s->since_version, version) << type;
  }
  for (const OpSchema* s : OpRegistry::Global().All()) EXPECT_LE(s->since_version, 17) << s->type;
}

bool IndexFits(const std::vector<FormalParameter>& params, int i) {
  return i >= 0 && (i < static_cast<int>(params.size()) ||
                    (!params.empty() && params.back().arity == FormalParameter::Arity::kVariadic));
}

TEST(OpRegistryTest, SchemasAreConsistent) {
  for (const OpSchema* s : OpRegistry::Global().All()) {
    SCOPED_TRACE(s->type);
    EXPECT_TRUE(static_cast<bool>(s->infer));
    for (const auto& [out, in] : s->inplace) EXPECT_TRUE(IndexFits(s->outputs, out) && IndexFits(s->inputs, in));
    for (const auto& [out, in] : s->views) EXPECT_TRUE(IndexFits(s->outputs, out) && IndexFits(s->inputs, in));
    for (int i : s->value_inputs) EXPECT_TRUE(IndexFits(s->inputs, i));
    for (const AttrSpec& a : s->attrs) {
      if (a.default_value) {
        EXPECT_EQ(a.default_value->kind(), a.kind) << a.name;
      }
      EXPECT_FALSE(a.required && a.default_value.has_value()) << a.name;
    }
  }
}

bool HasUnknown(const InferCase& c) {
  for (const std::string& in : c.inputs) {
    if (in.find("-1") != std::string::npos || in.find("?") != std::string::npos) return true;
  }
  return false;
}

// Every registered op must have inference cases: one that succeeds, one
// that fails, and (for ops with inputs) one with unknown dims or rank. A new
// op without them fails here.
TEST(OpRegistryTest, EveryOpHasInferenceTests) {
  struct Coverage {
    bool ok = false, error = false, unknown = false, has_inputs = false;
  };
  std::map<std::string, Coverage> covered;
  for (const auto* table :
       {&GeOpCases(), &ElementwiseCases(), &NnCases(), &TensorCases(), &ReductionCases(), &LoopOpCases(),
        &SequenceOpCases(), &TextOpCases(), &NormRandomQuantCases(), &SignalOpCases()}) {
    for (const InferCase& c : *table) {
      Coverage& cov = covered[c.op];
      (c.error.empty() ? cov.ok : cov.error) = true;
      if (c.error.empty() && !c.inputs.empty()) cov.has_inputs = true;
      if (c.error.empty() && HasUnknown(c)) cov.unknown = true;
    }
  }
  // Control-flow ops are also tested with subgraphs below.
  const std::set<std::string> kGraphTested = {"If", "Case", "While", "PartitionedCall"};
  for (const OpSchema* s : OpRegistry::Global().All()) {
    auto it = covered.find(s->type);
    ASSERT_TRUE(it != covered.end()) << s->type << " has no inference test case";
    EXPECT_TRUE(it->second.ok) << s->type << " has no successful inference case";
    EXPECT_TRUE(it->second.error || kGraphTested.contains(s->type)) << s->type << " has no error case";
    EXPECT_TRUE(!it->second.has_inputs || it->second.unknown) << s->type << " has no case with unknown dims";
  }
}

// ---- ValidateOp ----

ir::OpDesc MakeOp(const std::string& type, std::vector<std::string> inputs, std::vector<std::string> outputs,
                  ir::AttrMap attrs = {}) {
  ir::OpDesc op("op1", type);
  for (const std::string& in : inputs) op.AddInput({"", Type(in)});
  for (const std::string& out : outputs) op.AddOutput({"", Type(out)});
  for (auto& [k, v] : attrs) op.SetAttr(k, v);
  return op;
}

TEST(ValidateOpTest, AcceptsWellFormedOps) {
  EXPECT_TRUE(ValidateOp(MakeOp("Add", {"f32[2]", "f32[2]"}, {"f32[2]"})).ok());
  EXPECT_TRUE(ValidateOp(MakeOp("Concat", {"f32[2]", "f32[2]", "f32[1]"}, {""}, {{"axis", 0}})).ok());
  // Undefined dtypes are not known yet and are not checked.
  EXPECT_TRUE(ValidateOp(MakeOp("Add", {"", "f32[2]"}, {""})).ok());
  // An absent optional input in the middle.
  EXPECT_TRUE(ValidateOp(MakeOp("Clip", {"f32[2]", "", "f32[]"}, {"f32[2]"})).ok());
  EXPECT_TRUE(ValidateOp(MakeOp("Relu", {"f32[2]"}, {"f32[2]"}, {{"_ge_engine", "cpu_vector"}})).ok());
  EXPECT_TRUE(ValidateOp(MakeOp("Identity", {"seq<f32[2]>"}, {"seq<f32[2]>"})).ok());
}

TEST(ValidateOpTest, RejectsMalformedOps) {
  struct Bad {
    ir::OpDesc op;
    std::string message;
  };
  const std::vector<Bad> cases = {
      {MakeOp("Foo", {}, {}), "node 'op1' (Foo): unknown op type 'Foo'"},
      {MakeOp("Relu", {"f32[2]", "f32[2]"}, {"f32[2]"}), "node 'op1' (Relu): has 2 inputs, expected 1"},
      {MakeOp("Clip", {"f32[2]", "f32[]", "f32[]", "f32[]"}, {""}), "has 4 inputs, expected 1 to 3"},
      {MakeOp("Split", {"f32[2]"}, {}), "has 0 outputs, expected at least 1"},
      {MakeOp("Concat", {"f32[2]"}, {""}), "missing required attribute 'axis' (int)"},
      {MakeOp("Concat", {"f32[2]"}, {""}, {{"axis", 1.0f}}), "attribute 'axis' is float, expected int"},
      {MakeOp("Relu", {"f32[2]"}, {""}, {{"alpha", 1.0f}}), "unknown attribute 'alpha'"},
      {MakeOp("Relu", {"string[2]"}, {""}), "input 0 (X) has dtype string, not allowed for T"},
      {MakeOp("Add", {"f32[2]", "i64[2]"}, {""}), "input 1 (B) has dtype i64 but T is f32 from input 0 (A)"},
      {MakeOp("Add", {"f32[2]", "f32[2]"}, {"i64[2]"}), "output 0 (C) has dtype i64 but T is f32"},
      {MakeOp("Relu", {"seq<f32[2]>"}, {""}), "a kind that T does not allow"},
      {MakeOp("Reshape", {"f32[2]", "i32[1]"}, {""}), "input 1 (shape) has dtype i32, expected i64"},
      {MakeOp("Equal", {"f32[2]", "f32[2]"}, {"f32[2]"}), "output 0 (C) has dtype f32, expected bool"},
  };
  for (const Bad& c : cases) {
    absl::Status s = ValidateOp(c.op);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(std::string(s.message()), HasSubstr(c.message));
  }
}

// ---- InferNode and InferShapes on plain graphs ----

struct ReshapeGraph {
  ir::Graph g{"root"};
  ir::Node *x, *shape, *reshape, *relu, *out;
  explicit ReshapeGraph(const std::string& relu_declared = "") {
    x = AddOp(g, "x", "Data", {}, {"f32[-1,3,4]"}, {{"index", 0}});
    shape = AddOp(g, "shape", "Const", {}, {""}, {{"value", I64s({0, -1})}});
    reshape = AddOp(g, "reshape", "Reshape", {Out(x), Out(shape)}, {""});
    relu = AddOp(g, "relu", "Relu", {Out(reshape)}, {relu_declared});
    out = AddOp(g, "out", "NetOutput", {Out(relu)}, {});
  }
};

TEST(InferShapesTest, PropagatesThroughAGraphWithConstValues) {
  ReshapeGraph r;
  ASSERT_TRUE(InferShapes(r.g).ok());
  EXPECT_EQ(OutType(r.shape), "i64[2]");
  EXPECT_EQ(OutType(r.reshape), "f32[-1,12]");
  EXPECT_EQ(OutType(r.relu), "f32[-1,12]");
  // Input descs follow their producers.
  EXPECT_EQ(r.out->op_desc().input(0).type.ToString(), "f32[-1,12]");
  EXPECT_EQ(r.reshape->op_desc().input(1).type.ToString(), "i64[2]");
}

TEST(InferShapesTest, DeclaredDimsRefineTheInference) {
  ReshapeGraph r("f32[8,-1]");
  ASSERT_TRUE(InferShapes(r.g).ok());
  EXPECT_EQ(OutType(r.relu), "f32[8,12]");
}

TEST(InferShapesTest, ContradictingDeclaredDimsAreAnError) {
  ReshapeGraph r("f32[-1,5]");
  absl::Status s = InferShapes(r.g);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("node 'relu' (Relu): output 0: inferred f32[-1,12] contradicts the declared f32[-1,5]"));
}

TEST(InferNodeTest, ErrorsNameTheNodeAndInput) {
  ir::Graph g("root");
  ir::Node* a = AddOp(g, "a", "Data", {}, {"f32[2,3]"});
  ir::Node* b = AddOp(g, "b", "Data", {}, {"f32[4,5]"}, {{"index", 1}});
  ir::Node* add = AddOp(g, "add", "Add", {Out(a), ir::OutPort{}}, {""});
  ir::Node* cat = AddOp(g, "cat", "Concat", {Out(a), Out(b)}, {""}, {{"axis", 1}});
  ASSERT_TRUE(InferNode(*a).ok());
  ASSERT_TRUE(InferNode(*b).ok());
  absl::Status s = InferNode(*add);
  EXPECT_THAT(std::string(s.message()), HasSubstr("node 'add' (Add): required input 1 (B) is missing"));
  s = InferNode(*cat);
  EXPECT_THAT(std::string(s.message()), HasSubstr("node 'cat' (Concat): input 1 has shape [4,5]"));
}

TEST(InferNodeTest, UnconnectedInputsUseTheirDeclaredTypes) {
  ir::Graph g("root");
  ir::OpDesc op("lone", "Relu");
  op.AddInput({"", Type("f32[3,-1]")});
  op.AddOutput({});
  auto node = g.AddNode(std::move(op));
  ASSERT_TRUE(node.ok());
  ASSERT_TRUE(InferNode(**node).ok());
  EXPECT_EQ(OutType(*node), "f32[3,-1]");
}

TEST(InferShapesTest, ReportsCycles) {
  ir::Graph g("root");
  ir::Node* a = AddOp(g, "a", "Relu", {ir::OutPort{}}, {""});
  ir::Node* b = AddOp(g, "b", "Relu", {Out(a)}, {""});
  ASSERT_TRUE(g.AddEdge(b, 0, a, 0).ok());
  EXPECT_FALSE(InferShapes(g).ok());
}

// ---- Subgraphs ----

// root: If(c, x) with then = Relu(x) and else = `else_op`(x).
struct IfGraph {
  ir::Graph g{"root"};
  ir::Node *c, *x, *if_node, *then_relu, *else_node;
  ir::Graph *then_graph, *else_graph;

  IfGraph(const std::string& else_type, ir::AttrMap else_attrs, const std::string& x_type = "f32[-1,3]") {
    c = AddOp(g, "c", "Data", {}, {"bool[]"}, {{"index", 0}});
    x = AddOp(g, "x", "Data", {}, {x_type}, {{"index", 1}});
    if_node = AddOp(g, "if", "If", {Out(c), Out(x)}, {""});
    AddOp(g, "out", "NetOutput", {Out(if_node)}, {});
    then_graph = AddSubgraph(g, if_node, "then");
    ir::Node* tx = AddOp(*then_graph, "tx", "Data", {}, {""}, {{"index", 0}});
    then_relu = AddOp(*then_graph, "relu", "Relu", {Out(tx)}, {""});
    AddOp(*then_graph, "tout", "NetOutput", {Out(then_relu)}, {});
    else_graph = AddSubgraph(g, if_node, "else");
    // Bound by _parent_index rather than index: If's input 1.
    ir::Node* ex = AddOp(*else_graph, "ex", "Data", {}, {""}, {{"_parent_index", 1}});
    else_node = AddOp(*else_graph, "op", else_type, {Out(ex)}, {""}, std::move(else_attrs));
    AddOp(*else_graph, "eout", "NetOutput", {Out(else_node)}, {});
  }
};

TEST(InferShapesTest, IfMergesItsBranches) {
  IfGraph same("Sigmoid", {});
  ASSERT_TRUE(InferShapes(same.g).ok());
  EXPECT_EQ(OutType(same.then_relu), "f32[-1,3]");
  EXPECT_EQ(OutType(same.if_node), "f32[-1,3]");

  IfGraph known("Sigmoid", {}, "f32[2,3]");
  ASSERT_TRUE(InferShapes(known.g).ok());
  EXPECT_EQ(OutType(known.if_node), "f32[2,3]");

  IfGraph dims("Transpose", {}, "f32[2,3]");
  ASSERT_TRUE(InferShapes(dims.g).ok());
  EXPECT_EQ(OutType(dims.else_node), "f32[3,2]");
  EXPECT_EQ(OutType(dims.if_node), "f32[-1,-1]");

  IfGraph rank("ReduceSum", {{"keepdims", 0}});
  ASSERT_TRUE(InferShapes(rank.g).ok());
  EXPECT_EQ(OutType(rank.else_node), "f32[]");
  EXPECT_EQ(OutType(rank.if_node), "f32[?]");
}

TEST(InferShapesTest, IfBranchesMustAgreeOnDtype) {
  IfGraph g("Cast", {{"to", 7}});
  absl::Status s = InferShapes(g.g);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("node 'if' (If): output 0: branch 'then' gives f32[-1,3] but branch 'else' gives i64[-1,3]"));
}

TEST(InferShapesTest, MissingSubgraphIsAnError) {
  IfGraph g("Sigmoid", {});
  g.if_node->mutable_op_desc().mutable_subgraph_names()[1] = "nope";
  absl::Status s = InferShapes(g.g);
  EXPECT_THAT(std::string(s.message()), HasSubstr("node 'if' (If): subgraph 'nope' not found"));
}

TEST(InferShapesTest, CaseGeneralizesOverBranches) {
  ir::Graph g("root");
  ir::Node* i = AddOp(g, "i", "Data", {}, {"i32[]"}, {{"index", 0}});
  ir::Node* x = AddOp(g, "x", "Data", {}, {"f32[2,3]"}, {{"index", 1}});
  ir::Node* case_node = AddOp(g, "case", "Case", {Out(i), Out(x)}, {""});
  const char* ops[] = {"Relu", "Transpose", "Neg"};
  for (int b = 0; b < 3; ++b) {
    ir::Graph* branch = AddSubgraph(g, case_node, StrCat("branch", b));
    ir::Node* bx = AddOp(*branch, "bx", "Data", {}, {""}, {{"index", 0}});
    ir::Node* op = AddOp(*branch, "op", ops[b], {Out(bx)}, {""});
    AddOp(*branch, "bout", "NetOutput", {Out(op)}, {});
  }
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(OutType(case_node), "f32[-1,-1]");
}

TEST(InferShapesTest, WhileGeneralizesWhatTheBodyChanges) {
  ir::Graph g("root");
  ir::Node* n = AddOp(g, "n", "Data", {}, {"i64[]"}, {{"index", 0}});
  ir::Node* x = AddOp(g, "x", "Data", {}, {"f32[2,3]"}, {{"index", 1}});
  ir::Node* loop = AddOp(g, "loop", "While", {Out(n), Out(x)}, {"", ""});
  AddOp(g, "out", "NetOutput", {Out(loop, 0), Out(loop, 1)}, {});
  ir::Graph* cond = AddSubgraph(g, loop, "cond");
  ir::Node* ci = AddOp(*cond, "i", "Data", {}, {""}, {{"index", 0}});
  AddOp(*cond, "x", "Data", {}, {""}, {{"index", 1}});
  ir::Node* limit = AddOp(*cond, "limit", "Const", {}, {""}, {{"value", Tensor::Scalar<int64_t>(10)}});
  ir::Node* less = AddOp(*cond, "less", "Less", {Out(ci), Out(limit)}, {""});
  AddOp(*cond, "cout", "NetOutput", {Out(less)}, {});
  ir::Graph* body = AddSubgraph(g, loop, "body");
  ir::Node* bi = AddOp(*body, "i", "Data", {}, {""}, {{"index", 0}});
  ir::Node* bx = AddOp(*body, "x", "Data", {}, {""}, {{"index", 1}});
  ir::Node* one = AddOp(*body, "one", "Const", {}, {""}, {{"value", Tensor::Scalar<int64_t>(1)}});
  ir::Node* next_i = AddOp(*body, "next_i", "Add", {Out(bi), Out(one)}, {""});
  ir::Node* grown = AddOp(*body, "grown", "Concat", {Out(bx), Out(bx)}, {""}, {{"axis", 0}});
  AddOp(*body, "bout", "NetOutput", {Out(next_i), Out(grown)}, {});
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(OutType(loop, 0), "i64[]");
  EXPECT_EQ(OutType(loop, 1), "f32[-1,3]");
  // The body was re-inferred for the generalized loop-carried type.
  EXPECT_EQ(OutType(bx), "f32[-1,3]");
  EXPECT_EQ(OutType(grown), "f32[-1,3]");
  EXPECT_EQ(OutType(less), "bool[]");
}

TEST(InferShapesTest, WhileBodyMustKeepDtypes) {
  ir::Graph g("root");
  ir::Node* x = AddOp(g, "x", "Data", {}, {"f32[2]"}, {{"index", 0}});
  ir::Node* loop = AddOp(g, "loop", "While", {Out(x)}, {""});
  AddSubgraph(g, loop, "cond");  // empty: never reached
  ir::Graph* body = AddSubgraph(g, loop, "body");
  ir::Node* bx = AddOp(*body, "x", "Data", {}, {""}, {{"index", 0}});
  ir::Node* cast = AddOp(*body, "cast", "Cast", {Out(bx)}, {""}, {{"to", 7}});
  AddOp(*body, "bout", "NetOutput", {Out(cast)}, {});
  absl::Status s = InferShapes(g);
  EXPECT_THAT(std::string(s.message()), HasSubstr("node 'loop' (While): loop-carried value 0"));
}

TEST(InferShapesTest, PartitionedCallTakesItsSubgraphsResults) {
  ir::Graph g("root");
  ir::Node* a = AddOp(g, "a", "Data", {}, {"f32[2,3]"}, {{"index", 0}});
  ir::Node* b = AddOp(g, "b", "Data", {}, {"f32[3,-1]"}, {{"index", 1}});
  ir::Node* call = AddOp(g, "call", "PartitionedCall", {Out(a), Out(b)}, {""});
  ir::Graph* f = AddSubgraph(g, call, "f");
  ir::Node* fa = AddOp(*f, "fa", "InnerData", {}, {""}, {{"_parent_index", 0}});
  ir::Node* fb = AddOp(*f, "fb", "InnerData", {}, {""}, {{"_parent_index", 1}});
  ir::Node* mm = AddOp(*f, "mm", "MatMul", {Out(fa), Out(fb)}, {""});
  AddOp(*f, "fout", "InnerNetOutput", {Out(mm)}, {});
  ASSERT_TRUE(InferShapes(g).ok());
  EXPECT_EQ(OutType(fb), "f32[3,-1]");
  EXPECT_EQ(OutType(call), "f32[2,-1]");
}

TEST(InferShapesTest, SubgraphInputOutOfRangeIsAnError) {
  ir::Graph g("root");
  ir::Node* a = AddOp(g, "a", "Data", {}, {"f32[2]"}, {{"index", 0}});
  ir::Node* call = AddOp(g, "call", "PartitionedCall", {Out(a)}, {""});
  ir::Graph* f = AddSubgraph(g, call, "f");
  ir::Node* fa = AddOp(*f, "fa", "InnerData", {}, {""}, {{"_parent_index", 3}});
  AddOp(*f, "fout", "InnerNetOutput", {Out(fa)}, {});
  absl::Status s = InferShapes(g);
  EXPECT_THAT(std::string(s.message()), HasSubstr("maps to input 3 of 'call' (PartitionedCall), which has 1 inputs"));
}

}  // namespace
}  // namespace ge::ops::testing

// Proto round trips, and one malformed-proto case per validation: each
// must give an InvalidArgument error naming the problem, never a crash.
#include "base/ir/proto_convert.h"

#include <functional>
#include <random>

#include "base/ir/graph_equal.h"
#include "base/ir/verifier.h"
#include "google/protobuf/stubs/logging.h"
#include "gtest/gtest.h"
#include "tests/unit/base/ir/ir_test_util.h"

namespace ge::ir {
namespace {

using testing::AddOp;
using testing::AttrsOfEveryKind;
using testing::F32;
using testing::MustParse;
using testing::TensorsOfEveryDtype;

// A tree exercising every structural feature the proto carries.
constexpr char kTree[] = R"(
graph main {
  attr version = 3
  x = Data() {index = 0} -> (f32[1,3]@NCHW as "input.1")
  p = Data() {index = 1} -> (bool[])
  c = If(p:0, x:0 : f32[-1,3] as "cond_in") ^x {then_branch = @then_0} subgraphs(then_0, else_0) -> (seq<f32[?]>, opt<i64[]>)
  out = NetOutput(c:0, _ : opt<f32[2]>, c:1)
}
graph then_0 parent(main, c) {
  a = Data() {index = 0} -> (f32[1,3])
  call = PartitionedCall(a:0) subgraphs(body) -> (seq<f32[?]>)
  o = NetOutput(call:0)
}
graph else_0 parent(main, c) {
  o = NetOutput()
}
graph body parent(then_0, call) {
  a = Data() {index = 0} -> (f32[1,3])
  o = NetOutput(a:0 : f32[-1,3] as "result")
}
)";

void ExpectProtoRoundTrip(const Graph& g) {
  ge::v1::GraphDef def;
  ASSERT_TRUE(GraphToProto(g, &def).ok());
  // Through bytes too, as the daemon and the cache see it.
  std::string bytes;
  ASSERT_TRUE(def.SerializeToString(&bytes));
  ge::v1::GraphDef reread;
  ASSERT_TRUE(reread.ParseFromString(bytes));
  auto back = GraphFromProto(reread);
  ASSERT_TRUE(back.ok()) << back.status();
  std::string diff;
  EXPECT_TRUE(GraphsEqual(g, **back, &diff)) << diff;
  EXPECT_EQ(PrintGraph(**back), PrintGraph(g));
}

TEST(ProtoConvertTest, RoundTripsATree) {
  auto g = MustParse(kTree);
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(VerifyGraph(*g).ok()) << VerifyGraph(*g);
  ExpectProtoRoundTrip(*g);
}

TEST(ProtoConvertTest, RoundTripsEveryAttributeKind) {
  Graph g("main");
  g.mutable_attrs() = AttrsOfEveryKind();
  Node* n = AddOp(g, "n", "Custom", 0, {F32({1})});
  n->mutable_op_desc().mutable_attrs() = AttrsOfEveryKind();
  ExpectProtoRoundTrip(g);
  for (const Tensor& t : TensorsOfEveryDtype()) {
    ge::v1::TensorDef def;
    ASSERT_TRUE(TensorToProto(t, &def).ok());
    auto back = TensorFromProto(def);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(TensorsEqual(t, *back)) << t.DebugString();
  }
}

TEST(ProtoConvertTest, RoundTripsValueTypesAndShapes) {
  for (const char* text : {"f32[1,3]", "?", "?[?]", "i64[-1,0]@NHWC", "seq<opt<bf16[]>>"}) {
    ValueType t = ParseValueType(text).value();
    ge::v1::ValueTypeDef def;
    ValueTypeToProto(t, &def);
    auto back = ValueTypeFromProto(def);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, t) << text;
  }
  for (const Shape& s : {Shape{}, Shape{0}, Shape{-1, 5}, Shape::UnknownRank()}) {
    ge::v1::ShapeDef def;
    ShapeToProto(s, &def);
    auto back = ShapeFromProto(def);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, s);
  }
}

TEST(ProtoConvertTest, RoundTripsASubgraphBeforeItsParent) {
  auto g = MustParse(R"(
    graph main {
      c = Case() subgraphs(sub_c)
      d = PartitionedCall() subgraphs(sub_d)
    }
    graph sub_c parent(main, c) {
    }
    graph sub_d parent(main, d) {
    })");
  ASSERT_NE(g, nullptr);
  ASSERT_TRUE(g->MoveNodeTo(g->FindNode("c"), g->FindSubgraph("sub_d")).ok());
  ExpectProtoRoundTrip(*g);
}

TEST(ProtoConvertTest, ASubgraphIsWrittenAsTheRootOfItsSubtree) {
  auto g = MustParse(kTree);
  ASSERT_NE(g, nullptr);
  ge::v1::GraphDef def;
  ASSERT_TRUE(GraphToProto(*g->FindSubgraph("then_0"), &def).ok());
  EXPECT_EQ(def.name(), "then_0");
  EXPECT_TRUE(def.parent_graph().empty());
  ASSERT_EQ(def.subgraphs_size(), 1);
  EXPECT_EQ(def.subgraphs(0).name(), "body");
  EXPECT_EQ(def.subgraphs(0).parent_graph(), "then_0");
  auto back = GraphFromProto(def);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->FindSubgraph("body")->parent_node(), (*back)->FindNode("call"));
}

TEST(ProtoConvertTest, WritersRejectWhatTheFormatCannotCarry) {
  auto g = MustParse(kTree);
  ASSERT_NE(g, nullptr);
  Graph other("other");
  ASSERT_TRUE(g->MoveNodeTo(g->FindNode("x"), &other).ok());
  ge::v1::GraphDef def;
  absl::Status s = GraphToProto(*g, &def);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(std::string(s.message()).find("node 'c'"), std::string::npos) << s;

  // proto3 string fields must be UTF-8; the writer says which name is not.
  for (const char* bad : {"\xff", "a\xc3", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    Graph h("h");
    AddOp(h, bad, "X", 0);
    s = GraphToProto(h, &def);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_NE(std::string(s.message()).find("is not valid UTF-8"), std::string::npos) << s;
  }
  Graph utf8("h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");  // é € 😀 are fine
  utf8.mutable_attrs()["ref"] = AttrValue(GraphRef{"\xe2\x82"});
  s = GraphToProto(utf8, &def);
  EXPECT_NE(std::string(s.message()).find("graph reference"), std::string::npos) << s;
  utf8.mutable_attrs().clear();
  EXPECT_TRUE(GraphToProto(utf8, &def).ok());

  ge::v1::TensorDef t;
  Tensor unknown(DataType::kFloat, Shape{-1}, nullptr);
  EXPECT_FALSE(TensorToProto(unknown, &t).ok());
  Tensor no_storage(DataType::kFloat, Shape{4}, nullptr);
  EXPECT_FALSE(TensorToProto(no_storage, &t).ok());
}

// ---- Malformed input ----

ge::v1::GraphDef TreeProto() {
  auto g = MustParse(kTree);
  ge::v1::GraphDef def;
  EXPECT_TRUE(g != nullptr && GraphToProto(*g, &def).ok());
  return def;
}

ge::v1::NodeDef* NodeNamed(ge::v1::GraphDef* def, std::string_view name) {
  for (auto& n : *def->mutable_nodes()) {
    if (n.name() == name) return &n;
  }
  ADD_FAILURE() << "no node " << name;
  return def->add_nodes();
}

struct BadGraph {
  const char* what;
  std::function<void(ge::v1::GraphDef*)> corrupt;
  const char* error;
};

TEST(ProtoConvertTest, MalformedGraphsGetErrors) {
  using ge::v1::GraphDef;
  const BadGraph cases[] = {
      {"root parent", [](GraphDef* d) { d->set_parent_graph("x"); },
       "root graph 'main' names a parent"},
      {"empty graph name", [](GraphDef* d) { d->set_name(""); }, "a graph has an empty name"},
      {"empty node name", [](GraphDef* d) { NodeNamed(d, "p")->set_name(""); },
       "a node has an empty name"},
      {"empty op type", [](GraphDef* d) { NodeNamed(d, "p")->set_type(""); },
       "node 'p' has an empty op type"},
      {"duplicate node", [](GraphDef* d) { NodeNamed(d, "p")->set_name("x"); },
       "duplicate node name 'x'"},
      {"missing producer",
       [](GraphDef* d) { NodeNamed(d, "c")->mutable_inputs(0)->set_node("nope"); },
       "input 0 of node 'c' names missing node 'nope'"},
      {"port too big", [](GraphDef* d) { NodeNamed(d, "c")->mutable_inputs(1)->set_port(1); },
       "input 1 of node 'c' names port 1 of 'x', which has 1 outputs"},
      {"negative port", [](GraphDef* d) { NodeNamed(d, "c")->mutable_inputs(1)->set_port(-1); },
       "names port -1"},
      {"absent with port", [](GraphDef* d) { NodeNamed(d, "out")->mutable_inputs(1)->set_port(3); },
       "input 1 of node 'out' is absent but has port 3"},
      {"input types", [](GraphDef* d) { NodeNamed(d, "c")->mutable_input_types()->RemoveLast(); },
       "node 'c': has 1 input types for 2 ports"},
      {"input names", [](GraphDef* d) { NodeNamed(d, "c")->add_input_names("z"); },
       "has 3 input names for 2 ports"},
      {"output names", [](GraphDef* d) { NodeNamed(d, "x")->add_output_names("z"); },
       "has 2 output names for 1 ports"},
      {"control missing", [](GraphDef* d) { NodeNamed(d, "c")->set_control_inputs(0, "nope"); },
       "control input 'nope' of node 'c' is missing"},
      {"control self", [](GraphDef* d) { NodeNamed(d, "c")->set_control_inputs(0, "c"); },
       "is the node itself"},
      {"control repeated", [](GraphDef* d) { NodeNamed(d, "c")->add_control_inputs("x"); },
       "is repeated"},
      {"attr without value", [](GraphDef* d) { (*NodeNamed(d, "x")->mutable_attrs())["k"]; },
       "attribute 'k': attribute has no value"},
      {"attr empty name", [](GraphDef* d) { (*d->mutable_attrs())[""].set_i(1); },
       "an attribute has an empty name"},
      {"value type kind",
       [](GraphDef* d) {
         NodeNamed(d, "x")->mutable_output_types(0)->set_kind(
             static_cast<ge::v1::ValueTypeDef::Kind>(7));
       },
       "node 'x' output 0: unknown value type kind 7"},
      {"seq without element",
       [](GraphDef* d) { NodeNamed(d, "c")->mutable_output_types(0)->clear_element(); },
       "a sequence or optional type needs an element"},
      {"tensor with element",
       [](GraphDef* d) { NodeNamed(d, "x")->mutable_output_types(0)->mutable_element(); },
       "a tensor type has no element type"},
      {"type dtype",
       [](GraphDef* d) {
         NodeNamed(d, "x")->mutable_output_types(0)->mutable_tensor()->set_dtype(
             static_cast<ge::v1::DataType>(99));
       },
       "unknown dtype 99"},
      {"type format",
       [](GraphDef* d) {
         NodeNamed(d, "x")->mutable_output_types(0)->mutable_tensor()->set_format("NCWH");
       },
       "unknown format 'NCWH'"},
      {"shape dim",
       [](GraphDef* d) {
         NodeNamed(d, "x")->mutable_output_types(0)->mutable_tensor()->mutable_shape()->set_dims(
             0, -2);
       },
       "shape dim 0 is -2 (only -1 may be negative)"},
      {"unknown rank with dims",
       [](GraphDef* d) {
         NodeNamed(d, "x")
             ->mutable_output_types(0)
             ->mutable_tensor()
             ->mutable_shape()
             ->set_unknown_rank(true);
       },
       "a shape of unknown rank has dims"},
      {"deep type",
       [](GraphDef* d) {
         ge::v1::ValueTypeDef* t = NodeNamed(d, "x")->mutable_output_types(0);
         for (int i = 0; i < 40; ++i) {
           t->set_kind(ge::v1::ValueTypeDef::SEQUENCE);
           t->clear_tensor();
           t = t->mutable_element();
         }
       },
       "value type nests deeper than 32"},
      {"nested subgraphs",
       [](GraphDef* d) { d->mutable_subgraphs(0)->add_subgraphs()->set_name("z"); },
       "subgraph 'then_0' holds subgraphs; only the root may"},
      {"duplicate subgraph", [](GraphDef* d) { d->mutable_subgraphs(1)->set_name("then_0"); },
       "subgraph name 'then_0' is already used"},
      {"subgraph named like the root",
       [](GraphDef* d) { d->mutable_subgraphs(1)->set_name("main"); },
       "subgraph name 'main' is already used"},
      {"missing parent graph",
       [](GraphDef* d) { d->mutable_subgraphs(1)->set_parent_graph("nope"); },
       "subgraph 'else_0' has parent graph 'nope', which does not exist"},
      {"own parent", [](GraphDef* d) { d->mutable_subgraphs(1)->set_parent_graph("else_0"); },
       "', itself"},
      {"missing parent node", [](GraphDef* d) { d->mutable_subgraphs(1)->set_parent_node("nope"); },
       "subgraph 'else_0' has parent node 'nope' in graph 'main', which does not list it"},
      {"parent node not owning", [](GraphDef* d) { d->mutable_subgraphs(1)->set_parent_node("x"); },
       "parent node 'x' in graph 'main', which does not list it"},
      {"parent loop",
       [](GraphDef* d) {
         d->mutable_subgraphs(0)->set_parent_graph("body");
         d->mutable_subgraphs(0)->clear_parent_node();
         d->mutable_subgraphs(2)->clear_parent_node();
       },
       "the parents of subgraph 'then_0' loop"},
      {"unknown subgraph", [](GraphDef* d) { NodeNamed(d, "x")->add_subgraphs("ghost"); },
       "node 'x' of graph 'main' names subgraph 'ghost', which does not exist"},
      {"subgraph of another node", [](GraphDef* d) { NodeNamed(d, "x")->add_subgraphs("else_0"); },
       "names subgraph 'else_0', whose parent is another node"},
      {"empty subgraph name", [](GraphDef* d) { NodeNamed(d, "x")->add_subgraphs(""); },
       "node 'x' names a subgraph with an empty name"},
      {"bad attr tensor",
       [](GraphDef* d) {
         (*NodeNamed(d, "x")->mutable_attrs())["t"].mutable_t()->set_dtype(
             static_cast<ge::v1::DataType>(-3));
       },
       "attribute 't': unknown tensor dtype -3"},
  };
  for (const BadGraph& c : cases) {
    ge::v1::GraphDef def = TreeProto();
    c.corrupt(&def);
    auto g = GraphFromProto(def);
    ASSERT_FALSE(g.ok()) << c.what;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(std::string(g.status().message()).find(c.error), std::string::npos)
        << c.what << "\nmessage: " << g.status().message() << "\nexpected: " << c.error;
  }
}

struct BadTensor {
  const char* what;
  std::function<void(ge::v1::TensorDef*)> corrupt;
  const char* error;
};

TEST(ProtoConvertTest, MalformedTensorsGetErrors) {
  using ge::v1::TensorDef;
  const BadTensor cases[] = {
      {"dtype", [](TensorDef* t) { t->set_dtype(static_cast<ge::v1::DataType>(17)); },
       "unknown tensor dtype 17"},
      {"negative dim", [](TensorDef* t) { t->set_dims(0, -1); }, "tensor dim 0 is negative (-1)"},
      {"short data", [](TensorDef* t) { t->mutable_raw_data()->pop_back(); },
       "tensor f32[2,3] has 23 raw bytes and 0 strings; expected 24 raw bytes"},
      {"long data", [](TensorDef* t) { t->mutable_raw_data()->push_back('x'); },
       "has 25 raw bytes"},
      {"strings on floats", [](TensorDef* t) { t->add_string_data("s"); },
       "and 1 strings; expected 24 raw bytes"},
      {"overflow", [](TensorDef* t) { t->set_dims(0, int64_t{1} << 62); }, "overflows"},
      {"huge but empty", [](TensorDef* t) { t->set_dims(0, int64_t{1} << 40); },
       "has 24 raw bytes and 0 strings; expected 13194139533312 raw bytes"},
      {"bool byte",
       [](TensorDef* t) {
         t->set_dtype(ge::v1::DT_BOOL);
         t->clear_dims();
         t->add_dims(2);
         t->set_raw_data(std::string("\x01\x02", 2));
       },
       "tensor bool[2]: bool tensor element 1 has byte value 2"},
      {"strings count",
       [](TensorDef* t) {
         t->set_dtype(ge::v1::DT_STRING);
         t->clear_raw_data();
         t->add_string_data("only one");
       },
       "tensor string[2,3] has 1 strings and 0 raw bytes; expected 6 strings"},
      {"strings with raw", [](TensorDef* t) { t->set_dtype(ge::v1::DT_STRING); },
       "has 0 strings and 24 raw bytes"},
      {"undefined with dims", [](TensorDef* t) { t->set_dtype(ge::v1::DT_UNDEFINED); },
       "a tensor of undefined dtype has dims or data"},
  };
  ge::v1::TensorDef good;
  ASSERT_TRUE(
      TensorToProto(Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3}), &good).ok());
  ASSERT_TRUE(TensorFromProto(good).ok());
  for (const BadTensor& c : cases) {
    ge::v1::TensorDef def = good;
    c.corrupt(&def);
    auto t = TensorFromProto(def);
    ASSERT_FALSE(t.ok()) << c.what;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(std::string(t.status().message()).find(c.error), std::string::npos)
        << c.what << "\nmessage: " << t.status().message() << "\nexpected: " << c.error;
  }
}

TEST(ProtoConvertTest, AttrValuesNeedAValue) {
  ge::v1::AttrValueDef empty;
  auto v = AttrValueFromProto(empty);
  ASSERT_FALSE(v.ok());
  ge::v1::AttrValueDef empty_list;
  empty_list.mutable_floats();
  v = AttrValueFromProto(empty_list);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->kind(), AttrValue::Kind::kFloats);
  ge::v1::AttrValueDef bad_shapes;
  bad_shapes.mutable_shapes()->add_values()->add_dims(-5);
  EXPECT_FALSE(AttrValueFromProto(bad_shapes).ok());
}

// Random byte damage to a serialized tree: every outcome is an error or a
// graph, never a crash (a smoke version of the fuzzer).
TEST(ProtoConvertTest, SurvivesRandomCorruption) {
  std::string bytes;
  ASSERT_TRUE(TreeProto().SerializeToString(&bytes));
  std::mt19937 rng(7);
  int parsed = 0;
  google::protobuf::LogSilencer quiet;  // damaged strings make protobuf log

  for (int round = 0; round < 3000; ++round) {
    std::string damaged = bytes;
    for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k) {
      damaged[rng() % damaged.size()] = static_cast<char>(rng());
    }
    ge::v1::GraphDef def;
    if (!def.ParseFromString(damaged)) continue;
    ++parsed;
    auto g = GraphFromProto(def);
    if (g.ok()) {
      (void)VerifyGraph(**g);
      (void)PrintGraph(**g);
    }
  }
  EXPECT_GT(parsed, 100);
}

}  // namespace
}  // namespace ge::ir

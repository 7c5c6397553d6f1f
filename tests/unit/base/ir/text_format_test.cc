// The text form: exact round trips of every attribute kind, value type and
// structural feature, the documented defaults, and parse errors with
// positions.
#include "base/ir/text_format.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "base/ir/graph_equal.h"
#include "base/ir/verifier.h"
#include "gtest/gtest.h"
#include "tests/unit/base/ir/ir_test_util.h"

namespace ge::ir {
namespace {

using testing::AddOp;
using testing::AttrsOfEveryKind;
using testing::F32;
using testing::FloatFromBits;
using testing::MustParse;
using testing::TensorsOfEveryDtype;

// Print -> Parse -> structurally equal, and printing again gives the same text.
void ExpectRoundTrip(const Graph& g) {
  const std::string text = PrintGraph(g);
  auto parsed = ParseGraph(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  std::string diff;
  EXPECT_TRUE(GraphsEqual(g, **parsed, &diff)) << diff << "\n" << text;
  EXPECT_EQ(PrintGraph(**parsed), text);
}

TEST(TextFormatTest, RoundTripsEveryAttributeKind) {
  Graph g("main");
  g.mutable_attrs() = AttrsOfEveryKind();
  Node* n = AddOp(g, "n", "Custom", 0, {F32({1})});
  n->mutable_op_desc().mutable_attrs() = AttrsOfEveryKind();
  ExpectRoundTrip(g);
  for (const Tensor& t : TensorsOfEveryDtype()) {
    const std::string text = PrintAttrValue(AttrValue(t));
    auto back = ParseAttrValue(text);
    ASSERT_TRUE(back.ok()) << back.status() << " in " << text;
    EXPECT_TRUE(AttrValuesIdentical(*back, AttrValue(t))) << text;
    EXPECT_EQ(PrintAttrValue(*back), text);
  }
}

TEST(TextFormatTest, SpellsValuesReadably) {
  EXPECT_EQ(PrintAttrValue(AttrValue(1.0f)), "1.0");
  EXPECT_EQ(PrintAttrValue(AttrValue(int64_t{1})), "1");
  EXPECT_EQ(PrintAttrValue(AttrValue(-0.0f)), "-0.0");
  EXPECT_EQ(PrintAttrValue(AttrValue(0.1f)), "0.1");
  EXPECT_EQ(PrintAttrValue(AttrValue(FloatFromBits(0x7fc00000))), "nan");
  EXPECT_EQ(PrintAttrValue(AttrValue(FloatFromBits(0xffc00001))), "-nan(0x7fc00001)");
  EXPECT_EQ(PrintAttrValue(AttrValue(std::vector<float>{})), "floats[]");
  EXPECT_EQ(PrintAttrValue(AttrValue(Shape{1, -1})), "shape[1,-1]");
  EXPECT_EQ(PrintAttrValue(AttrValue(GraphRef{"g 1"})), "@\"g 1\"");
  EXPECT_EQ(PrintAttrValue(AttrValue(Tensor::FromVector<float>({1.5f, 2.0f}, Shape{2}))),
            "tensor<f32[2]>[1.5, 2]");
  EXPECT_EQ(PrintAttrValue(AttrValue(Tensor::FromVector<int32_t>({0, 0, 0}, Shape{3}))),
            "tensor<i32[3]>splat(0)");
  EXPECT_EQ(PrintAttrValue(AttrValue(Tensor())), "tensor<?>");
  EXPECT_EQ(PrintAttrValue(AttrValue(std::string("a\"b\\\n\x01"))), "\"a\\\"b\\\\\\n\\x01\"");
}

TEST(TextFormatTest, ParsesValuesByTheirSpelling) {
  auto v = ParseAttrValue("[1, 2.5, -3]");  // ints and floats mix into floats
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->kind(), AttrValue::Kind::kFloats);
  EXPECT_EQ(*v->get<std::vector<float>>(), (std::vector<float>{1.0f, 2.5f, -3.0f}));
  v = ParseAttrValue("1e3");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v->get<float>(), 1000.0f);
  v = ParseAttrValue("inf");
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(std::isinf(*v->get<float>()));
  v = ParseAttrValue("tensor<f16[2]>[0.1, -inf]");  // rounds to the nearest half
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->get<Tensor>()->data<Float16>()[0].bits, Float16(0.1f).bits);
  EXPECT_EQ(v->get<Tensor>()->data<Float16>()[1].bits, 0xfc00);
  v = ParseAttrValue("  # comment\n [ \"x\" ,\"y\" ] ");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v->get<std::vector<std::string>>(), (std::vector<std::string>{"x", "y"}));
}

TEST(TextFormatTest, RoundTripsEveryValueType) {
  const char* types[] = {"f32[1,3,224,224]",
                         "f32[]",
                         "i64[-1,4]",
                         "f16[?]",
                         "bf16[2]@NCHW",
                         "u8[1,2,3]@NHWC",
                         "?",
                         "?[2,3]",
                         "?[?]",
                         "?[]@NChw16c",
                         "seq<f32[?]>",
                         "opt<f32[2]>",
                         "opt<seq<i64[-1]>>",
                         "seq<seq<?>>",
                         "string[3]",
                         "bool[]",
                         "c64[1]",
                         "c128[1]",
                         "f64[0]@Blocked",
                         "i8[1]@NCDHW"};
  Graph g("main");
  std::vector<ValueType> outputs;
  for (const char* text : types) {
    auto t = ParseValueType(text);
    ASSERT_TRUE(t.ok()) << text << ": " << t.status();
    EXPECT_EQ(PrintValueType(*t), text);
    outputs.push_back(*t);
  }
  Node* src = AddOp(g, "src", "Multi", 0, outputs);
  // The consumer declares each input with the type of the next output, so
  // every input carries an explicit annotation.
  Node* dst = AddOp(g, "dst", "Sink", static_cast<int>(outputs.size()), {}, {});
  for (size_t i = 0; i < outputs.size(); ++i) {
    ASSERT_TRUE(g.AddEdge(src, static_cast<int>(i), dst, static_cast<int>(i)).ok());
    dst->mutable_op_desc().mutable_input(i).type = outputs[(i + 1) % outputs.size()];
  }
  ExpectRoundTrip(g);
  EXPECT_EQ(ParseValueType("f32[2]").value(), F32({2}));
  EXPECT_EQ(ParseValueType("?").value(), ValueType());
}

TEST(TextFormatTest, StructuralFeaturesRoundTrip) {
  Graph g("main");
  Node* a = AddOp(g, "a", "Data", 0, {F32({2})});
  a->mutable_op_desc().mutable_output(0).name = "input.1";
  Node* weird = AddOp(g, "name with \"quotes\" and spaces", "ai.onnx:Custom", 3,
                      {F32({2}), ValueType(), F32({1})});
  weird->mutable_op_desc().mutable_input(0).name = "x:0";
  weird->mutable_op_desc().mutable_input(2).name = "opt_in";
  weird->mutable_op_desc().mutable_input(2).type = ValueType::Optional(F32({2}));
  weird->mutable_op_desc().mutable_output(2).name = "out.2";
  ASSERT_TRUE(g.AddEdge(a, 0, weird, 0).ok());  // input 1 and 2 absent
  Node* underscore = AddOp(g, "_", "NoOp", 0, {});
  Node* empty_type = AddOp(g, "\xc3\xa9", "", 1, {ValueType(), ValueType()});
  ASSERT_TRUE(g.AddEdge(weird, 1, empty_type, 0).ok());
  ASSERT_TRUE(g.AddControlEdge(underscore, empty_type).ok());
  ASSERT_TRUE(g.AddControlEdge(a, empty_type).ok());
  Node* out = AddOp(g, "out", "NetOutput", 2, {});
  ASSERT_TRUE(g.AddEdge(empty_type, 1, out, 0).ok());
  ExpectRoundTrip(g);
  const std::string text = PrintGraph(g);
  EXPECT_NE(text.find("\"_\" = NoOp()"), std::string::npos) << text;
  EXPECT_NE(text.find("^\"_\" ^a"), std::string::npos) << text;
  EXPECT_NE(text.find("(a:0 : ? as \"x:0\", _, _ : opt<f32[2]> as opt_in)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("-> (f32[2] as input.1)"), std::string::npos) << text;
  EXPECT_NE(text.find("out = NetOutput(\"\\xc3\\xa9\":1, _)\n"), std::string::npos) << text;
}

// The documented example, printed back exactly as written.
constexpr char kExample[] = R"(graph main {
  attr _dynamic_shape_partitioned = false
  x = Data() {index = 0} -> (f32[1,3,224,224]@NCHW as input.1)
  w = Const() {value = tensor<f32[2]>[1.5, 2]} -> (f32[2])
  y = Add(x:0, w:0) -> (f32[1,3,224,2])
  p = Data() {index = 1} -> (bool[])
  c = If(p:0, y:0 : ?) ^w {then_branch = @then_0} subgraphs(then_0, else_0) -> (f32[-1])
  out = NetOutput(c:0, _)
}

graph then_0 parent(main, c) {
  a = Data() {_parent_index = 1, index = 0}
  r = Relu(a:0)
  o = NetOutput(r:0)
}

graph else_0 parent(main, c) {
  o = NetOutput()
}
)";

TEST(TextFormatTest, PrintsTheDocumentedExampleBackVerbatim) {
  auto g = MustParse(kExample);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(PrintGraph(*g), kExample);
  EXPECT_TRUE(VerifyGraph(*g).ok()) << VerifyGraph(*g);
  // Defaults: the untyped nodes got one undefined output each because a
  // consumer uses port 0; NetOutput has none.
  const Graph* then_0 = g->FindSubgraph("then_0");
  EXPECT_EQ(then_0->FindNode("a")->num_outputs(), 1);
  EXPECT_EQ(then_0->FindNode("a")->op_desc().output(0).type, ValueType());
  EXPECT_EQ(then_0->FindNode("o")->num_outputs(), 0);
  // Inputs without `: type` copy the producer's output type.
  EXPECT_EQ(g->FindNode("y")->op_desc().input(0).type.ToString(), "f32[1,3,224,224]@NCHW");
  EXPECT_EQ(g->FindNode("c")->op_desc().input(1).type, ValueType());
  EXPECT_EQ(g->FindSubgraph("else_0")->parent_node(), g->FindNode("c"));
}

TEST(TextFormatTest, ImpliedOutputsFollowTheHighestConsumedPort) {
  auto g = MustParse(R"(
    graph main {
      out = NetOutput(s:2, s:0)   # a reference before the definition
      s = Split()
      dead = Relu(s:1)
      first = Relu(s)             # port 0 when none is given
    })");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->FindNode("s")->num_outputs(), 3);
  EXPECT_EQ(g->FindNode("first")->input(0), (OutPort{g->FindNode("s"), 0}));
  EXPECT_EQ(g->FindNode("dead")->num_outputs(), 0);
  // A node with an unused undefined output needs the arrow.
  Graph h("h");
  AddOp(h, "lonely", "Relu", 0, {ValueType()});
  EXPECT_EQ(PrintNode(*h.FindNode("lonely")), "lonely = Relu() -> (?)");
  ExpectRoundTrip(h);
  ExpectRoundTrip(*g);
}

TEST(TextFormatTest, ElidedTensorsPrintButDoNotParse) {
  Graph g("main");
  Node* c = AddOp(g, "c", "Const", 0, {F32({5})});
  c->mutable_op_desc().SetAttr("value",
                               AttrValue(Tensor::FromVector<float>({1, 2, 3, 4, 5}, Shape{5})));
  PrintOptions options;
  options.max_tensor_elements = 2;
  const std::string text = PrintGraph(g, options);
  EXPECT_NE(text.find("tensor<f32[5]>[1, 2, ...]"), std::string::npos) << text;
  auto parsed = ParseGraph(text);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(std::string(parsed.status().message()).find("an elided tensor cannot be parsed"),
            std::string::npos);
}

TEST(TextFormatTest, PrintingASubgraphPrintsItsSubtreeAsARoot) {
  auto g = MustParse(R"(
    graph main {
      c = If() subgraphs(t)
    }
    graph t parent(main, c) {
      i = If() subgraphs(deep)
    }
    graph deep parent(t, i) {
    })");
  ASSERT_NE(g, nullptr);
  const std::string text = PrintGraph(*g->FindSubgraph("t"));
  EXPECT_EQ(text, "graph t {\n  i = If() subgraphs(deep)\n}\n\ngraph deep parent(t, i) {\n}\n");
  EXPECT_TRUE(ParseGraph(text).ok());
}

struct BadText {
  const char* text;
  const char* error;
};

TEST(TextFormatTest, ParseErrorsNamePositionAndExpectation) {
  const BadText cases[] = {
      {"", "1:1: expected 'graph', got end of input"},
      {"graph g {\n  a = Relu(b:0)\n}",
       "2:12: input 0 of 'a' names node 'b', which is not in graph 'g'"},
      {"graph g {\n  a = X() -> (f32[1])\n  b = Y(a:1)\n}",
       "3:9: 'a' has 1 outputs; input 0 of 'b' asks for port 1"},
      {"graph g {\n  a = X()\n  a = Y()\n}", "3:3: graph 'g': duplicate node name 'a'"},
      // Found by the text_format fuzzer: a node without `-> (...)` got an
      // output per port up to the one named, ten million of them here.
      {"graph g {\n  s = X()\n  o = NetOutput(s:0, s:09999999)\n}",
       "3:24: port 9999999 is out of range [0, 65535]"},
      {"graph g {\n  a = X(\n}", "3:1: expected an input (node:port or _), got '}'"},
      {"graph g {\n  a = X() -> (f33[1])\n}",
       "2:15: expected a type (like f32[1,3], seq<...>, opt<...> or ?), got 'f33'"},
      {"graph g {\n  a = X() -> (f32[-2])\n}", "2:19: dim -2 is below -1"},
      {"graph g {\n  a = X() -> (f32[1]@NOPE)\n}", "2:22: expected a format after '@'"},
      {"graph g {\n  a = X() {k = [1, \"s\"]}\n}",
       "2:20: a list of int values cannot hold a string"},
      {"graph g {\n  a = X() {k = []}\n}", "2:16: an empty list needs its kind"},
      {"graph g {\n  a = X() {k = 1, k = 2}\n}", "2:19: attribute 'k' is given twice"},
      {"graph g {\n  a = X() {k = \"abc}\n}", "2:16: unterminated string"},
      {"graph g {\n  a = X() {k = \"\\q\"}\n}", "2:17: bad escape in string"},
      {"graph g {\n  a = X() {k = tensor<f32[2]>[1]}\n}",
       "2:32: expected ',' between elements (2 expected), got ']'"},
      {"graph g {\n  a = X() {k = tensor<f32[-1]>[1]}\n}",
       "2:23: a tensor value needs a known shape"},
      {"graph g {\n  a = X() {k = tensor<i8[1]>[300]}\n}",
       "2:30: expected a i8 integer in range, got '300'"},
      {"graph g {\n  a = X() {k = tensor<f32[1]>[1e50]}\n}", "2:31: 1e50 is out of range for f32"},
      {"graph g {\n  a = X() {k = tensor<f32[1]>[nan(0x7f800000)]}\n}",
       "2:35: expected the bits of a f32 NaN"},
      {"graph g {\n  a = X() {k = tensor<bool[1]>[1]}\n}", "2:32: expected true or false, got '1'"},
      {"graph g {\n  a = X() {k = 99999999999999999999}\n}",
       "2:16: integer 99999999999999999999 is out of range"},
      {"graph g {\n  a = X() ^a\n}", "2:12: control input 'a' of 'a' is the node itself"},
      {"graph g {\n  a = X()\n  b = X() ^a ^a\n}", "3:15: control input 'a' is given twice"},
      {"graph g {\n  a = X() ; \n}", "2:11: unexpected character \";\""},
      {"graph g parent(x, y) {\n}", "1:1: the first graph is the root and has no parent(...)"},
      {"graph g {\n}\ngraph s {\n}", "3:1: subgraph 's' needs parent(graph, node)"},
      {"graph g {\n}\ngraph s parent(nope, _) {\n}",
       "3:1: parent graph 'nope' of 's' is not defined"},
      {"graph g {\n}\ngraph s parent(g, nope) {\n}", "3:1: parent node 'nope' is not in graph 'g'"},
      {"graph g {\n}\ngraph g parent(g, _) {\n}", "3:1: subgraph name 'g' is already used"},
      {"graph g {\n}\ngraph a parent(b, _) {\n}\ngraph b parent(a, _) {\n}",
       "loop without reaching the root"},
      {"graph g {\n  a = X()\n}\n}", "4:1: expected 'graph', got '}'"},
      {"graph g {\n  a = X() -> (seq<f32[1])\n}",
       "2:25: expected '>' to close the element type, got ')'"},
  };
  for (const BadText& c : cases) {
    auto g = ParseGraph(c.text);
    ASSERT_FALSE(g.ok()) << c.text;
    EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(g.status().message()).find(c.error), std::string::npos)
        << "text:\n"
        << c.text << "\nmessage: " << g.status().message() << "\nexpected: " << c.error;
  }
}

TEST(TextFormatTest, HostileTextFailsCleanly) {
  std::string deep = "graph g {\n a = X() -> (";
  for (int i = 0; i < 10000; ++i) deep += "seq<";
  auto g = ParseGraph(deep);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("types nest too deeply"), std::string::npos);
  auto big = ParseAttrValue("tensor<f32[1000000,1000000]>splat(0)");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(std::string(big.status().message()).find("too large"), std::string::npos);
  auto overflow = ParseAttrValue("tensor<f32[9223372036854775807,4]>[1]");
  ASSERT_FALSE(overflow.ok());
  auto long_list = ParseAttrValue("tensor<f32[100000]>[1, 2]");
  ASSERT_FALSE(long_list.ok());
  EXPECT_FALSE(ParseAttrValue("tensor<?[2]>").ok());
  EXPECT_FALSE(ParseAttrValue("tensor<f32[2]@NCHW>[1, 2]").ok());
  EXPECT_FALSE(ParseAttrValue("1 2").ok());
  EXPECT_FALSE(ParseValueType("f32").ok());
  // A raw NUL inside a string is an ordinary byte.
  auto nul = ParseAttrValue(std::string("\"a\0b\"", 5));
  ASSERT_TRUE(nul.ok()) << nul.status();
  EXPECT_EQ(*nul->get<std::string>(), std::string("a\0b", 3));
}

// Random damage to valid text: every outcome is an error or a graph that
// prints and round-trips, never a crash.
TEST(TextFormatTest, SurvivesRandomCorruption) {
  const std::string alphabet = "(){}[]<>,:=^@?_-\"\\#\n x0123456789.efnaitsqopgr";
  std::mt19937 rng(99);
  int parsed = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = kExample;
    for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) {
      const size_t at = rng() % text.size();
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0: text[at] = c; break;
        case 1: text.insert(text.begin() + at, c); break;
        default: text.erase(at, 1 + rng() % 4); break;
      }
    }
    auto g = ParseGraph(text);
    if (!g.ok()) {
      EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
      continue;
    }
    ++parsed;
    (void)VerifyGraph(**g);
    ExpectRoundTrip(**g);
  }
  EXPECT_GT(parsed, 50);
}

// Random graphs with random types and attributes survive the round trip.
TEST(TextFormatTest, RandomGraphsRoundTrip) {
  std::mt19937 rng(1234);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const std::vector<ValueType> types = {
      F32({2, 3}), ValueType(), ValueType::Tensor(DataType::kInt64, Shape::UnknownRank()),
      ValueType::Sequence(F32({-1})),
      ValueType::Optional(ValueType::Tensor(DataType::kBool, Shape{}))};
  const std::vector<AttrValue> attrs = {AttrValue(int64_t{3}), AttrValue(0.25f), AttrValue("s"),
                                        AttrValue(std::vector<int64_t>{}), AttrValue(Shape{4})};
  for (int round = 0; round < 50; ++round) {
    Graph g(StrCat("g", round));
    std::vector<Node*> nodes;
    const int n = 1 + pick(30);
    for (int i = 0; i < n; ++i) {
      std::vector<ValueType> outs;
      for (int o = pick(3); o > 0; --o) outs.push_back(types[pick(types.size())]);
      Node* node =
          AddOp(g, StrCat("n", i, pick(2) ? "" : " q"), StrCat("Op", pick(4)), pick(4), outs);
      for (int a = pick(3); a > 0; --a) {
        node->mutable_op_desc().SetAttr(StrCat("a", pick(5)), attrs[pick(attrs.size())]);
      }
      for (int in = 0; in < node->num_inputs() && !nodes.empty(); ++in) {
        Node* src = nodes[pick(nodes.size())];
        if (src->num_outputs() > 0 && pick(4) != 0) {
          ASSERT_TRUE(g.AddEdge(src, pick(src->num_outputs()), node, in).ok());
        }
        if (pick(5) == 0)
          node->mutable_op_desc().mutable_input(in).type = types[pick(types.size())];
        if (pick(5) == 0) node->mutable_op_desc().mutable_input(in).name = "t";
      }
      if (!nodes.empty() && pick(3) == 0) {
        ASSERT_TRUE(g.AddControlEdge(nodes[pick(nodes.size())], node).ok());
      }
      nodes.push_back(node);
    }
    ExpectRoundTrip(g);
  }
}

}  // namespace
}  // namespace ge::ir

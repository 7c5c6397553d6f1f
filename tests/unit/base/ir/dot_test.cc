// DOT output: a pinned small example, escaping, colours, the subgraph
// modes, edge labels and determinism.
#include "base/ir/dot.h"

#include "base/ir/op_types.h"
#include "gtest/gtest.h"
#include "tests/unit/base/ir/ir_test_util.h"

namespace ge::ir {
namespace {

using testing::MustParse;

size_t Count(const std::string& text, std::string_view part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

constexpr char kTree[] = R"(
graph main {
  x = Data() {index = 0} -> (f32[2])
  p = Data() {index = 1} -> (bool[])
  c = If(p:0, x:0) ^x subgraphs(then_0, else_0) -> (f32[2])
  call = PartitionedCall(c:0) subgraphs(body) -> (f32[2])
  out = NetOutput(call:0)
}
graph then_0 parent(main, c) {
  a = Data() {index = 0} -> (f32[2])
  o = NetOutput(a:0)
}
graph else_0 parent(main, c) {
}
graph body parent(main, call) {
  a = Data() {index = 0} -> (f32[2])
  o = NetOutput(a:0)
}
)";

TEST(DotTest, SmallGraphIsPinned) {
  auto g = MustParse(R"(
    graph "my graph" {
      x = Data() {index = 0} -> (f32[2])
      y = Split(x:0) -> (f32[1], f32[1])
      z = Add(y:1, y:0) ^x -> (f32[1])
    })");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(ToDot(*g, DotOptions()),
            "digraph \"my graph\" {\n"
            "  graph [label=\"my graph\", labelloc=t, compound=true, fontname=\"Helvetica\"];\n"
            "  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n"
            "  edge [fontname=\"Helvetica\", fontsize=10];\n"
            "  n0 [label=\"x\\nData\"];\n"
            "  n1 [label=\"y\\nSplit\"];\n"
            "  n2 [label=\"z\\nAdd\"];\n"
            "  n0 -> n1 [label=\"f32[2]\"];\n"
            "  n1 -> n2 [label=\"1\u21920 f32[1]\"];\n"
            "  n1 -> n2 [label=\"0\u21921 f32[1]\"];\n"
            "  n0 -> n2 [style=dashed, color=gray50];\n"
            "}\n");
}

TEST(DotTest, EscapesNamesAndColours) {
  auto g = MustParse(R"(
    graph "g\"1" {
      "a\"b\\c\nd" = "T{x}"() -> (f32[1])
    })");
  ASSERT_NE(g, nullptr);
  DotOptions options;
  options.fill_color = [](const Node& n) {
    return n.type() == "T{x}" ? std::string("#ff\"00") : "";
  };
  const std::string dot = ToDot(*g, options);
  EXPECT_NE(dot.find("digraph \"g\\\"1\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("n0 [label=\"a\\\"b\\\\c\\nd\\nT{x}\", style=\"rounded,filled\", "
                     "fillcolor=\"#ff\\\"00\"];"),
            std::string::npos)
      << dot;
}

TEST(DotTest, ColoursOnlyWhereTheCallbackSaysSo) {
  auto g = MustParse(kTree);
  ASSERT_NE(g, nullptr);
  DotOptions options;
  options.fill_color = [](const Node& n) {
    return n.type() == kData ? std::string("lightblue") : std::string();
  };
  const std::string dot = ToDot(*g, options);
  EXPECT_EQ(Count(dot, "fillcolor=\"lightblue\""), 4u) << dot;  // x, p, and two inner Data
  EXPECT_EQ(Count(dot, "fillcolor="), 4u);
}

TEST(DotTest, SubgraphModes) {
  auto g = MustParse(kTree);
  ASSERT_NE(g, nullptr);
  DotOptions options;
  options.subgraphs = DotOptions::Subgraphs::kAll;
  std::string dot = ToDot(*g, options);
  EXPECT_EQ(Count(dot, "subgraph cluster_"), 3u) << dot;
  EXPECT_NE(dot.find("label=\"then_0\";"), std::string::npos);
  EXPECT_NE(dot.find("[label=\"(empty)\", shape=plaintext]"), std::string::npos);  // else_0
  EXPECT_EQ(Count(dot, "style=dotted, lhead=cluster_"), 3u);

  options.subgraphs = DotOptions::Subgraphs::kPartitionedCalls;
  dot = ToDot(*g, options);
  EXPECT_EQ(Count(dot, "subgraph cluster_"), 1u) << dot;
  EXPECT_NE(dot.find("label=\"body\";"), std::string::npos);
  EXPECT_EQ(dot.find("then_0"), std::string::npos);

  options.subgraphs = DotOptions::Subgraphs::kNone;
  dot = ToDot(*g, options);
  EXPECT_EQ(Count(dot, "subgraph"), 0u);
  EXPECT_EQ(Count(dot, "\\n"), 5u) << dot;  // one "name\nType" label per node of main
}

TEST(DotTest, EdgeLabelsAndControlEdgesAreOptional) {
  auto g = MustParse(kTree);
  ASSERT_NE(g, nullptr);
  DotOptions options;
  options.subgraphs = DotOptions::Subgraphs::kNone;
  std::string dot = ToDot(*g, options);
  EXPECT_NE(dot.find("f32[2]"), std::string::npos);
  EXPECT_EQ(Count(dot, "style=dashed"), 1u);
  options.show_types = false;
  options.show_control_edges = false;
  options.title = "placement";
  dot = ToDot(*g, options);
  EXPECT_EQ(dot.find("f32[2]"), std::string::npos) << dot;
  EXPECT_EQ(Count(dot, "style=dashed"), 0u);
  EXPECT_EQ(dot.find("digraph \"placement\" {"), 0u);
}

TEST(DotTest, OutputIsDeterministic) {
  auto g = MustParse(kTree);
  ASSERT_NE(g, nullptr);
  auto copy = g->Clone();
  EXPECT_EQ(ToDot(*g, DotOptions()), ToDot(*g, DotOptions()));
  EXPECT_EQ(ToDot(*g, DotOptions()), ToDot(*copy, DotOptions()));
}

}  // namespace
}  // namespace ge::ir

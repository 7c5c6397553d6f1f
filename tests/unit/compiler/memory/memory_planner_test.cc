// MemoryPlanner: in-place and view reuse, lifetimes of graph outputs, the
// reported bounds, and validity on random graphs.
#include "compiler/memory/memory_planner.h"

#include <map>
#include <random>
#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "base/ir/text_format.h"
#include "base/ops/op_registry.h"
#include "gtest/gtest.h"

namespace ge::compiler {
namespace {

struct Planned {
  std::unique_ptr<ir::Graph> graph;
  MemoryPlan plan;
  int BufferOf(const std::string& node, int port = 0) const {
    return plan.values.at(graph->FindNode(node))[port].buffer;
  }
};

Planned Plan(const std::string& text) {
  Planned p;
  auto g = ir::ParseGraph(text);
  EXPECT_TRUE(g.ok()) << g.status();
  p.graph = std::move(*g);
  auto order = p.graph->TopologicalOrder();
  EXPECT_TRUE(order.ok());
  auto plan = PlanMemory(*p.graph, *order);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (plan.ok()) p.plan = std::move(*plan);
  return p;
}

// No two buffers alive at the same step overlap in the arena.
void ExpectValid(const MemoryPlan& plan) {
  for (size_t a = 0; a < plan.buffers.size(); ++a) {
    const BufferPlan& x = plan.buffers[a];
    EXPECT_LE(x.offset + x.size, plan.arena_bytes);
    EXPECT_EQ(x.offset % kArenaAlignment, 0);
    for (size_t b = a + 1; b < plan.buffers.size(); ++b) {
      const BufferPlan& y = plan.buffers[b];
      const bool time = x.first_step <= y.last_step && y.first_step <= x.last_step;
      const bool space = x.offset < y.offset + y.size && y.offset < x.offset + x.size;
      EXPECT_FALSE(time && space) << "buffers " << a << " and " << b << " overlap";
    }
  }
  EXPECT_GE(plan.arena_bytes, plan.lower_bound);
  EXPECT_LE(plan.arena_bytes, plan.no_reuse_bytes);
}

// Replays `order` on the plan: every value a node reads must still be in
// its buffer, i.e. nothing wrote the buffer since the value (or the value a
// view of it shares) was produced. This catches what the interval check of
// ExpectValid cannot: two values sharing one buffer through a view.
void ExpectReadsSeeTheirValues(const std::vector<ir::Node*>& order, const MemoryPlan& plan) {
  std::map<int, const ir::Node*> content;            // buffer -> the node whose output it holds
  std::map<std::pair<const ir::Node*, int>, const ir::Node*> root;  // value -> the node that wrote its bytes
  auto buffer_of = [&](ir::OutPort p) {
    auto it = plan.values.find(p.node);
    if (it == plan.values.end() || it->second[p.index].kind != ValuePlacement::Kind::kArena) return -1;
    return it->second[p.index].buffer;
  };
  for (const ir::Node* node : order) {
    for (int i = 0; i < node->num_inputs(); ++i) {
      ir::OutPort in = node->input(i);
      const int b = in ? buffer_of(in) : -1;
      if (b < 0) continue;
      const ir::Node* written = root[{in.node, in.index}];
      EXPECT_EQ(content[b], written)
          << node->name() << " reads " << in.node->name() << " after its buffer " << b << " was overwritten";
    }
    for (int o = 0; o < node->num_outputs(); ++o) {
      const int b = buffer_of(ir::OutPort{const_cast<ir::Node*>(node), o});
      if (b < 0) continue;
      // A view's output keeps the bytes it shares with its input.
      const ir::Node* writer = node;
      const ops::OpSchema* schema = ops::OpRegistry::Global().Find(node->type());
      for (const auto& [out, in] : schema ? schema->views : std::vector<std::pair<int, int>>{}) {
        ir::OutPort src = out == o && in < node->num_inputs() ? node->input(in) : ir::OutPort{};
        if (src && buffer_of(src) == b) writer = root[{src.node, src.index}];
      }
      content[b] = writer;
      root[{node, o}] = writer;
    }
  }
}

TEST(MemoryPlannerTest, ElementwiseChainRunsInPlace) {
  Planned p = Plan(R"(graph g {
    x = Data() {index = 0} -> (f32[16])
    a = Relu(x) -> (f32[16])
    b = Sigmoid(a) -> (f32[16])
    c = Tanh(b) -> (f32[16])
    out = NetOutput(c)
  })");
  EXPECT_EQ(p.BufferOf("a"), p.BufferOf("b"));
  EXPECT_EQ(p.BufferOf("b"), p.BufferOf("c"));
  EXPECT_EQ(p.plan.inplace_reuses, 2);
  EXPECT_EQ(p.plan.arena_bytes, 64);
  EXPECT_EQ(p.plan.values.at(p.graph->FindNode("x"))[0].kind, ValuePlacement::Kind::kExternal);
  ExpectValid(p.plan);
}

TEST(MemoryPlannerTest, NoInPlaceWhenTheInputIsReadLater) {
  Planned p = Plan(R"(graph g {
    x = Data() {index = 0} -> (f32[16])
    a = Relu(x) -> (f32[16])
    b = Sigmoid(a) -> (f32[16])
    c = Add(a, b) -> (f32[16])
    out = NetOutput(c)
  })");
  EXPECT_NE(p.BufferOf("a"), p.BufferOf("b"));
  // Add may overwrite either input: both die there.
  const int c = p.BufferOf("c");
  EXPECT_TRUE(c == p.BufferOf("a") || c == p.BufferOf("b"));
  ExpectValid(p.plan);
}

// A broadcast operand fills the same aligned buffer as the output ([1, 4]
// and [3, 4] floats both take 64 bytes) but is read again after the output's
// first row is written: it must not be overwritten.
TEST(MemoryPlannerTest, NoInPlaceOverABroadcastOperandOfTheSameAlignedSize) {
  Planned p = Plan(R"(graph g {
    x = Data() {index = 0} -> (f32[3, 4])
    w = Data() {index = 1} -> (f32[1, 4])
    v = Relu(w) -> (f32[1, 4])
    y = Mul(x, v) -> (f32[3, 4])
    out = NetOutput(y)
  })");
  EXPECT_NE(p.BufferOf("y"), p.BufferOf("v"));
  EXPECT_EQ(p.plan.inplace_reuses, 0);
  ExpectValid(p.plan);
}

// `_inplace_inputs` offers one node's input buffers to its output 0 (an
// engine knows its kernel accumulates there, as cpu_dense's fused
// convolution does with its residual), under the schema pairs' rules.
TEST(MemoryPlannerTest, ANodesInplaceInputsOfferItsInputsBuffer) {
  Planned p = Plan(R"(graph g {
    x = Data() {index = 0} -> (f32[4,4])
    w = Data() {index = 1} -> (f32[4,4])
    a = Relu(x) -> (f32[4,4])
    b = Relu(w) -> (f32[4,4])
    m = MatMul(a, b) {_inplace_inputs = [1]} -> (f32[4,4])
    out = NetOutput(m)
  })");
  EXPECT_EQ(p.BufferOf("m"), p.BufferOf("b"));
  EXPECT_NE(p.BufferOf("m"), p.BufferOf("a"));
  EXPECT_EQ(p.plan.inplace_reuses, 1);
  ExpectValid(p.plan);
}

TEST(MemoryPlannerTest, InplaceInputsFollowTheSchemasRules) {
  // Without the attribute MatMul (no schema pairs) never reuses an input.
  Planned none = Plan(R"(graph g {
    x = Data() {index = 0} -> (f32[4,4])
    a = Relu(x) -> (f32[4,4])
    m = MatMul(a, a) -> (f32[4,4])
    out = NetOutput(m)
  })");
  EXPECT_NE(none.BufferOf("m"), none.BufferOf("a"));
  // The offered input is read later, is read by another input port too, has
  // another size, or is out of range: no reuse.
  for (const char* text : {R"(graph g {
    x = Data() {index = 0} -> (f32[4,4])
    a = Relu(x) -> (f32[4,4])
    m = MatMul(x, a) {_inplace_inputs = [1]} -> (f32[4,4])
    s = Add(m, a) -> (f32[4,4])
    out = NetOutput(s)
  })",
                           R"(graph g {
    x = Data() {index = 0} -> (f32[4,4])
    a = Relu(x) -> (f32[4,4])
    m = MatMul(a, a) {_inplace_inputs = [1]} -> (f32[4,4])
    out = NetOutput(m)
  })",
                           R"(graph g {
    x = Data() {index = 0} -> (f32[4,8])
    w = Data() {index = 1} -> (f32[8,4])
    a = Relu(x) -> (f32[4,8])
    m = MatMul(a, w) {_inplace_inputs = [0, 7, -1]} -> (f32[4,4])
    out = NetOutput(m)
  })"}) {
    Planned p = Plan(text);
    EXPECT_NE(p.BufferOf("m"), p.BufferOf("a")) << text;
    ExpectValid(p.plan);
  }
}

TEST(MemoryPlannerTest, ViewsShareTheirInputsBuffer) {
  Planned p = Plan(R"(graph g {
    x = Data() {index = 0} -> (f32[2,8])
    a = Relu(x) -> (f32[2,8])
    shape = Const() {value = tensor<i64[1]>[16]} -> (i64[1])
    r = Reshape(a, shape) -> (f32[16])
    s = Sigmoid(r) -> (f32[16])
    out = NetOutput(s)
  })");
  EXPECT_EQ(p.BufferOf("a"), p.BufferOf("r"));
  EXPECT_EQ(p.plan.views, 1);
  ExpectValid(p.plan);
}

// The transformer's shape arithmetic, reduced: `a` is read by an Unsqueeze
// (a view: `v` lives in a's buffer), by Neg (`b`) and through `v` by
// Sigmoid (`c`), in the order given.
Planned PlanViewReaders(bool neg_before_sigmoid) {
  const std::string neg = "    b = Neg(a) -> (f32[16])\n";
  const std::string sigmoid = "    c = Sigmoid(v) -> (f32[1,16])\n";
  Planned p = Plan(std::string(R"(graph g {
    x = Data() {index = 0} -> (f32[16])
    a = Relu(x) -> (f32[16])
    axes = Const() {value = tensor<i64[1]>[0]} -> (i64[1])
    v = Unsqueeze(a, axes) -> (f32[1,16])
)") + (neg_before_sigmoid ? neg + sigmoid : sigmoid + neg) +
                   "    out = NetOutput(b, c)\n}\n");
  EXPECT_EQ(p.BufferOf("v"), p.BufferOf("a"));
  auto order = p.graph->TopologicalOrder();
  EXPECT_TRUE(order.ok());
  if (order.ok()) ExpectReadsSeeTheirValues(*order, p.plan);
  ExpectValid(p.plan);
  return p;
}

// a has no reader after Neg, but its view does: Neg must not write a's
// buffer in place (Mul once overwrote the sequence length this way).
TEST(MemoryPlannerTest, NoInPlaceOverABufferAViewStillReads) {
  Planned p = PlanViewReaders(/*neg_before_sigmoid=*/true);
  EXPECT_NE(p.BufferOf("b"), p.BufferOf("a")) << "Neg overwrote the buffer Sigmoid still reads through the view";
  // Nor may Sigmoid, the view's last reader, overwrite what Neg reads after it.
  Planned q = PlanViewReaders(/*neg_before_sigmoid=*/false);
  EXPECT_NE(q.BufferOf("c"), q.BufferOf("a"));
}

// Once the view's last reader has run, the buffer is free to take over.
TEST(MemoryPlannerTest, InPlaceOverABufferWhoseViewsAreDone) {
  Planned p = PlanViewReaders(/*neg_before_sigmoid=*/false);
  EXPECT_EQ(p.BufferOf("b"), p.BufferOf("a"));
}

TEST(MemoryPlannerTest, GraphOutputsAreNeitherReusedNorOverwritten) {
  Planned p = Plan(R"(graph g {
    x = Data() {index = 0} -> (f32[16])
    a = Relu(x) -> (f32[16])
    b = Sigmoid(a) -> (f32[16])
    c = Tanh(b) -> (f32[16])
    d = Exp(c) -> (f32[16])
    out = NetOutput(a, d)
  })");
  EXPECT_NE(p.BufferOf("b"), p.BufferOf("a")) << "a is a graph output: b must not overwrite it";
  const BufferPlan& a = p.plan.buffers[p.BufferOf("a")];
  EXPECT_EQ(a.last_step, static_cast<int>(p.graph->num_nodes()));
  for (size_t i = 0; i < p.plan.buffers.size(); ++i) {
    if (static_cast<int>(i) == p.BufferOf("a")) continue;
    const BufferPlan& o = p.plan.buffers[i];
    EXPECT_TRUE(o.offset >= a.offset + a.size || a.offset >= o.offset + o.size);
  }
  ExpectValid(p.plan);
}

TEST(MemoryPlannerTest, ReportsBounds) {
  Planned p = Plan(R"(graph g {
    x = Data() {index = 0} -> (f32[64])
    a = Relu(x) -> (f32[64])
    b = Relu(x) -> (f32[32])
    c = Concat(a, b) {axis = 0} -> (f32[96])
    out = NetOutput(c)
  })");
  // a (256 B) and b (128 B) live together, then c (384 B) with both inputs.
  EXPECT_EQ(p.plan.no_reuse_bytes, 256 + 128 + 384);
  EXPECT_EQ(p.plan.lower_bound, 256 + 128 + 384);
  EXPECT_EQ(p.plan.arena_bytes, p.plan.lower_bound);
  EXPECT_NE(p.plan.Summary().find("3 buffers"), std::string::npos) << p.plan.Summary();
}

TEST(MemoryPlannerTest, UnknownShapesAreRefused) {
  auto g = ir::ParseGraph(R"(graph g {
    x = Data() {index = 0} -> (f32[-1])
    a = Relu(x) -> (f32[-1])
    out = NetOutput(a)
  })");
  ASSERT_TRUE(g.ok());
  auto plan = PlanMemory(**g, *(*g)->TopologicalOrder());
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(std::string(plan.status().message()).find("node 'a' output 0 has type f32[-1]"), std::string::npos);
}

TEST(MemoryPlannerTest, RandomGraphsGetValidPlansNearTheLowerBound) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string text = "graph g {\n  x = Data() {index = 0} -> (f32[8])\n";
    text += "  shape = Const() {value = tensor<i64[1]>[8]} -> (i64[1])\n";
    std::vector<std::string> names = {"x"};
    const int n = 2 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const std::string name = "n" + std::to_string(i);
      const std::string a = names[rng() % names.size()];
      const std::string b = names[rng() % names.size()];
      switch (rng() % 3) {
        case 0: text += "  " + name + " = Relu(" + a + ") -> (f32[8])\n"; break;
        case 1: text += "  " + name + " = Add(" + a + ", " + b + ") -> (f32[8])\n"; break;
        default: text += "  " + name + " = Reshape(" + a + ", shape) -> (f32[8])\n"; break;  // a view
      }
      names.push_back(name);
    }
    text += "  out = NetOutput(" + names.back() + ", " + names[rng() % names.size()] + ")\n}\n";
    Planned p = Plan(text);
    ExpectValid(p.plan);
    auto order = p.graph->TopologicalOrder();
    ASSERT_TRUE(order.ok());
    ExpectReadsSeeTheirValues(*order, p.plan);
    if (HasFailure()) return;
    EXPECT_LE(p.plan.arena_bytes, 2 * p.plan.lower_bound + 64) << text;
  }
}

// EarliestUseOrder: a TransData a pass appended (a higher id than its
// consumers) runs where its first consumer can, not after everything else
// that is ready; the model's own nodes keep their order.
TEST(EarliestUseOrder, AnAppendedConversionRunsAtItsFirstConsumer) {
  auto parsed = ir::ParseGraph(R"(graph g {
    a = Data() {index = 0} -> (f32[16])
    b = Data() {index = 1} -> (f32[16])
    s1 = Relu(b) -> (f32[16])
    m1 = Mul(a, s1) -> (f32[16])
    s2 = Sigmoid(b) -> (f32[16])
    m2 = Mul(a, s2) -> (f32[16])
    s3 = Tanh(b) -> (f32[16])
    m3 = Mul(a, s3) -> (f32[16])
    out = NetOutput(m1, m2, m3)
  })");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ir::Graph& g = **parsed;
  ir::Node* a = g.FindNode("a");
  ir::OpDesc desc = g.FindNode("s1")->op_desc();
  desc.set_name("t");
  desc.set_type(std::string(ir::kTransData));
  auto t = g.AddNode(desc);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_TRUE(g.AddEdge(a, 0, *t, 0).ok());
  for (const char* m : {"m1", "m2", "m3"}) {
    g.RemoveInputEdge(g.FindNode(m), 0);
    ASSERT_TRUE(g.AddEdge(*t, 0, g.FindNode(m), 0).ok());
  }
  auto names = [](const std::vector<ir::Node*>& order) {
    std::string out;
    for (const ir::Node* n : order) out += (out.empty() ? "" : " ") + n->name();
    return out;
  };
  auto by_id = g.TopologicalOrder();
  ASSERT_TRUE(by_id.ok());
  EXPECT_EQ(names(*by_id), "a b s1 s2 s3 t m1 m2 m3 out");  // every operand of the Muls first
  auto order = EarliestUseOrder(g);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_EQ(names(*order), "a b s1 t m1 s2 m2 s3 m3 out");
  auto plan = PlanMemory(g, *order);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectValid(*plan);
  ExpectReadsSeeTheirValues(*order, *plan);
}

TEST(EarliestUseOrder, IsTheIdOrderWhenNoPassAppendedAConversion) {
  std::mt19937 gen(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::string text = "graph g {\n  x = Data() {index = 0} -> (f32[8])\n";
    std::vector<std::string> values = {"x"};
    for (int i = 0; i < 12; ++i) {
      const std::string& l = values[gen() % values.size()];
      const std::string& r = values[gen() % values.size()];
      const std::string name = "v" + std::to_string(i);
      text += "  " + name + " = Add(" + l + ", " + r + ") -> (f32[8])\n";
      values.push_back(name);
    }
    text += "  out = NetOutput(" + values.back() + ")\n}";
    auto parsed = ir::ParseGraph(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    auto by_id = (*parsed)->TopologicalOrder();
    auto order = EarliestUseOrder(**parsed);
    ASSERT_TRUE(by_id.ok() && order.ok());
    EXPECT_EQ(*order, *by_id) << text;
  }
}

}  // namespace
}  // namespace ge::compiler

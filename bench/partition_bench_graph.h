// Synthetic graphs for the partitioning benchmark: a long network of
// element-wise ops with skip connections (like residual blocks), in
// segments that are static or dynamic (`_force_unknown_shape`), so that the
// partitioner meets many clusters, merges and reachability questions.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/ir/graph.h"
#include "base/ir/op_types.h"
#include "base/status.h"

namespace ge::bench {

struct SyntheticGraphSpec {
  int64_t nodes = 10000;
  double dynamic_fraction = 0.3;  // share of segments that are dynamic
  int min_segment = 4;
  int max_segment = 64;
  int max_skip = 24;             // how far back a skip connection reaches
  double skip_probability = 0.25;
  uint32_t seed = 7;
  std::string engine = "cpu_bench";  // not host_cpu: rule 5 would make all dynamic
};

inline std::unique_ptr<ir::Graph> MakeSyntheticGraph(const SyntheticGraphSpec& spec) {
  auto g = std::make_unique<ir::Graph>("synthetic");
  const ir::ValueType t = ir::ValueType::Tensor(DataType::kFloat, Shape{8});
  std::mt19937 rng(spec.seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<ir::Node*> values;
  values.reserve(static_cast<size_t>(spec.nodes) + 2);
  for (int i = 0; i < 2; ++i) {
    ir::OpDesc data(StrCat("input", i), std::string(ir::kData));
    data.SetAttr(ir::kAttrIndex, static_cast<int64_t>(i));
    data.AddOutput({"", t});
    values.push_back(*g->AddNode(std::move(data)));
  }
  const char* unary[] = {"Relu", "Neg", "Exp", "Sigmoid"};
  int64_t made = 0;
  while (made < spec.nodes) {
    const int length = spec.min_segment + static_cast<int>(rng() % (spec.max_segment - spec.min_segment + 1));
    const bool dynamic = coin(rng) < spec.dynamic_fraction;
    for (int k = 0; k < length && made < spec.nodes; ++k, ++made) {
      const bool skip = values.size() > 2 && coin(rng) < spec.skip_probability;
      ir::OpDesc op(StrCat("n", made), skip ? "Add" : unary[rng() % 4]);
      op.AddInput({"", t});
      if (skip) op.AddInput({"", t});
      op.AddOutput({"", t});
      op.SetAttr(ir::kAttrEngineName, spec.engine);
      if (dynamic) op.SetAttr(ir::kAttrForceUnknownShape, true);
      ir::Node* n = *g->AddNode(std::move(op));
      GE_CHECK(g->AddEdge(values.back(), 0, n, 0).ok());
      if (skip) {
        const size_t back = 1 + rng() % std::min<size_t>(spec.max_skip, values.size() - 1);
        GE_CHECK(g->AddEdge(values[values.size() - 1 - back], 0, n, 1).ok());
      }
      values.push_back(n);
    }
  }
  ir::OpDesc out("output", std::string(ir::kNetOutput));
  out.AddInput({"y", t});
  GE_CHECK(g->AddEdge(values.back(), 0, *g->AddNode(std::move(out)), 0).ok());
  return g;
}

}  // namespace ge::bench

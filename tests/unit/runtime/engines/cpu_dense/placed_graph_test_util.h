// A fixture for cpu_dense's whole-graph tests: an engine registry (ge_local,
// host_cpu, cpu_dense) for the suite, placement as the EnginePlacer does it,
// and runs on the dynamic executor.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/ir/graph.h"
#include "base/ir/op_types.h"
#include "base/tensor.h"
#include "gtest/gtest.h"
#include "runtime/engines/cpu_dense/cpu_dense_engine.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "runtime/executor/dynamic_executor.h"
#include "tests/testing/kernel_test_util.h"

namespace ge::engine::cpu_dense {

class PlacedGraphTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    engines_ = new EngineRegistry();
    const char* dir = std::getenv("GED_BINARY_DIR");
    const std::string plugins = std::string(dir != nullptr ? dir : ".") + "/lib/ged/engines/";
    ASSERT_TRUE(engines_->LoadPlugin(plugins + "libge_engine_ge_local.so", {}).ok());
    ASSERT_TRUE(engines_->AddEngine(std::make_unique<HostCpuEngine>(), {}).ok());
    ASSERT_TRUE(engines_->AddEngine(std::make_unique<CpuDenseEngine>(), {}).ok());
  }
  static void TearDownTestSuite() {
    delete engines_;
    engines_ = nullptr;
  }

  // Places every node on the cheapest engine that accepts it (what
  // EnginePlacer does), skipping cpu_dense unless `dense`.
  static void Place(ir::Graph& g, bool dense) {
    g.ForEachNode([&](ir::Node* n) {
      for (Engine* e : engines_->ByCost()) {
        if (!dense && e->attributes().name == "cpu_dense") continue;
        if (e->info_store().CheckSupported(*n).ok()) {
          n->mutable_op_desc().SetAttr(ir::kAttrEngineName, ir::AttrValue(e->attributes().name));
          return;
        }
      }
      ADD_FAILURE() << "no engine runs " << n->name();
    });
  }

  // Every output of `g` run on input `x`.
  static std::vector<Tensor> RunAll(const ir::Graph& g, const Tensor& x) {
    auto exec = runtime::DynamicExecutor::Create(g, *engines_, {});
    EXPECT_TRUE(exec.ok()) << exec.status();
    if (!exec.ok()) return {};
    auto out = (*exec)->Run({x});
    EXPECT_TRUE(out.ok()) << out.status();
    std::vector<Tensor> tensors;
    if (out.ok()) {
      for (const auto& v : *out) tensors.push_back(v.tensor());
    }
    return tensors;
  }

  // The first output of `g` run on input `x`.
  static Tensor Run(const ir::Graph& g, const Tensor& x) {
    std::vector<Tensor> all = RunAll(g, x);
    return all.empty() ? Tensor() : all[0];
  }

  // Seeded random values, uniform in [lo, hi), for every Const whose name
  // starts with `prefix` (seeds count up from `seed` in node order).
  static void FillConsts(ir::Graph& g, std::string_view prefix, uint64_t seed, double lo, double hi) {
    g.ForEachNode([&](ir::Node* n) {
      if (n->type() != ir::kConst || !n->name().starts_with(prefix)) return;
      const Shape shape = n->op_desc().output(0).type.shape();
      n->mutable_op_desc().SetAttr(ir::kAttrValue, test::RandomTensor(DataType::kFloat, shape, seed++, lo, hi));
    });
  }

  // How many nodes of `g` (root only) have this type.
  static int Count(const ir::Graph& g, std::string_view type) {
    int n = 0;
    g.ForEachNode([&](ir::Node* node) { n += node->type() == type; });
    return n;
  }

  static inline EngineRegistry* engines_ = nullptr;
};

}  // namespace ge::engine::cpu_dense

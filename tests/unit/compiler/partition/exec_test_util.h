// Execution helpers for the partitioning property tests: the built engines
// (ge_local, host_cpu), test engines whose kernels come from host_cpu, a
// random DAG generator of element-wise ops, and running a graph through
// runtime::DynamicExecutor.
#pragma once

#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/ir/graph.h"
#include "base/ir/op_types.h"
#include "base/value.h"
#include "gtest/gtest.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/executor/dynamic_executor.h"

namespace ge::partition::testing {

// The engines built next to the tests (ge_local, host_cpu), loaded once.
inline const engine::EngineRegistry& BuiltEngines() {
  static engine::EngineRegistry* registry = [] {
    auto r = engine::CreateEngineRegistry({}, {});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->release() : new engine::EngineRegistry();
  }();
  return *registry;
}

using SupportFn = std::function<bool(const ir::Node&)>;

// A test engine: supports what `support` says, runs kernels of another
// (real) engine, and may carry graph optimizers.
class DelegatingEngine final : public engine::Engine {
 public:
  DelegatingEngine(std::string name, int cost, SupportFn support, const engine::Engine* kernels,
                   bool atomic = true, std::string composite = "")
      : store_(name, std::move(support)), kernels_(kernels) {
    attributes_.name = std::move(name);
    attributes_.compute_cost = cost;
    attributes_.atomic = atomic;
    attributes_.composite_engine = std::move(composite);
    // A stand-in under the reference engine's own name is the reference.
    attributes_.reference =
        kernels != nullptr && kernels->attributes().reference && attributes_.name == kernels->attributes().name;
  }
  const engine::OpsKernelInfoStore& info_store() const override { return store_; }
  const engine::KernelFactory& kernel_factory() const override { return kernels_->kernel_factory(); }
  std::vector<engine::GraphOptimizer*> graph_optimizers() override {
    std::vector<engine::GraphOptimizer*> out;
    for (auto& o : optimizers_) out.push_back(o.get());
    return out;
  }
  void AddOptimizer(std::unique_ptr<engine::GraphOptimizer> optimizer) { optimizers_.push_back(std::move(optimizer)); }

 private:
  class Store final : public engine::OpsKernelInfoStore {
   public:
    Store(std::string name, SupportFn support) : name_(std::move(name)), support_(std::move(support)) {}
    absl::Status CheckSupported(const ir::Node& node) const override {
      if (support_(node)) return absl::OkStatus();
      return absl::UnimplementedError(name_ + " does not run " + node.type());
    }
    std::vector<std::string> SupportedOpTypes() const override { return {}; }

   private:
    std::string name_;
    SupportFn support_;
  };
  Store store_;
  const engine::Engine* kernels_;
  std::vector<std::unique_ptr<engine::GraphOptimizer>> optimizers_;
};

inline const char* const kUnaryOps[] = {"Relu", "Neg", "Sigmoid", "Tanh", "Abs"};
inline const char* const kBinaryOps[] = {"Add", "Mul", "Sub"};

struct RandomGraphSpec {
  int min_nodes = 4;
  int max_nodes = 30;
  double const_probability = 0.1;
  double control_probability = 0.05;
  double dynamic_probability = 0.3;  // `_force_unknown_shape`
  std::string engine = "host_cpu";   // `_engine_name` of compute nodes ("" leaves them unplaced)
};

// A random DAG of element-wise ops on f32[2,3] with 1-3 inputs; every sink
// (and a few other nodes) feeds the NetOutput.
inline std::unique_ptr<ir::Graph> RandomGraph(std::mt19937& rng, const RandomGraphSpec& spec = {}) {
  auto g = std::make_unique<ir::Graph>("main");
  const ir::ValueType t = ir::ValueType::Tensor(DataType::kFloat, Shape{2, 3});
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<ir::Node*> values;
  const int inputs = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < inputs; ++i) {
    ir::OpDesc d("x" + std::to_string(i), std::string(ir::kData));
    d.SetAttr(ir::kAttrIndex, static_cast<int64_t>(i));
    d.AddOutput({"", t});
    if (!spec.engine.empty()) d.SetAttr(ir::kAttrEngineName, std::string("ge_local"));
    values.push_back(*g->AddNode(std::move(d)));
  }
  const int n = spec.min_nodes + static_cast<int>(rng() % (spec.max_nodes - spec.min_nodes + 1));
  std::vector<ir::Node*> compute;
  for (int i = 0; i < n; ++i) {
    const std::string name = "n" + std::to_string(i);
    if (coin(rng) < spec.const_probability) {
      ir::OpDesc c(name, std::string(ir::kConst));
      std::vector<float> v(6);
      for (float& f : v) f = static_cast<float>(static_cast<int>(rng() % 7) - 3) * 0.5f;
      c.SetAttr(ir::kAttrValue, Tensor::FromVector<float>(v, Shape{2, 3}));
      c.AddOutput({"", t});
      if (!spec.engine.empty()) c.SetAttr(ir::kAttrEngineName, std::string("ge_local"));
      if (coin(rng) < spec.dynamic_probability) c.SetAttr(ir::kAttrForceUnknownShape, true);
      values.push_back(*g->AddNode(std::move(c)));
      compute.push_back(values.back());
      continue;
    }
    const bool binary = rng() % 2 == 0;
    ir::OpDesc op(name, binary ? kBinaryOps[rng() % 3] : kUnaryOps[rng() % 5]);
    const int arity = binary ? 2 : 1;
    for (int k = 0; k < arity; ++k) op.AddInput({"", t});
    op.AddOutput({"", t});
    if (!spec.engine.empty()) op.SetAttr(ir::kAttrEngineName, spec.engine);
    if (coin(rng) < spec.dynamic_probability) op.SetAttr(ir::kAttrForceUnknownShape, true);
    ir::Node* node = *g->AddNode(std::move(op));
    for (int k = 0; k < arity; ++k) {
      // Prefer recent values so that graphs have depth, sometimes reach far.
      const size_t span = std::min<size_t>(values.size(), coin(rng) < 0.7 ? 4 : values.size());
      ir::Node* src = values[values.size() - 1 - rng() % span];
      EXPECT_TRUE(g->AddEdge(src, 0, node, k).ok());
    }
    if (!compute.empty() && coin(rng) < spec.control_probability) {
      EXPECT_TRUE(g->AddControlEdge(compute[rng() % compute.size()], node).ok());
    }
    values.push_back(node);
    compute.push_back(node);
  }
  std::vector<ir::Node*> results;
  for (ir::Node* c : compute) {
    if (!c->HasConsumers() || coin(rng) < 0.1) results.push_back(c);
  }
  ir::OpDesc out("out", std::string(ir::kNetOutput));
  for (size_t i = 0; i < results.size(); ++i) out.AddInput({"y" + std::to_string(i), t});
  if (!spec.engine.empty()) out.SetAttr(ir::kAttrEngineName, std::string("ge_local"));
  ir::Node* net_output = *g->AddNode(std::move(out));
  for (size_t i = 0; i < results.size(); ++i) EXPECT_TRUE(g->AddEdge(results[i], 0, net_output, static_cast<int>(i)).ok());
  return g;
}

inline std::vector<Value> RandomInputs(const ir::Graph& g, std::mt19937& rng) {
  std::vector<Value> inputs;
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (const ir::Node* d : g.InputNodes()) {
    std::vector<float> v(6);
    for (float& f : v) f = dist(rng);
    (void)d;
    inputs.emplace_back(Tensor::FromVector<float>(v, Shape{2, 3}));
  }
  return inputs;
}

inline absl::StatusOr<std::vector<Value>> Execute(const ir::Graph& g, const engine::EngineRegistry& engines,
                                                  std::vector<Value> inputs) {
  auto exec = runtime::DynamicExecutor::Create(g, engines, {});
  if (!exec.ok()) return exec.status();
  return (*exec)->Run(std::move(inputs));
}

// Bitwise equality of tensor outputs.
inline bool SameOutputs(const std::vector<Value>& a, const std::vector<Value>& b, std::string* why) {
  if (a.size() != b.size()) {
    *why = "output count " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor& x = a[i].tensor();
    const Tensor& y = b[i].tensor();
    if (x.shape() != y.shape() || x.dtype() != y.dtype() ||
        std::memcmp(x.raw_data(), y.raw_data(), x.NumElements() * DataTypeSize(x.dtype())) != 0) {
      *why = "output " + std::to_string(i) + " differs";
      return false;
    }
  }
  return true;
}

}  // namespace ge::partition::testing

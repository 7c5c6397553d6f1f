// The engine interface (GE's DNNEngine + OpsKernelInfoStore + GraphOptimizer
// + OpsKernelBuilder, seeds/05).
//
// An engine is a plugin. The compiler asks it whether it supports a node
// (CheckSupported), lets it rewrite the subgraphs placed on it
// (GraphOptimizer), and the runtime asks it for kernels (KernelFactory).
// Adding an engine touches no compiler or runtime code. An engine's
// attributes are its json (`<engine>.json`, the one source: attributes.h);
// what engines share beyond this interface is the engine SDK
// (runtime/engines/sdk/, docs/design/engines.md).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "runtime/engines/api/kernel.h"
#include "runtime/engines/api/kernel_builder.h"

namespace ge::engine {

// Placement estimates (issue 20): one call of an op on an engine costs
// call_ns plus element_ns per element of its outputs, in nanoseconds.
struct OpCost {
  double call_ns = 0;
  double element_ns = 0;
  double Estimate(double elements) const { return call_ns + element_ns * elements; }
};

// An engine's cost table, from the "cost" object of its json attributes
// (docs/architecture.md, "Placement by estimated cost"): per op type, "*" for
// the types not listed, and the cost of a tensor crossing between this engine
// and another engine that has a table (layout conversion, a subgraph
// boundary). An engine without a table is placed by compute_cost only.
struct CostTable {
  std::map<std::string, OpCost, std::less<>> ops;
  OpCost boundary;
  bool empty() const { return ops.empty(); }
  // The entry of `op_type`, else of "*", else null.
  const OpCost* Find(std::string_view op_type) const {
    auto it = ops.find(op_type);
    if (it == ops.end()) it = ops.find("*");
    return it == ops.end() ? nullptr : &it->second;
  }
};

// Identity and scheduling configuration of an engine: the fields of its
// json (attributes.h parses it; docs/design/engines.md lists the keys).
struct EngineAttributes {
  std::string name;
  int compute_cost = 10;  // COST_0 (preferred) .. COST_10 (fallback)
  bool atomic = true;
  std::string composite_engine;  // the composite engine this atomic engine belongs to
  // Its nodes run on an executor stream of their own (json "independent"):
  // the dynamic executor launches them without waiting for their neighbours.
  bool independent_stream = false;
  // The reference engine: it has a kernel for every op of the op registry.
  // The compiler evaluates constant folding with it, moves nodes flagged for
  // host execution (ge.exec.host_exec_ops, `_host_exec`) to it, counts a
  // compute node placed on it as a fallback (ge.exec.disable_host_cpu_fallback)
  // and runs its nodes dynamically (the dynamic-shape partitioner's rule 5);
  // engines that cannot run some shapes fall back on its kernels. At most one
  // loaded engine is the reference (the registry refuses a second one).
  bool reference = false;
  std::string version;  // the engine's own version (kernels and parameter blobs)
  CostTable cost;       // placement estimates; empty: placed by compute_cost only
};

// Answers which nodes the engine can run.
class OpsKernelInfoStore {
 public:
  virtual ~OpsKernelInfoStore() = default;
  // OK when the engine can run `node` as typed and attributed; otherwise an
  // error whose message is the reason (shown in placement reports).
  virtual absl::Status CheckSupported(const ir::Node& node) const = 0;
  // Op types the engine has kernels for (some may still fail CheckSupported
  // for particular dtypes or attributes).
  virtual std::vector<std::string> SupportedOpTypes() const = 0;
};

// Rewrites graphs placed on the engine. Each method returns whether it
// changed the graph.
class GraphOptimizer {
 public:
  virtual ~GraphOptimizer() = default;
  virtual std::string_view name() const = 0;
  // On the whole graph before placement.
  virtual absl::StatusOr<bool> OptimizeOriginalGraph(ir::Graph& graph) {
    (void)graph;
    return false;
  }
  // On each subgraph the engine partitioner gave this engine.
  virtual absl::StatusOr<bool> OptimizeFusedGraph(ir::Graph& graph) {
    (void)graph;
    return false;
  }
  // On the whole graph once the engine partitions have merged, before the
  // partitioned form is kept and flattened (GE's OptimizeGraphBeforeBuild):
  // on the root and every subgraph, each node placed for good and a Const
  // its readers' unit reads directly again. An engine rewrites only nodes
  // placed on it and Consts that only such nodes read.
  virtual absl::StatusOr<bool> OptimizeGraphBeforeBuild(ir::Graph& graph) {
    (void)graph;
    return false;
  }
  // Whether OptimizeFusedGraph might change a subgraph holding `node` (a
  // node placed on this engine, or on one of its atomic engines for a
  // composite one). Answering false for every node of a graph promises
  // that OptimizeFusedGraph would leave all its subgraphs unchanged, and the
  // engine partitioner then skips splitting the graph for this engine (a
  // split and merge of a million nodes costs seconds). Keep it cheap: it is
  // asked about every node.
  virtual bool MayOptimizeFused(const ir::Node& node) const {
    (void)node;
    return true;
  }
};

// Options handed to an engine at initialization (GE option keys and values).
using EngineOptions = std::map<std::string, std::string, std::less<>>;

class Engine {
 public:
  virtual ~Engine() = default;
  virtual absl::Status Initialize(const EngineOptions& options) {
    (void)options;
    return absl::OkStatus();
  }
  virtual void Finalize() {}
  // The engine's attributes, from its json. A built-in engine's constructor
  // sets them from the json embedded at build time; the plugin loader sets a
  // plugin's from the json its entry embeds or ships beside it, before
  // Initialize. The registry, the compiler and the executors all read these.
  const EngineAttributes& attributes() const { return attributes_; }
  void set_attributes(EngineAttributes attributes) { attributes_ = std::move(attributes); }
  virtual const OpsKernelInfoStore& info_store() const = 0;
  virtual const KernelFactory& kernel_factory() const = 0;
  virtual std::vector<GraphOptimizer*> graph_optimizers() { return {}; }
  // Compile-time running parameters and tasks for known-shape nodes
  // (kernel_builder.h); engines without private parameters keep the default.
  virtual const KernelBuilder& kernel_builder() const { return KernelBuilder::Default(); }
  // The reference engine of the registry this engine is in
  // (EngineAttributes::reference), or null when none is loaded. The registry
  // calls it whenever its set of engines changes, before any kernel is
  // created; `reference` outlives every call into this engine. An engine
  // whose kernels cannot run some shapes (say, oneDNN has no implementation)
  // keeps it and creates the reference engine's kernel for those nodes: the
  // one way an engine uses another's kernels, without including its files.
  virtual void SetReferenceEngine(const Engine* reference) { (void)reference; }

 protected:
  EngineAttributes attributes_;
};

}  // namespace ge::engine

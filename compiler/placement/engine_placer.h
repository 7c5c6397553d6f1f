// EnginePlacer: chooses the engine of every node (seeds/05 §4.4.2, issue 20).
//
// A node whose `_ge_engine` attribute names an engine goes there (an error if
// that engine is excluded, absent, or rejects the node). Otherwise engines
// are walked by ascending compute cost, ties broken by name, skipping
// excluded and composite engines, and the first whose CheckSupported passes
// is the priority winner. When the winner declares a cost table
// (EngineAttributes::cost, from its json):
//   * ge.engineType names an engine (not `auto`): that engine wins wherever
//     it runs the node, as before cost tables existed;
//   * ge.engineType is `auto` (the default): every engine with a cost table
//     that runs the node competes, and the cheapest estimate wins
//     (cost_model.h: per-call overhead and per-element cost of the op on the
//     engine, plus the boundary cost of each data edge to a neighbour placed
//     on another engine with a table). The choice starts from each node's
//     own cheapest engine and is refined by two sweeps in graph order, each
//     node taking the cheapest engine given its neighbours' current engines.
//     Estimates are a function of the graph and the tables only: the same
//     for a host and build, never changed by measurement.
// Then the reassignment passes run in order (GE's EngineReAssignPass
// strategies), starting with HostcpuEngineUpdatePass. The choice is written
// to each node's `_engine_name` attribute. Support checks run on a thread
// pool; the result does not depend on scheduling. No engine is named here:
// host-execution requests and strict mode (ge.exec.disable_host_cpu_fallback)
// concern the reference engine, an engine attribute
// (EngineAttributes::reference; host_cpu's json says it is).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/graph.h"
#include "base/thread_pool.h"
#include "compiler/compile_options.h"
#include "runtime/engines/engine_registry.h"

namespace ge::compiler {

struct EngineRejection {
  std::string engine;
  std::string reason;
};

// An engine's estimated cost for a node (own cost plus boundaries), in ns.
struct EngineEstimate {
  std::string engine;
  double ns = 0;
};

// Why a node went where it did.
enum class PlacementReason : uint8_t {
  kPriority,    // the first engine by compute cost that runs it (no cost table involved)
  kForced,      // the node's `_ge_engine` attribute
  kEngineType,  // ge.engineType names the engine
  kCost,        // the cheapest estimate among the engines with cost tables
  kHostExec,    // moved to the reference engine by a host execution request
};
std::string_view PlacementReasonName(PlacementReason reason);

struct NodePlacement {
  ir::Node* node = nullptr;
  std::string engine;
  std::vector<EngineRejection> rejected;  // engines tried before the chosen one
  bool host_exec = false;                 // moved to the reference engine on request
  PlacementReason reason = PlacementReason::kPriority;
  std::vector<EngineEstimate> estimates;  // kCost: every competing engine, cheapest first
};

struct PlacementReport {
  std::vector<NodePlacement> nodes;  // root graph first, then subgraphs, each in order
  std::vector<std::string> warnings;
  const NodePlacement* Find(std::string_view node_name) const;
};

// One reassignment strategy, run after the cost-based choice.
class EngineReassignPass {
 public:
  virtual ~EngineReassignPass() = default;
  virtual std::string_view name() const = 0;
  virtual absl::Status Run(PlacementReport& report) = 0;
};

// Moves nodes flagged for host execution (ge.exec.host_exec_ops, or the
// `_host_exec` attribute) to the reference engine (the registry's
// Reference(); GE's host CPU engine).
class HostcpuEngineUpdatePass final : public EngineReassignPass {
 public:
  HostcpuEngineUpdatePass(const engine::EngineRegistry& engines, const CompileOptions& options)
      : engines_(engines), options_(options) {}
  std::string_view name() const override { return "HostcpuEngineUpdatePass"; }
  absl::Status Run(PlacementReport& report) override;

 private:
  const engine::EngineRegistry& engines_;
  const CompileOptions& options_;
};

class EnginePlacer {
 public:
  // `pool` may be null (checks run on the caller).
  EnginePlacer(const engine::EngineRegistry& engines, const CompileOptions& options, ThreadPool* pool);

  // Places every node of `root` and its subgraphs.
  absl::StatusOr<PlacementReport> Run(ir::Graph& root);

 private:
  // The priority choice of `node`; `costed` receives, in priority order, the
  // engines with cost tables that run it when the choice is left to cost.
  NodePlacement Select(ir::Node& node, const std::vector<engine::Engine*>& candidates,
                       std::vector<const engine::Engine*>& costed) const;
  absl::Status CheckStrictMode(const PlacementReport& report) const;

  const engine::EngineRegistry& engines_;
  const CompileOptions& options_;
  ThreadPool* pool_;
};

}  // namespace ge::compiler

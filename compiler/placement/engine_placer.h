// EnginePlacer: chooses the engine of every node (seeds/05 §4.4.2).
//
// A node whose `_ge_engine` attribute names an engine goes there (an error if
// that engine is excluded, absent, or rejects the node). Otherwise engines
// are walked by ascending compute cost, ties broken by name, skipping
// excluded and composite engines, and the first whose CheckSupported passes
// wins; when both cpu_dense and cpu_vector support a node, ge.engineType
// decides. Then the reassignment passes run in order (GE's
// EngineReAssignPass strategies), starting with HostcpuEngineUpdatePass.
// The choice is written to each node's `_engine_name` attribute. Support
// checks run on a thread pool; the result does not depend on scheduling.
#pragma once

#include <memory>
#include <string>
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

struct NodePlacement {
  ir::Node* node = nullptr;
  std::string engine;
  std::vector<EngineRejection> rejected;  // engines tried before the chosen one
  bool host_exec = false;                 // moved to host_cpu on request
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
// `_host_exec` attribute) to host_cpu.
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
  NodePlacement Select(ir::Node& node, const std::vector<engine::Engine*>& candidates) const;
  absl::Status CheckStrictMode(const PlacementReport& report) const;

  const engine::EngineRegistry& engines_;
  const CompileOptions& options_;
  ThreadPool* pool_;
};

}  // namespace ge::compiler

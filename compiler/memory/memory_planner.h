// MemoryPlanner: offsets of every intermediate value of a static subgraph in
// one arena (seeds/04 §5.6).
//
// Input: a graph whose value shapes are fully known, and its execution order.
// Values produced by Data, Const, FileConstant and Variable nodes live
// outside the arena (inputs, weights, variables). Every other value gets a
// buffer; a view op's output (OpSchema::views) shares its input's buffer,
// and an op's output may take over an input's buffer in place
// (OpSchema::inplace) when that input's buffer dies at the op (no value in
// it, the input nor any view of it, is read later or is a graph output), has
// the same byte size, and is not a graph input or a weight. A node's
// `_inplace_inputs` attribute (base/ir/inplace_attr.h) adds such offers for
// that node alone. A buffer lives from its first producer to its last
// consumer, and to the end for graph outputs, so nothing outliving a graph
// output shares its memory. Offsets are chosen greedily, largest buffer
// first, at the lowest offset that does not overlap any buffer whose
// lifetime intersects.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "base/ir/graph.h"

namespace ge::compiler {

inline constexpr int64_t kArenaAlignment = 64;

struct BufferPlan {
  int64_t offset = 0;
  int64_t size = 0;  // aligned
  int first_step = 0;
  int last_step = 0;
};

struct ValuePlacement {
  enum class Kind : uint8_t { kArena, kExternal };
  Kind kind = Kind::kArena;
  int buffer = -1;  // index into MemoryPlan::buffers for kArena
};

struct MemoryPlan {
  std::vector<BufferPlan> buffers;
  // Every output of every node in the order: (node, port) -> placement.
  absl::flat_hash_map<const ir::Node*, std::vector<ValuePlacement>> values;
  int64_t arena_bytes = 0;     // the planned arena
  int64_t no_reuse_bytes = 0;  // every buffer at its own offset
  int64_t lower_bound = 0;     // the most bytes live at any step
  int inplace_reuses = 0;
  int views = 0;

  // "arena 1.2 MiB (lower bound 1.1 MiB, 1.09x; no reuse 4.0 MiB), 12 buffers, 3 in place, 5 views"
  std::string Summary() const;
};

// The order a static graph runs in: topological, by node id (the order the
// model listed its nodes), except that a node created after one of its
// consumers (a pass appended it: a TransData, a fused node) waits until a
// consumer has everything else it needs, then runs at that consumer's
// position. Graph::TopologicalOrder breaks ties by id alone, so an appended
// node ran after everything else that was ready: a layout conversion of one
// operand shared by 81 Slice -> Mul -> ReduceMean chains (a correlation
// volume) ran after all 81 Slices, whose outputs were then all live at once
// (PWC-Net-like at batch 8: 238 MB at the peak step, 25 MB in the model's
// order). FailedPrecondition on a cycle, as TopologicalOrder.
absl::StatusOr<std::vector<ir::Node*>> EarliestUseOrder(const ir::Graph& graph);

// Plans `graph` executed in `order` (a topological order of its nodes).
// InvalidArgument naming the node when a value's shape is not fully known.
absl::StatusOr<MemoryPlan> PlanMemory(const ir::Graph& graph, const std::vector<ir::Node*>& order);

}  // namespace ge::compiler

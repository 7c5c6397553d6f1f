// Lifetime analysis, in-place and view merging, and greedy offset assignment.
#include "compiler/memory/memory_planner.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_format.h"
#include "base/ir/inplace_attr.h"
#include "base/ir/op_types.h"
#include "base/ops/op_registry.h"
#include "base/status.h"

namespace ge::compiler {
namespace {

bool IsExternalProducer(const ir::Node& node) {
  const std::string& t = node.type();
  return t == ir::kData || t == ir::kConst || t == ir::kFileConstant || t == ir::kVariable ||
         t == ir::kInnerData;
}

// NetOutput, or InnerNetOutput in a partitioned subgraph.
bool IsOutputNode(const ir::Node& node) { return node.type() == ir::kNetOutput || node.type() == ir::kInnerNetOutput; }

int64_t Align(int64_t bytes) { return (std::max<int64_t>(bytes, 1) + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

// The bytes of (node, port)'s elements, before alignment.
absl::StatusOr<int64_t> ExactBytes(const ir::Node& node, int port) {
  const ir::ValueType& type = node.op_desc().output(port).type;
  if (!type.is_tensor() || !type.shape().IsFullyKnown() || type.dtype() == DataType::kUndefined) {
    return InvalidArgument("node '", node.name(), "' output ", port, " has type ", type.ToString(),
                           ": static memory planning needs a fully known tensor shape");
  }
  GE_ASSIGN_OR_RETURN(int64_t count, type.shape().NumElements());
  GE_ASSIGN_OR_RETURN(size_t bytes, ByteSizeOf(type.dtype(), count));
  return static_cast<int64_t>(bytes);
}

absl::StatusOr<int64_t> ValueBytes(const ir::Node& node, int port) {
  GE_ASSIGN_OR_RETURN(int64_t bytes, ExactBytes(node, port));
  return Align(bytes);
}

class Planner {
 public:
  explicit Planner(const std::vector<ir::Node*>& order) : order_(order) {}

  absl::StatusOr<MemoryPlan> Run() {
    for (size_t s = 0; s < order_.size(); ++s) step_of_[order_[s]] = static_cast<int>(s);
    for (size_t s = 0; s < order_.size(); ++s) GE_RETURN_IF_ERROR(PlaceOutputs(*order_[s], static_cast<int>(s)));
    ExtendForUses();
    AssignOffsets();
    ComputeBounds();
    return std::move(plan_);
  }

 private:
  // The arena buffer of (node, port), or -1 when external.
  int BufferOf(ir::OutPort p) const {
    auto it = plan_.values.find(p.node);
    if (it == plan_.values.end()) return -1;
    const ValuePlacement& v = it->second[p.index];
    return v.kind == ValuePlacement::Kind::kArena ? v.buffer : -1;
  }

  // Whether the contents of `buffer` die at `node`'s step: no value living
  // in it (the producer's and every view of it, such as an Unsqueeze of the
  // value) is read by a later node or is a graph output. Checking only the
  // value `node` reads would let it overwrite a view a later node still reads.
  bool DiesAt(int buffer, const ir::Node& node) const {
    const BufferReads& reads = buffer_reads_[buffer];
    return !reads.graph_output && reads.last_step <= step_of_.at(&node);
  }

  // Records that (node, port) lives in `buffer`.
  void AddValue(int buffer, const ir::Node& node, int port) {
    BufferReads& reads = buffer_reads_[buffer];
    for (const ir::InPort& c : node.consumers(port)) {
      reads.last_step = std::max(reads.last_step, step_of_.at(c.node));
      reads.graph_output = reads.graph_output || IsOutputNode(*c.node);
    }
  }

  int NewBuffer(int64_t size, int step) {
    plan_.buffers.push_back({0, size, step, step});
    buffer_reads_.emplace_back();
    return static_cast<int>(plan_.buffers.size()) - 1;
  }

  absl::Status PlaceOutputs(const ir::Node& node, int step) {
    std::vector<ValuePlacement>& out = plan_.values[&node];
    out.resize(node.num_outputs());
    if (IsExternalProducer(node)) {
      for (auto& v : out) v.kind = ValuePlacement::Kind::kExternal;
      return absl::OkStatus();
    }
    const ops::OpSchema* schema = ops::OpRegistry::Global().Find(node.type());
    claimed_.clear();  // one input buffer serves at most one output of the node
    for (int o = 0; o < node.num_outputs(); ++o) {
      GE_ASSIGN_OR_RETURN(int64_t bytes, ValueBytes(node, o));
      int buffer = schema ? Reuse(node, *schema, o, bytes) : -1;
      if (buffer < 0) buffer = NewBuffer(bytes, step);
      out[o] = {ValuePlacement::Kind::kArena, buffer};
      AddValue(buffer, node, o);
    }
    return absl::OkStatus();
  }

  // A buffer output `o` can share with an input, per the schema's rules.
  int Reuse(const ir::Node& node, const ops::OpSchema& schema, int o, int64_t bytes) {
    for (const auto& [out, in] : schema.views) {
      if (out != o || in >= node.num_inputs() || !node.input(in)) continue;
      int buffer = BufferOf(node.input(in));
      if (buffer >= 0 && plan_.buffers[buffer].size >= bytes) {
        ++plan_.views;
        return buffer;
      }
    }
    std::vector<std::pair<int, int>> inplace = schema.inplace;
    for (int64_t in : node.op_desc().GetAttrOr<std::vector<int64_t>>(ir::kAttrInplaceInputs, {})) {
      inplace.emplace_back(0, static_cast<int>(in));
    }
    for (const auto& [out, in] : inplace) {
      if (out != o || in < 0 || in >= node.num_inputs() || !node.input(in)) continue;
      ir::OutPort src = node.input(in);
      int buffer = BufferOf(src);
      if (buffer < 0 || plan_.buffers[buffer].size != bytes || !DiesAt(buffer, node) || claimed_[buffer]) continue;
      // The input must hold exactly as many bytes as the output, not merely
      // fill the same aligned buffer: a broadcast operand ([1, 4] into
      // [3, 4]) is read again after the first row of the output is written.
      absl::StatusOr<int64_t> in_bytes = ExactBytes(*src.node, src.index);
      absl::StatusOr<int64_t> out_bytes = ExactBytes(node, o);
      if (!in_bytes.ok() || !out_bytes.ok() || *in_bytes != *out_bytes) continue;
      // Another input reading the same buffer would be overwritten too.
      bool shared = false;
      for (int i = 0; i < node.num_inputs(); ++i) {
        if (i != in && node.input(i) && BufferOf(node.input(i)) == buffer) shared = true;
      }
      if (shared) continue;
      claimed_[buffer] = true;
      ++plan_.inplace_reuses;
      return buffer;
    }
    return -1;
  }

  void ExtendForUses() {
    const int end = static_cast<int>(order_.size());
    for (const ir::Node* node : order_) {
      const int step = step_of_.at(node);
      for (int i = 0; i < node->num_inputs(); ++i) {
        int buffer = node->input(i) ? BufferOf(node->input(i)) : -1;
        if (buffer < 0) continue;
        BufferPlan& b = plan_.buffers[buffer];
        b.last_step = std::max(b.last_step, IsOutputNode(*node) ? end : step);
      }
    }
  }

  void AssignOffsets() {
    std::vector<int> by_size(plan_.buffers.size());
    std::iota(by_size.begin(), by_size.end(), 0);
    std::stable_sort(by_size.begin(), by_size.end(), [&](int a, int b) {
      return plan_.buffers[a].size > plan_.buffers[b].size;
    });
    std::vector<int> placed;
    for (int id : by_size) {
      BufferPlan& b = plan_.buffers[id];
      // Intervals of placed buffers alive at the same time, by offset.
      std::vector<std::pair<int64_t, int64_t>> busy;
      for (int other : placed) {
        const BufferPlan& o = plan_.buffers[other];
        if (o.first_step <= b.last_step && b.first_step <= o.last_step) busy.emplace_back(o.offset, o.offset + o.size);
      }
      std::sort(busy.begin(), busy.end());
      int64_t offset = 0;
      for (const auto& [lo, hi] : busy) {
        if (offset + b.size <= lo) break;
        offset = std::max(offset, hi);
      }
      b.offset = offset;
      plan_.arena_bytes = std::max(plan_.arena_bytes, offset + b.size);
      placed.push_back(id);
    }
  }

  void ComputeBounds() {
    std::vector<int64_t> live(order_.size() + 2, 0);
    for (const BufferPlan& b : plan_.buffers) {
      plan_.no_reuse_bytes += b.size;
      live[b.first_step] += b.size;
      live[b.last_step + 1] -= b.size;
    }
    int64_t running = 0;
    for (int64_t delta : live) {
      running += delta;
      plan_.lower_bound = std::max(plan_.lower_bound, running);
    }
  }

  const std::vector<ir::Node*>& order_;
  absl::flat_hash_map<const ir::Node*, int> step_of_;
  absl::flat_hash_map<int, bool> claimed_;  // buffers the current node's outputs took over
  struct BufferReads {
    int last_step = -1;         // the last step reading any value in the buffer
    bool graph_output = false;  // whether any of them is a graph output
  };
  std::vector<BufferReads> buffer_reads_;  // by buffer
  MemoryPlan plan_;
};

std::string Mib(int64_t bytes) { return absl::StrFormat("%.2f MiB", static_cast<double>(bytes) / (1 << 20)); }

}  // namespace

std::string MemoryPlan::Summary() const {
  const double ratio = lower_bound > 0 ? static_cast<double>(arena_bytes) / static_cast<double>(lower_bound) : 1.0;
  return absl::StrFormat("arena %s (lower bound %s, %.3fx; no reuse %s), %d buffers, %d in place, %d views",
                         Mib(arena_bytes), Mib(lower_bound), ratio, Mib(no_reuse_bytes),
                         static_cast<int>(buffers.size()), inplace_reuses, views);
}

absl::StatusOr<MemoryPlan> PlanMemory(const ir::Graph& graph, const std::vector<ir::Node*>& order) {
  if (order.size() != graph.num_nodes()) {
    return InvalidArgument("graph '", graph.name(), "': the order has ", order.size(), " nodes, the graph ",
                           graph.num_nodes());
  }
  return Planner(order).Run();
}

}  // namespace ge::compiler

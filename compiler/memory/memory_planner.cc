// Lifetime analysis, in-place and view merging, and greedy offset assignment.
#include "compiler/memory/memory_planner.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
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

absl::StatusOr<std::vector<ir::Node*>> EarliestUseOrder(const ir::Graph& graph) {
  GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> topological, graph.TopologicalOrder());
  struct State {
    std::vector<ir::Node*> producers, consumers;  // in this graph
    int pending = 0;                              // producers not run yet
    int pending_own = 0;                          // of them, not appended
    bool appended = false;                        // created after one of its consumers
    bool ready = false, done = false;
    int64_t wanted = std::numeric_limits<int64_t>::max();  // the earliest consumer asking for it
  };
  absl::flat_hash_map<const ir::Node*, State> state;
  state.reserve(topological.size());
  for (ir::Node* n : topological) state[n];
  for (ir::Node* n : topological) {
    State& s = state[n];
    for (ir::Node* p : n->InNodes()) {
      if (state.contains(p)) s.producers.push_back(p);
    }
    for (ir::Node* c : n->OutNodes()) {
      if (!state.contains(c)) continue;
      s.consumers.push_back(c);
      s.appended = s.appended || (c->id() < n->id() && n->type() == ir::kTransData);
    }
  }
  for (ir::Node* n : topological) {
    State& s = state[n];
    s.pending = static_cast<int>(s.producers.size());
    for (const ir::Node* p : s.producers) s.pending_own += !state[p].appended;
  }
  using Entry = std::pair<int64_t, int64_t>;  // (position, id)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  std::set<int64_t> idle;  // ready appended nodes nobody asked for yet, by id
  absl::flat_hash_map<int64_t, ir::Node*> by_id;
  by_id.reserve(topological.size());
  for (ir::Node* n : topological) by_id[n->id()] = n;
  auto make_ready = [&](ir::Node* n) {
    State& s = state[n];
    s.ready = true;
    if (!s.appended) {
      heap.emplace(n->id(), n->id());
    } else if (s.wanted != std::numeric_limits<int64_t>::max()) {
      heap.emplace(s.wanted, n->id());
    } else {
      idle.insert(n->id());
    }
  };
  // A consumer at `position` waits only for appended producers: they (and
  // the appended nodes they wait for) run as soon as they can, at its position.
  std::function<void(ir::Node*, int64_t)> want = [&](ir::Node* c, int64_t position) {
    for (ir::Node* p : state[c].producers) {
      State& ps = state[p];
      if (!ps.appended || ps.done || ps.wanted <= position) continue;
      ps.wanted = position;
      if (ps.ready) {
        idle.erase(p->id());
        heap.emplace(position, p->id());
      }
      want(p, position);
    }
  };
  for (ir::Node* n : topological) {
    const State& s = state[n];
    if (s.pending == 0) make_ready(n);
  }
  for (ir::Node* n : topological) {
    const State& s = state[n];
    if (!s.appended && s.pending > 0 && s.pending_own == 0) want(n, n->id());
  }
  std::vector<ir::Node*> order;
  order.reserve(topological.size());
  while (!heap.empty() || !idle.empty()) {
    if (heap.empty()) {  // nothing else can run: the first idle one
      heap.emplace(*idle.begin(), *idle.begin());
      idle.erase(idle.begin());
    }
    ir::Node* n = by_id.at(heap.top().second);
    heap.pop();
    State& s = state[n];
    if (s.done) continue;  // pushed again when asked for earlier
    s.done = true;
    idle.erase(n->id());
    order.push_back(n);
    for (ir::Node* c : s.consumers) {
      State& cs = state[c];
      --cs.pending;
      if (!s.appended) --cs.pending_own;
      if (cs.pending == 0) {
        make_ready(c);
      } else if (!s.appended && cs.pending_own == 0 && !cs.appended) {
        want(c, c->id());
      }
    }
  }
  if (order.size() != topological.size()) {
    return Internal("earliest-use order lost ", topological.size() - order.size(), " node(s)");
  }
  return order;
}

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

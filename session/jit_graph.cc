// JitGraph: stages, guards, planning a slice, and runs.
#include "session/jit_graph.h"

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "base/ir/op_types.h"
#include "base/logging.h"
#include "base/ops/op_registry.h"
#include "base/status.h"
#include "base/options.h"
#include "compiler/passes/constant_folding_pass.h"
#include "compiler/passes/qdq_fusion_pass.h"
#include "session/session.h"

namespace ge::session {
namespace {

using partition::ValueSource;

// Integer inputs up to this many elements that a node reads as a value
// are made constants while planning (and guarded by their values).
constexpr int64_t kMaxValueElements = 64;
// A stage halves its plans' and candidates' counts every this many times
// ge.jitMaxPlans lookups.
constexpr int64_t kAgeingLookups = 16;
// At the bound a shape replaces a plan once seen this many times more often
// than the plan ran.
constexpr int64_t kAdmissionMargin = 2;

bool IsData(const ir::Node& n) { return n.type() == ir::kData; }
bool IsBoundary(const ir::Node& n) { return IsData(n) || n.type() == ir::kNetOutput; }

bool ReadsAsValue(const ir::InPort& use) {
  const ops::OpSchema* schema = ops::OpRegistry::Global().Find(use.node->type());
  if (schema == nullptr) return false;
  return std::find(schema->value_inputs.begin(), schema->value_inputs.end(), use.index) != schema->value_inputs.end();
}

bool AllOutputsKnown(const ir::Node& n) {
  for (const ir::IoDesc& out : n.op_desc().outputs()) {
    if (!out.type.is_tensor() || !out.type.shape().IsFullyKnown()) return false;
  }
  return true;
}

std::string ValueText(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.NumElements(); ++i) v.push_back(t.GetAsInt64(i));
  return StrCat("[", absl::StrJoin(v, ","), "]");
}

}  // namespace

struct JitGraph::GuardEntry {
  DataType dtype = DataType::kUndefined;
  Shape shape;
  std::optional<Tensor> value;  // for inputs made constants

  bool operator==(const GuardEntry& o) const {
    if (dtype != o.dtype || shape != o.shape || value.has_value() != o.value.has_value()) return false;
    if (!value) return true;
    for (int64_t i = 0; i < value->NumElements(); ++i) {
      if (value->GetAsInt64(i) != o.value->GetAsInt64(i)) return false;
    }
    return true;
  }
  std::string ToString() const {
    std::string s = StrCat(DataTypeName(dtype), shape.ToString());
    if (value) s += StrCat(" = ", ValueText(*value));
    return s;
  }
};

struct JitGraph::Stage {
  int depth = 0;
  std::unique_ptr<ir::Graph> graph;
  std::vector<std::string> input_names;  // by Data index
  std::vector<bool> value_input;         // by Data index: a node reads it as a value
  std::vector<std::shared_ptr<Step>> steps;
  // At the bound: shapes without a plan and how often they were seen
  // (halved with the plans' counts every kAgeingLookups x max_plans lookups).
  std::vector<std::pair<std::vector<GuardEntry>, int64_t>> candidates;
  int64_t lookups = 0;

  Stage(int d, std::unique_ptr<ir::Graph> g) : depth(d), graph(std::move(g)) {
    const std::vector<ir::Node*> data = graph->InputNodes();
    input_names.resize(data.size());
    value_input.assign(data.size(), false);
    for (const ir::Node* n : data) {
      const size_t index = static_cast<size_t>(n->op_desc().GetAttrOr<int64_t>(ir::kAttrIndex, 0));
      if (index >= data.size()) continue;
      const std::string& framework = n->op_desc().output(0).name;
      input_names[index] = framework.empty() ? n->name() : framework;
      for (const ir::InPort& use : n->consumers(0)) value_input[index] = value_input[index] || ReadsAsValue(use);
    }
  }
};

struct JitGraph::Step {
  Step(const Step&) = delete;
  Step& operator=(const Step&) = delete;
  explicit Step(Session* owner) : slices(owner) {}
  // The last holder (the stage, or a run still using a replaced plan)
  // removes the compiled slice.
  ~Step() {
    if (slice_id != 0) (void)slices->RemoveGraph(slice_id);
  }

  Session* const slices;
  std::vector<GuardEntry> guard;
  uint32_t slice_id = 0;
  int64_t arena_bytes = 0;  // its values' bytes (an upper bound of the slice's arena)
  uint64_t last_use = 0;    // JitGraph::tick_ of its last lookup
  int64_t uses = 0;         // lookups that found it (aged)
  size_t slice_nodes = 0;
  std::vector<int> slice_inputs;          // stage input per slice input
  std::vector<ValueSource> next_inputs;   // per input of the next stage (or of the final mapping)
  std::vector<ValueSource> outputs;       // final step: the graph's outputs
  std::unique_ptr<Stage> next;            // null for the final step
};

JitGraph::JitGraph(uint32_t graph_id, std::unique_ptr<ir::Graph> graph, OptionMap options, JitLimits limits,
                   const engine::EngineRegistry& engines, ThreadPool* pool, device::Device* device)
    : graph_id_(graph_id),
      options_(std::move(options)),
      limits_(limits),
      engines_(engines),
      fold_constants_(OptionOrDefault(options_, "ge.oo.constantFolding") != "0"),
      fuse_qdq_(
          !absl::c_linear_search(ParseListOption(OptionOrDefault(options_, "ge.disable_passes")), "QdqFusionPass")),
      slices_(std::make_unique<Session>(engines, OptionMap(), pool, device)),
      root_(std::make_unique<Stage>(0, std::move(graph))) {}

JitGraph::~JitGraph() = default;

void JitGraph::set_compute_budget(ComputeBudget* budget) { slices_->set_compute_budget(budget); }

void JitGraph::set_compile_timeout(double seconds, std::string setting) {
  slices_->set_compile_timeout(seconds, std::move(setting));
}

void JitGraph::set_memory_quota(std::shared_ptr<device::MemoryQuota> quota, int64_t max_tensor_bytes) {
  slices_->set_memory_quota(std::move(quota), max_tensor_bytes);
}

bool JitGraph::CanSlice(const ir::Graph& graph) {
  for (const ir::Node* n : graph.nodes()) {
    if (!n->op_desc().subgraph_names().empty()) return false;
  }
  return graph.subgraphs().empty();
}

std::unique_ptr<ir::Graph> JitGraph::CloneGraph() const { return root_->graph->Clone(); }

size_t JitGraph::TrimIdleCaches() { return slices_->TrimIdleCaches(); }

JitStats JitGraph::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

std::vector<JitGraph::GuardEntry> JitGraph::MakeGuard(const Stage& stage, const std::vector<Value>& inputs) const {
  std::vector<GuardEntry> guard(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i].tensor();
    guard[i].dtype = t.dtype();
    guard[i].shape = t.shape();
    const bool integer = t.dtype() == DataType::kInt64 || t.dtype() == DataType::kInt32;
    if (i < stage.value_input.size() && stage.value_input[i] && integer && t.NumElements() <= kMaxValueElements) {
      guard[i].value = t;
    }
  }
  return guard;
}

std::string JitGraph::DescribeFailure(const Stage& stage, const std::vector<GuardEntry>& guard) const {
  const std::vector<GuardEntry>& last = stage.steps.back()->guard;
  std::vector<std::string> parts;
  for (size_t i = 0; i < guard.size() && i < last.size(); ++i) {
    if (guard[i] == last[i]) continue;
    std::vector<std::string> compiled;
    for (const auto& step : stage.steps) compiled.push_back(step->guard[i].ToString());
    parts.push_back(StrCat("input ", i, " '", i < stage.input_names.size() ? stage.input_names[i] : "", "' is ",
                           guard[i].ToString(), ", compiled for ", absl::StrJoin(compiled, " | ")));
  }
  return StrCat("stage ", stage.depth, ": ", absl::StrJoin(parts, "; "));
}

absl::StatusOr<std::shared_ptr<JitGraph::Step>> JitGraph::Plan(Stage& stage, std::vector<GuardEntry> guard) {
  std::unique_ptr<ir::Graph> plan = stage.graph->Clone();
  // Inputs take the guard's types; value inputs become constants.
  for (ir::Node* d : plan->InputNodes()) {
    const size_t index = static_cast<size_t>(d->op_desc().GetAttrOr<int64_t>(ir::kAttrIndex, 0));
    if (index >= guard.size()) return Internal("stage ", stage.depth, ": Data '", d->name(), "' has index ", index);
    const GuardEntry& g = guard[index];
    ir::OpDesc& op = d->mutable_op_desc();
    op.mutable_output(0).type = ir::ValueType::Tensor(g.dtype, g.shape);
    if (!g.value) continue;
    op.set_type(std::string(ir::kConst));
    for (std::string_view attr : {ir::kAttrIndex, std::string_view("shape"), std::string_view("dtype"),
                                  std::string_view("_default_value"), ir::kAttrUserShape}) {
      op.mutable_attrs().erase(std::string(attr));
    }
    op.SetAttr(ir::kAttrValue, *g.value);
  }
  std::vector<int> plan_inputs;  // stage input index per Data node left, in order
  for (const ir::Node* d : plan->InputNodes()) {
    plan_inputs.push_back(static_cast<int>(d->op_desc().GetAttrOr<int64_t>(ir::kAttrIndex, 0)));
  }
  GE_RETURN_IF_ERROR(Annotate(ops::InferShapes(*plan), StrCat("JIT stage ", stage.depth)));
  // QDQ chains into int8 nodes before folding, as the compile pipeline
  // orders them: folding turns DQ(constant weights) into float weights, and
  // the slice would then run the chain in float (a QDQ model at float speed).
  if (fuse_qdq_) {
    compiler::QdqFusionPass fuse;
    GE_RETURN_IF_ERROR(Annotate(fuse.Run(*plan).status(), StrCat("JIT stage ", stage.depth)));
  }
  // Shapes are known now: Shape of a known tensor, and what is computed
  // from it (Gather, Concat, ...), fold, so a Reshape fed that way is known
  // in this stage instead of ending it.
  if (fold_constants_) {
    compiler::ConstantFoldingPass fold(engines_);
    GE_RETURN_IF_ERROR(Annotate(fold.Run(*plan).status(), StrCat("JIT stage ", stage.depth)));
  }

  // The slice: nodes whose types are known and whose producers are; else
  // the frontier, run to learn what they produce.
  GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, plan->TopologicalOrder());
  absl::flat_hash_set<const ir::Node*> known;
  auto producers_in = [&](const ir::Node& n, const auto& accept) {
    for (const ir::OutPort& p : n.inputs()) {
      if (p.node != nullptr && !IsData(*p.node) && !accept(*p.node)) return false;
    }
    for (const ir::Node* c : n.control_inputs()) {
      if (!IsData(*c) && !accept(*c)) return false;
    }
    return true;
  };
  bool progress = false;
  for (const ir::Node* n : order) {
    if (IsBoundary(*n) || !AllOutputsKnown(*n)) continue;
    if (!producers_in(*n, [&](const ir::Node& p) { return known.contains(&p); })) continue;
    known.insert(n);
    progress = progress || n->type() != ir::kConst;
  }
  if (!progress) {
    for (const ir::Node* n : order) {
      if (IsBoundary(*n) || known.contains(n)) continue;
      if (producers_in(*n, [&](const ir::Node& p) { return known.contains(&p) && p.type() == ir::kConst; })) {
        known.insert(n);
        progress = true;
      }
    }
  }
  if (!progress) return Internal("JIT stage ", stage.depth, " of graph ", graph_id_, " found nothing to run");
  GE_ASSIGN_OR_RETURN(partition::BinaryPartition split,
                      partition::BinaryPartitioner::Partition(*plan, {known.begin(), known.end()}));

  auto step = std::make_shared<Step>(slices_.get());
  step->guard = std::move(guard);
  step->slice_nodes = split.sliced->num_nodes();
  for (int i : split.linkage.sliced_inputs) step->slice_inputs.push_back(plan_inputs[i]);
  for (ValueSource s : split.linkage.remaining_inputs) {
    if (s.kind == ValueSource::Kind::kGraphInput) s.index = plan_inputs[s.index];
    step->next_inputs.push_back(s);
  }
  bool final = true;
  split.remaining->ForEachNode([&](const ir::Node* n) { final = final && IsBoundary(*n); });
  if (final) {
    if (const ir::Node* out = split.remaining->OutputNode()) {
      for (const ir::OutPort& p : out->inputs()) {
        const int64_t j = p.node ? p.node->op_desc().GetAttrOr<int64_t>(ir::kAttrIndex, -1) : -1;
        step->outputs.push_back(j >= 0 && j < static_cast<int64_t>(step->next_inputs.size())
                                    ? step->next_inputs[j]
                                    : ValueSource{ValueSource::Kind::kGraphInput, -1, -1});
      }
    }
  } else {
    step->next = std::make_unique<Stage>(stage.depth + 1, std::move(split.remaining));
  }
  const uint32_t slice_id = next_slice_id_++;
  GE_RETURN_IF_ERROR(slices_->AddGraph(slice_id, std::move(split.sliced), options_));
  step->slice_id = slice_id;  // from here the step removes it
  GE_RETURN_IF_ERROR(Annotate(slices_->CompileGraph(step->slice_id), StrCat("JIT stage ", stage.depth)));
  // The plan's memory that grows with the shape: the bytes of its values
  // (Const weights aside, shared by every plan), an upper bound of its
  // static arena (the executor owns the program).
  if (absl::StatusOr<const compiler::CompiledGraph*> compiled = slices_->GetCompiledGraph(step->slice_id);
      compiled.ok()) {
    (*compiled)->graph->ForEachNode([&](const ir::Node* n) {
      if (n->type() == ir::kConst || IsBoundary(*n)) return;
      for (const ir::IoDesc& out : n->op_desc().outputs()) {
        if (!out.type.is_tensor() || !out.type.shape().IsFullyKnown()) continue;
        step->arena_bytes +=
            out.type.shape().NumElementsUnchecked() * static_cast<int64_t>(DataTypeSize(out.type.dtype()));
      }
    });
  }
  std::vector<std::string> types;
  for (const GuardEntry& g : step->guard) types.push_back(g.ToString());
  GE_LOG_INFO("session", "graph {}: JIT stage {} compiled a slice of {} nodes{} for inputs ({})", graph_id_,
              stage.depth, step->slice_nodes, final ? " (the last)" : "", absl::StrJoin(types, ", "));
  stage.steps.push_back(step);
  ++stats_.live_plans;
  stats_.plan_bytes += step->arena_bytes;
  return step;
}

bool JitGraph::AtBound() const {
  return stats_.live_plans >= limits_.max_plans ||
         (limits_.max_plan_bytes > 0 && stats_.plan_bytes >= limits_.max_plan_bytes);
}

void JitGraph::Forget(const Step& step) {
  --stats_.live_plans;
  stats_.plan_bytes -= step.arena_bytes;
  if (step.next) {
    for (const auto& s : step.next->steps) Forget(*s);
  }
}

bool JitGraph::MakeRoom(Stage& stage, const std::vector<GuardEntry>& guard, std::string* reason) {
  auto it = absl::c_find_if(stage.candidates, [&](const auto& c) { return c.first == guard; });
  if (it == stage.candidates.end()) {
    if (static_cast<int64_t>(stage.candidates.size()) >= 4 * limits_.max_plans) {
      stage.candidates.erase(
          absl::c_min_element(stage.candidates, [](const auto& a, const auto& b) { return a.second < b.second; }));
    }
    stage.candidates.emplace_back(guard, 0);
    it = stage.candidates.end() - 1;
  }
  const int64_t seen = ++it->second;
  // The victims, least recently used first, while the bound holds: the
  // new shape must have been seen at least 2 more times than each ran
  // (a margin: shapes of a shuffled cycle wider than the bound, one sighting
  // apart, do not replace each other).
  std::vector<Step*> order;
  for (const auto& s : stage.steps) order.push_back(s.get());
  absl::c_sort(order, [](const Step* a, const Step* b) { return a->last_use < b->last_use; });
  const int64_t live = stats_.live_plans;
  const int64_t bytes = stats_.plan_bytes;
  size_t victims = 0;
  while (AtBound()) {
    if (victims == order.size() || order[victims]->uses + kAdmissionMargin > seen) break;
    Forget(*order[victims++]);
  }
  if (AtBound()) {
    stats_.live_plans = live;  // nothing is evicted
    stats_.plan_bytes = bytes;
    *reason = StrCat("the plan bound is reached (", live, " plans of ge.jitMaxPlans=", limits_.max_plans, ", ", bytes,
                     " arena bytes of ge.jitPlanMemoryBytes=", limits_.max_plan_bytes, ") and the shape was seen ",
                     seen, " times, not 2 more than the plans it would replace ran");
    return false;
  }
  for (size_t v = 0; v < victims; ++v) {
    GE_LOG_INFO(
        "session", "graph {}: JIT stage {} replaces the plan for ({}) (used {} times)", graph_id_, stage.depth,
        absl::StrJoin(order[v]->guard, ", ", [](std::string* out, const GuardEntry& g) { out->append(g.ToString()); }),
        order[v]->uses);
    const Step* victim = order[v];
    stage.steps.erase(absl::c_find_if(stage.steps, [&](const auto& s) { return s.get() == victim; }));
    ++stats_.evictions;
  }
  stage.candidates.erase(it);
  return true;
}

std::shared_ptr<JitGraph::Step> JitGraph::FindOrPlan(Stage& stage, const std::vector<Value>& inputs) {
  if (disabled_) return nullptr;
  std::vector<GuardEntry> guard = MakeGuard(stage, inputs);
  ++tick_;
  if (++stage.lookups >= kAgeingLookups * limits_.max_plans) {
    stage.lookups = 0;
    // Plans round up, candidates down: a steady cycle keeps them level.
    for (const auto& s : stage.steps) s->uses = (s->uses + 1) / 2;
    for (auto& c : stage.candidates) c.second /= 2;
    std::erase_if(stage.candidates, [](const auto& c) { return c.second == 0; });
  }
  for (const auto& s : stage.steps) {
    if (s->guard == guard) {
      s->last_use = tick_;
      ++s->uses;
      return s;
    }
  }
  if (!stage.steps.empty()) {
    const std::string failure = DescribeFailure(stage, guard);
    if (limits_.max_recompiles >= 0 && stats_.recompilations >= limits_.max_recompiles) {
      if (stats_.fallback_reason.empty()) {
        GE_LOG_INFO("session",
                    "graph {}: JIT plan bound ge.jitMaxRecompiles={} reached; inputs that fit no plan run on the "
                    "dynamic executor (the guard of {})",
                    graph_id_, limits_.max_recompiles, failure);
      }
      stats_.fallback_reason =
          StrCat("ge.jitMaxRecompiles=", limits_.max_recompiles, " reached; the guard of ", failure);
      return nullptr;
    }
    if (AtBound()) {
      std::string reason;
      if (!MakeRoom(stage, guard, &reason)) {
        if (stats_.fallback_reason.empty()) {
          GE_LOG_INFO("session", "graph {}: JIT: {}; the run takes the dynamic executor (the guard of {})", graph_id_,
                      reason, failure);
        }
        stats_.fallback_reason = StrCat(reason, "; the guard of ", failure);
        return nullptr;
      }
    }
    ++stats_.recompilations;
    stats_.last_guard_failure = failure;
    GE_LOG_INFO("session", "graph {}: JIT recompiles (guard failed: {})", graph_id_, failure);
  }
  absl::StatusOr<std::shared_ptr<Step>> planned = Plan(stage, std::move(guard));
  if (!planned.ok()) {
    disabled_ = true;
    stats_.fallback_reason = StrCat("planning failed: ", planned.status().message());
    GE_LOG_WARN("session", "graph {}: JIT planning failed, the graph runs on the dynamic executor: {}", graph_id_,
                planned.status().message());
    return nullptr;
  }
  ++stats_.compilations;
  (*planned)->last_use = tick_;
  (*planned)->uses = 1;
  return *std::move(planned);
}

absl::StatusOr<std::optional<std::vector<Value>>> JitGraph::Run(const std::vector<Value>& graph_inputs,
                                                                const runtime::RunControl* control) {
  for (size_t i = 0; i < graph_inputs.size(); ++i) {
    if (!graph_inputs[i].is_tensor()) return InvalidArgument("input ", i, ": JIT compilation takes tensor inputs only");
  }
  auto fall_back = [&]() -> std::optional<std::vector<Value>> {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.fallback_runs;
    return std::nullopt;
  };
  Stage* stage = root_.get();
  // A later stage's inputs are values of the stage before: owned here.
  const std::vector<Value>* inputs_ptr = &graph_inputs;
  std::vector<Value> stage_inputs;
  int64_t slices = 0;
  // The steps this run passed: a replaced step (and the stages behind it)
  // lives until its runs end.
  std::vector<std::shared_ptr<Step>> path;
  for (;;) {
    const std::vector<Value>& inputs = *inputs_ptr;
    std::shared_ptr<Step> held;
    {
      std::lock_guard<std::mutex> lock(mu_);
      held = FindOrPlan(*stage, inputs);
    }
    if (held == nullptr) return fall_back();
    Step* step = held.get();
    path.push_back(std::move(held));
    std::vector<Value> slice_inputs;
    slice_inputs.reserve(step->slice_inputs.size());
    for (int i : step->slice_inputs) slice_inputs.push_back(inputs[i]);
    GE_ASSIGN_OR_RETURN(std::vector<Value> outputs, slices_->RunGraph(step->slice_id, std::move(slice_inputs), control));
    ++slices;
    auto pick = [&](const ValueSource& s) -> Value {
      if (s.index < 0) return Value();
      return s.kind == ValueSource::Kind::kGraphInput ? inputs[s.index] : outputs[s.index];
    };
    if (!step->next) {
      std::vector<Value> results;
      results.reserve(step->outputs.size());
      for (const ValueSource& s : step->outputs) results.push_back(pick(s));
      std::lock_guard<std::mutex> lock(mu_);
      stats_.last_run_slices = slices;
      ++stats_.planned_runs;
      return results;
    }
    std::vector<Value> next;
    next.reserve(step->next_inputs.size());
    for (const ValueSource& s : step->next_inputs) next.push_back(pick(s));
    stage_inputs = std::move(next);
    inputs_ptr = &stage_inputs;
    stage = step->next.get();
  }
}

}  // namespace ge::session

// If, Case, While and PartitionedCall: kernels that choose and repeat
// subgraphs. They hold only subgraph names; the executor owns the subgraph
// executors, binds their inputs and returns their outputs with real shapes.
#include "runtime/engines/control_flow/control_flow_kernels.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace ge::engine::control_flow {
namespace {

// "f32[2,3]", "seq<i64>", "none" for messages.
std::string Describe(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kTensor:
      return StrCat(DataTypeName(v.tensor().dtype()), v.tensor().shape().ToString());
    case Value::Kind::kSequence:
      return StrCat("seq<", DataTypeName(v.element_dtype()), "> of ", v.sequence().size());
    case Value::Kind::kNone:
      return "none";
  }
  return "?";
}

DataType DtypeOf(const Value& v) {
  if (v.is_tensor()) return v.tensor().dtype();
  if (v.is_sequence()) return v.element_dtype();
  return DataType::kUndefined;
}

// Subgraph `slot` of `op`: the GraphRef attribute `attr` when present,
// else subgraph_names()[slot].
absl::StatusOr<std::string> SubgraphName(const ir::OpDesc& op, size_t slot, std::string_view attr) {
  if (auto ref = op.GetAttr<ir::GraphRef>(attr)) return ref->name;
  if (slot < op.subgraph_names().size()) return op.subgraph_names()[slot];
  return InvalidArgument("node '", op.name(), "' (", op.type(), ") names no subgraph for '", attr,
                         "' (attribute or subgraph_names()[", slot, "])");
}

// A bool tensor with one element: its value.
absl::StatusOr<bool> ReadCondition(const Value& v, std::string_view what) {
  if (!v.is_tensor() || v.tensor().dtype() != DataType::kBool || v.tensor().NumElements() != 1) {
    return InvalidArgument(what, " must be a bool tensor with one element, got ", Describe(v));
  }
  return v.tensor().data<bool>()[0];
}

// An i32 / i64 tensor with one element: its value.
absl::StatusOr<int64_t> ReadIndex(const Value& v, std::string_view what) {
  const bool integer = v.is_tensor() &&
                       (v.tensor().dtype() == DataType::kInt32 || v.tensor().dtype() == DataType::kInt64);
  if (!integer || v.tensor().NumElements() != 1) {
    return InvalidArgument(what, " must be an i32 or i64 tensor with one element, got ", Describe(v));
  }
  return v.tensor().GetAsInt64(0);
}

// Whether a (present) value may stand for `declared`: a tensor for a tensor,
// a sequence for a sequence, either inside an optional.
bool KindFits(const Value& v, const ir::ValueType& declared) {
  switch (declared.kind()) {
    case ir::ValueType::Kind::kTensor:
      return v.is_tensor();
    case ir::ValueType::Kind::kSequence:
      return v.is_sequence();
    case ir::ValueType::Kind::kOptional:
      return KindFits(v, *declared.element());
  }
  return false;
}

// The node's inputs for a subgraph: taken from the executor where the node
// is their last reader (ExecuteContext::owned_input), else copied (O(1):
// tensors and sequences share their storage). The caller reads no input
// after this.
std::vector<Value> AllInputs(ExecuteContext& ctx) {
  std::vector<Value> inputs;
  inputs.reserve(ctx.num_inputs());
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    Value* owned = ctx.owned_input(i);
    inputs.push_back(owned != nullptr ? std::move(*owned) : ctx.input_value(i));
  }
  return inputs;
}

// Hands a subgraph's results to the node's outputs, checking the count and
// that each result is of the kind and dtype the node declares.
absl::Status SetOutputs(ExecuteContext& ctx, std::vector<Value> values, std::string_view subgraph) {
  if (static_cast<int>(values.size()) != ctx.num_outputs()) {
    return InvalidArgument("subgraph '", subgraph, "' returns ", values.size(), " values for ",
                           ctx.num_outputs(), " outputs");
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    const ir::ValueType& declared = ctx.output_type(i);
    const bool dtype_ok = declared.dtype() == DataType::kUndefined || declared.dtype() == DtypeOf(values[i]);
    if (!values[i].is_none() && (!KindFits(values[i], declared) || !dtype_ok)) {
      return InvalidArgument("output ", i, ": subgraph '", subgraph, "' gives ", Describe(values[i]),
                             " but the node's output is ", declared.ToString());
    }
    GE_RETURN_IF_ERROR(ctx.SetOutputValue(i, std::move(values[i])));
  }
  return absl::OkStatus();
}

class IfKernel final : public Kernel {
 public:
  IfKernel(std::string then_branch, std::string else_branch)
      : then_(std::move(then_branch)), else_(std::move(else_branch)) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(bool cond, ReadCondition(ctx.input_value(0), "input 0 (cond)"));
    const std::string& branch = cond ? then_ : else_;
    GE_ASSIGN_OR_RETURN(std::vector<Value> results, ctx.RunSubgraph(branch, AllInputs(ctx)));
    return SetOutputs(ctx, std::move(results), branch);
  }

 private:
  std::string then_, else_;
};

class CaseKernel final : public Kernel {
 public:
  explicit CaseKernel(std::vector<std::string> branches) : branches_(std::move(branches)) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(int64_t index, ReadIndex(ctx.input_value(0), "input 0 (branch_index)"));
    const int64_t n = static_cast<int64_t>(branches_.size());
    // GE and TensorFlow: an index out of range selects the last (default) branch.
    if (index < 0 || index >= n) index = n - 1;
    const std::string& branch = branches_[index];
    GE_ASSIGN_OR_RETURN(std::vector<Value> results, ctx.RunSubgraph(branch, AllInputs(ctx)));
    return SetOutputs(ctx, std::move(results), branch);
  }

 private:
  std::vector<std::string> branches_;
};

// What a loop-carried value entered a loop as (Describe's form).
struct Entered {
  Value::Kind kind;
  DataType dtype;
  Shape shape;    // of a tensor
  size_t length;  // of a sequence
  std::string Describe() const {
    switch (kind) {
      case Value::Kind::kTensor: return StrCat(DataTypeName(dtype), shape.ToString());
      case Value::Kind::kSequence: return StrCat("seq<", DataTypeName(dtype), "> of ", length);
      case Value::Kind::kNone: return "none";
    }
    return "?";
  }
};

class WhileKernel final : public Kernel {
 public:
  WhileKernel(std::string cond, std::string body, int64_t max_iterations, std::string cap_source, int64_t cond_reads,
              std::vector<int64_t> cond_counter)
      : cond_(std::move(cond)),
        body_(std::move(body)),
        max_iterations_(max_iterations),
        cap_source_(std::move(cap_source)),
        cond_reads_(cond_reads),
        cond_counter_(std::move(cond_counter)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    // The loop-carried values, taken from the executor when the loop is
    // their last reader (a sequence the body appends to then grows in
    // place from the first iteration on); what they entered as, for the
    // body's checks.
    std::vector<Value> vars;
    std::vector<Entered> entered;
    vars.reserve(ctx.num_inputs());
    entered.reserve(ctx.num_inputs());
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Value& v = ctx.input_value(i);
      entered.push_back({v.kind(), DtypeOf(v), v.is_tensor() ? v.tensor().shape() : Shape(), v.sequence().size()});
      Value* owned = ctx.owned_input(i);
      vars.push_back(owned != nullptr ? std::move(*owned) : v);
    }
    for (int64_t iteration = 0;; ++iteration) {
      GE_ASSIGN_OR_RETURN(bool go, EvaluateCondition(ctx, vars, iteration));
      if (!go) break;
      if (max_iterations_ >= 0 && iteration >= max_iterations_) {
        return ResourceExhausted("the loop did not finish within ", max_iterations_, " iterations (",
                                 cap_source_, ")");
      }
      GE_ASSIGN_OR_RETURN(std::vector<Value> next, ctx.RunSubgraph(body_, std::move(vars)));
      GE_RETURN_IF_ERROR(CheckNext(entered, next, iteration));
      vars = std::move(next);
    }
    return SetOutputs(ctx, std::move(vars), body_);
  }

 private:
  // The counter condition of kAttrCondCounter, or nullopt when the values
  // are not the scalars it needs.
  std::optional<bool> CounterCondition(const std::vector<Value>& vars) const {
    if (cond_counter_.size() != 3) return std::nullopt;
    auto scalar = [&](int64_t index, DataType dtype) -> const Tensor* {
      if (index < 0 || index >= static_cast<int64_t>(vars.size()) || !vars[index].is_tensor()) return nullptr;
      const Tensor& t = vars[index].tensor();
      return t.dtype() == dtype && t.shape().rank() == 0 ? &t : nullptr;
    };
    const Tensor* counter = scalar(cond_counter_[0], DataType::kInt64);
    const Tensor* limit = scalar(cond_counter_[1], DataType::kInt64);
    if (counter == nullptr || limit == nullptr) return std::nullopt;
    bool go = counter->data<int64_t>()[0] < limit->data<int64_t>()[0];
    if (cond_counter_[2] >= 0) {
      const Tensor* flag = scalar(cond_counter_[2], DataType::kBool);
      if (flag == nullptr) return std::nullopt;
      go = go && flag->data<bool>()[0];
    }
    return go;
  }

  absl::StatusOr<bool> EvaluateCondition(ExecuteContext& ctx, const std::vector<Value>& vars,
                                         int64_t iteration) const {
    if (std::optional<bool> go = CounterCondition(vars)) return *go;
    std::vector<Value> inputs;
    if (cond_reads_ < 0) {
      inputs = vars;
    } else {
      inputs.resize(vars.size());
      const size_t read = std::min(vars.size(), static_cast<size_t>(cond_reads_));
      std::copy(vars.begin(), vars.begin() + static_cast<std::ptrdiff_t>(read), inputs.begin());
    }
    GE_ASSIGN_OR_RETURN(std::vector<Value> result, ctx.RunSubgraph(cond_, std::move(inputs)));
    if (result.size() != 1) {
      return InvalidArgument("cond subgraph '", cond_, "' returns ", result.size(),
                             " values; it must return one bool");
    }
    return ReadCondition(result[0], StrCat("the result of cond subgraph '", cond_, "' (iteration ",
                                           iteration, ")"));
  }

  // The body keeps the number, kinds and dtypes of the loop-carried values
  // (an optional value may come and go: none matches anything).
  absl::Status CheckNext(const std::vector<Entered>& entered, const std::vector<Value>& next, int64_t iteration) const {
    if (next.size() != entered.size()) {
      return InvalidArgument("body subgraph '", body_, "' returns ", next.size(), " values for ", entered.size(),
                             " loop-carried values");
    }
    for (size_t i = 0; i < entered.size(); ++i) {
      if (entered[i].kind == Value::Kind::kNone || next[i].is_none()) continue;
      if (next[i].kind() != entered[i].kind || DtypeOf(next[i]) != entered[i].dtype) {
        return InvalidArgument("iteration ", iteration, ": body subgraph '", body_, "' returns loop-carried value ", i,
                               " as ", Describe(next[i]), "; it entered as ", entered[i].Describe());
      }
    }
    return absl::OkStatus();
  }

  std::string cond_, body_;
  int64_t max_iterations_;
  std::string cap_source_;
  int64_t cond_reads_;                 // < 0: the cond may read every value
  std::vector<int64_t> cond_counter_;  // kAttrCondCounter, or empty
};

class PartitionedCallKernel final : public Kernel {
 public:
  explicit PartitionedCallKernel(std::string f) : f_(std::move(f)) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(std::vector<Value> results, ctx.RunSubgraph(f_, AllInputs(ctx)));
    return SetOutputs(ctx, std::move(results), f_);
  }

 private:
  std::string f_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> CreateIfKernel(const ir::OpDesc& op, const KernelOptions&) {
  GE_ASSIGN_OR_RETURN(std::string then_branch, SubgraphName(op, 0, "then_branch"));
  GE_ASSIGN_OR_RETURN(std::string else_branch, SubgraphName(op, 1, "else_branch"));
  return std::unique_ptr<Kernel>(new IfKernel(std::move(then_branch), std::move(else_branch)));
}

absl::StatusOr<std::unique_ptr<Kernel>> CreateCaseKernel(const ir::OpDesc& op, const KernelOptions&) {
  std::vector<std::string> branches;
  if (auto refs = op.GetAttr<std::vector<ir::GraphRef>>("branches")) {
    for (const ir::GraphRef& ref : *refs) branches.push_back(ref.name);
  } else {
    branches = op.subgraph_names();
  }
  if (branches.empty()) return InvalidArgument("node '", op.name(), "' (Case) has no branches");
  return std::unique_ptr<Kernel>(new CaseKernel(std::move(branches)));
}

absl::StatusOr<std::unique_ptr<Kernel>> CreateWhileKernel(const ir::OpDesc& op, const KernelOptions& options) {
  GE_ASSIGN_OR_RETURN(std::string cond, SubgraphName(op, 0, "cond"));
  GE_ASSIGN_OR_RETURN(std::string body, SubgraphName(op, 1, "body"));
  int64_t cap = options.max_loop_iterations;
  std::string source = options.max_loop_iterations_source.empty()
                           ? StrCat("option ", kOptionMaxLoopIterations, "=", cap)
                           : options.max_loop_iterations_source;
  if (auto attr = op.GetAttr<int64_t>(kAttrMaxLoopIterations)) {
    if (*attr < -1) {
      return InvalidArgument("node '", op.name(), "' (While): attribute ", kAttrMaxLoopIterations, " is ", *attr,
                             "; expected -1 (no cap) or a count");
    }
    // The attribute only lowers the engine's cap: a graph cannot lift it.
    if (*attr >= 0 && (cap < 0 || *attr < cap)) {
      cap = *attr;
      source = StrCat("attribute ", kAttrMaxLoopIterations, "=", cap);
    }
  }
  const int64_t cond_reads = op.GetAttrOr<int64_t>(kAttrCondReads, -1);
  std::vector<int64_t> cond_counter = op.GetAttrOr<std::vector<int64_t>>(kAttrCondCounter, {});
  if (!cond_counter.empty() && cond_counter.size() != 3) {
    return InvalidArgument("node '", op.name(), "' (While): attribute ", kAttrCondCounter, " has ", cond_counter.size(),
                           " values; expected [counter, limit, flag or -1]");
  }
  return std::unique_ptr<Kernel>(
      new WhileKernel(std::move(cond), std::move(body), cap, std::move(source), cond_reads, std::move(cond_counter)));
}

absl::StatusOr<std::unique_ptr<Kernel>> CreatePartitionedCallKernel(const ir::OpDesc& op, const KernelOptions&) {
  GE_ASSIGN_OR_RETURN(std::string f, SubgraphName(op, 0, "f"));
  return std::unique_ptr<Kernel>(new PartitionedCallKernel(std::move(f)));
}

}  // namespace ge::engine::control_flow

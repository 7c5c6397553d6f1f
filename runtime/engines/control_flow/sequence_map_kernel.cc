// SequenceMap: runs its body once per element of the input sequence and
// gathers each body output into a sequence (semantics in
// base/ops/sequence_ops.cc). Body input i takes element k of node input i
// when that input is a sequence, the input itself when it is a tensor; the
// importer's captures (the last `_onnx_num_captures` inputs) pass through
// unchanged, sequences included.
#include <string>

#include "base/status.h"
#include "runtime/engines/control_flow/control_flow_kernels.h"

namespace ge::engine::control_flow {
namespace {

class SequenceMapKernel final : public Kernel {
 public:
  SequenceMapKernel(std::string name, std::string body, int64_t num_captures)
      : name_(std::move(name)), body_(std::move(body)), num_captures_(num_captures) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const int mapped = ctx.num_inputs() - static_cast<int>(num_captures_);
    if (mapped < 1 || !ctx.input_value(0).is_sequence()) {
      return InvalidArgument("node '", name_, "' (SequenceMap): input 0 must be a sequence");
    }
    const size_t n = ctx.input_value(0).sequence().size();
    for (int i = 1; i < mapped; ++i) {
      const Value& v = ctx.input_value(i);
      if (v.is_sequence() && v.sequence().size() != n) {
        return InvalidArgument("node '", name_, "' (SequenceMap): input ", i, " has ", v.sequence().size(),
                               " elements, input 0 has ", n);
      }
    }
    std::vector<std::vector<Tensor>> gathered(static_cast<size_t>(ctx.num_outputs()));
    for (size_t k = 0; k < n; ++k) {
      std::vector<Value> inputs;
      inputs.reserve(static_cast<size_t>(ctx.num_inputs()));
      for (int i = 0; i < ctx.num_inputs(); ++i) {
        const Value& v = ctx.input_value(i);
        inputs.push_back(i < mapped && v.is_sequence() ? Value(v.sequence()[k]) : v);
      }
      GE_ASSIGN_OR_RETURN(std::vector<Value> results, ctx.RunSubgraph(body_, std::move(inputs)));
      if (results.size() != gathered.size()) {
        return InvalidArgument("node '", name_, "' (SequenceMap): body '", body_, "' returns ", results.size(),
                               " values for ", gathered.size(), " outputs");
      }
      for (size_t j = 0; j < results.size(); ++j) {
        if (!results[j].is_tensor()) {
          return InvalidArgument("node '", name_, "' (SequenceMap): body output ", j, " is not a tensor");
        }
        gathered[j].push_back(results[j].tensor());
      }
    }
    for (int j = 0; j < ctx.num_outputs(); ++j) {
      std::vector<Tensor>& items = gathered[static_cast<size_t>(j)];
      const DataType dtype = items.empty() ? ctx.output_dtype(j) : items[0].dtype();
      for (const Tensor& t : items) {
        if (t.dtype() != dtype) {
          return InvalidArgument("node '", name_, "' (SequenceMap): body output ", j, " changes dtype from ",
                                 DataTypeName(dtype), " to ", DataTypeName(t.dtype()));
        }
      }
      GE_RETURN_IF_ERROR(ctx.SetOutputValue(j, Value::Sequence(std::move(items), dtype)));
    }
    return absl::OkStatus();
  }

 private:
  std::string name_;
  std::string body_;
  int64_t num_captures_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> CreateSequenceMapKernel(const ir::OpDesc& op, const KernelOptions&) {
  std::string body;
  if (auto ref = op.GetAttr<ir::GraphRef>("body")) {
    body = ref->name;
  } else if (!op.subgraph_names().empty()) {
    body = op.subgraph_names()[0];
  } else {
    return InvalidArgument("node '", op.name(), "' (SequenceMap) has no body");
  }
  const int64_t captures = op.GetAttrOr<int64_t>("_onnx_num_captures", 0);
  if (captures < 0 || captures >= static_cast<int64_t>(op.inputs().size())) {
    return InvalidArgument("node '", op.name(), "' (SequenceMap): bad _onnx_num_captures ", captures);
  }
  return std::unique_ptr<Kernel>(new SequenceMapKernel(op.name(), std::move(body), captures));
}

}  // namespace ge::engine::control_flow

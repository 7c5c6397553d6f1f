// Out-of-line helpers of the kernel interface.
#include "runtime/engines/api/kernel.h"

#include "base/status.h"

namespace ge::engine {

const Tensor& ExecuteContext::UndefinedTensor() {
  static const Tensor* kUndefined = new Tensor();
  return *kUndefined;
}

const Tensor& ExecuteContext::InputThroughValue(int i) const {
  if (i >= num_inputs()) return UndefinedTensor();
  const Value& v = input_value(i);
  return v.is_tensor() ? v.tensor() : UndefinedTensor();
}

absl::StatusOr<std::vector<Value>> ExecuteContext::RunSubgraph(std::string_view name,
                                                               std::vector<Value> inputs) {
  (void)inputs;
  return Unimplemented("this executor cannot run subgraphs (asked for subgraph '", name, "')");
}

}  // namespace ge::engine

// Out-of-line helpers of the kernel interface.
#include "runtime/engines/api/kernel.h"

#include "base/status.h"

namespace ge::engine {

const Tensor& ExecuteContext::input(int i) const {
  static const Tensor* kUndefined = new Tensor();
  if (i >= num_inputs()) return *kUndefined;
  const Value& v = input_value(i);
  return v.is_tensor() ? v.tensor() : *kUndefined;
}

absl::StatusOr<std::vector<Value>> ExecuteContext::RunSubgraph(std::string_view name,
                                                               std::vector<Value> inputs) {
  (void)inputs;
  return Unimplemented("this executor cannot run subgraphs (asked for subgraph '", name, "')");
}

}  // namespace ge::engine

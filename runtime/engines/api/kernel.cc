// Out-of-line helpers of the kernel interface.
#include "runtime/engines/api/kernel.h"

namespace ge::engine {

const Tensor& ExecuteContext::input(int i) const {
  static const Tensor* kUndefined = new Tensor();
  if (i >= num_inputs()) return *kUndefined;
  const Value& v = input_value(i);
  return v.is_tensor() ? v.tensor() : *kUndefined;
}

}  // namespace ge::engine

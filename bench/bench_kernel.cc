// ops_bench's shared kernel scaffolding (bench_kernel.h).
#include "bench/bench_kernel.h"

#include "base/ops/op_registry.h"
#include "base/status.h"

namespace ge::bench {

Tensor RandomFloats(const Shape& shape, uint32_t seed) {
  Tensor t = *Tensor::Allocate(DataType::kFloat, shape);
  float* p = t.data<float>();
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = static_cast<float>(s >> 9) / static_cast<float>(1u << 23) - 1.0f;
  }
  return t;
}

BenchContext::BenchContext(std::vector<Value> inputs, ir::ValueType out_type, size_t workspace_bytes,
                           ThreadPool* pool, int num_threads)
    : inputs_(std::move(inputs)),
      out_type_(std::move(out_type)),
      workspace_(workspace_bytes + 64),
      pool_(pool),
      num_threads_(num_threads) {
  output_ = *Tensor::Allocate(out_type_.dtype(), out_type_.shape());
}

absl::StatusOr<PreparedKernel> PrepareKernel(engine::Engine& engine, ir::OpDesc op, std::vector<Value> inputs,
                                             const std::vector<int>& const_inputs, ThreadPool* pool,
                                             int num_threads) {
  std::vector<ir::ValueType> types;
  for (const Value& v : inputs) types.push_back(ir::ValueType::Tensor(v.tensor().dtype(), v.tensor().shape()));
  std::vector<const ir::ValueType*> type_ptrs;
  for (const auto& t : types) {
    type_ptrs.push_back(&t);
    op.AddInput({"", t});
  }
  op.AddOutput({});
  GE_ASSIGN_OR_RETURN(std::vector<ir::ValueType> out, ops::InferOutputTypes(op, type_ptrs, {}));
  op.mutable_output(0).type = out[0];
  PreparedKernel prepared;
  GE_ASSIGN_OR_RETURN(prepared.kernel, engine.kernel_factory().CreateKernel(op));
  // The context first: the constant weights Prepare sees are its inputs.
  prepared.context = std::make_unique<BenchContext>(std::move(inputs), out[0], 0, pool, num_threads);
  engine::PrepareContext prepare;
  prepare.op = &op;
  prepare.input_types = types;
  prepare.output_types = out;
  prepare.const_inputs.assign(types.size(), nullptr);
  for (int i : const_inputs) prepare.const_inputs[i] = &prepared.context->input_value(i).tensor();
  prepare.num_threads = num_threads;
  GE_RETURN_IF_ERROR(prepared.kernel->Prepare(prepare));
  prepared.context->ResizeWorkspace(prepare.workspace_bytes);
  return prepared;
}

}  // namespace ge::bench

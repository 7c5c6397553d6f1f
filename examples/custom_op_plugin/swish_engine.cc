// An example custom-op engine plugin: the op `Swish` of the ONNX domain
// `com.example` (y = x * sigmoid(beta * x)), on an engine of its own.
//
// It shows everything a user operator needs and nothing more: the plugin
// registers the op's schema (inputs, attributes, shape inference) in ged's
// op registry when the engine is initialized, answers CheckSupported for the
// nodes it can run, and creates their kernels. It builds on the engine SDK
// (runtime/engines/sdk: attribute readers, node errors, the OpenMP parallel
// loop of the threading contract) as the built-in engines do. Its attributes
// are example_custom.json beside the library (cost COST_0, so the placer
// prefers it over every built-in engine for the ops it claims). ged loads it
// only from a plugin directory the user names (`gectl --plugin-dir`, the
// daemon's `--plugin-dir`): no compiler or runtime code knows of it.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "base/ops/op_registry.h"
#include "base/ir/op_types.h"
#include "base/ops/op_schema.h"
#include "base/status.h"
#include "base/version.h"
#include "runtime/engines/api/engine.h"
#include "runtime/engines/api/plugin.h"
#include "runtime/engines/sdk/kernel_util.h"
#include "runtime/engines/sdk/parallel.h"

namespace example {

using ge::DataType;
using ge::ir::AttrValue;

constexpr std::string_view kDomain = "com.example";
constexpr std::string_view kOpType = "Swish";

bool IsSwish(const ge::ir::OpDesc& op) {
  return op.type() == kOpType && op.GetAttrOr<std::string>(ge::ir::kAttrOpDomain, "") == kDomain;
}

absl::Status InferSwish(ge::ops::InferenceContext& ctx) {
  ctx.set_output(0, ctx.input_type(0));
  return absl::OkStatus();
}

// Registers Swish once per process: several engine registries (tests, the
// daemon's reloads) may initialize the plugin more than once.
absl::Status RegisterSwishSchema() {
  ge::ops::OpRegistry& registry = ge::ops::OpRegistry::Global();
  if (registry.Find(kOpType, kDomain) != nullptr) return absl::OkStatus();
  ge::ops::OpSchemaBuilder builder(std::string(kOpType), 1);
  builder
                               .Domain(std::string(kDomain))
                               .Doc("y = x * sigmoid(beta * x), element-wise.")
                               .Input("X", "T")
                               .Output("Y", "T")
                               .TypeConstraint("T", {DataType::kFloat})
                               .Attr("beta", AttrValue::Kind::kFloat, AttrValue(1.0f))
                               .Infer(InferSwish);
  return registry.Register(std::move(builder).Build());
}

class SwishKernel final : public ge::engine::Kernel {
 public:
  explicit SwishKernel(float beta) : beta_(beta) {}

  absl::Status Compute(ge::engine::ExecuteContext& ctx) override {
    const ge::Tensor& x = ctx.input(0);
    GE_ASSIGN_OR_RETURN(ge::Tensor y, ctx.Output(0));
    const float* in = x.data<float>();
    float* out = y.data<float>();
    // Blocks of 16k elements on at most the device's threads (OpenMP).
    ge::engine::sdk::OmpParallelRange(ctx.num_threads(), x.NumElements(), int64_t{1} << 14,
                                      [&](int64_t begin, int64_t end) {
                                        for (int64_t i = begin; i < end; ++i) {
                                          out[i] = in[i] / (1.0f + std::exp(-beta_ * in[i]));
                                        }
                                      });
    return absl::OkStatus();
  }

 private:
  float beta_;
};

class SwishInfoStore final : public ge::engine::OpsKernelInfoStore {
 public:
  absl::Status CheckSupported(const ge::ir::Node& node) const override {
    if (!IsSwish(node.op_desc())) {
      return ge::Unimplemented("example_custom runs only ", kDomain, "::", kOpType);
    }
    if (node.op_desc().input(0).type.dtype() != DataType::kFloat) {
      return ge::Unimplemented("example_custom's Swish takes float32 only");
    }
    return absl::OkStatus();
  }
  std::vector<std::string> SupportedOpTypes() const override { return {std::string(kOpType)}; }
};

class SwishFactory final : public ge::engine::KernelFactory {
 public:
  absl::StatusOr<std::unique_ptr<ge::engine::Kernel>> CreateKernel(const ge::ir::OpDesc& op) const override {
    if (!IsSwish(op)) return ge::Unimplemented("example_custom has no kernel for op type ", op.type());
    // The attribute, else the schema's default.
    const float beta = ge::engine::sdk::FloatAttr(op, "beta", 1.0f);
    if (!std::isfinite(beta)) return ge::engine::sdk::NodeError(op, "beta is not finite");
    return std::make_unique<SwishKernel>(beta);
  }
};

// Its attributes come from example_custom.json beside the library: the
// loader sets them before Initialize.
class ExampleCustomEngine final : public ge::engine::Engine {
 public:
  absl::Status Initialize(const ge::engine::EngineOptions& options) override {
    (void)options;
    return RegisterSwishSchema();
  }
  const ge::engine::OpsKernelInfoStore& info_store() const override { return info_store_; }
  const ge::engine::KernelFactory& kernel_factory() const override { return factory_; }

 private:
  SwishInfoStore info_store_;
  SwishFactory factory_;
};

}  // namespace example

// nullptr: the attributes are example_custom.json beside the library.
GE_DEFINE_ENGINE_PLUGIN(example::ExampleCustomEngine, "example_custom", nullptr)

// ge_local kernels: Const, NoOp, zero-copy views, and the ops that hand out
// session state: Variable (a tensor over the variable's memory),
// FileConstant (the shared weight) and VarIsInitializedOp.
#include "runtime/engines/ge_local/ge_local_engine.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "base/ir/node.h"
#include "base/ir/op_types.h"
#include "base/status.h"
#include "runtime/engines/api/attributes.h"
#include "runtime/engines/api/variable_store.h"

namespace ge::engine {
namespace {

// Ops the executor binds itself; ge_local owns them for placement.
constexpr std::array<std::string_view, 2> kBoundOps = {ir::kData, ir::kNetOutput};
constexpr std::array<std::string_view, 3> kStateOps = {ir::kVariable, ir::kFileConstant, "VarIsInitializedOp"};
constexpr std::array<std::string_view, 5> kViewOps = {ir::kIdentity, "Reshape", "Squeeze",
                                                       "Unsqueeze", "Flatten"};

template <size_t N>
bool Contains(const std::array<std::string_view, N>& list, std::string_view type) {
  return std::find(list.begin(), list.end(), type) != list.end();
}

class ConstKernel final : public Kernel {
 public:
  explicit ConstKernel(Tensor value) : value_(std::move(value)) {}
  absl::Status Compute(ExecuteContext& ctx) override { return ctx.SetOutputValue(0, Value(value_)); }

 private:
  Tensor value_;
};

absl::Status NoStore(const ExecuteContext&, const ir::OpDesc& op) {
  return FailedPrecondition("node '", op.name(), "' (", op.type(), ") needs a session's variables; this executor has none");
}

// Output 0 is the variable's memory: writes by Assign persist across runs.
class VariableKernel final : public Kernel {
 public:
  explicit VariableKernel(const ir::OpDesc& op) : op_(op) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    if (ctx.variables() == nullptr) return NoStore(ctx, op_);
    GE_ASSIGN_OR_RETURN(Tensor var, ctx.variables()->GetVariable(op_));
    return ctx.SetOutputValue(0, Value(std::move(var)));
  }

 private:
  ir::OpDesc op_;
};

// The weight is read on first execution and kept (the store shares it).
class FileConstantKernel final : public Kernel {
 public:
  explicit FileConstantKernel(const ir::OpDesc& op) : op_(op) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    if (!loaded_.defined()) {
      if (ctx.variables() == nullptr) return NoStore(ctx, op_);
      GE_ASSIGN_OR_RETURN(loaded_, ctx.variables()->GetFileConstant(op_));
    }
    return ctx.SetOutputValue(0, Value(loaded_));
  }

 private:
  ir::OpDesc op_;
  Tensor loaded_;
};

class VarIsInitializedKernel final : public Kernel {
 public:
  explicit VarIsInitializedKernel(const ir::OpDesc& op)
      : op_(op), name_(op.GetAttrOr<std::string>(kAttrVarName, "")) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    if (ctx.variables() == nullptr) return NoStore(ctx, op_);
    if (name_.empty()) {
      return FailedPrecondition("node '", op_.name(), "' (VarIsInitializedOp) names no variable; ",
                                "VarIsInitializedOpPass sets _var_name");
    }
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0));
    out.data<bool>()[0] = ctx.variables()->IsInitialized(name_);
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  std::string name_;
};

class NoOpKernel final : public Kernel {
 public:
  absl::Status Compute(ExecuteContext&) override { return absl::OkStatus(); }
};

// Output 0 is input 0's storage under the inferred output shape.
class ViewKernel final : public Kernel {
 public:
  absl::Status Compute(ExecuteContext& ctx) override {
    const Value& in = ctx.input_value(0);
    if (!in.is_tensor()) return ctx.SetOutputValue(0, in);  // Identity of a sequence/optional
    const Shape& shape = ctx.output_type(0).shape();
    if (!shape.IsFullyKnown() || shape.NumElementsUnchecked() != in.tensor().NumElements()) {
      return Internal("view output shape ", shape.ToString(), " does not fit input ",
                      in.tensor().shape().ToString());
    }
    return ctx.SetOutputValue(0, Value(in.tensor().Reshaped(shape)));
  }
};

}  // namespace

class GeLocalEngine::InfoStore final : public OpsKernelInfoStore {
 public:
  absl::Status CheckSupported(const ir::Node& node) const override {
    const std::string& type = node.type();
    if (Contains(kBoundOps, type) || Contains(kStateOps, type) || type == ir::kConst || type == ir::kNoOp) {
      return absl::OkStatus();
    }
    if (Contains(kViewOps, type)) {
      // A view forwards only its first output; extra outputs (none today) would need compute.
      if (node.num_outputs() != 1) return Unimplemented("ge_local runs ", type, " with one output only");
      return absl::OkStatus();
    }
    return Unimplemented("ge_local has no kernel for op type ", type);
  }
  std::vector<std::string> SupportedOpTypes() const override {
    std::vector<std::string> out(kBoundOps.begin(), kBoundOps.end());
    out.insert(out.end(), kViewOps.begin(), kViewOps.end());
    out.insert(out.end(), kStateOps.begin(), kStateOps.end());
    out.emplace_back(ir::kConst);
    out.emplace_back(ir::kNoOp);
    std::sort(out.begin(), out.end());
    return out;
  }
};

class GeLocalEngine::Factory final : public KernelFactory {
 public:
  absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(const ir::OpDesc& op) const override {
    const std::string& type = op.type();
    if (type == ir::kConst) {
      GE_ASSIGN_OR_RETURN(Tensor value, op.RequireAttr<Tensor>(ir::kAttrValue));
      return std::unique_ptr<Kernel>(new ConstKernel(std::move(value)));
    }
    if (type == ir::kNoOp) return std::unique_ptr<Kernel>(new NoOpKernel());
    if (type == ir::kVariable) return std::unique_ptr<Kernel>(new VariableKernel(op));
    if (type == ir::kFileConstant) return std::unique_ptr<Kernel>(new FileConstantKernel(op));
    if (type == "VarIsInitializedOp") return std::unique_ptr<Kernel>(new VarIsInitializedKernel(op));
    if (Contains(kViewOps, type)) return std::unique_ptr<Kernel>(new ViewKernel());
    if (Contains(kBoundOps, type)) {
      return FailedPrecondition("node '", op.name(), "' (", type,
                                ") is bound by the executor and has no kernel");
    }
    return Unimplemented("ge_local has no kernel for op type ", type, " (node '", op.name(), "')");
  }
};

GeLocalEngine::GeLocalEngine()
    : info_store_(std::make_unique<InfoStore>()), factory_(std::make_unique<Factory>()) {
  EmbeddedAttributes embedded = ParseEmbeddedAttributes(ge_local::kAttributesJson, "ge_local");
  attributes_ = std::move(embedded.attributes);
  attributes_error_ = std::move(embedded.error);
}

GeLocalEngine::~GeLocalEngine() = default;

absl::Status GeLocalEngine::Initialize(const EngineOptions& options) {
  (void)options;
  return attributes_error_;
}

const OpsKernelInfoStore& GeLocalEngine::info_store() const { return *info_store_; }
const KernelFactory& GeLocalEngine::kernel_factory() const { return *factory_; }

}  // namespace ge::engine

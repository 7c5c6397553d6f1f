// Variable writers and queries (TensorFlow's state ops as GE runs them):
// Assign, AssignAdd, AssignSub write input 1 into the variable input 0 is
// (a Variable or VarRef output) and return the variable; VarIsInitializedOp
// asks whether a variable holds a value. The value must have the
// variable's shape and dtype: variables never change shape by assignment.
#include "base/ops/op_families.h"

#include "base/ops/infer_util.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"

namespace ge::ops {
namespace {

// Output = the variable; the value must match it where both are known.
absl::Status InferAssign(InferenceContext& ctx) {
  const ir::TensorDesc& ref = ctx.input_tensor(0);
  const ir::TensorDesc& value = ctx.input_tensor(1);
  const Shape& a = ref.shape;
  const Shape& b = value.shape;
  if (!a.unknown_rank() && !b.unknown_rank()) {
    bool match = a.rank() == b.rank();
    for (size_t i = 0; match && i < a.dims().size(); ++i) {
      match = a.dim(i) < 0 || b.dim(i) < 0 || a.dim(i) == b.dim(i);
    }
    if (!match) {
      return InvalidArgument("value shape ", b.ToString(), " does not match the variable's shape ", a.ToString());
    }
  }
  SetOutput(ctx, 0, ctx.input_type(0));
  return absl::OkStatus();
}

absl::Status InferVarIsInitialized(InferenceContext& ctx) {
  SetOutput(ctx, 0, DataType::kBool, Shape{});
  return absl::OkStatus();
}

}  // namespace

void RegisterVariableOps(OpRegistry& r) {
  const char* kDocs[][2] = {{"Assign", "Writes `value` into the variable `ref`; returns the variable."},
                            {"AssignAdd", "Adds `value` to the variable `ref`; returns the variable."},
                            {"AssignSub", "Subtracts `value` from the variable `ref`; returns the variable."}};
  for (const auto& [type, doc] : kDocs) {
    const bool any = std::string_view(type) == "Assign";
    MustRegister(r, OpSchemaBuilder(type, 1)
                        .Doc(doc)
                        .Input("ref", "T")
                        .Input("value", "T")
                        .Output("output_ref", "T")
                        .TypeConstraint("T", any ? Union(NumericTypes(), Types({DataType::kBool})) : NumericTypes())
                        .Stateful()
                        .Infer(InferAssign));
  }
  MustRegister(r, OpSchemaBuilder("VarIsInitializedOp", 1)
                      .Doc("Whether the variable `ref` (or the one named by `_var_name`) holds a value.")
                      .OptionalInput("ref", "T")
                      .Output("is_initialized", "B")
                      .TypeConstraint("T", AllTensorTypes())
                      .TypeConstraint("B", Types({DataType::kBool}))
                      .Stateful()
                      .Infer(InferVarIsInitialized));
}

}  // namespace ge::ops

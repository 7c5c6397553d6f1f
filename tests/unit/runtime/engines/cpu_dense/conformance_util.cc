// The conformance harness: engines, case building and the comparison.
#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"

#include <algorithm>

#include "base/ir/text_format.h"

namespace ge::engine::cpu_dense {

const CpuDenseEngine& Dense() {
  static const CpuDenseEngine* engine = [] {
    auto* e = new CpuDenseEngine();
    e->SetReferenceEngine(&Host());  // as a registry with host_cpu does
    const absl::Status s = e->Initialize({});
    if (!s.ok()) ADD_FAILURE() << "cpu_dense Initialize: " << s;
    return e;
  }();
  return *engine;
}

const HostCpuEngine& Host() {
  static const HostCpuEngine* engine = new HostCpuEngine();
  return *engine;
}

absl::StatusOr<Tensor> HostOp(const std::string& type, const std::vector<Value>& inputs, const ir::AttrMap& attrs) {
  return test::RunOp1(Host(), type, inputs, attrs);
}

Case MakeCase(const std::string& type, std::vector<Value> inputs, ir::AttrMap attrs,
              std::optional<test::Tolerance> tolerance, int num_outputs) {
  Dense();  // registers _DenseFused before any op is typed
  test::OpBuilder b(type, type + "_case");
  b.Inputs(inputs).Outputs(num_outputs);
  for (auto& [name, value] : attrs) b.Attr(name, value);
  Case c;
  c.op = b.Build();
  DataType dtype = DataType::kFloat;
  for (const Value& v : inputs) {
    if (v.is_tensor()) {
      dtype = v.tensor().dtype();
      break;
    }
  }
  c.tolerance = tolerance.value_or(test::DefaultTolerance(dtype));
  c.inputs = std::move(inputs);
  return c;
}

namespace {

// The node as the compiler would hand it to CheckSupported: outputs typed.
ir::OpDesc Typed(const Case& c) {
  ir::OpDesc op = c.op;
  auto types = test::InferOutputTypes(op, c.inputs);
  if (types.ok()) {
    for (int i = 0; i < op.num_outputs(); ++i) op.mutable_output(i).type = (*types)[i];
  }
  return op;
}

}  // namespace

// "Conv(f32[1,3,5,5], f32[4,3,3,3]) {group = 1, ...}" for failure messages.
std::string Describe(const Case& c) {
  std::string out = c.op.type() + "(";
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    out += i ? ", " : "";
    out += c.inputs[i].is_tensor() ? c.inputs[i].tensor().DebugString(0) : "_";
  }
  out += ") {";
  bool first = true;
  for (const auto& [name, value] : c.op.attrs()) {
    StrAppend(&out, first ? "" : ", ", name, " = ", ir::PrintAttrValue(value));
    first = false;
  }
  return out + "}";
}

absl::Status Rejection(const Case& c) { return Dense().dense_info_store().CheckSupportedOp(Typed(c)); }

::testing::AssertionResult Conforms(const Case& c) {
  const absl::Status supported = Rejection(c);
  if (!supported.ok()) {
    return ::testing::AssertionFailure() << "cpu_dense rejects " << Describe(c) << ": " << supported;
  }
  ::testing::AssertionResult r = ::testing::AssertionSuccess();
  const int64_t reference_runs = ReferenceRuns().load();
  if (c.reference) {
    test::RunOptions options;
    options.const_inputs = c.const_inputs;
    auto got = test::RunKernel(Dense(), c.op, c.inputs, options);
    auto want = c.reference();
    if (!got.ok()) return ::testing::AssertionFailure() << Describe(c) << ": cpu_dense failed: " << got.status();
    if (!want.ok()) return ::testing::AssertionFailure() << Describe(c) << ": the reference failed: " << want.status();
    r = test::TensorNear((*got)[0].tensor(), *want, c.tolerance);
  } else {
    test::RunOptions options;
    options.const_inputs = c.const_inputs;
    r = test::MatchesReference(Dense(), Host(), c.op, c.inputs, c.tolerance, options);
  }
  if (!r) return ::testing::AssertionFailure() << Describe(c) << "\n" << r.message();
  // A case cpu_dense accepts runs on oneDNN, unless an input is empty (the
  // reference computes what such shapes leave behind, say a bias).
  bool empty_input = false;
  for (const Value& v : c.inputs) empty_input = empty_input || (v.is_tensor() && v.tensor().NumElements() == 0);
  if (!empty_input && ReferenceRuns().load() != reference_runs) {
    return ::testing::AssertionFailure() << Describe(c) << ": ran on the reference kernel, not on oneDNN";
  }
  return r;
}

std::vector<DataType> DenseFloatTypes() {
  std::vector<DataType> types = {DataType::kFloat};
  if (Dense().context().bf16) types.push_back(DataType::kBFloat16);
  return types;
}

}  // namespace ge::engine::cpu_dense

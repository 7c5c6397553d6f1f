// The kernel test harness: a host ExecuteContext, RunKernel over any
// engine's KernelFactory, value builders and tensor comparison with
// tolerances.
#include "tests/testing/kernel_test_util.h"

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "base/ops/op_registry.h"
#include "base/status.h"

namespace ge::test {

// ---- Building ops and values ----

ir::ValueType TypeOf(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kTensor:
      return ir::ValueType::Tensor(value.tensor().dtype(), value.tensor().shape());
    case Value::Kind::kSequence: {
      Shape element = Shape::UnknownRank();
      if (!value.sequence().empty()) element = value.sequence().front().shape();
      return ir::ValueType::Sequence(ir::ValueType::Tensor(value.element_dtype(), element));
    }
    case Value::Kind::kNone:
      break;
  }
  return ir::ValueType();
}

OpBuilder::OpBuilder(std::string type, std::string name) {
  if (name.empty()) name = "test_" + type;
  op_ = ir::OpDesc(std::move(name), std::move(type));
}

OpBuilder& OpBuilder::Attr(std::string_view name, ir::AttrValue value) {
  op_.SetAttr(name, std::move(value));
  return *this;
}

OpBuilder& OpBuilder::Inputs(const std::vector<Value>& values) {
  for (const Value& v : values) Input(TypeOf(v));
  return *this;
}

OpBuilder& OpBuilder::Input(ir::ValueType type) {
  op_.AddInput({StrCat("in", op_.num_inputs()), std::move(type)});
  return *this;
}

OpBuilder& OpBuilder::Outputs(int count) {
  for (int i = 0; i < count; ++i) Output(ir::ValueType());
  return *this;
}

OpBuilder& OpBuilder::Output(ir::ValueType type) {
  op_.AddOutput({StrCat("out", op_.num_outputs()), std::move(type)});
  return *this;
}

namespace {

template <typename T>
void FillConverted(Tensor& t, int64_t i, double v) {
  if constexpr (std::is_same_v<T, bool>) {
    t.data<bool>()[i] = v != 0.0;
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    t.data<T>()[i] = T(static_cast<float>(v));
  } else {
    t.data<T>()[i] = static_cast<T>(v);
  }
}

void SetElement(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DataType::kFloat: return FillConverted<float>(t, i, v);
    case DataType::kDouble: return FillConverted<double>(t, i, v);
    case DataType::kFloat16: return FillConverted<Float16>(t, i, v);
    case DataType::kBFloat16: return FillConverted<BFloat16>(t, i, v);
    case DataType::kInt8: return FillConverted<int8_t>(t, i, v);
    case DataType::kInt16: return FillConverted<int16_t>(t, i, v);
    case DataType::kInt32: return FillConverted<int32_t>(t, i, v);
    case DataType::kInt64: return FillConverted<int64_t>(t, i, v);
    case DataType::kUint8: return FillConverted<uint8_t>(t, i, v);
    case DataType::kUint16: return FillConverted<uint16_t>(t, i, v);
    case DataType::kUint32: return FillConverted<uint32_t>(t, i, v);
    case DataType::kUint64: return FillConverted<uint64_t>(t, i, v);
    case DataType::kBool: return FillConverted<bool>(t, i, v);
    default: GE_CHECK_MSG(false, "MakeTensor: unsupported dtype");
  }
}

}  // namespace

Tensor MakeTensor(DataType dtype, const std::vector<double>& values, const Shape& shape) {
  auto t = Tensor::Allocate(dtype, shape);
  GE_CHECK(t.ok());
  GE_CHECK_MSG(static_cast<int64_t>(values.size()) == t->NumElements(),
               "MakeTensor: value count does not match the shape");
  for (size_t i = 0; i < values.size(); ++i) SetElement(*t, static_cast<int64_t>(i), values[i]);
  return *std::move(t);
}

Tensor RandomTensor(DataType dtype, const Shape& shape, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  const int64_t n = shape.NumElementsUnchecked();
  std::vector<double> values(static_cast<size_t>(n));
  if (IsFloatingPoint(dtype)) {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (double& v : values) v = dist(rng);
  } else {
    const int64_t ilo = static_cast<int64_t>(std::ceil(lo));
    const int64_t ihi = std::max(ilo, static_cast<int64_t>(std::floor(hi)));
    std::uniform_int_distribution<int64_t> dist(ilo, ihi);
    for (double& v : values) v = static_cast<double>(dist(rng));
  }
  return MakeTensor(dtype, values, shape);
}

// ---- Running kernels ----

ThreadPool* TestThreadPool() {
  static ThreadPool* pool = new ThreadPool(2, "test-pool");
  return pool;
}

namespace {

ThreadPool* InlinePool() {
  static ThreadPool* pool = new ThreadPool(0, "test-inline");
  return pool;
}

}  // namespace

absl::StatusOr<std::vector<ir::ValueType>> InferOutputTypes(const ir::OpDesc& op,
                                                            const std::vector<Value>& inputs) {
  std::vector<ir::ValueType> types;
  types.reserve(inputs.size());
  for (const Value& v : inputs) types.push_back(TypeOf(v));
  std::vector<const ir::ValueType*> type_ptrs;
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    type_ptrs.push_back(inputs[i].is_none() ? nullptr : &types[i]);
    values.push_back(inputs[i].is_tensor() ? &inputs[i].tensor() : nullptr);
  }
  return ops::InferOutputTypes(op, type_ptrs, values);
}

TestExecuteContext::TestExecuteContext(std::vector<Value> inputs,
                                       std::vector<ir::ValueType> output_types, ThreadPool* pool,
                                       size_t workspace_bytes)
    : inputs_(std::move(inputs)),
      output_types_(std::move(output_types)),
      outputs_(output_types_.size()),
      produced_(output_types_.size(), false),
      pool_(pool != nullptr ? pool : InlinePool()),
      workspace_(workspace_bytes) {}

absl::StatusOr<Tensor> TestExecuteContext::Output(int i, const Shape& shape) {
  if (i < 0 || i >= num_outputs()) {
    return Internal("kernel asked for output ", i, " of ", num_outputs());
  }
  if (!shape.IsFullyKnown()) {
    return Internal("kernel asked for output ", i, " with shape ", shape.ToString(),
                    ", which is not fully known");
  }
  GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(output_dtype(i), shape));
  // Executors hand out storage with unspecified contents (the static
  // executor's arena is reused between runs, the dynamic one's caching
  // allocator does not clear blocks): every element a kernel does not write
  // here reads as NaN (floats), -1 (integers) or true, so the comparisons see
  // it.
  if (t.dtype() != DataType::kString && t.SizeInBytes() > 0) {
    std::memset(t.raw_data(), t.dtype() == DataType::kBool ? 0x01 : 0xFF, t.SizeInBytes());
  }
  outputs_[i] = Value(t);
  produced_[i] = true;
  return t;
}

absl::Status TestExecuteContext::SetOutputValue(int i, Value value) {
  if (i < 0 || i >= num_outputs()) {
    return Internal("kernel set output ", i, " of ", num_outputs());
  }
  outputs_[i] = std::move(value);
  produced_[i] = true;
  return absl::OkStatus();
}

namespace {

// Checks output `i` against the type inference gave it.
absl::Status CheckOutput(const ir::OpDesc& op, int i, const Value& v, const ir::ValueType& type) {
  if (!v.is_tensor() || !type.is_tensor()) return absl::OkStatus();
  const Tensor& t = v.tensor();
  if (type.dtype() != DataType::kUndefined && t.dtype() != type.dtype()) {
    return Internal("node '", op.name(), "' (", op.type(), ") output ", i, " has dtype ",
                    DataTypeName(t.dtype()), " but inference gave ", type.ToString());
  }
  if (type.shape().IsFullyKnown() && t.shape() != type.shape()) {
    return Internal("node '", op.name(), "' (", op.type(), ") output ", i, " has shape ",
                    t.shape().ToString(), " but inference gave ", type.ToString());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<Value>> RunKernel(const engine::KernelFactory& factory,
                                             const ir::OpDesc& op,
                                             const std::vector<Value>& inputs,
                                             const RunOptions& options) {
  std::vector<ir::ValueType> output_types = options.output_types;
  if (output_types.empty()) {
    GE_ASSIGN_OR_RETURN(output_types, InferOutputTypes(op, inputs));
  }
  if (static_cast<int>(output_types.size()) != op.num_outputs()) {
    return InvalidArgument("node '", op.name(), "' has ", op.num_outputs(), " outputs but ",
                           output_types.size(), " output types were given");
  }
  // What the compiler does after inference: the node carries its types.
  ir::OpDesc typed = op;
  for (int i = 0; i < typed.num_outputs(); ++i) typed.mutable_output(i).type = output_types[i];
  GE_ASSIGN_OR_RETURN(std::unique_ptr<engine::Kernel> kernel, factory.CreateKernel(typed));
  ThreadPool* pool = options.thread_pool != nullptr ? options.thread_pool : InlinePool();
  engine::PrepareContext prepare;
  prepare.op = &typed;
  for (const Value& v : inputs) prepare.input_types.push_back(TypeOf(v));
  prepare.output_types = output_types;
  prepare.const_inputs.assign(inputs.size(), nullptr);
  for (int i : options.const_inputs) {
    if (i >= 0 && i < static_cast<int>(inputs.size()) && inputs[i].is_tensor()) {
      prepare.const_inputs[i] = &inputs[i].tensor();
    }
  }
  prepare.num_threads = pool->num_threads() + 1;
  GE_RETURN_IF_ERROR(kernel->Prepare(prepare));
  TestExecuteContext ctx(inputs, output_types, pool, prepare.workspace_bytes);
  GE_RETURN_IF_ERROR(kernel->Compute(ctx));
  const std::vector<bool> produced = ctx.produced();
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    if (!produced[i]) {
      return Internal("node '", op.name(), "' (", op.type(), ") did not produce output ", i);
    }
    if (options.check_output_types) {
      GE_RETURN_IF_ERROR(CheckOutput(op, i, ctx.outputs()[i], output_types[i]));
    }
  }
  return ctx.outputs();
}

absl::StatusOr<std::vector<Value>> RunKernel(const engine::Engine& engine, const ir::OpDesc& op,
                                             const std::vector<Value>& inputs,
                                             const RunOptions& options) {
  return RunKernel(engine.kernel_factory(), op, inputs, options);
}

absl::StatusOr<std::vector<Value>> RunOp(const engine::Engine& engine, const std::string& type,
                                         const std::vector<Value>& inputs,
                                         const ir::AttrMap& attrs, int num_outputs,
                                         const RunOptions& options) {
  OpBuilder builder(type);
  builder.Inputs(inputs).Outputs(num_outputs);
  for (const auto& [name, value] : attrs) builder.Attr(name, value);
  return RunKernel(engine, builder.Build(), inputs, options);
}

absl::StatusOr<Tensor> RunOp1(const engine::Engine& engine, const std::string& type,
                              const std::vector<Value>& inputs, const ir::AttrMap& attrs,
                              const RunOptions& options) {
  GE_ASSIGN_OR_RETURN(std::vector<Value> outputs, RunOp(engine, type, inputs, attrs, 1, options));
  if (!outputs[0].is_tensor()) return Internal(type, " did not produce a tensor");
  return outputs[0].tensor();
}

// ---- Comparing tensors ----

Tolerance DefaultTolerance(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat: return {1e-5, 1e-5};
    case DataType::kDouble: return {1e-12, 1e-12};
    case DataType::kFloat16: return {1e-2, 1e-2};
    case DataType::kBFloat16: return {2e-2, 2e-2};
    default: return {0, 0};
  }
}

namespace {

std::string IndexString(const Shape& shape, int64_t flat) {
  std::vector<int64_t> index(shape.dims().size());
  for (size_t d = index.size(); d-- > 0;) {
    index[d] = flat % shape.dim(d);
    flat /= shape.dim(d);
  }
  std::string out = "[";
  for (size_t d = 0; d < index.size(); ++d) StrAppend(&out, d ? "," : "", index[d]);
  return out + "]";
}

std::string ElementString(const Tensor& t, int64_t i) {
  if (t.dtype() == DataType::kString) return StrCat("\"", t.data<std::string>()[i], "\"");
  if (IsFloatingPoint(t.dtype())) {
    std::ostringstream s;
    s.precision(17);
    s << t.GetAsDouble(i);
    return s.str();
  }
  if (t.dtype() == DataType::kUint64) return StrCat(t.data<uint64_t>()[i]);
  return StrCat(t.GetAsInt64(i));
}

bool ElementsMatch(const Tensor& a, const Tensor& e, int64_t i, Tolerance tol, double* err) {
  *err = 0;
  switch (a.dtype()) {
    case DataType::kString: return a.data<std::string>()[i] == e.data<std::string>()[i];
    case DataType::kUint64: return a.data<uint64_t>()[i] == e.data<uint64_t>()[i];
    case DataType::kInt64: return a.data<int64_t>()[i] == e.data<int64_t>()[i];
    default: break;
  }
  const double x = a.GetAsDouble(i), y = e.GetAsDouble(i);
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  if (std::isinf(x) || std::isinf(y)) return x == y;
  *err = std::fabs(x - y);
  return *err <= tol.atol + tol.rtol * std::fabs(y);
}

}  // namespace

::testing::AssertionResult TensorNear(const Tensor& actual, const Tensor& expected,
                                       Tolerance tolerance) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    return ::testing::AssertionFailure()
           << "got " << DataTypeName(actual.dtype()) << actual.shape().ToString()
           << ", expected " << DataTypeName(expected.dtype()) << expected.shape().ToString();
  }
  int64_t mismatches = 0, first = -1;
  double max_err = 0;
  for (int64_t i = 0; i < actual.NumElements(); ++i) {
    double err = 0;
    if (!ElementsMatch(actual, expected, i, tolerance, &err)) {
      if (first < 0) first = i;
      ++mismatches;
    }
    max_err = std::max(max_err, err);
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << mismatches << " of " << actual.NumElements() << " elements differ (atol "
         << tolerance.atol << ", rtol " << tolerance.rtol << ", max abs error " << max_err
         << "); first at flat index " << first << " "
         << IndexString(actual.shape(), first) << ": got " << ElementString(actual, first)
         << ", expected " << ElementString(expected, first) << "\n  actual:   "
         << actual.DebugString() << "\n  expected: " << expected.DebugString();
}

::testing::AssertionResult TensorNear(const Tensor& actual, const Tensor& expected) {
  return TensorNear(actual, expected, DefaultTolerance(expected.dtype()));
}

::testing::AssertionResult TensorEq(const Tensor& actual, const Tensor& expected) {
  return TensorNear(actual, expected, Tolerance{0, 0});
}

namespace {

::testing::AssertionResult CompareOutput(const Value& got, const Value& want, size_t index,
                                         std::optional<Tolerance> tolerance) {
  if (got.kind() != want.kind()) {
    return ::testing::AssertionFailure() << "output " << index << " differs in kind";
  }
  std::vector<Tensor> a, b;
  if (got.is_tensor()) {
    a = {got.tensor()};
    b = {want.tensor()};
  } else if (got.is_sequence()) {
    a = got.sequence();
    b = want.sequence();
  }
  if (a.size() != b.size()) {
    return ::testing::AssertionFailure() << "output " << index << " has " << a.size()
                                         << " elements, the reference " << b.size();
  }
  for (size_t k = 0; k < a.size(); ++k) {
    ::testing::AssertionResult r =
        TensorNear(a[k], b[k], tolerance.value_or(DefaultTolerance(b[k].dtype())));
    if (!r) return ::testing::AssertionFailure() << "output " << index << ": " << r.message();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

::testing::AssertionResult MatchesReference(const engine::Engine& engine,
                                            const engine::Engine& reference,
                                            const ir::OpDesc& op,
                                            const std::vector<Value>& inputs,
                                            std::optional<Tolerance> tolerance,
                                            const RunOptions& options) {
  auto got = RunKernel(engine, op, inputs, options);
  if (!got.ok()) {
    return ::testing::AssertionFailure() << engine.attributes().name << " failed: " << got.status();
  }
  auto want = RunKernel(reference, op, inputs, options);
  if (!want.ok()) {
    return ::testing::AssertionFailure()
           << "the reference " << reference.attributes().name << " failed: " << want.status();
  }
  for (size_t i = 0; i < want->size(); ++i) {
    ::testing::AssertionResult r = CompareOutput((*got)[i], (*want)[i], i, tolerance);
    if (!r) {
      return ::testing::AssertionFailure() << engine.attributes().name << " vs "
                                           << reference.attributes().name << " on node '"
                                           << op.name() << "' (" << op.type() << "): "
                                           << r.message();
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ge::test

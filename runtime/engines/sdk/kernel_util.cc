// Out-of-line helpers of the engine SDK's kernel helpers (kernel_util.h):
// axis normalization, element copies, parallel splitting and the broadcast
// planner.
#include "runtime/engines/sdk/kernel_util.h"

#include <algorithm>
#include <optional>

#include "base/ops/op_registry.h"
#include "runtime/engines/sdk/broadcast.h"
#include "runtime/engines/sdk/parallel.h"

namespace ge::engine::sdk {
namespace {

// Below this many element operations a kernel runs on the calling thread:
// waking workers costs more than it saves.
constexpr int64_t kMinParallelWork = 1 << 15;
constexpr int64_t kMinBlockWork = 1 << 14;

}  // namespace

namespace {

template <typename T>
std::optional<T> AttrOrSchemaDefault(const ir::OpDesc& op, std::string_view name) {
  if (auto v = op.GetAttr<T>(name)) return v;
  const ops::OpSchema* schema = ops::OpRegistry::Global().Find(op.type());
  return schema != nullptr ? schema->GetAttr<T>(op, name) : std::nullopt;
}

}  // namespace

int64_t IntAttr(const ir::OpDesc& op, std::string_view name, int64_t def) {
  return AttrOrSchemaDefault<int64_t>(op, name).value_or(def);
}

float FloatAttr(const ir::OpDesc& op, std::string_view name, float def) {
  if (auto i = op.GetAttr<int64_t>(name)) return static_cast<float>(*i);
  return AttrOrSchemaDefault<float>(op, name).value_or(def);
}

std::vector<int64_t> IntsAttr(const ir::OpDesc& op, std::string_view name) {
  return AttrOrSchemaDefault<std::vector<int64_t>>(op, name).value_or(std::vector<int64_t>{});
}

std::string StringAttr(const ir::OpDesc& op, std::string_view name, std::string def) {
  return AttrOrSchemaDefault<std::string>(op, name).value_or(std::move(def));
}

absl::StatusOr<int64_t> NormalizeAxisFor(const ir::OpDesc& op, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return NodeError(op, "axis ", axis, " is out of range for rank ", rank);
  }
  return axis < 0 ? axis + rank : axis;
}

absl::Status CheckSameSize(const ir::OpDesc& op, const Tensor& in, const Tensor& out) {
  if (in.NumElements() != out.NumElements()) {
    return NodeError(op, "output ", out.shape().ToString(), " does not match input ", in.shape().ToString());
  }
  return absl::OkStatus();
}

absl::Status CheckBroadcastsTo(const ir::OpDesc& op, const Shape& in, int index, const Shape& out) {
  bool ok = in.dims().size() <= out.dims().size();
  for (size_t i = 0; ok && i < in.dims().size(); ++i) {
    const int64_t d = in.dims()[in.dims().size() - 1 - i];
    ok = d == 1 || d == out.dims()[out.dims().size() - 1 - i];
  }
  if (!ok) {
    return NodeError(op, "input ", index, " ", in.ToString(), " does not broadcast to the output ", out.ToString());
  }
  return absl::OkStatus();
}

void CopyElements(DataType dtype, const void* src, int64_t src_offset, void* dst, int64_t dst_offset, int64_t count) {
  if (count <= 0) return;
  if (dtype == DataType::kString) {
    const auto* s = static_cast<const std::string*>(src) + src_offset;
    auto* d = static_cast<std::string*>(dst) + dst_offset;
    std::copy(s, s + count, d);
    return;
  }
  const size_t size = DataTypeSize(dtype);
  std::memmove(static_cast<char*>(dst) + dst_offset * size, static_cast<const char*>(src) + src_offset * size,
               count * size);
}

absl::StatusOr<Tensor> CopyTensor(const Tensor& t) { return t.Clone(); }

int64_t DimProduct(absl::Span<const int64_t> dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) p *= dims[i];
  return p;
}

void ParallelFor(int threads, int64_t n, int64_t cost_per_item, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  cost_per_item = std::max<int64_t>(1, cost_per_item);
  if (threads <= 1 || n < 2 || n * cost_per_item < kMinParallelWork) {
    fn(0, n);
    return;
  }
  OmpParallelFor(threads, n, std::max<int64_t>(1, kMinBlockWork / cost_per_item), fn);
}

std::vector<int64_t> ReadInts(const Tensor& t) {
  if (!t.defined()) return {};
  return t.ToInt64Vector();
}

// ---- Broadcast planning ----

int64_t BroadcastPlan::num_rows() const {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < dims.size(); ++d) rows *= dims[d];
  return rows;
}

BroadcastPlan MakeStridedPlan(absl::Span<const int64_t> out_dims, const std::vector<std::vector<int64_t>>& in_strides) {
  const size_t k_count = in_strides.size();
  BroadcastPlan plan;
  plan.strides.resize(k_count);
  // Drop size-1 dims (their strides never matter), then merge dim d into the
  // previous kept dim when every operand is linear across the pair.
  for (size_t d = 0; d < out_dims.size(); ++d) {
    if (out_dims[d] == 1) continue;
    bool merge = !plan.dims.empty();
    for (size_t k = 0; merge && k < k_count; ++k) {
      merge = plan.strides[k].back() == in_strides[k][d] * out_dims[d];
    }
    if (merge) {
      plan.dims.back() *= out_dims[d];
      for (size_t k = 0; k < k_count; ++k) plan.strides[k].back() = in_strides[k][d];
    } else {
      plan.dims.push_back(out_dims[d]);
      for (size_t k = 0; k < k_count; ++k) plan.strides[k].push_back(in_strides[k][d]);
    }
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    for (size_t k = 0; k < k_count; ++k) plan.strides[k].push_back(0);
  }
  return plan;
}

BroadcastPlan MakeBroadcastPlan(absl::Span<const int64_t> out_dims,
                                const std::vector<absl::Span<const int64_t>>& inputs) {
  std::vector<std::vector<int64_t>> strides;
  strides.reserve(inputs.size());
  const size_t rank = out_dims.size();
  for (const auto& in : inputs) {
    std::vector<int64_t> s(rank, 0);
    int64_t stride = 1;
    // Align trailing dims; a dim of 1 (or a missing leading dim) broadcasts.
    for (size_t i = 0; i < in.size() && i < rank; ++i) {
      const size_t in_d = in.size() - 1 - i;
      const size_t out_d = rank - 1 - i;
      s[out_d] = in[in_d] == 1 ? 0 : stride;
      stride *= in[in_d];
    }
    strides.push_back(std::move(s));
  }
  return MakeStridedPlan(out_dims, strides);
}

}  // namespace ge::engine::sdk

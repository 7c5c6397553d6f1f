// ConvTapTrim: kernel taps that only read padding dropped (conv_tap_trim.h).
#include "runtime/engines/cpu_dense/conv_tap_trim.h"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/ops/shape_utils.h"
#include "base/status.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

// The trimmed geometry of one Conv: per spatial axis the first live tap and
// the new kernel size, pads and dilation.
struct Trim {
  std::vector<int64_t> first, kernel, pads, dilations;
};

// Whether tap `k` of an axis reads the input at some output position.
bool Live(int64_t k, int64_t input, int64_t outputs, int64_t stride, int64_t dilation, int64_t pad_begin) {
  for (int64_t o = 0; o < outputs; ++o) {
    const int64_t i = o * stride - pad_begin + k * dilation;
    if (i >= 0 && i < input) return true;
  }
  return false;
}

// The trim of `conv`, or nothing when every tap is live or the Conv is not
// eligible.
std::optional<Trim> FindTrim(const ir::Node& conv, const NodeFilter& can_rewrite) {
  if (conv.type() != "Conv" || !can_rewrite(conv) || conv.num_inputs() < 2 || !conv.input(0)) return std::nullopt;
  const ir::OpDesc& op = conv.op_desc();
  if (sdk::StringAttr(op, "auto_pad", "NOTSET") != "NOTSET") return std::nullopt;
  const ir::ValueType& xt = op.input(0).type;
  const ir::ValueType& wt = op.input(1).type;
  if (!xt.is_tensor() || !wt.is_tensor() || xt.shape().unknown_rank() || !wt.shape().IsFullyKnown()) {
    return std::nullopt;
  }
  const Shape& x = xt.shape();
  const Shape& w = wt.shape();
  const int64_t rank = x.rank();
  if (rank < 3 || w.rank() != rank || ConstInput(conv, 1) == nullptr) return std::nullopt;
  const auto spatial = static_cast<size_t>(rank - 2);
  const std::vector<int64_t> ones(spatial, 1);
  const std::vector<int64_t> strides = op.GetAttrOr<std::vector<int64_t>>("strides", ones);
  const std::vector<int64_t> dilations = op.GetAttrOr<std::vector<int64_t>>("dilations", ones);
  std::vector<int64_t> pads = op.GetAttrOr<std::vector<int64_t>>("pads", std::vector<int64_t>(2 * spatial, 0));
  const std::vector<int64_t> kernel = op.GetAttrOr<std::vector<int64_t>>("kernel_shape", {});
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial) return std::nullopt;
  if (!kernel.empty() && kernel.size() != spatial) return std::nullopt;
  Trim trim{std::vector<int64_t>(spatial, 0), {}, pads, dilations};
  bool trimmed = false;
  for (size_t a = 0; a < spatial; ++a) {
    const int64_t input = x.dim(a + 2);
    const int64_t k = w.dim(a + 2);
    if (input <= 0 || k <= 0 || strides[a] <= 0 || dilations[a] <= 0) return std::nullopt;
    if (!kernel.empty() && kernel[a] != k) return std::nullopt;
    auto dim = ops::ComputeWindowDim(input, k, strides[a], dilations[a], pads[a], pads[spatial + a],
                                     ops::AutoPad::kNotSet, false);
    if (!dim.ok() || dim->output <= 0) return std::nullopt;
    int64_t k0 = 0;
    int64_t k1 = k - 1;
    while (k0 <= k1 && !Live(k0, input, dim->output, strides[a], dilations[a], pads[a])) ++k0;
    while (k1 > k0 && !Live(k1, input, dim->output, strides[a], dilations[a], pads[a])) --k1;
    if (k0 > k1) return std::nullopt;  // no live tap: an all-bias output, left alone
    trim.first[a] = k0;
    trim.kernel.push_back(k1 - k0 + 1);
    trim.pads[a] = pads[a] - k0 * dilations[a];
    trim.pads[spatial + a] = pads[spatial + a] - (k - 1 - k1) * dilations[a];
    if (trim.pads[a] < 0 || trim.pads[spatial + a] < 0) return std::nullopt;
    if (k1 - k0 + 1 == 1) trim.dilations[a] = 1;
    trimmed = trimmed || k0 > 0 || k1 < k - 1;
  }
  if (!trimmed) return std::nullopt;
  return trim;
}

// The weights [M, C/group, k...] cut to the taps [first, first + kernel).
absl::StatusOr<Tensor> SliceWeights(const Tensor& w, const Shape& shape, const Trim& trim) {
  Shape out_shape = shape;
  for (size_t a = 0; a < trim.kernel.size(); ++a) out_shape.set_dim(a + 2, trim.kernel[a]);
  GE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(w.dtype(), out_shape));
  const size_t elem = w.NumElements() > 0 ? w.SizeInBytes() / static_cast<size_t>(w.NumElements()) : 0;
  const auto* src = static_cast<const char*>(w.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  const int64_t rank = shape.rank();
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (int64_t n = 0; n < out.NumElements(); ++n) {
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t i = d >= 2 ? index[d] + trim.first[d - 2] : index[d];
      offset = offset * shape.dim(d) + i;
    }
    std::memcpy(dst + n * elem, src + offset * elem, elem);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < out_shape.dim(d)) break;
      index[d] = 0;
    }
  }
  return out;
}

absl::Status Rewrite(ir::Graph& graph, ir::Node* conv, const Trim& trim) {
  const Tensor& w = *ConstInput(*conv, 1);
  GE_ASSIGN_OR_RETURN(Tensor sliced, SliceWeights(w, conv->op_desc().input(1).type.shape(), trim));
  const ir::ValueType type = ir::ValueType::Tensor(sliced.dtype(), sliced.shape());
  const std::string old = conv->input(1).node->name();
  GE_ASSIGN_OR_RETURN(ir::Node * c, AddConst(graph, conv->name() + "_trimmed_weights", std::move(sliced)));
  graph.RemoveInputEdge(conv, 1);
  GE_RETURN_IF_ERROR(graph.AddEdge(c, 0, conv, 1));
  ir::OpDesc& op = conv->mutable_op_desc();
  op.mutable_input(1).type = type;
  op.SetAttr("kernel_shape", ir::AttrValue(trim.kernel));
  op.SetAttr("pads", ir::AttrValue(trim.pads));
  op.SetAttr("dilations", ir::AttrValue(trim.dilations));
  RemoveIfUnused(graph, graph.FindNode(old));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> TrimConvTaps(ir::Graph& graph, const NodeFilter& can_rewrite) {
  std::vector<std::string> names;
  graph.ForEachNode([&](ir::Node* n) {
    if (n->type() == "Conv") names.push_back(n->name());
  });
  bool changed = false;
  for (const std::string& name : names) {
    ir::Node* conv = graph.FindNode(name);
    if (conv == nullptr) continue;
    const std::optional<Trim> trim = FindTrim(*conv, can_rewrite);
    if (!trim) continue;
    GE_RETURN_IF_ERROR(Rewrite(graph, conv, *trim));
    changed = true;
  }
  return changed;
}

}  // namespace ge::engine::cpu_dense

// The `_ChannelSoftmax` schema, its kernel and the pass that forms it
// (channel_softmax.h).
#include "runtime/engines/cpu_dense/channel_softmax.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/ir/op_types.h"
#include "base/status.h"
#include "runtime/engines/cpu_dense/channel_block.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"

namespace ge::engine::cpu_dense {
namespace {

using Kind = ir::AttrValue::Kind;
using Dims = std::vector<int64_t>;

int64_t Product(const Dims& d) { return std::accumulate(d.begin(), d.end(), int64_t{1}, std::multiplies<>()); }

// The output shapes the attributes give, for a batch of `batch`.
std::vector<Shape> OutputShapes(const ir::OpDesc& op, int64_t batch) {
  const Dims ranks = op.GetAttrOr<Dims>("ranks", {});
  const Dims dims = op.GetAttrOr<Dims>("dims", {});
  std::vector<Shape> shapes;
  size_t at = 0;
  for (int64_t r : ranks) {
    Dims d = {batch};
    for (int64_t i = 0; i < r && at < dims.size(); ++i) d.push_back(dims[at++]);
    shapes.emplace_back(d);
  }
  return shapes;
}

absl::Status InferChannelSoftmax(ops::InferenceContext& ctx) {
  const ir::ValueType& x = ctx.input_type(0);
  if (!x.is_tensor()) return ctx.Error("input X is not a tensor");
  const Shape& s = x.shape();
  if (s.unknown_rank() || s.rank() < 2) return ctx.Error("input X must have a batch and a known rank");
  const std::vector<Shape> shapes = OutputShapes(ctx.op(), s.dim(0));
  if (static_cast<int>(shapes.size()) != ctx.num_outputs()) {
    return ctx.Error(shapes.size(), " output shapes for ", ctx.num_outputs(), " outputs");
  }
  for (int j = 0; j < ctx.num_outputs(); ++j) ctx.set_output(j, x.dtype(), shapes[j]);
  return absl::OkStatus();
}

// ---- the kernel ----

class ChannelSoftmaxKernel final : public DenseKernel {
 public:
  ChannelSoftmaxKernel(const ir::OpDesc& op, const DenseContext& ctx)
      : DenseKernel(op, ctx), groups_(op.GetAttrOr<Dims>("groups", {})), sources_(op.GetAttrOr<Dims>("sources", {})) {
    const int64_t size = static_cast<int64_t>(groups_.size());
    valid_ = std::all_of(groups_.begin(), groups_.end(), [size](int64_t g) { return g >= 0 && g < size; });
    if (!valid_) return;
    const int64_t count = groups_.empty() ? 0 : *std::max_element(groups_.begin(), groups_.end()) + 1;
    start_.assign(static_cast<size_t>(count + 1), 0);
    for (int64_t g : groups_) ++start_[g + 1];
    for (size_t g = 1; g < start_.size(); ++g) start_[g] += start_[g - 1];
    members_.resize(groups_.size());
    Dims fill(start_.begin(), start_.end() - 1);
    for (size_t t = 0; t < groups_.size(); ++t) members_[fill[groups_[t]]++] = static_cast<int64_t>(t);
  }

 private:
  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    const Shape& x = r.shape(0);
    const int64_t t = static_cast<int64_t>(groups_.size());
    int64_t per_sample = 1;
    for (int64_t d = 1; d < x.rank(); ++d) per_sample *= x.dim(d);
    if (!valid_) return NodeError(op(), "group ids outside [0, ", t, ")");
    if (x.rank() < 2 || per_sample != t) {
      return NodeError(op(), "input ", x.ToString(), " does not hold ", t, " values a sample");
    }
    for (int64_t s : sources_) {
      if (s < 0 || s >= t) return NodeError(op(), "source ", s, " outside the ", t, " values");
    }
    return std::make_unique<Plan>();
  }

  absl::Status Run(Plan& /*plan*/, ExecuteContext& ctx, Scratch& /*scratch*/) override {
    const Tensor& xt = ctx.input(0);
    const int64_t n = xt.shape().dim(0), t = static_cast<int64_t>(groups_.size());
    const std::vector<Shape> shapes = OutputShapes(op(), n);
    std::vector<float*> out;
    for (size_t j = 0; j < shapes.size(); ++j) {
      GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(static_cast<int>(j), shapes[j]));
      out.push_back(y.data<float>());
    }
    if (n == 0) return absl::OkStatus();
    // Channels-last or whole-block channel-blocked storage of one position
    // per sample (X's dims past the channels all 1) is the plain storage:
    // one walk reads any of them.
    const float* x = xt.data<float>();
    probs_.resize(static_cast<size_t>(t));
    for (int64_t b = 0; b < n; ++b) {
      const float* xs = x + b * t;
      for (size_t g = 0; g + 1 < start_.size(); ++g) {
        float mx = -INFINITY;
        for (int64_t i = start_[g]; i < start_[g + 1]; ++i) mx = std::max(mx, xs[members_[i]]);
        double sum = 0;
        for (int64_t i = start_[g]; i < start_[g + 1]; ++i) {
          const float e = std::exp(xs[members_[i]] - mx);
          probs_[members_[i]] = e;
          sum += e;
        }
        const float inv = static_cast<float>(1.0 / sum);
        for (int64_t i = start_[g]; i < start_[g + 1]; ++i) probs_[members_[i]] *= inv;
      }
      size_t at = 0;
      for (size_t j = 0; j < shapes.size(); ++j) {
        const int64_t size = shapes[j].NumElementsUnchecked() / n;
        float* y = out[j] + b * size;
        for (int64_t i = 0; i < size; ++i) y[i] = probs_[sources_[at + i]];
        at += static_cast<size_t>(size);
      }
    }
    return absl::OkStatus();
  }

  Dims groups_, sources_;
  bool valid_ = false;    // every group id within [0, T)
  Dims start_, members_;  // each group's members: members_[start_[g], start_[g + 1])
  std::vector<float> probs_;
};

absl::Status CheckChannelSoftmax(const ir::OpDesc& op, const DenseContext& /*ctx*/) {
  if (op.num_inputs() != 1 || op.num_outputs() < 1) return Unsupported(op, "not one input and some outputs");
  const ir::TensorDesc& in = op.input(0).type.tensor();
  const Shape& s = in.shape;
  const bool one_position = !s.unknown_rank() && [&] {
    for (int64_t d = 2; d < s.rank(); ++d) {
      if (s.dim(d) != 1) return false;
    }
    return true;
  }();
  const bool plain = in.format == ir::Format::kND || in.format == ir::Format::kNCHW || in.format == ir::Format::kNCDHW;
  // One position per sample: channels-last storage, and channel-blocked
  // storage of whole blocks, is the plain storage.
  const int64_t block = LayoutChannelBlock(in.format, s.unknown_rank() || s.rank() < 2 ? 1 : s.dim(1));
  const bool whole_blocks = block > 1 && !s.unknown_rank() && s.rank() >= 2 && s.dim(1) > 0 && s.dim(1) % block == 0;
  if (!plain && !(whole_blocks && one_position)) {
    return Unsupported(op, "input layout ", ir::FormatName(in.format));
  }
  for (const ir::IoDesc& o : op.outputs()) {
    const ir::Format f = o.type.tensor().format;
    if (f != ir::Format::kND && f != ir::Format::kNCHW && f != ir::Format::kNCDHW) {
      return Unsupported(op, "output layout ", ir::FormatName(f));
    }
  }
  return absl::OkStatus();
}

// ---- the pass ----

// Which of X's per-sample values each element of a tensor is (row-major),
// and the tensor's per-sample dims.
struct Indexed {
  Dims dims;
  Dims idx;
};

bool Rewritable(const ir::Node& n, const NodeFilter& can_rewrite) {
  return can_rewrite(n) && n.control_inputs().empty() && n.control_outputs().empty();
}

bool IsView(std::string_view t) {
  return t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze" || t == ir::kIdentity;
}

// The per-sample dims of `type` when it keeps X's batch (`batch`, -1:
// unknown) and every other dim is known.
std::optional<Dims> SampleDims(const ir::ValueType& type, int64_t batch) {
  if (!type.is_tensor() || type.shape().unknown_rank() || type.shape().rank() < 1) return std::nullopt;
  const Shape& s = type.shape();
  if (s.dim(0) != batch) return std::nullopt;
  Dims d;
  for (int64_t i = 1; i < s.rank(); ++i) {
    if (s.dim(i) < 0) return std::nullopt;
    d.push_back(s.dim(i));
  }
  return d;
}

// Row-major strides of `dims`.
Dims Strides(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// The box [begin, begin + extent) of `in`.
Indexed Box(const Indexed& in, const Dims& begin, const Dims& extent) {
  Indexed out{extent, Dims(static_cast<size_t>(Product(extent)))};
  const Dims from = Strides(in.dims), to = Strides(extent);
  for (int64_t o = 0; o < static_cast<int64_t>(out.idx.size()); ++o) {
    int64_t at = 0;
    for (size_t k = 0; k < extent.size(); ++k) at += (o / to[k] % extent[k] + begin[k]) * from[k];
    out.idx[o] = in.idx[at];
  }
  return out;
}

// One movement node applied to its input 0 (per output port), or nothing
// when it is not one the pass evaluates.
std::optional<std::vector<Indexed>> Apply(const ir::Node& n, const Indexed& in, int64_t batch) {
  const ir::OpDesc& op = n.op_desc();
  const int64_t rank = static_cast<int64_t>(in.dims.size()) + 1;
  auto axis_of = [&](int64_t a) -> std::optional<size_t> {
    if (a < 0) a += rank;
    if (a < 1 || a >= rank) return std::nullopt;
    return static_cast<size_t>(a - 1);
  };
  std::vector<Dims> outs;
  for (int o = 0; o < n.num_outputs(); ++o) {
    auto d = SampleDims(op.output(o).type, batch);
    if (!d) return std::nullopt;
    outs.push_back(*d);
  }
  const std::string& t = n.type();
  if (IsView(t)) {
    if (outs.size() != 1 || Product(outs[0]) != Product(in.dims)) return std::nullopt;
    return std::vector<Indexed>{{outs[0], in.idx}};
  }
  if (t == "Transpose") {
    const Dims perm = op.GetAttrOr<Dims>("perm", {});
    if (static_cast<int64_t>(perm.size()) != rank || perm[0] != 0) return std::nullopt;
    Indexed out{Dims(in.dims.size()), Dims(in.idx.size())};
    for (size_t k = 0; k < out.dims.size(); ++k) {
      if (perm[k + 1] < 1 || perm[k + 1] >= rank) return std::nullopt;
      out.dims[k] = in.dims[perm[k + 1] - 1];
    }
    if (out.dims != outs[0]) return std::nullopt;
    const Dims from = Strides(in.dims), to = Strides(out.dims);
    for (int64_t o = 0; o < static_cast<int64_t>(out.idx.size()); ++o) {
      int64_t at = 0;
      for (size_t k = 0; k < out.dims.size(); ++k) at += o / to[k] % out.dims[k] * from[perm[k + 1] - 1];
      out.idx[o] = in.idx[at];
    }
    return std::vector<Indexed>{out};
  }
  if (t == "Gather") {
    const auto k = axis_of(op.GetAttrOr<int64_t>("axis", 0));
    const Tensor* indices = ConstInput(n, 1);
    if (!k || indices == nullptr || n.num_inputs() != 2) return std::nullopt;
    const int64_t extent = in.dims[*k], inner = Product(Dims(in.dims.begin() + *k + 1, in.dims.end()));
    const int64_t outer = Product(Dims(in.dims.begin(), in.dims.begin() + *k)), q = indices->NumElements();
    if (Product(outs[0]) != outer * q * inner) return std::nullopt;
    Indexed out{outs[0], Dims(static_cast<size_t>(outer * q * inner))};
    for (int64_t i = 0; i < q; ++i) {
      int64_t j = static_cast<int64_t>(indices->GetAsDouble(i));
      if (j < 0) j += extent;
      if (j < 0 || j >= extent) return std::nullopt;
      for (int64_t a = 0; a < outer; ++a) {
        for (int64_t b = 0; b < inner; ++b) out.idx[(a * q + i) * inner + b] = in.idx[(a * extent + j) * inner + b];
      }
    }
    return std::vector<Indexed>{out};
  }
  if (t == "Split") {
    const auto k = axis_of(op.GetAttrOr<int64_t>("axis", 0));
    if (!k) return std::nullopt;
    std::vector<Indexed> parts;
    Dims begin(in.dims.size(), 0);
    for (const Dims& d : outs) {
      if (d.size() != in.dims.size()) return std::nullopt;
      for (size_t i = 0; i < d.size(); ++i) {
        if (i != *k && d[i] != in.dims[i]) return std::nullopt;
      }
      if (begin[*k] + d[*k] > in.dims[*k]) return std::nullopt;
      parts.push_back(Box(in, begin, d));
      begin[*k] += d[*k];
    }
    if (begin[*k] != in.dims[*k]) return std::nullopt;
    return parts;
  }
  if (t == "Slice") {
    if (n.num_inputs() < 3 || outs[0].size() != in.dims.size()) return std::nullopt;
    const Tensor* starts = ConstInput(n, 1);
    const Tensor* axes = n.num_inputs() > 3 && n.input(3) ? ConstInput(n, 3) : nullptr;
    const Tensor* steps = n.num_inputs() > 4 && n.input(4) ? ConstInput(n, 4) : nullptr;
    if (starts == nullptr || ConstInput(n, 2) == nullptr || (n.num_inputs() > 3 && n.input(3) && axes == nullptr) ||
        (n.num_inputs() > 4 && n.input(4) && steps == nullptr)) {
      return std::nullopt;
    }
    Dims begin(in.dims.size(), 0);
    for (int64_t i = 0; i < starts->NumElements(); ++i) {
      const auto k = axis_of(axes != nullptr ? static_cast<int64_t>(axes->GetAsDouble(i)) : i);
      if (!k || (steps != nullptr && steps->GetAsDouble(i) != 1.0)) return std::nullopt;
      double s = starts->GetAsDouble(i);
      if (s < 0) s += static_cast<double>(in.dims[*k]);
      begin[*k] = static_cast<int64_t>(std::clamp(s, 0.0, static_cast<double>(in.dims[*k])));
    }
    for (size_t i = 0; i < in.dims.size(); ++i) {
      if (begin[i] + outs[0][i] > in.dims[i]) return std::nullopt;
    }
    return std::vector<Indexed>{Box(in, begin, outs[0])};
  }
  return std::nullopt;
}

struct Match {
  ir::OutPort x;
  std::vector<ir::Node*> nodes;  // the movement nodes and the Softmax
  std::vector<std::pair<ir::OutPort, Indexed>> leaves;
  Dims groups;
};

// Follows `port` (a tensor of the softmax's result) through movement nodes
// to the tensors read by anything else (the leaves).
void Follow(const ir::OutPort& port, const Indexed& value, int64_t batch, const NodeFilter& can_rewrite, Match& m) {
  const std::vector<ir::InPort> uses = port.node->consumers(port.index);
  if (uses.empty()) return;
  std::vector<std::vector<Indexed>> applied;
  for (const ir::InPort& use : uses) {
    std::optional<std::vector<Indexed>> outs;
    if (use.index == 0 && Rewritable(*use.node, can_rewrite)) outs = Apply(*use.node, value, batch);
    if (!outs) {
      m.leaves.emplace_back(port, value);
      return;
    }
    applied.push_back(std::move(*outs));
  }
  for (size_t u = 0; u < uses.size(); ++u) {
    m.nodes.push_back(uses[u].node);
    for (int o = 0; o < uses[u].node->num_outputs(); ++o) {
      Follow({uses[u].node, o}, applied[u][o], batch, can_rewrite, m);
    }
  }
}

std::optional<Match> MatchAt(ir::Node& softmax, const NodeFilter& can_rewrite) {
  if (!Rewritable(softmax, can_rewrite) || softmax.num_inputs() != 1 || !softmax.input(0) ||
      softmax.op_desc().GetAttrOr<int64_t>("_onnx_opset", 13) < 13) {
    return std::nullopt;
  }
  // Back through views and Transposes to X.
  std::vector<ir::Node*> before;
  ir::OutPort p = softmax.input(0);
  while ((IsView(p.node->type()) || p.node->type() == "Transpose") && p.index == 0 && p.node->num_outputs() == 1 &&
         p.node->consumers(0).size() == 1 && Rewritable(*p.node, can_rewrite) && p.node->input(0)) {
    before.insert(before.begin(), p.node);
    p = p.node->input(0);
  }
  Match m;
  m.x = p;
  const ir::ValueType& xt = p.node->op_desc().output(p.index).type;
  if (!xt.is_tensor() || xt.dtype() != DataType::kFloat || xt.shape().unknown_rank() || xt.shape().rank() < 2 ||
      p.node->type() == ir::kConst) {
    return std::nullopt;
  }
  const int64_t batch = xt.shape().dim(0);
  auto xdims = SampleDims(xt, batch);
  if (!xdims || Product(*xdims) <= 0 || Product(*xdims) > kMaxChannelSoftmaxValues) return std::nullopt;
  // X is a vector per sample ([N, T] or [N, T, 1, ...]: a pooled or 1x1
  // convolution's logits), not a map or an attention's scores (cpu_fused's).
  for (size_t d = 1; d < xdims->size(); ++d) {
    if ((*xdims)[d] != 1) return std::nullopt;
  }
  Indexed v{*xdims, Dims(static_cast<size_t>(Product(*xdims)))};
  std::iota(v.idx.begin(), v.idx.end(), int64_t{0});
  for (ir::Node* n : before) {
    auto outs = Apply(*n, v, batch);
    if (!outs) return std::nullopt;
    v = std::move((*outs)[0]);
  }
  // The softmax's groups: the values that differ only along its axis.
  const int64_t rank = static_cast<int64_t>(v.dims.size()) + 1;
  int64_t axis = softmax.op_desc().GetAttrOr<int64_t>("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 1 || axis >= rank || !SampleDims(softmax.op_desc().output(0).type, batch)) return std::nullopt;
  const size_t k = static_cast<size_t>(axis - 1);
  const int64_t inner = Product(Dims(v.dims.begin() + k + 1, v.dims.end())), extent = v.dims[k];
  m.groups.assign(v.idx.size(), 0);
  for (int64_t q = 0; q < static_cast<int64_t>(v.idx.size()); ++q) {
    m.groups[v.idx[q]] = q / (extent * inner) * inner + q % inner;
  }
  m.nodes = before;
  m.nodes.push_back(&softmax);
  Follow({&softmax, 0}, v, batch, can_rewrite, m);
  if (m.nodes.size() < 2 || m.leaves.empty()) return std::nullopt;
  return m;
}

absl::Status Rewrite(ir::Graph& graph, ir::Node* softmax, const Match& m) {
  const std::string name = softmax->name();
  ir::OpDesc op(graph.UniqueNodeName(name + "_channels"), std::string(kChannelSoftmaxOp));
  op.AddInput(m.x.node->op_desc().output(m.x.index));
  Dims ranks, dims, sources;
  for (const auto& [port, value] : m.leaves) {
    op.AddOutput(port.node->op_desc().output(port.index));
    ranks.push_back(static_cast<int64_t>(value.dims.size()));
    dims.insert(dims.end(), value.dims.begin(), value.dims.end());
    sources.insert(sources.end(), value.idx.begin(), value.idx.end());
  }
  op.SetAttr("groups", ir::AttrValue(m.groups));
  op.SetAttr("sources", ir::AttrValue(std::move(sources)));
  op.SetAttr("ranks", ir::AttrValue(std::move(ranks)));
  op.SetAttr("dims", ir::AttrValue(std::move(dims)));
  GE_ASSIGN_OR_RETURN(ir::Node * fused, graph.AddNode(std::move(op)));
  GE_RETURN_IF_ERROR(graph.AddEdge(m.x.node, m.x.index, fused, 0));
  for (size_t j = 0; j < m.leaves.size(); ++j) {
    const ir::OutPort& leaf = m.leaves[j].first;
    GE_RETURN_IF_ERROR(graph.ReplaceAllUses(leaf.node, leaf.index, fused, static_cast<int>(j)));
  }
  std::vector<std::string> inputs;
  for (ir::Node* n : m.nodes) {
    for (int i = 1; i < n->num_inputs(); ++i) {
      if (n->input(i)) inputs.push_back(n->input(i).node->name());
    }
  }
  for (auto it = m.nodes.rbegin(); it != m.nodes.rend(); ++it) graph.RemoveNode(*it);
  RemoveDeadProducers(graph, std::move(inputs));
  return graph.RenameNode(fused, name);
}

}  // namespace

absl::Status RegisterChannelSoftmaxOp(ops::OpRegistry& registry) {
  if (registry.Find(kChannelSoftmaxOp) != nullptr) return absl::OkStatus();
  ops::OpSchemaBuilder b{std::string(kChannelSoftmaxOp), 1};
  b.Doc(
       "cpu_dense: per sample, the softmax of X within `groups`, output j holding the values `sources` "
       "names for it, of shape [N, dims...] (`ranks[j]` dims).")
      .Input("X", "T")
      .VariadicOutput("Y", "T", 1)
      .TypeConstraint("T", {DataType::kFloat})
      .RequiredAttr("groups", Kind::kInts)
      .RequiredAttr("sources", Kind::kInts)
      .RequiredAttr("ranks", Kind::kInts)
      .RequiredAttr("dims", Kind::kInts)
      .Infer(InferChannelSoftmax);
  return registry.Register(std::move(b).Build());
}

absl::StatusOr<bool> FuseChannelSoftmaxes(ir::Graph& graph, const NodeFilter& can_rewrite) {
  std::vector<std::string> names;
  graph.ForEachNode([&](const ir::Node* n) {
    if (n->type() == "Softmax") names.push_back(n->name());
  });
  bool changed = false;
  for (const std::string& name : names) {
    ir::Node* softmax = graph.FindNode(name);
    if (softmax == nullptr) continue;
    const std::optional<Match> m = MatchAt(*softmax, can_rewrite);
    if (!m) continue;
    GE_RETURN_IF_ERROR(Rewrite(graph, softmax, *m));
    changed = true;
  }
  return changed;
}

void RegisterChannelSoftmaxKernels(DenseKernelTable& table) {
  table.Add({std::string(kChannelSoftmaxOp),
             {DataType::kFloat},
             CheckChannelSoftmax,
             [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ChannelSoftmaxKernel(op, ctx));
             }});
}

}  // namespace ge::engine::cpu_dense

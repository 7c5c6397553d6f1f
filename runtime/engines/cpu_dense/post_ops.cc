// Post-op chains: names, attribute round trip and the oneDNN post-op list.
#include "runtime/engines/cpu_dense/post_ops.h"

#include <algorithm>
#include <array>
#include <utility>

#include "base/status.h"
#include "base/strings.h"

namespace ge::engine::cpu_dense {
namespace {

constexpr std::array<std::pair<PostOpKind, std::string_view>, 11> kNames = {{
    {PostOpKind::kAdd, "add"},
    {PostOpKind::kRelu, "relu"},
    {PostOpKind::kClip, "clip"},
    {PostOpKind::kSigmoid, "sigmoid"},
    {PostOpKind::kTanh, "tanh"},
    {PostOpKind::kElu, "elu"},
    {PostOpKind::kGeluErf, "gelu_erf"},
    {PostOpKind::kHardSwish, "hardswish"},
    {PostOpKind::kSwish, "swish"},
    {PostOpKind::kLinear, "linear"},
    {PostOpKind::kGeluTanh, "gelu_tanh"},
}};

dnnl::algorithm EltwiseAlgorithm(PostOpKind kind) {
  switch (kind) {
    case PostOpKind::kRelu: return dnnl::algorithm::eltwise_relu;
    case PostOpKind::kClip: return dnnl::algorithm::eltwise_clip_v2;
    case PostOpKind::kSigmoid: return dnnl::algorithm::eltwise_logistic;
    case PostOpKind::kTanh: return dnnl::algorithm::eltwise_tanh;
    case PostOpKind::kElu: return dnnl::algorithm::eltwise_elu;
    case PostOpKind::kGeluErf: return dnnl::algorithm::eltwise_gelu_erf;
    case PostOpKind::kGeluTanh: return dnnl::algorithm::eltwise_gelu_tanh;
    case PostOpKind::kHardSwish: return dnnl::algorithm::eltwise_hardswish;
    case PostOpKind::kSwish: return dnnl::algorithm::eltwise_swish;
    case PostOpKind::kLinear: return dnnl::algorithm::eltwise_linear;
    case PostOpKind::kAdd: break;
  }
  return dnnl::algorithm::undef;
}

}  // namespace

bool PostOpChain::has_add() const {
  return std::any_of(ops.begin(), ops.end(), [](const PostOp& p) { return p.kind == PostOpKind::kAdd; });
}

std::string_view PostOpName(PostOpKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "?";
}

std::optional<PostOpKind> ParsePostOpName(std::string_view name) {
  for (const auto& [k, n] : kNames) {
    if (n == name) return k;
  }
  return std::nullopt;
}

absl::StatusOr<PostOpChain> ParsePostOps(const ir::OpDesc& op) {
  const auto names = op.GetAttrOr<std::vector<std::string>>(kAttrPostOps, {});
  const auto alphas = op.GetAttrOr<std::vector<float>>(kAttrPostAlpha, {});
  const auto betas = op.GetAttrOr<std::vector<float>>(kAttrPostBeta, {});
  if (alphas.size() != names.size() || betas.size() != names.size()) {
    return InvalidArgument("node '", op.name(), "' (", op.type(), "): ", kAttrPostOps, " has ",
                           names.size(), " steps but ", kAttrPostAlpha, " ", alphas.size(),
                           " and ", kAttrPostBeta, " ", betas.size());
  }
  PostOpChain chain;
  for (size_t i = 0; i < names.size(); ++i) {
    std::optional<PostOpKind> kind = ParsePostOpName(names[i]);
    if (!kind) {
      return InvalidArgument("node '", op.name(), "' (", op.type(), "): unknown post-op '",
                             names[i], "'");
    }
    if (*kind == PostOpKind::kAdd && chain.has_add()) {
      return InvalidArgument("node '", op.name(), "' (", op.type(), "): more than one add post-op");
    }
    chain.ops.push_back({*kind, alphas[i], betas[i]});
  }
  return chain;
}

void SetPostOps(const PostOpChain& chain, ir::OpDesc& op) {
  std::vector<std::string> names;
  std::vector<float> alphas, betas;
  for (const PostOp& p : chain.ops) {
    names.emplace_back(PostOpName(p.kind));
    alphas.push_back(p.alpha);
    betas.push_back(p.beta);
  }
  op.SetAttr(kAttrPostOps, ir::AttrValue(std::move(names)));
  op.SetAttr(kAttrPostAlpha, ir::AttrValue(std::move(alphas)));
  op.SetAttr(kAttrPostBeta, ir::AttrValue(std::move(betas)));
}

void AppendPostOps(const PostOpChain& chain, AddMode add_mode, const dnnl::memory::desc& add_md,
                   dnnl::post_ops& ops) {
  for (const PostOp& p : chain.ops) {
    if (p.kind == PostOpKind::kAdd) {
      if (add_mode == AddMode::kSum) {
        ops.append_sum(1.0f);
      } else {
        ops.append_binary(dnnl::algorithm::binary_add, add_md);
      }
      continue;
    }
    ops.append_eltwise(1.0f, EltwiseAlgorithm(p.kind), p.alpha, p.beta);
  }
}

int BinaryAddArg(const PostOpChain& chain, int first_index) {
  for (size_t i = 0; i < chain.ops.size(); ++i) {
    if (chain.ops[i].kind == PostOpKind::kAdd) {
      return DNNL_ARG_ATTR_MULTIPLE_POST_OP(first_index + static_cast<int>(i)) | DNNL_ARG_SRC_1;
    }
  }
  return -1;
}

}  // namespace ge::engine::cpu_dense

// LayOutWeightPanels: see weight_panels.h.
#include "runtime/engines/cpu_dense/weight_panels.h"

#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/ir/op_types.h"
#include "runtime/engines/cpu_dense/dense_fused_op.h"
#include "runtime/engines/cpu_dense/gemm_loops.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/cpu_dense/packed_matmul.h"
#include "runtime/engines/cpu_dense/post_ops.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

// How a product reads its B.
struct BUse {
  int64_t k = 0, n = 0;
  bool transposed = false;
  friend bool operator==(const BUse& a, const BUse& b) {
    return a.k == b.k && a.n == b.n && a.transposed == b.transposed;
  }
};

// How `reader` reads the matrix `b` at input 1, when its product surely
// takes the packed path; nullopt otherwise.
std::optional<BUse> PackedUse(const ir::Node& reader, const Shape& b) {
  const ir::OpDesc& op = reader.op_desc();
  std::optional<ir::OpDesc> base;
  if (op.type() == "MatMul" || op.type() == "Gemm") {
    base = op;
  } else if (op.type() == kDenseFusedOp) {
    absl::StatusOr<ir::OpDesc> fused = BaseOpDesc(op);
    if (!fused.ok() || (fused->type() != "MatMul" && fused->type() != "Gemm")) return std::nullopt;
    base = *std::move(fused);
  } else {
    return std::nullopt;
  }
  if (InputDtype(op, 0) != DataType::kFloat) return std::nullopt;
  const Shape a = InputShape(op, 0);
  if (!a.IsFullyKnown() || a.rank() < 1) return std::nullopt;
  BUse use;
  int64_t m = 1;
  if (base->type() == "Gemm") {
    if (sdk::IntAttr(*base, "transA", 0) != 0 || sdk::FloatAttr(*base, "alpha", 1.0f) != 1.0f) return std::nullopt;
    if (a.rank() != 2) return std::nullopt;
    use.transposed = sdk::IntAttr(*base, "transB", 0) != 0;
    m = a.dim(0);
    use.k = a.dim(1);
    use.n = b.dim(use.transposed ? 0 : 1);
    if (b.dim(use.transposed ? 1 : 0) != use.k) return std::nullopt;
    // C reaches the result as a bias row only (else a sum the path lacks).
    if (op.num_inputs() > 2 && InputDtype(op, 2) != DataType::kUndefined &&
        sdk::FloatAttr(*base, "beta", 1.0f) != 0.0f) {
      const Shape c = InputShape(op, 2);
      const bool bias = sdk::FloatAttr(*base, "beta", 1.0f) == 1.0f &&
                        ((c.rank() == 1 && c.dim(0) == use.n) || (c.rank() == 2 && c.dim(0) == 1 && c.dim(1) == use.n));
      if (!bias) return std::nullopt;
    }
  } else {
    use.k = b.dim(0);
    use.n = b.dim(1);
    if (a.dim(a.rank() - 1) != use.k) return std::nullopt;
    for (int i = 0; i + 1 < a.rank(); ++i) m *= a.dim(i);
  }
  if (use.n % kGemmPanel != 0 || !PackedGemmFits(m, use.k, use.n)) return std::nullopt;
  return use;
}

// The panels made from one storage, shared by every graph that lays out
// the same constant the same way: the per-shape graphs of a JIT-compiled
// model are each compiled from a copy of the source graph, whose Consts
// share the source's storage, and would otherwise hold a copy each. Keyed
// by the storage's address, checked against a weak reference to it (an
// address reused by other storage after the first died is no match); holds
// neither the storage nor the panels alive.
class PanelCache {
 public:
  static PanelCache& Get() {
    static PanelCache* cache = new PanelCache();
    return *cache;
  }

  absl::StatusOr<Tensor> PanelsOf(const Tensor& b, const BUse& use) {
    const Key key{b.buffer().get(), b.byte_offset(), use.k, use.n, use.transposed};
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      std::shared_ptr<Buffer> source = it->second.source.lock();
      std::shared_ptr<Buffer> panels = it->second.panels.lock();
      if (source == b.buffer() && panels != nullptr) return Tensor(DataType::kFloat, b.shape(), panels);
    }
    GE_ASSIGN_OR_RETURN(Tensor panels, Tensor::Allocate(DataType::kFloat, b.shape()));
    PackPanels(b.data<float>(), use.k, use.n, use.transposed, panels.data<float>());
    for (auto e = entries_.begin(); e != entries_.end();) {
      e = e->second.source.expired() || e->second.panels.expired() ? entries_.erase(e) : std::next(e);
    }
    entries_[key] = Entry{b.buffer(), panels.buffer()};
    return panels;
  }

 private:
  using Key = std::tuple<const Buffer*, size_t, int64_t, int64_t, bool>;
  struct Entry {
    std::weak_ptr<Buffer> source;
    std::weak_ptr<Buffer> panels;
  };
  std::mutex mu_;
  std::map<Key, Entry> entries_;
};

}  // namespace

absl::StatusOr<bool> LayOutWeightPanels(ir::Graph& graph, const NodeFilter& can_rewrite) {
  bool changed = false;
  for (ir::Node* konst : graph.nodes()) {
    if (konst->type() != ir::kConst || konst->op_desc().GetAttrOr<bool>(kAttrGemmPanels, false)) continue;
    const ir::AttrValue* value = konst->op_desc().FindAttr(ir::kAttrValue);
    const Tensor* b = value != nullptr ? value->get<Tensor>() : nullptr;
    if (b == nullptr || b->dtype() != DataType::kFloat || b->shape().rank() != 2 || b->SizeInBytes() < kMinPanelBytes ||
        konst->num_outputs() != 1 || konst->consumers(0).empty()) {
      continue;
    }
    std::optional<BUse> agreed;
    bool eligible = true;
    for (const ir::InPort& in : konst->consumers(0)) {
      const ir::Node& reader = *in.node;
      std::optional<BUse> use;
      if (in.index == 1 && can_rewrite(reader) && !reader.op_desc().GetAttrOr<bool>(kAttrGemmPanels, false)) {
        use = PackedUse(reader, b->shape());
      }
      if (!use || (agreed && !(*agreed == *use))) {
        eligible = false;
        break;
      }
      agreed = use;
    }
    if (!eligible) continue;
    GE_ASSIGN_OR_RETURN(Tensor panels, PanelCache::Get().PanelsOf(*b, *agreed));
    for (const ir::InPort& in : konst->consumers(0)) in.node->mutable_op_desc().SetAttr(kAttrGemmPanels, true);
    konst->mutable_op_desc().SetAttr(ir::kAttrValue, std::move(panels));
    konst->mutable_op_desc().SetAttr(kAttrGemmPanels, true);
    changed = true;
  }
  return changed;
}

}  // namespace ge::engine::cpu_dense

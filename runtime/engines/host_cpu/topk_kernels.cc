// TopK-11: along `axis`, the K largest (or smallest) values of each row
// and their indices, best first, a tie to the lower index, NaN above every
// number. Not a plain
// reference loop: k-nearest-neighbour graphs (DGCNN-style point clouds,
// GNNs) run it over hundreds of rows of hundreds every layer, so rows go to
// threads and long rows take a bound before they sort (RowSelector).
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

// TopK: along `axis`, the K largest (or smallest) values and their indices;
// ties go to the lower index; `sorted` = 0 still returns them sorted (a
// valid order). Rows go to threads in blocks (a k-nearest-neighbour graph's
// [points, points] distances are hundreds of rows of hundreds).
class TopKKernel final : public Kernel {
 public:
  explicit TopKKernel(const ir::OpDesc& op)
      : op_(op), axis_(IntAttr(op, "axis", -1)), largest_(IntAttr(op, "largest", 1) != 0) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    if (ctx.input(1).NumElements() != 1) return NodeError(op_, "K must hold one value");
    const int64_t k = ctx.input(1).GetAsInt64(0);
    GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxisFor(op_, axis_, xs.rank()));
    const int64_t n = xs.dim(axis);
    if (k < 0 || k > n) return NodeError(op_, "K = ", k, " is outside [0, ", n, "] for ", xs.ToString());
    Shape out = xs;
    out.set_dim(axis, k);
    GE_ASSIGN_OR_RETURN(Tensor values, ctx.Output(0, out));
    GE_ASSIGN_OR_RETURN(Tensor indices, ctx.Output(1, out));
    const int64_t outer = DimProduct(xs.span(), 0, axis), inner = DimProduct(xs.span(), axis + 1, xs.rank());
    if (k == 0) return absl::OkStatus();
    return DispatchType<NumericTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data<T>();
      T* pv = values.data<T>();
      int64_t* pi = indices.data<int64_t>();
      const auto rows = [&](auto selector_tag) {
        using Selector = typename decltype(selector_tag)::type;
        ParallelFor(ctx.num_threads(), outer * inner, n, [&](int64_t begin, int64_t end) {
          Selector select(n, k);
          for (int64_t r = begin; r < end; ++r) {
            const int64_t o = r / inner, i = r % inner;
            const T* row = in + o * n * inner + i;
            const auto& best = select.Run(row, inner);
            for (int64_t j = 0; j < k; ++j) {
              pv[(o * k + j) * inner + i] = row[best[j].second * inner];
              pi[(o * k + j) * inner + i] = best[j].second;
            }
          }
        });
      };
      if (largest_) {
        rows(TypeTag<RowSelector<T, true>>{});
      } else {
        rows(TypeTag<RowSelector<T, false>>{});
      }
      return absl::OkStatus();
    });
  }

 private:
  // The K best of one row of n (elements `stride` apart), best first, a tie
  // to the lower index: partial_sort's order over (value, index) pairs.
  template <typename T, bool kLargest>
  class RowSelector {
   public:
    using W = decltype(Widen(T{}));
    using P = std::pair<W, int64_t>;
    RowSelector(int64_t n, int64_t k) : n_(n), k_(k), blocks_(std::min(n / 2, 4 * k)) {
      best_.reserve(static_cast<size_t>(k));
      if (k * 4 <= n && n >= 64) {
        block_best_.resize(static_cast<size_t>(blocks_));
        candidates_.resize(static_cast<size_t>(n));
      }
    }

    const std::vector<P>& Run(const T* row, int64_t stride) {
      if (stride == 1 && !candidates_.empty() && Threshold(row)) return best_;
      Heap(row, stride);
      return best_;
    }

   private:
    // NaN counts as larger than every number (torch's and numpy's order;
    // cpu_vector's TopK orders the same way), so it is best for `largest`
    // and worst otherwise, and NaNs tie among themselves.
    static bool Beats(W v, W bound) {
      const bool vn = v != v, bn = bound != bound;
      if (vn || bn) return vn != bn && (kLargest ? vn : bn);
      return kLargest ? v > bound : v < bound;
    }
    static bool Before(const P& a, const P& b) {
      if (Beats(a.first, b.first)) return true;
      if (Beats(b.first, a.first)) return false;
      return a.second < b.second;
    }

    // A contiguous row much longer than K: its B >= K disjoint blocks each
    // hold a best element, so the K-th best of those B bests is no better
    // than the K-th best of the row; the elements at least as good as it
    // (ties included) are the only candidates, usually little more than K,
    // sorted. A NaN (unordered) sends the row to Heap, so both give the
    // same answer everywhere.
    bool Threshold(const T* row) {
      for (int64_t b = 0; b < blocks_; ++b) {
        const int64_t j0 = n_ * b / blocks_, j1 = n_ * (b + 1) / blocks_;
        W m = Widen(row[j0]);
        for (int64_t j = j0 + 1; j < j1; ++j) {
          const W v = Widen(row[j]);
          m = Beats(v, m) ? v : m;
        }
        if (m != m) return false;
        block_best_[b] = m;
      }
      const auto better = [](W x, W y) { return Beats(x, y); };
      std::nth_element(block_best_.begin(), block_best_.begin() + (k_ - 1), block_best_.end(), better);
      const W bound = block_best_[k_ - 1];
      // Branch-free: every index is written, the count moves only for the
      // candidates (NaN fails both tests and is caught by the sum of them).
      int64_t count = 0, unordered = 0;
      for (int64_t j = 0; j < n_; ++j) {
        const W v = Widen(row[j]);
        candidates_[count] = j;
        count += Beats(bound, v) ? 0 : 1;
        unordered += v != v ? 1 : 0;
      }
      if (unordered != 0) return false;
      best_.clear();
      for (int64_t c = 0; c < count; ++c) best_.emplace_back(Widen(row[candidates_[c]]), candidates_[c]);
      std::partial_sort(best_.begin(), best_.begin() + k_, best_.end(), Before);
      best_.resize(static_cast<size_t>(k_));
      return true;
    }

    // The K best so far form a heap with the worst on top; an element
    // enters only when it beats that (a tie never does: it comes later, so
    // its index is larger). Most elements cost one compare.
    void Heap(const T* row, int64_t stride) {
      best_.clear();
      for (int64_t j = 0; j < k_; ++j) best_.emplace_back(Widen(row[j * stride]), j);
      std::make_heap(best_.begin(), best_.end(), Before);
      const auto offer = [&](int64_t j) {
        const W v = Widen(row[j * stride]);
        if (!Beats(v, best_.front().first)) return;
        std::pop_heap(best_.begin(), best_.end(), Before);
        best_.back() = {v, j};
        std::push_heap(best_.begin(), best_.end(), Before);
      };
      int64_t j = k_;
      if (stride == 1) {
        // Contiguous rows: a block of 8 is looked at element by element
        // only when one of them beats the worst kept (a branch-free test
        // the compiler vectorizes); after the first few blocks most skip.
        constexpr int64_t kBlock = 8;
        for (; j + kBlock <= n_; j += kBlock) {
          const W worst = best_.front().first;
          bool any = false;
          for (int64_t b = 0; b < kBlock; ++b) any |= Beats(Widen(row[j + b]), worst);
          if (!any) continue;
          for (int64_t b = 0; b < kBlock; ++b) offer(j + b);
        }
      }
      for (; j < n_; ++j) offer(j);
      std::sort_heap(best_.begin(), best_.end(), Before);
    }

    int64_t n_, k_, blocks_;
    std::vector<W> block_best_;
    std::vector<int64_t> candidates_;
    std::vector<P> best_;
  };

  ir::OpDesc op_;
  int64_t axis_;
  bool largest_;
};

}  // namespace

void RegisterTopKKernels(KernelTable& table) {
  const DataTypeSet numeric = SetOf(NumericTypes{});
  const DataTypeSet i64{DataType::kInt64};
  table.Add({"TopK",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new TopKKernel(op));
             },
             {numeric, i64},
             {numeric, i64}});
}

}  // namespace ge::engine::host_cpu

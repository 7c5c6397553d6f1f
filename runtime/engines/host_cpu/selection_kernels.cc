// Selection kernels whose output size depends on the data: Compress-11,
// Unique-11 and NonZero-13.
//
// Compress keeps the slices along `axis` (or the elements of the flattened
// input without one) whose condition is true; a condition shorter than the
// dim leaves the rest out.
//
// Unique finds the distinct slices along `axis` (elements without one): a
// stable sort of the slice indices by lexicographic slice order, O(d log d)
// slice comparisons, groups equal slices; each group's first index is its
// first occurrence. Outputs are in sorted order or in order of first
// occurrence.
//
// NonZero lists the coordinates of the non-zero elements (NaN counts as
// non-zero, as in numpy) in row-major order: one row per dim of the input
// (a scalar as [1]), one column per element found. One pass counts, a second
// writes the coordinates.
#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <type_traits>
#include <vector>

#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

class CompressKernel final : public Kernel {
 public:
  explicit CompressKernel(const ir::OpDesc& op) : op_(op) {
    if (auto axis = op.GetAttr<int64_t>("axis")) axis_ = *axis;
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& condition = ctx.input(1);
    if (condition.shape().rank() != 1) {
      return NodeError(op_, "condition must be 1-D, got ", condition.shape().ToString());
    }
    // The input as [outer, dim, inner] with the selection over dim.
    int64_t outer = 1, dim = x.NumElements(), inner = 1;
    Shape out{0};
    if (axis_) {
      GE_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxisFor(op_, *axis_, x.shape().rank()));
      outer = DimProduct(x.shape().span(), 0, static_cast<size_t>(axis));
      dim = x.shape().dim(axis);
      inner = DimProduct(x.shape().span(), static_cast<size_t>(axis) + 1, x.shape().dims().size());
      out = x.shape();
    }
    if (condition.NumElements() > dim) {
      return NodeError(op_, "condition has ", condition.NumElements(), " values for a dim of ", dim);
    }
    const bool* keep = condition.data<bool>();
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < condition.NumElements(); ++i) {
      if (keep[i]) kept.push_back(i);
    }
    const int64_t count = static_cast<int64_t>(kept.size());
    out.set_dim(axis_ ? *NormalizeAxisFor(op_, *axis_, x.shape().rank()) : 0, count);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < count; ++j) {
        CopyElements(x.dtype(), x.raw_data(), (o * dim + kept[j]) * inner, y.raw_data(), (o * count + j) * inner,
                     inner);
      }
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  std::optional<int64_t> axis_;
};

// a < b, with 16-bit floats compared as float.
template <typename T>
bool Less(const T& a, const T& b) {
  if constexpr (kIsHalf<T>) {
    return Widen(a) < Widen(b);
  } else {
    return a < b;
  }
}

class UniqueKernel final : public Kernel {
 public:
  explicit UniqueKernel(const ir::OpDesc& op) : op_(op), sorted_(IntAttr(op, "sorted", 1) != 0) {
    if (auto axis = op.GetAttr<int64_t>("axis")) axis_ = *axis;
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    int64_t axis = 0, outer = 1, dim = x.NumElements(), inner = 1;
    if (axis_) {
      GE_ASSIGN_OR_RETURN(axis, NormalizeAxisFor(op_, *axis_, x.shape().rank()));
      outer = DimProduct(x.shape().span(), 0, static_cast<size_t>(axis));
      dim = x.shape().dim(axis);
      inner = DimProduct(x.shape().span(), static_cast<size_t>(axis) + 1, x.shape().dims().size());
    }
    std::vector<int64_t> first;    // per group, its first index, in output order
    std::vector<int64_t> inverse(static_cast<size_t>(dim));
    std::vector<int64_t> counts;
    GE_RETURN_IF_ERROR(DispatchType<AllTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Group<T>(x.data<T>(), outer, dim, inner, first, inverse, counts);
      return absl::OkStatus();
    }));
    const int64_t count = static_cast<int64_t>(first.size());
    Shape ys{count};
    if (axis_) {
      ys = x.shape();
      ys.set_dim(axis, count);
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, ys));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < count; ++j) {
        CopyElements(x.dtype(), x.raw_data(), (o * dim + first[j]) * inner, y.raw_data(), (o * count + j) * inner,
                     inner);
      }
    }
    const std::vector<int64_t>* rest[] = {&first, &inverse, &counts};
    for (int i = 1; i < 4; ++i) {
      if (i >= ctx.num_outputs()) break;
      const std::vector<int64_t>& v = *rest[i - 1];
      GE_ASSIGN_OR_RETURN(Tensor t, ctx.Output(i, Shape{static_cast<int64_t>(v.size())}));
      std::copy(v.begin(), v.end(), t.data<int64_t>());
    }
    return absl::OkStatus();
  }

 private:
  // Groups the `dim` slices of x viewed as [outer, dim, inner].
  template <typename T>
  void Group(const T* x, int64_t outer, int64_t dim, int64_t inner, std::vector<int64_t>& first,
             std::vector<int64_t>& inverse, std::vector<int64_t>& counts) const {
    // -1, 0, 1 as slice a is below, equal to or above slice b.
    const auto compare = [&](int64_t a, int64_t b) {
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const T& va = x[(o * dim + a) * inner + i];
          const T& vb = x[(o * dim + b) * inner + i];
          if (Less(va, vb)) return -1;
          if (Less(vb, va)) return 1;
        }
      }
      return 0;
    };
    std::vector<int64_t> order(static_cast<size_t>(dim));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
    std::vector<int64_t> group_of(static_cast<size_t>(dim));  // sorted group of each slice
    std::vector<int64_t> group_first, group_count;
    for (size_t k = 0; k < order.size(); ++k) {
      if (k == 0 || compare(order[k - 1], order[k]) != 0) {
        group_first.push_back(order[k]);
        group_count.push_back(0);
      }
      group_of[order[k]] = static_cast<int64_t>(group_first.size()) - 1;
      ++group_count.back();
    }
    std::vector<int64_t> position(group_first.size());  // output position of each sorted group
    std::iota(position.begin(), position.end(), int64_t{0});
    if (!sorted_) {
      std::vector<int64_t> by_first(group_first.size());
      std::iota(by_first.begin(), by_first.end(), int64_t{0});
      std::sort(by_first.begin(), by_first.end(),
                [&](int64_t a, int64_t b) { return group_first[a] < group_first[b]; });
      for (size_t p = 0; p < by_first.size(); ++p) position[by_first[p]] = static_cast<int64_t>(p);
    }
    first.assign(group_first.size(), 0);
    counts.assign(group_first.size(), 0);
    for (size_t g = 0; g < group_first.size(); ++g) {
      first[position[g]] = group_first[g];
      counts[position[g]] = group_count[g];
    }
    for (int64_t j = 0; j < dim; ++j) inverse[j] = position[group_of[j]];
  }

  ir::OpDesc op_;
  bool sorted_;
  std::optional<int64_t> axis_;
};

class NonZeroKernel final : public Kernel {
 public:
  explicit NonZeroKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t n = x.NumElements();
    std::vector<int64_t> found;
    GE_RETURN_IF_ERROR(DispatchType<NumericAndBoolTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      for (int64_t i = 0; i < n; ++i) {
        if (IsNonZero(px[i])) found.push_back(i);
      }
      return absl::OkStatus();
    }));
    const Shape& xs = x.shape();
    const int64_t rank = std::max<int64_t>(xs.rank(), 1);
    const int64_t count = static_cast<int64_t>(found.size());
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, Shape{rank, count}));
    int64_t* py = y.data<int64_t>();
    for (int64_t j = 0; j < count; ++j) {
      int64_t rest = found[j];
      for (int64_t d = xs.rank() - 1; d >= 0; --d) {
        py[d * count + j] = rest % xs.dim(d);
        rest /= xs.dim(d);
      }
      if (xs.rank() == 0) py[j] = 0;
    }
    return absl::OkStatus();
  }

 private:
  template <typename T>
  static bool IsNonZero(T v) {
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return static_cast<float>(v) != 0.0f;
    } else {
      return v != T(0);
    }
  }

  ir::OpDesc op_;
};

}  // namespace

void RegisterSelectionKernels(KernelTable& table) {
  const DataTypeSet all = SetOf(AllTypes{});
  table.Add({"Compress",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new CompressKernel(op));
             },
             {all, DataTypeSet{DataType::kBool}}, {all}});
  table.Add({"Unique",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new UniqueKernel(op));
             },
             {all}, {all, DataTypeSet{DataType::kInt64}}});
  table.Add({"NonZero",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new NonZeroKernel(op));
             },
             {SetOf(NumericAndBoolTypes{})},
             {DataTypeSet{DataType::kInt64}}});
}

}  // namespace ge::engine::host_cpu

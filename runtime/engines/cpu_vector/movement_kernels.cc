// Data movement: Transpose, Slice, Expand, Tile, Trilu, Concat, Split and Gather, for
// every fixed-size dtype (they copy bytes; GatherElements: gather_elements.h).
//
// Transpose, Slice and Expand are one strided copy: the output walked in
// order, each output dim reading the input with a stride (permuted,
// stepped, or 0 where broadcast), dims merged where the input stays
// linear, and the innermost run copied with memcpy when contiguous; a
// transpose of the two innermost merged dims copies 16 x 16 tiles (whole
// tiles of 4-byte elements as 8 x 8 blocks in registers, isa_kernels.h). Concat,
// Split and Gather copy whole inner blocks. Reshape, Squeeze, Unsqueeze,
// Flatten and Identity stay on ge_local, which forwards storage instead of
// copying.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "base/status.h"
#include "runtime/engines/cpu_vector/vector_kernel.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_vector {
namespace {

using sdk::DataTypeSet;

std::vector<int64_t> Strides(const Shape& s) {
  std::vector<int64_t> out(s.rank(), 1);
  for (int64_t d = s.rank() - 1; d > 0; --d) out[d - 1] = out[d] * s.dim(d);
  return out;
}

template <typename T>
void StridedRun(const char* src, int64_t stride, char* dst, int64_t n) {
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
}

// The tiled transpose: `count` matrices, matrix m reading src[m * mstride +
// i + j * istride] (i < cols, j < inner) into dst[(m * cols + i) * inner + j].
// Walking the output row by row read the input a stride apart, a cache line
// per element; a kTile x kTile tile uses each line it loads whole.
template <typename T>
void TiledTranspose(const char* src, char* dst, int64_t count, int64_t mstride, int64_t cols, int64_t inner,
                    int64_t istride, int threads) {
  constexpr int64_t kTile = 16;
  const int64_t col_tiles = (cols + kTile - 1) / kTile;
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  Split(threads, count * col_tiles, kTile * inner, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t m = t / col_tiles, i0 = (t % col_tiles) * kTile;
      const int64_t i1 = std::min(cols, i0 + kTile);
      const T* sm = s + m * mstride;
      T* dm = d + m * cols * inner;
      for (int64_t j0 = 0; j0 < inner; j0 += kTile) {
        const int64_t j1 = std::min(inner, j0 + kTile);
        if constexpr (sizeof(T) == 4) {
          // Whole tiles of 4-byte elements: four 8 x 8 blocks in registers.
          if (i1 - i0 == kTile && j1 - j0 == kTile) {
            const auto block = Kernels().transpose32_8x8;
            for (int64_t bi = i0; bi < i1; bi += 8) {
              for (int64_t bj = j0; bj < j1; bj += 8)
                block(sm + bj * istride + bi, istride, dm + bi * inner + bj, inner);
            }
            continue;
          }
        }
        for (int64_t i = i0; i < i1; ++i) {
          const T* in = sm + i;
          T* out = dm + i * inner;
          for (int64_t j = j0; j < j1; ++j) out[j] = in[j * istride];
        }
      }
    }
  });
}

// dst (contiguous, `dims`) = src[base + sum(index[d] * strides[d])].
void StridedCopy(std::vector<int64_t> dims, std::vector<int64_t> strides, int64_t base, size_t es, const char* src,
                 char* dst, int threads) {
  std::vector<int64_t> d2, s2;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 0) return;
    if (dims[d] == 1) continue;
    if (!d2.empty() && s2.back() == strides[d] * dims[d]) {
      d2.back() *= dims[d];
      s2.back() = strides[d];
    } else {
      d2.push_back(dims[d]);
      s2.push_back(strides[d]);
    }
  }
  if (d2.empty()) {
    d2.push_back(1);
    s2.push_back(1);
  }
  const size_t outer = d2.size() - 1;
  const int64_t inner = d2.back();
  const int64_t istride = s2.back();
  int64_t rows = 1;
  for (size_t d = 0; d < outer; ++d) rows *= d2[d];
  const int64_t esz = static_cast<int64_t>(es);
  // A transpose of the last two merged dims (the input contiguous along the
  // outer one, strided along the inner one), under at most one more dim
  // walked linearly: tiles (Transpose's usual case, e.g. [N, K, C] ->
  // [C, N, K] or a batch of matrices).
  const size_t batch_dims = outer >= 1 ? outer - 1 : 0;
  if (outer >= 1 && outer <= 2 && s2[outer - 1] == 1 && istride >= d2[outer - 1] && inner >= 16 &&
      d2[outer - 1] >= 16 && (es == 4 || es == 2 || es == 8)) {
    const int64_t count = batch_dims == 1 ? d2[0] : 1, mstride = batch_dims == 1 ? s2[0] : 0;
    const char* s0 = src + base * esz;
    switch (es) {
      case 2: TiledTranspose<uint16_t>(s0, dst, count, mstride, d2[outer - 1], inner, istride, threads); break;
      case 4: TiledTranspose<uint32_t>(s0, dst, count, mstride, d2[outer - 1], inner, istride, threads); break;
      default: TiledTranspose<uint64_t>(s0, dst, count, mstride, d2[outer - 1], inner, istride, threads); break;
    }
    return;
  }
  Split(threads, rows, inner, [&](int64_t begin, int64_t end) {
    int64_t index[16] = {0};
    int64_t off = base;
    int64_t rem = begin;
    for (size_t d = outer; d-- > 0;) {
      index[d] = rem % d2[d];
      rem /= d2[d];
      off += index[d] * s2[d];
    }
    for (int64_t r = begin; r < end; ++r) {
      char* out = dst + r * inner * esz;
      const char* in = src + off * esz;
      if (istride == 1) {
        std::memcpy(out, in, static_cast<size_t>(inner * esz));
      } else {
        switch (es) {
          case 1: StridedRun<uint8_t>(in, istride, out, inner); break;
          case 2: StridedRun<uint16_t>(in, istride, out, inner); break;
          case 4: StridedRun<uint32_t>(in, istride, out, inner); break;
          default: StridedRun<uint64_t>(in, istride, out, inner); break;
        }
      }
      for (size_t d = outer; d-- > 0;) {
        if (++index[d] < d2[d]) {
          off += s2[d];
          break;
        }
        off -= (d2[d] - 1) * s2[d];
        index[d] = 0;
      }
    }
  });
}

absl::Status CheckRank(const ir::OpDesc& op, const Shape& s) {
  if (s.rank() > 16) return NodeError(op, "rank ", s.rank(), " is above 16");
  return absl::OkStatus();
}

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(const ir::OpDesc& op) : op_(op), perm_(sdk::IntsAttr(op, "perm")) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    GE_RETURN_IF_ERROR(CheckRank(op_, x.shape()));
    const int64_t rank = x.shape().rank();
    std::vector<int64_t> perm = perm_;
    if (perm.empty()) {
      perm.resize(rank);
      for (int64_t d = 0; d < rank; ++d) perm[d] = rank - 1 - d;
    }
    if (static_cast<int64_t>(perm.size()) != rank) return NodeError(op_, "perm has ", perm.size(), " entries for rank ", rank);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    const std::vector<int64_t> in_strides = Strides(x.shape());
    std::vector<int64_t> dims(rank), strides(rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (perm[d] < 0 || perm[d] >= rank) return NodeError(op_, "perm entry ", perm[d], " is out of range");
      dims[d] = x.shape().dim(perm[d]);
      strides[d] = in_strides[perm[d]];
    }
    StridedCopy(dims, strides, 0, DataTypeSize(x.dtype()), static_cast<const char*>(x.raw_data()),
                static_cast<char*>(y.raw_data()), ctx.num_threads());
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  std::vector<int64_t> perm_;
};

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    GE_RETURN_IF_ERROR(CheckRank(op_, x.shape()));
    const int64_t rank = x.shape().rank();
    const std::vector<int64_t> starts = ctx.input(1).ToInt64Vector();
    std::vector<int64_t> axes(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
    if (ctx.has_input(3)) axes = ctx.input(3).ToInt64Vector();
    std::vector<int64_t> steps(starts.size(), 1);
    if (ctx.has_input(4)) steps = ctx.input(4).ToInt64Vector();
    if (axes.size() != starts.size() || steps.size() != starts.size()) return NodeError(op_, "starts, axes and steps differ in length");
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    if (y.shape().rank() != rank) return NodeError(op_, "output rank differs from the input's");
    const std::vector<int64_t> in_strides = Strides(x.shape());
    std::vector<int64_t> strides = in_strides;
    int64_t base = 0;
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (a < 0 || a >= rank) return NodeError(op_, "axis ", axes[i], " is out of range");
      const int64_t dim = x.shape().dim(a);
      if (steps[i] == 0) return NodeError(op_, "steps must not be 0");
      int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
      s = steps[i] > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
      if (y.shape().dim(a) > 0) base += s * in_strides[a];
      strides[a] = in_strides[a] * steps[i];
    }
    StridedCopy(std::vector<int64_t>(y.shape().span().begin(), y.shape().span().end()), strides, base,
                DataTypeSize(x.dtype()), static_cast<const char*>(x.raw_data()), static_cast<char*>(y.raw_data()),
                ctx.num_threads());
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
};

class ExpandKernel final : public Kernel {
 public:
  explicit ExpandKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckRank(op_, y.shape()));
    GE_RETURN_IF_ERROR(sdk::CheckBroadcastsTo(op_, x.shape(), 0, y.shape()));
    const int64_t rank = y.shape().rank();
    const int64_t shift = rank - x.shape().rank();
    const std::vector<int64_t> in_strides = Strides(x.shape());
    std::vector<int64_t> strides(rank, 0);
    for (int64_t d = shift; d < rank; ++d) strides[d] = x.shape().dim(d - shift) == 1 ? 0 : in_strides[d - shift];
    StridedCopy(std::vector<int64_t>(y.shape().span().begin(), y.shape().span().end()), strides, 0,
                DataTypeSize(x.dtype()), static_cast<const char*>(x.raw_data()), static_cast<char*>(y.raw_data()),
                ctx.num_threads());
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
};

// Blocks of Concat / Split: outer count, and each part's bytes per outer step.
int64_t Outer(const Shape& s, int64_t axis) {
  int64_t n = 1;
  for (int64_t d = 0; d < axis; ++d) n *= s.dim(d);
  return n;
}
int64_t BlockBytes(const Shape& s, int64_t axis, size_t es) {
  int64_t n = static_cast<int64_t>(es);
  for (int64_t d = axis; d < s.rank(); ++d) n *= s.dim(d);
  return n;
}

class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(const ir::OpDesc& op) : op_(op), axis_(sdk::IntAttr(op, "axis", 0)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    GE_ASSIGN_OR_RETURN(int64_t axis, sdk::NormalizeAxisFor(op_, axis_, y.shape().rank()));
    const size_t es = DataTypeSize(y.dtype());
    const int64_t outer = Outer(y.shape(), axis);
    const int64_t out_block = BlockBytes(y.shape(), axis, es);
    char* dst = static_cast<char*>(y.raw_data());
    int64_t offset = 0;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& x = ctx.input(i);
      if (x.dtype() != y.dtype() || x.shape().rank() != y.shape().rank()) return NodeError(op_, "input ", i, " does not match the output");
      const int64_t block = BlockBytes(x.shape(), axis, es);
      if (offset + block > out_block || Outer(x.shape(), axis) != outer) return NodeError(op_, "input ", i, " does not fit the output");
      const char* src = static_cast<const char*>(x.raw_data());
      Split(ctx.num_threads(), outer, block / static_cast<int64_t>(es) + 1, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o)
          std::memcpy(dst + o * out_block + offset, src + o * block, static_cast<size_t>(block));
      });
      offset += block;
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
};

class SplitKernel final : public Kernel {
 public:
  explicit SplitKernel(const ir::OpDesc& op) : op_(op), axis_(sdk::IntAttr(op, "axis", 0)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    GE_ASSIGN_OR_RETURN(int64_t axis, sdk::NormalizeAxisFor(op_, axis_, x.shape().rank()));
    const size_t es = DataTypeSize(x.dtype());
    const int64_t outer = Outer(x.shape(), axis);
    const int64_t in_block = BlockBytes(x.shape(), axis, es);
    const char* src = static_cast<const char*>(x.raw_data());
    int64_t offset = 0;
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(i));
      const int64_t block = BlockBytes(y.shape(), axis, es);
      if (offset + block > in_block || Outer(y.shape(), axis) != outer) return NodeError(op_, "output ", i, " does not fit the input");
      char* dst = static_cast<char*>(y.raw_data());
      Split(ctx.num_threads(), outer, block / static_cast<int64_t>(es) + 1, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o)
          std::memcpy(dst + o * block, src + o * in_block + offset, static_cast<size_t>(block));
      });
      offset += block;
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
};

// Tile: the output viewed as [r0, d0, r1, d1, ...] reads the input with
// strides [0, s0, 0, s1, ...]: one strided copy (whole input rows by
// memcpy when the last axis is not repeated).
class TileKernel final : public Kernel {
 public:
  explicit TileKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> repeats = ctx.input(1).ToInt64Vector();
    const int64_t rank = x.shape().rank();
    if (static_cast<int64_t>(repeats.size()) != rank) return NodeError(op_, "repeats must have one entry per axis");
    if (rank > 8) return NodeError(op_, "rank ", rank, " is above 8");
    Tensor holder;
    GE_ASSIGN_OR_RETURN(Tensor * y, OutputOf(ctx, 0, holder));
    const std::vector<int64_t> in_strides = Strides(x.shape());
    std::vector<int64_t> dims, strides;
    for (int64_t d = 0; d < rank; ++d) {
      if (repeats[d] < 0) return NodeError(op_, "repeats must not be negative");
      if (y->shape().dim(d) != x.shape().dim(d) * repeats[d]) return NodeError(op_, "output does not match repeats");
      dims.push_back(repeats[d]);
      strides.push_back(0);
      dims.push_back(x.shape().dim(d));
      strides.push_back(in_strides[d]);
    }
    if (y->NumElements() == 0) return absl::OkStatus();
    if (rank == 0) {
      dims = {1};
      strides = {1};
    }
    StridedCopy(dims, strides, 0, DataTypeSize(x.dtype()), static_cast<const char*>(x.raw_data()),
                static_cast<char*>(y->raw_data()), ctx.num_threads());
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
};

// Trilu: per row of each matrix, the kept run (columns j with j - i >= k,
// upper, or <= k, lower) copied and the rest zeroed (all-zero bytes are 0
// in every dtype it takes).
class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(const ir::OpDesc& op) : op_(op), upper_(sdk::IntAttr(op, "upper", 1) != 0) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.shape().rank();
    if (rank < 2) return NodeError(op_, "input must have rank >= 2, got ", x.shape().ToString());
    const int64_t k = ctx.has_input(1) ? ctx.input(1).GetAsInt64(0) : 0;
    Tensor holder;
    GE_ASSIGN_OR_RETURN(Tensor * y, OutputOf(ctx, 0, holder));
    if (y->shape() != x.shape()) return NodeError(op_, "output does not match the input");
    const int64_t rows = x.shape().dim(rank - 2), cols = x.shape().dim(rank - 1);
    if (x.NumElements() == 0) return absl::OkStatus();
    const int64_t mats = x.NumElements() / (rows * cols);
    const size_t es = DataTypeSize(x.dtype());
    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(y->raw_data());
    Split(ctx.num_threads(), mats * rows, cols, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t i = r % rows;
        // kept columns [lo, hi)
        const int64_t lo = upper_ ? std::clamp<int64_t>(i + k, 0, cols) : 0;
        const int64_t hi = upper_ ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
        const size_t row = static_cast<size_t>(r * cols) * es;
        std::memset(dst + row, 0, static_cast<size_t>(lo) * es);
        if (hi > lo) std::memcpy(dst + row + lo * es, src + row + lo * es, static_cast<size_t>(hi - lo) * es);
        std::memset(dst + row + std::max(hi, lo) * es, 0, static_cast<size_t>(cols - std::max(hi, lo)) * es);
      }
    });
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  bool upper_;
};

class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(const ir::OpDesc& op) : op_(op), axis_(sdk::IntAttr(op, "axis", 0)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    GE_ASSIGN_OR_RETURN(int64_t axis, sdk::NormalizeAxisFor(op_, axis_, x.shape().rank()));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    const size_t es = DataTypeSize(x.dtype());
    const int64_t outer = Outer(x.shape(), axis);
    const int64_t dim = x.shape().dim(axis);
    const int64_t inner = BlockBytes(x.shape(), axis, es) / std::max<int64_t>(1, dim);
    const int64_t n = ind.NumElements();
    if (y.NumElements() * static_cast<int64_t>(es) != outer * n * inner) return NodeError(op_, "output does not match");
    if (y.NumElements() == 0) return absl::OkStatus();
    const bool i64 = ind.dtype() == DataType::kInt64;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t v = i64 ? ind.data<int64_t>()[j] : ind.data<int32_t>()[j];
      if (v < -dim || v >= dim) return NodeError(op_, "index ", v, " is out of range [", -dim, ", ", dim, ")");
    }
    const char* src = static_cast<const char*>(x.raw_data());
    char* dst = static_cast<char*>(y.raw_data());
    Split(ctx.num_threads(), outer * n, inner / static_cast<int64_t>(es) + 1, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t o = r / n, j = r % n;
        int64_t v = i64 ? ind.data<int64_t>()[j] : ind.data<int32_t>()[j];
        if (v < 0) v += dim;
        std::memcpy(dst + r * inner, src + (o * dim + v) * inner, static_cast<size_t>(inner));
      }
    });
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
};

template <typename K>
CreateFn Creator() {
  return [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> { return std::unique_ptr<Kernel>(new K(op)); };
}

absl::Status CheckAllInputs(const ir::OpDesc& op) {
  for (int i = 0; i < op.num_inputs(); ++i) {
    GE_RETURN_IF_ERROR(CheckInputDtype(op, i, kCopySet));
    if (InputDtype(op, i) != InputDtype(op, 0)) return Unsupported(op, "inputs of different dtypes");
  }
  return absl::OkStatus();
}

constexpr DataTypeSet kIndexSet{DataType::kInt32, DataType::kInt64};

}  // namespace

void RegisterMovementKernels(VectorKernelTable& table) {
  table.Add({"Transpose", [](const ir::OpDesc& op) { return CheckInputDtype(op, 0, kCopySet); }, Creator<TransposeKernel>()});
  table.Add({"Slice",
             [](const ir::OpDesc& op) {
               if (op.num_inputs() < 3) return Unsupported(op, "starts and ends must be inputs (opset 10+)");
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, kCopySet));
               for (int i = 1; i < op.num_inputs(); ++i) GE_RETURN_IF_ERROR(CheckInputDtype(op, i, kIndexSet, i >= 3));
               return absl::OkStatus();
             },
             Creator<SliceKernel>()});
  table.Add({"Expand",
             [](const ir::OpDesc& op) {
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, kCopySet));
               return CheckInputDtype(op, 1, {DataType::kInt64});
             },
             Creator<ExpandKernel>()});
  table.Add({"Concat", CheckAllInputs, Creator<ConcatKernel>()});
  table.Add({"Split",
             [](const ir::OpDesc& op) {
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, kCopySet));
               if (op.num_inputs() > 1) GE_RETURN_IF_ERROR(CheckInputDtype(op, 1, {DataType::kInt64}, true));
               return absl::OkStatus();
             },
             Creator<SplitKernel>()});
  table.Add({"Tile",
             [](const ir::OpDesc& op) {
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, kCopySet));
               return CheckInputDtype(op, 1, {DataType::kInt64});
             },
             Creator<TileKernel>()});
  table.Add({"Trilu",
             [](const ir::OpDesc& op) {
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, kCopySet));
               if (op.num_inputs() > 1) GE_RETURN_IF_ERROR(CheckInputDtype(op, 1, {DataType::kInt64}, true));
               return absl::OkStatus();
             },
             Creator<TriluKernel>()});
  table.Add({"Gather",
             [](const ir::OpDesc& op) {
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, kCopySet));
               return CheckInputDtype(op, 1, kIndexSet);
             },
             Creator<GatherKernel>()});
}

}  // namespace ge::engine::cpu_vector

// Numpy broadcasting as a loop nest over rows.
//
// A BroadcastPlan describes K inputs broadcast into an output shape with
// size-1 dims dropped and adjacent dims merged wherever every operand stays
// linear across them, so [8,64,56,56] + [1,64,1,1] becomes a 3-deep nest
// [8,64,3136] and same-shape operands become one flat row. Kernels walk the
// plan row by row: each row is the innermost (collapsed) dim, where every
// input advances by its inner stride (0 for a broadcast operand, 1 for a
// contiguous one), so the row loop is a plain vectorizable loop.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "base/shape.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::sdk {

struct BroadcastPlan {
  // Collapsed output dims; at least one (a scalar output is [1]).
  std::vector<int64_t> dims;
  // strides[k][d]: element stride of input k along dims[d] (0 when broadcast).
  std::vector<std::vector<int64_t>> strides;

  int64_t inner_size() const { return dims.back(); }
  int64_t num_rows() const;
  int64_t inner_stride(size_t k) const { return strides[k].back(); }
};

// The plan of `inputs` (each broadcastable to `out_dims` by numpy rules,
// which the caller has checked) into `out_dims`. `in_strides` may give
// explicit element strides per input (for strided views); empty means
// contiguous.
BroadcastPlan MakeBroadcastPlan(absl::Span<const int64_t> out_dims,
                                const std::vector<absl::Span<const int64_t>>& inputs);
BroadcastPlan MakeStridedPlan(absl::Span<const int64_t> out_dims, const std::vector<std::vector<int64_t>>& in_strides);

// Calls row(out_offset, in_offsets, count) for rows [row_begin, row_end) of
// `plan`, where in_offsets[k] is input k's element offset at the row start.
template <size_t K, typename RowFn>
void ForEachRow(const BroadcastPlan& plan, int64_t row_begin, int64_t row_end, RowFn&& row) {
  const size_t outer_rank = plan.dims.size() - 1;
  const int64_t inner = plan.inner_size();
  std::vector<int64_t> index(outer_rank, 0);
  std::array<int64_t, K> offsets{};
  // Position the odometer at row_begin.
  int64_t rem = row_begin;
  for (size_t d = outer_rank; d-- > 0;) {
    index[d] = rem % plan.dims[d];
    rem /= plan.dims[d];
    for (size_t k = 0; k < K; ++k) offsets[k] += index[d] * plan.strides[k][d];
  }
  for (int64_t r = row_begin; r < row_end; ++r) {
    row(r * inner, offsets, inner);
    for (size_t d = outer_rank; d-- > 0;) {
      if (++index[d] < plan.dims[d]) {
        for (size_t k = 0; k < K; ++k) offsets[k] += plan.strides[k][d];
        break;
      }
      for (size_t k = 0; k < K; ++k) offsets[k] -= (plan.dims[d] - 1) * plan.strides[k][d];
      index[d] = 0;
    }
  }
}

// ForEachRow over every row, split across `threads` when large.
template <size_t K, typename RowFn>
void ParallelRows(int threads, const BroadcastPlan& plan, int64_t cost_per_element, RowFn&& row) {
  const int64_t rows = plan.num_rows();
  if (rows == 0 || plan.inner_size() == 0) return;
  ParallelFor(threads, rows, plan.inner_size() * cost_per_element,
              [&](int64_t begin, int64_t end) { ForEachRow<K>(plan, begin, end, row); });
}

// out[i...] = in[base + sum(i_d * stride_d)] over out's dims.
template <typename T>
void StridedCopy(const T* in, int64_t base, const BroadcastPlan& plan, T* out, int threads) {
  const int64_t s = plan.inner_stride(0);
  ParallelRows<1>(threads, plan, 1, [&](int64_t o, const std::array<int64_t, 1>& off, int64_t n) {
    const T* src = in + base + off[0];
    T* dst = out + o;
    if (s == 1) {
      std::copy(src, src + n, dst);
    } else if (s == 0) {
      std::fill(dst, dst + n, src[0]);
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i * s];
    }
  });
}

}  // namespace ge::engine::sdk

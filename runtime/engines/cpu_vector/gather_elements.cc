// GatherElements and `_GatherElementsBroadcast`: one strided walk; and
// ScatterElements and ScatterND (below).
//
// out[p] = data[p with its `axis` coordinate replaced by indices[p]], where
// data and indices are read through element strides: their own (row-major)
// strides for GatherElements (indices may be smaller than data along the
// other axes), and 0 on every broadcast dim for the broadcast form. Rows of
// the output (every axis but the last) split over the team; a row's data
// and index offsets step with the row's coordinates, and along the last
// axis the data offset moves by its last stride (or by indices[p] times
// the axis stride, on the last axis). host_cpu's reference ran one element
// at a time on one thread.
#include "runtime/engines/cpu_vector/gather_elements.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "base/ops/infer_util.h"
#include "base/status.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_vector {
namespace {

using Kind = ir::AttrValue::Kind;

// Row-major element strides of `dims`.
std::vector<int64_t> Strides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> out(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) out[d - 1] = out[d] * dims[d];
  return out;
}

// Strides reading `in` broadcast (numpy rules) to `out`: 0 where `in` has 1
// (or no dim), its own stride elsewhere. False when it does not broadcast.
bool BroadcastStrides(const Shape& in, absl::Span<const int64_t> out, std::vector<int64_t>* strides) {
  const int64_t rank = static_cast<int64_t>(out.size());
  const int64_t shift = rank - in.rank();
  if (shift < 0) return false;
  const std::vector<int64_t> own = Strides(in.span());
  strides->assign(out.size(), 0);
  for (int64_t d = shift; d < rank; ++d) {
    const int64_t n = in.dim(d - shift);
    if (n == out[d]) {
      (*strides)[d] = n == 1 ? 0 : own[d - shift];
    } else if (n != 1) {
      return false;
    }
  }
  return true;
}

// The walk: `dims` the output's, `ds` / `is` the data and index strides
// along them (ds[axis] steps by the index), `extent` the indexed axis'
// length (indices in [-extent, extent), checked by the caller).
struct GatherWalk {
  std::vector<int64_t> dims, ds, is;
  int64_t axis = 0;
  int64_t extent = 0;
};

template <typename T, typename I>
void Walk(const GatherWalk& w, const T* src, const I* ind, T* dst, int threads) {
  const int64_t rank = static_cast<int64_t>(w.dims.size());
  const int64_t last = w.dims[rank - 1];
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < rank; ++d) rows *= w.dims[d];
  const bool on_last = w.axis == rank - 1;
  const int64_t ds_last = on_last ? 0 : w.ds[rank - 1];
  const int64_t is_last = w.is[rank - 1];
  const int64_t ds_axis = w.ds[w.axis];
  const int64_t extent = w.extent;
  Split(threads, rows, last + 1, [&](int64_t begin, int64_t end) {
    int64_t coord[16] = {0};
    int64_t doff = 0, ioff = 0;
    for (int64_t d = rank - 2, rest = begin; d >= 0; --d) {
      coord[d] = rest % w.dims[d];
      rest /= w.dims[d];
      if (d != w.axis) doff += coord[d] * w.ds[d];
      ioff += coord[d] * w.is[d];
    }
    for (int64_t r = begin; r < end; ++r) {
      T* out = dst + r * last;
      const T* base = src + doff;
      const I* row = ind + ioff;
      for (int64_t j = 0; j < last; ++j) {
        int64_t v = static_cast<int64_t>(row[j * is_last]);
        v += v < 0 ? extent : 0;
        out[j] = base[j * ds_last + v * ds_axis];
      }
      for (int64_t d = rank - 2; d >= 0; --d) {
        if (++coord[d] < w.dims[d]) {
          if (d != w.axis) doff += w.ds[d];
          ioff += w.is[d];
          break;
        }
        if (d != w.axis) doff -= (w.dims[d] - 1) * w.ds[d];
        ioff -= (w.dims[d] - 1) * w.is[d];
        coord[d] = 0;
      }
    }
  });
}

absl::Status CheckIndices(const ir::OpDesc& op, const Tensor& ind, int64_t extent) {
  const int64_t n = ind.NumElements();
  const bool i64 = ind.dtype() == DataType::kInt64;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t v = i64 ? ind.data<int64_t>()[j] : ind.data<int32_t>()[j];
    if (v < -extent || v >= extent) return NodeError(op, "index ", v, " is out of range [", -extent, ", ", extent, ")");
  }
  return absl::OkStatus();
}

absl::Status RunWalk(const ir::OpDesc& op, const GatherWalk& w, const Tensor& data, const Tensor& ind, Tensor& y,
                     int threads) {
  if (static_cast<int64_t>(w.dims.size()) > 16) return NodeError(op, "rank ", w.dims.size(), " is above 16");
  int64_t n = 1;
  for (int64_t d : w.dims) n *= d;
  if (y.NumElements() != n) return NodeError(op, "output ", y.shape().ToString(), " does not match the indices");
  if (n == 0) return absl::OkStatus();
  GE_RETURN_IF_ERROR(CheckIndices(op, ind, w.extent));
  const auto by_index = [&](auto tag) -> absl::Status {
    using T = decltype(tag);
    const T* src = static_cast<const T*>(data.raw_data());
    T* dst = static_cast<T*>(y.raw_data());
    if (ind.dtype() == DataType::kInt64) {
      Walk<T, int64_t>(w, src, ind.data<int64_t>(), dst, threads);
    } else {
      Walk<T, int32_t>(w, src, ind.data<int32_t>(), dst, threads);
    }
    return absl::OkStatus();
  };
  switch (DataTypeSize(data.dtype())) {
    case 1: return by_index(uint8_t{});
    case 2: return by_index(uint16_t{});
    case 4: return by_index(uint32_t{});
    case 8: return by_index(uint64_t{});
    default: return NodeError(op, "element size ", DataTypeSize(data.dtype()), " is not 1, 2, 4 or 8");
  }
}

class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(const ir::OpDesc& op) : op_(op), axis_(sdk::IntAttr(op, "axis", 0)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    const int64_t rank = x.shape().rank();
    GE_ASSIGN_OR_RETURN(int64_t axis, sdk::NormalizeAxisFor(op_, axis_, rank));
    if (ind.shape().rank() != rank) return NodeError(op_, "indices must have data's rank");
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && ind.shape().dim(d) > x.shape().dim(d)) {
        return NodeError(op_, "indices ", ind.shape().ToString(), " exceed data ", x.shape().ToString());
      }
    }
    Tensor holder;
    GE_ASSIGN_OR_RETURN(Tensor * y, OutputOf(ctx, 0, holder));
    GatherWalk w;
    w.dims.assign(ind.shape().span().begin(), ind.shape().span().end());
    w.ds = Strides(x.shape().span());
    w.is = Strides(ind.shape().span());
    w.axis = axis;
    w.extent = x.shape().dim(axis);
    return RunWalk(op_, w, x, ind, *y, ctx.num_threads());
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
};

class GatherElementsBroadcastKernel final : public Kernel {
 public:
  explicit GatherElementsBroadcastKernel(const ir::OpDesc& op)
      : op_(op),
        axis_(sdk::IntAttr(op, "axis", 0)),
        data_shape_(sdk::IntsAttr(op, kAttrDataShape)),
        indices_shape_(sdk::IntsAttr(op, kAttrIndicesShape)) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    const int64_t rank = static_cast<int64_t>(indices_shape_.size());
    if (rank == 0 || static_cast<int64_t>(data_shape_.size()) != rank || axis_ < 0 || axis_ >= rank) {
      return NodeError(op_, "data_shape and indices_shape must have one rank >= 1 and hold the axis");
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis_ && indices_shape_[d] > data_shape_[d]) return NodeError(op_, "indices_shape exceeds data_shape");
    }
    GatherWalk w;
    w.dims = indices_shape_;
    if (!BroadcastStrides(x.shape(), data_shape_, &w.ds)) {
      return NodeError(op_, "data ", x.shape().ToString(), " does not broadcast to data_shape");
    }
    if (!BroadcastStrides(ind.shape(), indices_shape_, &w.is)) {
      return NodeError(op_, "indices ", ind.shape().ToString(), " do not broadcast to indices_shape");
    }
    w.axis = axis_;
    w.extent = data_shape_[axis_];
    Tensor holder;
    GE_ASSIGN_OR_RETURN(Tensor * y, OutputOf(ctx, 0, holder));
    return RunWalk(op_, w, x, ind, *y, ctx.num_threads());
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
  std::vector<int64_t> data_shape_, indices_shape_;
};

// ScatterElements (reduction none, add or mul): the output is data, then
// each update goes to its position with the `axis` coordinate replaced by
// its index. Two updates can only meet when they share every coordinate
// but the axis one, so the work splits by those: tiles of one outer index
// (the axes before `axis`) and up to kScatterTile positions of the inner
// run, each walking the axis in order. Every target so receives its updates
// in the order of a row-major walk of the updates (host_cpu's order), so
// sums round the same and the last of repeated targets wins with "none".
constexpr int64_t kScatterTile = 256;

enum class ScatterReduction { kNone, kAdd, kMul };

class ScatterElementsKernel final : public Kernel {
 public:
  explicit ScatterElementsKernel(const ir::OpDesc& op)
      : op_(op), axis_(sdk::IntAttr(op, "axis", 0)), reduction_(sdk::StringAttr(op, "reduction", "none")) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    const Tensor& upd = ctx.input(2);
    const Shape& ds = data.shape();
    const int64_t rank = ds.rank();
    ScatterReduction red;
    if (reduction_ == "none") {
      red = ScatterReduction::kNone;
    } else if (reduction_ == "add") {
      red = ScatterReduction::kAdd;
    } else if (reduction_ == "mul") {
      red = ScatterReduction::kMul;
    } else {
      return NodeError(op_, "reduction '", reduction_, "' is not none, add or mul");
    }
    GE_ASSIGN_OR_RETURN(int64_t axis, sdk::NormalizeAxisFor(op_, axis_, rank));
    if (upd.shape() != ind.shape()) {
      return NodeError(op_, "updates ", upd.shape().ToString(), " and indices ", ind.shape().ToString(), " differ");
    }
    if (ind.shape().rank() != rank) return NodeError(op_, "indices must have data's rank");
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && ind.shape().dim(d) > ds.dim(d)) {
        return NodeError(op_, "indices ", ind.shape().ToString(), " exceed data ", ds.ToString(), " at dim ", d);
      }
    }
    Tensor holder;
    GE_ASSIGN_OR_RETURN(Tensor * y, OutputOf(ctx, 0, holder));
    if (y->shape() != ds) return NodeError(op_, "output ", y->shape().ToString(), " is not data's shape");
    const size_t bytes = static_cast<size_t>(data.NumElements()) * DataTypeSize(data.dtype());
    if (bytes > 0 && y->raw_data() != data.raw_data()) std::memcpy(y->raw_data(), data.raw_data(), bytes);
    if (ind.NumElements() == 0) return absl::OkStatus();
    const int64_t extent = ds.dim(axis);
    GE_RETURN_IF_ERROR(CheckIndices(op_, ind, extent));
    // Updates as [outer, m, inner]; data offsets of each outer and inner
    // coordinate (identity runs when the updates span data there).
    const auto us = ind.shape().span();
    const std::vector<int64_t> dstride = Strides(ds.span());
    Plan plan;
    plan.m = us[axis];
    plan.axis_stride = dstride[axis];
    plan.outer_off = Offsets(us, dstride, 0, axis);
    plan.inner_off = Offsets(us, dstride, axis + 1, rank);
    plan.extent = extent;
    const int threads = ctx.num_threads();
    const bool i64 = ind.dtype() == DataType::kInt64;
    const auto by_type = [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      if (i64) {
        Scatter<T, int64_t>(plan, red, ind.data<int64_t>(), upd.data<T>(), y->data<T>(), threads);
      } else {
        Scatter<T, int32_t>(plan, red, ind.data<int32_t>(), upd.data<T>(), y->data<T>(), threads);
      }
      return absl::OkStatus();
    };
    if (red == ScatterReduction::kNone) {
      switch (DataTypeSize(data.dtype())) {
        case 1: return by_type(sdk::TypeTag<uint8_t>{});
        case 2: return by_type(sdk::TypeTag<uint16_t>{});
        case 4: return by_type(sdk::TypeTag<uint32_t>{});
        case 8: return by_type(sdk::TypeTag<uint64_t>{});
        default: return NodeError(op_, "element size ", DataTypeSize(data.dtype()), " is not 1, 2, 4 or 8");
      }
    }
    return sdk::DispatchType<SelectionTypes>(data.dtype(), op_, by_type);
  }

 private:
  struct Plan {
    int64_t m = 0, axis_stride = 0, extent = 0;
    std::vector<int64_t> outer_off, inner_off;
  };

  // Data offsets of every coordinate of the update dims [begin, end), in
  // row-major order, through data's strides.
  static std::vector<int64_t> Offsets(absl::Span<const int64_t> dims, const std::vector<int64_t>& strides,
                                      int64_t begin, int64_t end) {
    std::vector<int64_t> out = {0};
    for (int64_t d = begin; d < end; ++d) {
      std::vector<int64_t> next;
      next.reserve(out.size() * static_cast<size_t>(dims[d]));
      for (int64_t base : out) {
        for (int64_t c = 0; c < dims[d]; ++c) next.push_back(base + c * strides[d]);
      }
      out = std::move(next);
    }
    return out;
  }

  template <typename T, typename I>
  static void Scatter(const Plan& p, ScatterReduction red, const I* ind, const T* upd, T* out, int threads) {
    const int64_t outer = static_cast<int64_t>(p.outer_off.size());
    const int64_t inner = static_cast<int64_t>(p.inner_off.size());
    const int64_t tiles = (inner + kScatterTile - 1) / kScatterTile;
    Split(threads, outer * tiles, p.m * std::min(inner, kScatterTile), [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / tiles, i0 = (t % tiles) * kScatterTile;
        const int64_t i1 = std::min(inner, i0 + kScatterTile);
        T* base = out + p.outer_off[static_cast<size_t>(o)];
        for (int64_t j = 0; j < p.m; ++j) {
          const int64_t row = (o * p.m + j) * inner;
          for (int64_t i = i0; i < i1; ++i) {
            int64_t v = static_cast<int64_t>(ind[row + i]);
            v += v < 0 ? p.extent : 0;
            T& dst = base[v * p.axis_stride + p.inner_off[static_cast<size_t>(i)]];
            const T u = upd[row + i];
            if (red == ScatterReduction::kNone) {
              dst = u;
            } else if (red == ScatterReduction::kAdd) {
              if constexpr (sdk::kIsFloat<T>) {
                dst = sdk::Narrow<T>(sdk::Widen(dst) + sdk::Widen(u));
              } else {
                dst = sdk::WrapAdd(dst, u);
              }
            } else {
              if constexpr (sdk::kIsFloat<T>) {
                dst = sdk::Narrow<T>(sdk::Widen(dst) * sdk::Widen(u));
              } else {
                dst = sdk::WrapMul(dst, u);
              }
            }
          }
        }
      }
    });
  }

  ir::OpDesc op_;
  int64_t axis_;
  std::string reduction_;
};

// ScatterND (reduction none, add, mul, max, min): the output is data, then
// the slice of each index tuple, tuples in order. Repeated tuples meet only
// at the same slice positions, so the work splits by slice position (tiles
// of kScatterTile) and every tile walks all tuples in order: each target
// takes its updates in host_cpu's order (sums round the same, the last
// "none" wins). Index tuples are checked and turned into offsets first.
class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(const ir::OpDesc& op) : op_(op), reduction_(sdk::StringAttr(op, "reduction", "none")) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    const Tensor& upd = ctx.input(2);
    const Shape& ds = data.shape();
    const Shape& is = ind.shape();
    if (is.rank() < 1) return NodeError(op_, "indices must have rank >= 1");
    const int64_t q = is.dim(is.rank() - 1);
    if (q > ds.rank()) return NodeError(op_, "index tuples of length ", q, " do not fit data ", ds.ToString());
    Shape want(is.span().subspan(0, is.rank() - 1));
    for (int64_t d : ds.span().subspan(q)) want.push_back(d);
    if (upd.shape() != want) return NodeError(op_, "updates ", upd.shape().ToString(), " must be ", want.ToString());
    int red = 0;
    for (const char* r : {"none", "add", "mul", "max", "min"}) {
      if (reduction_ == r) break;
      ++red;
    }
    if (red == 5) return NodeError(op_, "reduction '", reduction_, "' is not none, add, mul, max or min");
    Tensor holder;
    GE_ASSIGN_OR_RETURN(Tensor * y, OutputOf(ctx, 0, holder));
    if (y->shape() != ds) return NodeError(op_, "output ", y->shape().ToString(), " is not data's shape");
    const size_t bytes = static_cast<size_t>(data.NumElements()) * DataTypeSize(data.dtype());
    if (bytes > 0 && y->raw_data() != data.raw_data()) std::memcpy(y->raw_data(), data.raw_data(), bytes);
    const int64_t slice = sdk::DimProduct(ds.span(), static_cast<size_t>(q), static_cast<size_t>(ds.rank()));
    const int64_t tuples = sdk::DimProduct(is.span(), 0, static_cast<size_t>(is.rank() - 1));
    if (tuples == 0 || slice == 0) return absl::OkStatus();
    const std::vector<int64_t> strides = Strides(ds.span());
    std::vector<int64_t> offsets(static_cast<size_t>(tuples));
    const int64_t* pi = ind.data<int64_t>();
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < q; ++j) {
        const int64_t dim = ds.dim(j), v = pi[t * q + j];
        if (v < -dim || v >= dim)
          return NodeError(op_, "index ", v, " is out of range for dim ", j, " of ", ds.ToString());
        off += (v < 0 ? v + dim : v) * strides[j];
      }
      offsets[static_cast<size_t>(t)] = off;
    }
    const int threads = ctx.num_threads();
    const auto by_type = [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      const T* u = upd.data<T>();
      T* out = y->data<T>();
      const int64_t tiles = (slice + kScatterTile - 1) / kScatterTile;
      Split(threads, tiles, tuples * std::min(slice, kScatterTile), [&](int64_t begin, int64_t end) {
        for (int64_t tile = begin; tile < end; ++tile) {
          const int64_t i0 = tile * kScatterTile, i1 = std::min(slice, i0 + kScatterTile);
          for (int64_t t = 0; t < tuples; ++t) {
            T* dst = out + offsets[static_cast<size_t>(t)];
            const T* src = u + t * slice;
            for (int64_t i = i0; i < i1; ++i) dst[i] = Combine(red, dst[i], src[i]);
          }
        }
      });
      return absl::OkStatus();
    };
    if (red == 0) {
      switch (DataTypeSize(data.dtype())) {
        case 1: return by_type(sdk::TypeTag<uint8_t>{});
        case 2: return by_type(sdk::TypeTag<uint16_t>{});
        case 4: return by_type(sdk::TypeTag<uint32_t>{});
        case 8: return by_type(sdk::TypeTag<uint64_t>{});
        default: return NodeError(op_, "element size ", DataTypeSize(data.dtype()), " is not 1, 2, 4 or 8");
      }
    }
    return sdk::DispatchType<SelectionTypes>(data.dtype(), op_, by_type);
  }

 private:
  // host_cpu's combination: in the compute type, wrapping integers.
  template <typename T>
  static T Combine(int red, T a, T b) {
    if (red == 0) return b;
    const auto wa = sdk::Widen(a), wb = sdk::Widen(b);
    switch (red) {
      case 1:
        if constexpr (sdk::kIsFloat<T>) {
          return sdk::Narrow<T>(wa + wb);
        } else {
          return sdk::WrapAdd(a, b);
        }
      case 2:
        if constexpr (sdk::kIsFloat<T>) {
          return sdk::Narrow<T>(wa * wb);
        } else {
          return sdk::WrapMul(a, b);
        }
      case 3: return sdk::Narrow<T>(wb > wa ? wb : wa);
      default: return sdk::Narrow<T>(wb < wa ? wb : wa);
    }
  }

  ir::OpDesc op_;
  std::string reduction_;
};

absl::Status InferBroadcast(ops::InferenceContext& ctx) {
  const auto data_shape = ctx.Attr<std::vector<int64_t>>(kAttrDataShape);
  const auto indices_shape = ctx.Attr<std::vector<int64_t>>(kAttrIndicesShape);
  const auto axis = ctx.Attr<int64_t>("axis");
  if (!data_shape || !indices_shape || !axis) return ctx.Error("needs axis, data_shape and indices_shape");
  if (data_shape->size() != indices_shape->size() || *axis < 0 || *axis >= static_cast<int64_t>(data_shape->size())) {
    return ctx.Error("data_shape and indices_shape must have one rank holding the axis");
  }
  for (int i = 0; i < 2; ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input ", i, " is missing");
  }
  ctx.set_output(0, ctx.input_tensor(0).dtype, Shape(*indices_shape));
  return absl::OkStatus();
}

constexpr sdk::DataTypeSet kIndexSet{DataType::kInt32, DataType::kInt64};

}  // namespace

absl::Status RegisterGatherElementsBroadcastOp(ops::OpRegistry& registry) {
  if (registry.Find(kGatherElementsBroadcastOp) != nullptr) return absl::OkStatus();
  ops::OpSchemaBuilder b{std::string(kGatherElementsBroadcastOp), 1};
  b.Doc(
       "cpu_vector: GatherElements(Expand(data, data_shape), Expand(indices, indices_shape), axis), "
       "reading both through zero strides.")
      .Input("data", "T")
      .Input("indices", "Tind")
      .Output("output", "T")
      .TypeConstraint("T", ops::Union(ops::NumericTypes(), ops::Types({DataType::kBool})))
      .TypeConstraint("Tind", ops::IndexTypes())
      .RequiredAttr("axis", Kind::kInt)
      .RequiredAttr(std::string(kAttrDataShape), Kind::kInts)
      .RequiredAttr(std::string(kAttrIndicesShape), Kind::kInts)
      .Infer(InferBroadcast);
  return registry.Register(std::move(b).Build());
}

void RegisterGatherKernels(VectorKernelTable& table) {
  const auto check = [](const ir::OpDesc& op) {
    GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, kCopySet));
    return CheckInputDtype(op, 1, kIndexSet);
  };
  table.Add({"GatherElements", check, [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new GatherElementsKernel(op));
             }});
  table.Add({"ScatterElements",
             [](const ir::OpDesc& op) -> absl::Status {
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, kCopySet));
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 1, kIndexSet));
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 2, kCopySet));
               if (InputDtype(op, 2) != InputDtype(op, 0)) return Unsupported(op, "updates of another dtype");
               const std::string reduction = sdk::StringAttr(op, "reduction", "none");
               if (reduction == "none") return absl::OkStatus();
               if (reduction != "add" && reduction != "mul") return Unsupported(op, "reduction ", reduction);
               return CheckInputDtype(op, 0, kNumericSet);
             },
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ScatterElementsKernel(op));
             }});
  table.Add({"ScatterND",
             [](const ir::OpDesc& op) -> absl::Status {
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 0, kCopySet));
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 1, {DataType::kInt64}));
               GE_RETURN_IF_ERROR(CheckInputDtype(op, 2, kCopySet));
               if (InputDtype(op, 2) != InputDtype(op, 0)) return Unsupported(op, "updates of another dtype");
               const std::string reduction = sdk::StringAttr(op, "reduction", "none");
               if (reduction == "none") return absl::OkStatus();
               if (reduction != "add" && reduction != "mul" && reduction != "max" && reduction != "min") {
                 return Unsupported(op, "reduction ", reduction);
               }
               return CheckInputDtype(op, 0, kNumericSet);
             },
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ScatterNDKernel(op));
             }});
  table.Add({std::string(kGatherElementsBroadcastOp), check,
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new GatherElementsBroadcastKernel(op));
             }});
}

}  // namespace ge::engine::cpu_vector

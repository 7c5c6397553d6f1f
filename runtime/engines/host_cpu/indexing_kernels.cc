// Indexing and tensor-building kernels: GatherElements, ScatterElements
// (none / add / mul), Trilu, CumSum (exclusive, reverse), Range, EyeLike,
// CastLike, Tile, OneHot. Reference implementations: plain loops over
// multi-indices, written for clarity rather than speed, except
// GatherElements and ScatterElements (tabled offsets, copies typed by
// element size), which detection models run on millions of elements.
#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

template <typename K>
KernelCreateFn Simple() {
  return [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new K(op));
  };
}

std::vector<int64_t> Strides(const Shape& shape) {
  const auto s = ContiguousStrides(shape.span());
  return std::vector<int64_t>(s.begin(), s.end());
}

// Advances the row-major multi-index `index` within `dims`.
void Next(std::vector<int64_t>& index, absl::Span<const int64_t> dims) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return;
    index[d] = 0;
  }
}

// The flat offsets in a tensor of `strides` of every coordinate of `dims`
// [begin, end) (the other coordinates 0), row-major.
std::vector<int64_t> CoordinateOffsets(absl::Span<const int64_t> dims, const std::vector<int64_t>& strides,
                                       size_t begin, size_t end) {
  std::vector<int64_t> offsets(1, 0);
  for (size_t d = begin; d < end; ++d) {
    std::vector<int64_t> next;
    next.reserve(offsets.size() * static_cast<size_t>(dims[d]));
    for (int64_t base : offsets) {
      for (int64_t c = 0; c < dims[d]; ++c) next.push_back(base + c * strides[d]);
    }
    offsets = std::move(next);
  }
  return offsets;
}

// How GatherElements / ScatterElements map an element of `indices` (a
// tensor of data's rank) to data: its coordinates, with the one along the
// axis replaced by the index. The offsets of the coordinates before and
// after the axis are tabled once, so an element costs a multiply and two
// adds (detection models gather and scatter millions of elements).
struct ElementMap {
  std::vector<int64_t> outer, inner;  // offsets of the coordinates before / after the axis
  int64_t along = 0;                  // indices' dim along the axis
  int64_t dim = 0, stride = 0;        // data's dim and stride along the axis
};

// Calls fn(j, offset) for every element j of `indices`, in order.
template <typename Index, typename Fn>
void ForEachElementOf(const ElementMap& m, const Index* idx, const Fn& fn) {
  int64_t j = 0;
  for (int64_t o : m.outer) {
    for (int64_t k = 0; k < m.along; ++k) {
      for (int64_t i : m.inner) {
        const auto v = static_cast<int64_t>(idx[j]);
        fn(j, o + (v < 0 ? v + m.dim : v) * m.stride + i);
        ++j;
      }
    }
  }
}

// Calls fn(idx) with the indices as a typed array: in place for int32 and
// int64, else as a converted copy. One dispatch per tensor, not per element.
template <typename Fn>
void WithIndices(const Tensor& indices, const Fn& fn) {
  if (indices.dtype() == DataType::kInt32) return fn(indices.data<int32_t>());
  if (indices.dtype() == DataType::kInt64) return fn(indices.data<int64_t>());
  std::vector<int64_t> idx(static_cast<size_t>(indices.NumElements()));
  for (size_t j = 0; j < idx.size(); ++j) idx[j] = indices.GetAsInt64(static_cast<int64_t>(j));
  fn(static_cast<const int64_t*>(idx.data()));
}

template <typename Fn>
void ForEachElement(const ElementMap& m, const Tensor& indices, const Fn& fn) {
  WithIndices(indices, [&](const auto* idx) { ForEachElementOf(m, idx, fn); });
}

// Checks the shapes and every index (within [-dim, dim) along the axis).
absl::StatusOr<ElementMap> MapElements(const ir::OpDesc& op, const Shape& data, const Tensor& indices,
                                       int64_t axis_attr) {
  if (indices.shape().rank() != data.rank()) {
    return NodeError(op, "indices ", indices.shape().ToString(), " and data ", data.ToString(), " differ in rank");
  }
  GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxisFor(op, axis_attr, data.rank()));
  ElementMap m;
  m.dim = data.dim(axis);
  const int64_t n = indices.NumElements();
  int64_t bad = -1, bad_value = 0;  // the first index out of range
  WithIndices(indices, [&](const auto* idx) {
    for (int64_t j = 0; j < n && bad < 0; ++j) {
      const auto v = static_cast<int64_t>(idx[j]);
      if (v < -m.dim || v >= m.dim) bad = j, bad_value = v;
    }
  });
  if (bad >= 0) {
    return NodeError(op, "index ", bad_value, " at flat position ", bad, " is out of range [", -m.dim, ", ", m.dim,
                     ")");
  }
  if (n == 0) return m;  // no element: outer and inner stay empty
  const auto dims = indices.shape().span();
  for (int64_t d = 0; d < data.rank(); ++d) {
    if (d != axis && dims[d] > data.dim(d)) {
      return NodeError(op, "indices ", indices.shape().ToString(), " exceed data ", data.ToString(), " at dim ", d);
    }
  }
  const std::vector<int64_t> strides = Strides(data);
  const auto a = static_cast<size_t>(axis);
  m.outer = CoordinateOffsets(dims, strides, 0, a);
  m.inner = CoordinateOffsets(dims, strides, a + 1, dims.size());
  m.along = dims[a];
  m.stride = strides[a];
  return m;
}

// Calls move(tag) with a value of an unsigned type of dtype's size (1, 2, 4
// or 8 bytes); false for other sizes and strings.
template <typename Fn>
bool BySize(DataType dtype, const Fn& move) {
  if (dtype == DataType::kString) return false;
  switch (DataTypeSize(dtype)) {
    case 1: move(uint8_t{}); return true;
    case 2: move(uint16_t{}); return true;
    case 4: move(uint32_t{}); return true;
    case 8: move(uint64_t{}); return true;
    default: return false;
  }
}

class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(const ir::OpDesc& op) : op_(op), axis_(IntAttr(op, "axis", 0)) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    GE_ASSIGN_OR_RETURN(ElementMap m, MapElements(op_, data.shape(), indices, axis_));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, indices.shape()));
    const bool typed = BySize(data.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* x = static_cast<const T*>(data.raw_data());
      T* out = static_cast<T*>(y.raw_data());
      ForEachElement(m, indices, [&](int64_t j, int64_t at) { out[j] = x[at]; });
    });
    if (!typed) {
      ForEachElement(m, indices, [&](int64_t j, int64_t at) {
        CopyElements(data.dtype(), data.raw_data(), at, y.raw_data(), j, 1);
      });
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
};

// A scatter's add / mul reduction of one element: integers wrap (in
// unsigned arithmetic: signed overflow is undefined), floats compute in
// their compute type.
template <typename T>
T ReduceAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return WrapAdd(a, b);
  } else {
    return Narrow<T>(Widen(a) + Widen(b));
  }
}
template <typename T>
T ReduceMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return WrapMul(a, b);
  } else {
    return Narrow<T>(Widen(a) * Widen(b));
  }
}

class ScatterElementsKernel final : public Kernel {
 public:
  explicit ScatterElementsKernel(const ir::OpDesc& op)
      : op_(op), axis_(IntAttr(op, "axis", 0)), reduction_(StringAttr(op, "reduction", "none")) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    if (updates.shape() != indices.shape()) {
      return NodeError(op_, "updates ", updates.shape().ToString(), " and indices ", indices.shape().ToString(),
                       " differ");
    }
    if (reduction_ != "none" && reduction_ != "add" && reduction_ != "mul") {
      return NodeError(op_, "reduction '", reduction_, "' is not none, add or mul");
    }
    GE_ASSIGN_OR_RETURN(ElementMap m, MapElements(op_, data.shape(), indices, axis_));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, data.shape()));
    CopyElements(data.dtype(), data.raw_data(), 0, y.raw_data(), 0, data.NumElements());
    if (reduction_ == "none") {
      const bool typed = BySize(data.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* u = static_cast<const T*>(updates.raw_data());
        T* out = static_cast<T*>(y.raw_data());
        ForEachElement(m, indices, [&](int64_t j, int64_t at) { out[at] = u[j]; });
      });
      if (!typed) {
        ForEachElement(m, indices, [&](int64_t j, int64_t at) {
          CopyElements(data.dtype(), updates.raw_data(), j, y.raw_data(), at, 1);
        });
      }
      return absl::OkStatus();
    }
    const bool add = reduction_ == "add";
    return DispatchType<NumericTypes>(data.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = y.data<T>();
      const T* u = updates.data<T>();
      ForEachElement(m, indices, [&](int64_t j, int64_t at) {
        T& o = out[at];
        o = add ? ReduceAdd(o, u[j]) : ReduceMul(o, u[j]);
      });
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
  std::string reduction_;
};

class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(const ir::OpDesc& op) : op_(op), upper_(IntAttr(op, "upper", 1) != 0) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.shape().rank() < 2) return NodeError(op_, "input must have rank >= 2, got ", x.shape().ToString());
    const int64_t k = ctx.has_input(1) ? ctx.input(1).GetAsInt64(0) : 0;
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, x.shape()));
    const int64_t rank = x.shape().rank();
    const int64_t rows = x.shape().dim(rank - 2), cols = x.shape().dim(rank - 1);
    const int64_t mats = rows * cols == 0 ? 0 : x.NumElements() / (rows * cols);
    return DispatchCopyType(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t m = 0; m < mats; ++m) {
        for (int64_t i = 0; i < rows; ++i) {
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t at = (m * rows + i) * cols + j;
            const bool keep = upper_ ? j - i >= k : j - i <= k;
            out[at] = keep ? in[at] : T{};
          }
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
  bool upper_;
};

class CumSumKernel final : public Kernel {
 public:
  explicit CumSumKernel(const ir::OpDesc& op)
      : op_(op), exclusive_(IntAttr(op, "exclusive", 0) != 0), reverse_(IntAttr(op, "reverse", 0) != 0) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (ctx.input(1).NumElements() != 1) return NodeError(op_, "axis must be a scalar");
    GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxisFor(op_, ctx.input(1).GetAsInt64(0), x.shape().rank()));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, x.shape()));
    const auto dims = x.shape().span();
    const int64_t outer = DimProduct(dims, 0, axis), n = dims[axis];
    const int64_t inner = DimProduct(dims, axis + 1, dims.size());
    return DispatchType<NumericTypes>(x.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          ComputeType<T> sum{};
          for (int64_t s = 0; s < n; ++s) {
            const int64_t a = reverse_ ? n - 1 - s : s;
            const int64_t at = (o * n + a) * inner + i;
            const ComputeType<T> v = Widen(in[at]);
            if (exclusive_) {
              out[at] = Narrow<T>(sum);
              sum = WrapAdd(sum, v);
            } else {
              sum = WrapAdd(sum, v);
              out[at] = Narrow<T>(sum);
            }
          }
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
  bool exclusive_, reverse_;
};

class RangeKernel final : public Kernel {
 public:
  explicit RangeKernel(const ir::OpDesc& op) : op_(op) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& start = ctx.input(0);
    using RangeTypes = TypeList<float, double, int16_t, int32_t, int64_t>;
    return DispatchType<RangeTypes>(start.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T s = start.data<T>()[0], l = ctx.input(1).data<T>()[0], d = ctx.input(2).data<T>()[0];
      if (d == T(0)) return NodeError(op_, "delta is 0");
      const double count = std::ceil((static_cast<double>(l) - static_cast<double>(s)) / static_cast<double>(d));
      const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
      GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, Shape{n}));
      T* out = y.data<T>();
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(s + static_cast<T>(i) * d);
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
};

class EyeLikeKernel final : public Kernel {
 public:
  explicit EyeLikeKernel(const ir::OpDesc& op) : op_(op), k_(IntAttr(op, "k", 0)) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Shape& shape = ctx.input(0).shape();
    if (shape.rank() != 2) return NodeError(op_, "input must be 2-D, got ", shape.ToString());
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, shape));
    return DispatchType<NumericAndBoolTypes>(y.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = y.data<T>();
      for (int64_t i = 0; i < shape.dim(0); ++i) {
        for (int64_t j = 0; j < shape.dim(1); ++j) {
          out[i * shape.dim(1) + j] = Narrow<T>(ComputeType<T>(j - i == k_ ? 1 : 0));
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
  int64_t k_;
};

class CastLikeKernel final : public Kernel {
 public:
  explicit CastLikeKernel(const ir::OpDesc& op) : op_(op) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, ctx.input(0).shape()));
    absl::Status status = ConvertInto(ctx.input(0), y);
    return status.ok() ? status : NodeError(op_, status.message());
  }

 private:
  ir::OpDesc op_;
};

class TileKernel final : public Kernel {
 public:
  explicit TileKernel(const ir::OpDesc& op) : op_(op) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> repeats = ReadInts(ctx.input(1));
    if (static_cast<int64_t>(repeats.size()) != x.shape().rank()) {
      return NodeError(op_, "repeats has ", repeats.size(), " values for input ", x.shape().ToString());
    }
    Shape shape;
    for (int64_t d = 0; d < x.shape().rank(); ++d) {
      if (repeats[d] < 0) return NodeError(op_, "repeats[", d, "] is negative");
      shape.push_back(x.shape().dim(d) * repeats[d]);
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, shape));
    const std::vector<int64_t> strides = Strides(x.shape());
    std::vector<int64_t> at(shape.rank(), 0);
    for (int64_t j = 0; j < y.NumElements(); ++j, Next(at, shape.span())) {
      int64_t off = 0;
      for (int64_t d = 0; d < shape.rank(); ++d) off += (at[d] % x.shape().dim(d)) * strides[d];
      CopyElements(x.dtype(), x.raw_data(), off, y.raw_data(), j, 1);
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
};

class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(const ir::OpDesc& op) : op_(op), axis_(IntAttr(op, "axis", -1)) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& indices = ctx.input(0);
    const Tensor& values = ctx.input(2);
    if (ctx.input(1).NumElements() != 1) return NodeError(op_, "depth must hold one value");
    if (values.NumElements() != 2) return NodeError(op_, "values must hold [off, on], got ", values.shape().ToString());
    const int64_t depth = static_cast<int64_t>(ctx.input(1).GetAsDouble(0));
    if (depth < 1) return NodeError(op_, "depth ", depth, " must be positive");
    const int64_t rank = indices.shape().rank() + 1;
    GE_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxisFor(op_, axis_, rank));
    Shape shape;
    for (int64_t d = 0, j = 0; d < rank; ++d) shape.push_back(d == axis ? depth : indices.shape().dim(j++));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, shape));
    const int64_t outer = DimProduct(shape.span(), 0, axis);
    const int64_t inner = DimProduct(shape.span(), axis + 1, rank);
    for (int64_t j = 0; j < y.NumElements(); ++j) CopyElements(values.dtype(), values.raw_data(), 0, y.raw_data(), j, 1);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        int64_t c = static_cast<int64_t>(indices.GetAsDouble(o * inner + i));
        if (c < 0) c += depth;
        if (c < 0 || c >= depth) continue;
        CopyElements(values.dtype(), values.raw_data(), 1, y.raw_data(), (o * depth + c) * inner + i, 1);
      }
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  int64_t axis_;
};

// DepthToSpace (DCR and CRD) and SpaceToDepth on [N, C, H, W].
class DepthSpaceKernel final : public Kernel {
 public:
  DepthSpaceKernel(const ir::OpDesc& op, bool to_space)
      : op_(op), to_space_(to_space), block_(IntAttr(op, "blocksize", 1)), crd_(StringAttr(op, "mode", "DCR") == "CRD") {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const int64_t b = block_;
    if (s.rank() != 4 || b < 1) return NodeError(op_, "input must be 4-D with blocksize >= 1, got ", s.ToString());
    if (to_space_ ? s.dim(1) % (b * b) != 0 : (s.dim(2) % b != 0 || s.dim(3) % b != 0)) {
      return NodeError(op_, "input ", s.ToString(), " does not divide by blocksize ", b);
    }
    // Loops over the space-side shape [N, C', H', W'] (C' = depth-side C / b^2).
    const int64_t n = s.dim(0);
    const int64_t c = to_space_ ? s.dim(1) / (b * b) : s.dim(1);
    const int64_t h = to_space_ ? s.dim(2) * b : s.dim(2), w = to_space_ ? s.dim(3) * b : s.dim(3);
    const Shape out_shape = to_space_ ? Shape{n, c, h, w} : Shape{n, c * b * b, h / b, w / b};
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out_shape));
    const int64_t hd = h / b, wd = w / b;
    for (int64_t in = 0; in < n; ++in) {
      for (int64_t ic = 0; ic < c; ++ic) {
        for (int64_t ih = 0; ih < h; ++ih) {
          for (int64_t iw = 0; iw < w; ++iw) {
            const int64_t i = ih % b, j = iw % b;
            const int64_t dc = crd_ ? (ic * b + i) * b + j : (i * b + j) * c + ic;
            const int64_t space = ((in * c + ic) * h + ih) * w + iw;
            const int64_t depth = ((in * c * b * b + dc) * hd + ih / b) * wd + iw / b;
            if (to_space_) {
              CopyElements(x.dtype(), x.raw_data(), depth, y.raw_data(), space, 1);
            } else {
              CopyElements(x.dtype(), x.raw_data(), space, y.raw_data(), depth, 1);
            }
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  bool to_space_;
  int64_t block_;
  bool crd_;
};

class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(const ir::OpDesc& op) : op_(op), batch_(IntAttr(op, "batch_dims", 0)) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Shape& ds = data.shape();
    const Shape& is = indices.shape();
    if (is.rank() < 1) return NodeError(op_, "indices must have rank >= 1");
    const int64_t k = is.dim(is.rank() - 1);
    if (batch_ < 0 || batch_ + k > ds.rank() || batch_ >= is.rank()) {
      return NodeError(op_, "indices ", is.ToString(), " do not fit data ", ds.ToString());
    }
    Shape out(is.span().subspan(0, is.rank() - 1));
    for (int64_t d : ds.span().subspan(batch_ + k)) out.push_back(d);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    const int64_t batches = DimProduct(ds.span(), 0, batch_);
    const int64_t slice = DimProduct(ds.span(), batch_ + k, ds.rank());
    const int64_t per_batch_data = DimProduct(ds.span(), batch_, ds.rank());
    const int64_t tuples = k == 0 ? DimProduct(is.span(), 0, is.rank() - 1) : indices.NumElements() / k;
    const int64_t per_batch_tuples = batches == 0 ? 0 : tuples / batches;
    const std::vector<int64_t> strides = Strides(ds);
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = (per_batch_tuples == 0 ? 0 : t / per_batch_tuples) * per_batch_data;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t dim = ds.dim(batch_ + j);
        int64_t v = indices.GetAsInt64(t * k + j);
        if (v < -dim || v >= dim) return NodeError(op_, "index ", v, " is out of range for dim ", batch_ + j, " of ", ds.ToString());
        if (v < 0) v += dim;
        off += v * strides[batch_ + j];
      }
      CopyElements(data.dtype(), data.raw_data(), off, y.raw_data(), t * slice, slice);
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  int64_t batch_;
};

// ScatterND: output = data, then for every index tuple (the last dim of
// indices) its slice of updates is written or reduced into the slice of
// output it names.
class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(const ir::OpDesc& op) : op_(op), reduction_(StringAttr(op, "reduction", "none")) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    const Shape& ds = data.shape();
    const Shape& is = indices.shape();
    if (is.rank() < 1) return NodeError(op_, "indices must have rank >= 1");
    const int64_t k = is.dim(is.rank() - 1);
    if (k > ds.rank()) return NodeError(op_, "index tuples of length ", k, " do not fit data ", ds.ToString());
    Shape want(is.span().subspan(0, is.rank() - 1));
    for (int64_t d : ds.span().subspan(k)) want.push_back(d);
    if (updates.shape() != want) {
      return NodeError(op_, "updates ", updates.shape().ToString(), " must be ", want.ToString(), " for data ",
                       ds.ToString(), " and indices ", is.ToString());
    }
    if (reduction_ != "none" && reduction_ != "add" && reduction_ != "mul" && reduction_ != "max" &&
        reduction_ != "min") {
      return NodeError(op_, "reduction '", reduction_, "' is not none, add, mul, max or min");
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, ds));
    CopyElements(data.dtype(), data.raw_data(), 0, y.raw_data(), 0, data.NumElements());
    const int64_t slice = DimProduct(ds.span(), k, ds.rank());
    const int64_t tuples = DimProduct(is.span(), 0, is.rank() - 1);
    const std::vector<int64_t> strides = Strides(ds);
    std::vector<int64_t> offsets(static_cast<size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t dim = ds.dim(j);
        int64_t v = indices.GetAsInt64(t * k + j);
        if (v < -dim || v >= dim) {
          return NodeError(op_, "index ", v, " is out of range for dim ", j, " of ", ds.ToString());
        }
        off += (v < 0 ? v + dim : v) * strides[j];
      }
      offsets[t] = off;
    }
    if (reduction_ == "none") {
      for (int64_t t = 0; t < tuples; ++t) {
        CopyElements(data.dtype(), updates.raw_data(), t * slice, y.raw_data(), offsets[t], slice);
      }
      return absl::OkStatus();
    }
    return DispatchType<NumericTypes>(data.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = y.data<T>();
      const T* u = updates.data<T>();
      for (int64_t t = 0; t < tuples; ++t) {
        for (int64_t i = 0; i < slice; ++i) {
          T& o = out[offsets[t] + i];
          const T v = u[t * slice + i];
          const auto a = Widen(o), b = Widen(v);
          if (reduction_ == "add") {
            o = ReduceAdd(o, v);
          } else if (reduction_ == "mul") {
            o = ReduceMul(o, v);
          } else if (reduction_ == "max") {
            o = Narrow<T>(b > a ? b : a);
          } else {
            o = Narrow<T>(b < a ? b : a);
          }
        }
      }
      return absl::OkStatus();
    });
  }

 private:
  ir::OpDesc op_;
  std::string reduction_;
};

// ReverseSequence: for every batch b, the first sequence_lens[b] elements
// along time_axis are reversed; the rest are copied.
class ReverseSequenceKernel final : public Kernel {
 public:
  explicit ReverseSequenceKernel(const ir::OpDesc& op)
      : op_(op), batch_axis_(IntAttr(op, "batch_axis", 1)), time_axis_(IntAttr(op, "time_axis", 0)) {}
  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& lens = ctx.input(1);
    const Shape& xs = x.shape();
    if (xs.rank() < 2) return NodeError(op_, "input must have rank >= 2, got ", xs.ToString());
    if (!((batch_axis_ == 0 && time_axis_ == 1) || (batch_axis_ == 1 && time_axis_ == 0))) {
      return NodeError(op_, "batch_axis and time_axis must be 0 and 1 in some order, got ", batch_axis_, " and ",
                       time_axis_);
    }
    const int64_t batches = xs.dim(batch_axis_), steps = xs.dim(time_axis_);
    if (lens.NumElements() != batches) {
      return NodeError(op_, "sequence_lens has ", lens.NumElements(), " values for ", batches, " batches");
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, xs));
    const int64_t inner = DimProduct(xs.span(), 2, xs.rank());
    const std::vector<int64_t> strides = Strides(xs);
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t len = lens.GetAsInt64(b);
      if (len < 0 || len > steps) return NodeError(op_, "sequence_lens[", b, "] = ", len, " is outside [0, ", steps, "]");
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t from = t < len ? len - 1 - t : t;
        const int64_t dst = b * strides[batch_axis_] + t * strides[time_axis_];
        const int64_t src = b * strides[batch_axis_] + from * strides[time_axis_];
        CopyElements(x.dtype(), x.raw_data(), src, y.raw_data(), dst, inner);
      }
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  int64_t batch_axis_, time_axis_;
};

KernelCreateFn DepthSpace(bool to_space) {
  return [to_space](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new DepthSpaceKernel(op, to_space));
  };
}

}  // namespace

void RegisterIndexingKernels(KernelTable& table) {
  const DataTypeSet all = SetOf(AllTypes{});
  const DataTypeSet numeric = SetOf(NumericTypes{});
  const DataTypeSet numeric_bool = SetOf(NumericAndBoolTypes{});
  const DataTypeSet index = SetOf(IndexTypes{});
  const DataTypeSet i64{DataType::kInt64};
  const DataTypeSet range{DataType::kFloat, DataType::kDouble, DataType::kInt16, DataType::kInt32, DataType::kInt64};
  table.Add({"GatherElements", Simple<GatherElementsKernel>(), {all, index}, {all}});
  table.Add({"ScatterElements", Simple<ScatterElementsKernel>(), {all, index, all}, {all}});
  table.Add({"Trilu", Simple<TriluKernel>(), {all, i64}, {all}});
  table.Add({"CumSum", Simple<CumSumKernel>(), {numeric, index}, {numeric}});
  table.Add({"Range", Simple<RangeKernel>(), {range}, {range}});
  table.Add({"EyeLike", Simple<EyeLikeKernel>(), {numeric_bool}, {numeric_bool}});
  table.Add({"CastLike", Simple<CastLikeKernel>(), {all, all}, {all}});
  table.Add({"Tile", Simple<TileKernel>(), {all, i64}, {all}});
  table.Add({"DepthToSpace", DepthSpace(/*to_space=*/true), {all}, {all}});
  table.Add({"SpaceToDepth", DepthSpace(/*to_space=*/false), {all}, {all}});
  table.Add({"GatherND", Simple<GatherNDKernel>(), {all, i64}, {all}});
  table.Add({"OneHot", Simple<OneHotKernel>(), {numeric, numeric, all}, {all}});
  table.Add({"ScatterND", Simple<ScatterNDKernel>(), {all, i64, all}, {all}});
  table.Add({"ReverseSequence", Simple<ReverseSequenceKernel>(), {all, i64}, {all}});
}

}  // namespace ge::engine::host_cpu

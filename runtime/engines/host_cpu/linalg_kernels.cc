// Linear-algebra kernels: Det-11 and Einsum-12.
//
// Det computes each [M, M] matrix's determinant by LU decomposition with
// partial pivoting in double: O(M^3) per matrix.
//
// Einsum is the reference form: for each output element, a sum over every
// combination of the contracted labels of the product of the inputs'
// elements, each input addressed through per-label strides (a label
// repeated in one input adds its strides: a diagonal; a broadcast ellipsis
// dim of size 1 has stride 0). Cost: the product of all label sizes.
// Floats accumulate in double, integers wrap.
#include <algorithm>
#include <cmath>
#include <map>
#include <type_traits>
#include <string>
#include <memory>
#include <utility>
#include <vector>

#include "base/ops/shape_utils.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

// The determinant of the row-major m x m matrix `a` (overwritten).
double Determinant(std::vector<double>& a, int64_t m) {
  double det = 1;
  for (int64_t k = 0; k < m; ++k) {
    int64_t pivot = k;
    for (int64_t r = k + 1; r < m; ++r) {
      if (std::abs(a[r * m + k]) > std::abs(a[pivot * m + k])) pivot = r;
    }
    if (a[pivot * m + k] == 0) return 0;
    if (pivot != k) {
      for (int64_t c = 0; c < m; ++c) std::swap(a[k * m + c], a[pivot * m + c]);
      det = -det;
    }
    const double p = a[k * m + k];
    det *= p;
    for (int64_t r = k + 1; r < m; ++r) {
      const double f = a[r * m + k] / p;
      if (f == 0) continue;
      for (int64_t c = k + 1; c < m; ++c) a[r * m + c] -= f * a[k * m + c];
    }
  }
  return det;
}

class DetKernel final : public Kernel {
 public:
  explicit DetKernel(const ir::OpDesc& op) : op_(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    const int64_t rank = xs.rank();
    if (rank < 2 || xs.dim(rank - 1) != xs.dim(rank - 2)) {
      return NodeError(op_, "input ", xs.ToString(), " must be [*, M, M]");
    }
    const int64_t m = xs.dim(rank - 1);
    Shape out;
    for (int64_t d = 0; d < rank - 2; ++d) out.push_back(xs.dim(d));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    GE_ASSIGN_OR_RETURN(Tensor xd, ConvertTensor(x, DataType::kDouble));
    GE_ASSIGN_OR_RETURN(Tensor yd, Tensor::Allocate(DataType::kDouble, out));
    const double* px = xd.data<double>();
    double* py = yd.data<double>();
    std::vector<double> a(static_cast<size_t>(m * m));
    for (int64_t b = 0; b < y.NumElements(); ++b) {
      a.assign(px + b * m * m, px + (b + 1) * m * m);
      py[b] = Determinant(a, m);
    }
    return ConvertInto(yd, y);
  }

 private:
  ir::OpDesc op_;
};

class EinsumKernel final : public Kernel {
 public:
  explicit EinsumKernel(const ir::OpDesc& op) : op_(op), equation_(StringAttr(op, "equation", "")) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const int n = ctx.num_inputs();
    std::vector<int64_t> ranks;
    std::vector<Shape> shapes;
    for (int i = 0; i < n; ++i) {
      shapes.push_back(ctx.input(i).shape());
      ranks.push_back(shapes.back().rank());
      if (ctx.input(i).dtype() != ctx.input(0).dtype()) return NodeError(op_, "inputs differ in dtype");
    }
    auto spec = ops::ParseEinsum(equation_, ranks);
    if (!spec.ok()) return NodeError(op_, spec.status().message());
    auto sizes = ops::EinsumLabelSizes(*spec, shapes);
    if (!sizes.ok()) return NodeError(op_, sizes.status().message());
    // Labels in loop order: the output's, then the contracted ones.
    std::vector<int> labels = spec->output;
    for (const auto& [label, size] : *sizes) {
      if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
    }
    std::map<int, size_t> position;
    for (size_t k = 0; k < labels.size(); ++k) position[labels[k]] = k;
    // strides[i][k]: input i's step when label k advances.
    std::vector<std::vector<int64_t>> strides(n, std::vector<int64_t>(labels.size(), 0));
    for (int i = 0; i < n; ++i) {
      const auto s = ContiguousStrides(shapes[i].span());
      for (size_t d = 0; d < spec->inputs[i].size(); ++d) {
        if (shapes[i].dim(d) == 1 && sizes->at(spec->inputs[i][d]) != 1) continue;  // broadcast
        strides[i][position[spec->inputs[i][d]]] += s[d];
      }
    }
    std::vector<int64_t> extent(labels.size());
    for (size_t k = 0; k < labels.size(); ++k) extent[k] = sizes->at(labels[k]);
    Shape out;
    for (size_t k = 0; k < spec->output.size(); ++k) out.push_back(extent[k]);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    return DispatchType<NumericTypes>(ctx.input(0).dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using Acc = std::conditional_t<kIsFloat<T>, double, T>;
      std::vector<const T*> data;
      for (int i = 0; i < n; ++i) data.push_back(ctx.input(i).template data<T>());
      T* py = y.data<T>();
      const size_t outer = spec->output.size();
      int64_t inner_count = 1;
      for (size_t k = outer; k < labels.size(); ++k) inner_count *= extent[k];
      std::vector<int64_t> index(labels.size(), 0);
      for (int64_t e = 0; e < y.NumElements(); ++e) {
        Acc sum = Acc(0);
        for (size_t k = outer; k < labels.size(); ++k) index[k] = 0;
        for (int64_t c = 0; c < inner_count; ++c) {
          Acc product = Acc(1);
          for (int i = 0; i < n; ++i) {
            int64_t offset = 0;
            for (size_t k = 0; k < labels.size(); ++k) offset += index[k] * strides[i][k];
            product = WrapMul(product, static_cast<Acc>(Widen(data[i][offset])));
          }
          sum = WrapAdd(sum, product);
          Advance(index, extent, outer, labels.size());
        }
        py[e] = static_cast<T>(static_cast<ComputeType<T>>(sum));
        Advance(index, extent, 0, outer);
      }
      return absl::OkStatus();
    });
  }

 private:
  // The next row-major multi-index over dims [begin, end).
  static void Advance(std::vector<int64_t>& index, const std::vector<int64_t>& extent, size_t begin, size_t end) {
    for (size_t k = end; k > begin; --k) {
      if (++index[k - 1] < extent[k - 1]) return;
      index[k - 1] = 0;
    }
  }

  ir::OpDesc op_;
  std::string equation_;
};

}  // namespace

void RegisterLinalgKernels(KernelTable& table) {
  const DataTypeSet floats = SetOf(FloatTypes{});
  table.Add({"Det",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new DetKernel(op));
             },
             {floats}, {floats}});
  const DataTypeSet numeric = SetOf(NumericTypes{});
  table.Add({"Einsum",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new EinsumKernel(op));
             },
             {numeric}, {numeric}});
}

}  // namespace ge::engine::host_cpu

// Linear-algebra kernels: Det-11.
//
// Det computes each [M, M] matrix's determinant by LU decomposition with
// partial pivoting in double: O(M^3) per matrix.
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/host_cpu/kernel_util.h"

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

}  // namespace

void RegisterLinalgKernels(KernelTable& table) {
  const DataTypeSet floats = SetOf(FloatTypes{});
  table.Add({"Det",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new DetKernel(op));
             },
             {floats}, {floats}});
}

}  // namespace ge::engine::host_cpu

// Loss kernels: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (LogSoftmax over the class axis, then the same loss). Accumulates in
// double. With class weights or an ignore_index, "mean" divides by the sum
// of the weights of the counted elements (ONNX's definition); otherwise by
// the element count. Targets equal to ignore_index contribute nothing and
// may lie outside [0, C).
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

// scores [N, C, D] (D the product of the trailing dims) as doubles.
std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> out(t.NumElements());
  for (int64_t i = 0; i < t.NumElements(); ++i) out[i] = t.GetAsDouble(i);
  return out;
}

// Replaces each [n, :, d] column of `x` by its log-softmax.
void LogSoftmaxOverClasses(std::vector<double>& x, int64_t n, int64_t c, int64_t d) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < d; ++k) {
      double* col = x.data() + i * c * d + k;
      double max = col[0];
      for (int64_t j = 1; j < c; ++j) max = std::max(max, col[j * d]);
      double sum = 0;
      for (int64_t j = 0; j < c; ++j) sum += std::exp(col[j * d] - max);
      const double log_sum = std::log(sum) + max;
      for (int64_t j = 0; j < c; ++j) col[j * d] -= log_sum;
    }
  }
}

absl::Status WriteDoubles(const ir::OpDesc& op, const std::vector<double>& values, const Tensor& out) {
  return DispatchType<FloatTypes>(out.dtype(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = out.data<T>();
    for (size_t i = 0; i < values.size(); ++i) dst[i] = Narrow<T>(static_cast<ComputeType<T>>(values[i]));
    return absl::OkStatus();
  });
}

class LossKernel final : public Kernel {
 public:
  LossKernel(const ir::OpDesc& op, bool softmax)
      : op_(op), softmax_(softmax), reduction_(StringAttr(op, "reduction", "mean")) {
    if (op.HasAttr("ignore_index")) ignore_index_ = IntAttr(op, "ignore_index", 0);
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& scores = ctx.input(0);
    const Tensor& target = ctx.input(1);
    const Shape& s = scores.shape();
    if (s.rank() < 2 || target.shape().rank() != s.rank() - 1) {
      return NodeError(op_, "input ", s.ToString(), " and target ", target.shape().ToString(), " do not match");
    }
    const int64_t n = s.dim(0), c = s.dim(1), d = DimProduct(s.span(), 2, s.rank());
    if (target.NumElements() != n * d) return NodeError(op_, "target ", target.shape().ToString(), " does not match input ", s.ToString());
    std::vector<double> x = ToDoubles(scores);
    if (softmax_) LogSoftmaxOverClasses(x, n, c, d);
    const bool weighted = ctx.has_input(2);
    std::vector<double> weight = weighted ? ToDoubles(ctx.input(2)) : std::vector<double>();
    std::vector<double> loss(n * d, 0.0);
    double weight_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t k = 0; k < d; ++k) {
        const int64_t t = target.GetAsInt64(i * d + k);
        if (ignore_index_ && t == *ignore_index_) continue;
        if (t < 0 || t >= c) return NodeError(op_, "target ", t, " at flat position ", i * d + k, " is outside [0, ", c, ")");
        const double w = weighted ? weight[t] : 1.0;
        loss[i * d + k] = -x[(i * c + t) * d + k] * w;
        weight_sum += w;
      }
    }
    std::vector<double> result = loss;
    if (reduction_ != "none") {
      double sum = 0;
      for (double v : loss) sum += v;
      if (reduction_ == "mean") sum /= (weighted || ignore_index_) ? weight_sum : static_cast<double>(n * d);
      result = {sum};
    }
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0, reduction_ == "none" ? target.shape() : Shape{}));
    GE_RETURN_IF_ERROR(WriteDoubles(op_, result, out));
    if (softmax_ && ctx.num_outputs() > 1) {
      GE_ASSIGN_OR_RETURN(Tensor log_prob, ctx.Output(1, s));
      GE_RETURN_IF_ERROR(WriteDoubles(op_, x, log_prob));
    }
    return absl::OkStatus();
  }

 private:
  ir::OpDesc op_;
  bool softmax_;
  std::string reduction_;
  std::optional<int64_t> ignore_index_;
};

KernelCreateFn LossFactory(bool softmax) {
  return [softmax](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    const std::string reduction = StringAttr(op, "reduction", "mean");
    if (reduction != "none" && reduction != "sum" && reduction != "mean") {
      return NodeError(op, "reduction '", reduction, "' is not none, sum or mean");
    }
    return std::unique_ptr<Kernel>(new LossKernel(op, softmax));
  };
}

}  // namespace

void RegisterLossKernels(KernelTable& table) {
  const DataTypeSet floats = SetOf(FloatTypes{});
  const DataTypeSet index = SetOf(IndexTypes{});
  table.Add({"NegativeLogLikelihoodLoss", LossFactory(/*softmax=*/false), {floats, index, floats}, {floats}});
  table.Add({"SoftmaxCrossEntropyLoss", LossFactory(/*softmax=*/true), {floats, index, floats}, {floats}});
}

}  // namespace ge::engine::host_cpu

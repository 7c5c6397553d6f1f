// Recurrent kernels: RNN, GRU and LSTM (opsets 7 and 14), the reference
// form of ONNX's equations.
//
// Every operand is converted to double once per Compute; each direction and
// batch row walks its own sequence (sequence_lens[b] steps, backwards for
// the reverse direction), so Y is zero past a row's length and Y_h / Y_c
// hold the state after its last step. Gate pre-activations are
// x_t * W^T + h_{t-1} * R^T + Wb + Rb (LSTM adds the peepholes), clipped to
// [-clip, clip] when `clip` is set, then the direction's activations apply:
// RNN f; GRU f for z and r, g for the candidate (linear_before_reset picks
// where r applies); LSTM f for i, o, f, g for the cell candidate, h for the
// output (input_forget couples f = 1 - i). Cost: steps * batch * gates *
// hidden * (input + hidden) multiply-adds per direction.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::host_cpu {
namespace {

enum class Cell { kRnn, kGru, kLstm };

int GateCount(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }
int ActivationCount(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3; }

// One of ONNX's recurrent activation functions with its parameters.
struct Activation {
  enum class Fn { kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid,
                  kElu, kSoftsign, kSoftplus };
  Fn fn = Fn::kTanh;
  double alpha = 0, beta = 0;

  double operator()(double x) const {
    switch (fn) {
      case Fn::kRelu: return std::max(x, 0.0);
      case Fn::kTanh: return std::tanh(x);
      case Fn::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
      case Fn::kAffine: return alpha * x + beta;
      case Fn::kLeakyRelu: return x >= 0 ? x : alpha * x;
      case Fn::kThresholdedRelu: return x > alpha ? x : 0.0;
      case Fn::kScaledTanh: return alpha * std::tanh(beta * x);
      case Fn::kHardSigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
      case Fn::kElu: return x >= 0 ? x : alpha * (std::exp(x) - 1.0);
      case Fn::kSoftsign: return x / (1.0 + std::abs(x));
      case Fn::kSoftplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

// Parses `activations` with `activation_alpha` / `activation_beta`, which
// are consumed in order by the functions that take parameters; a missing
// parameter takes the default of the ONNX op of the same name.
absl::StatusOr<std::vector<Activation>> ParseActivations(const ir::OpDesc& op, Cell cell, int directions) {
  std::vector<std::string> names = op.GetAttrOr<std::vector<std::string>>("activations", {});
  const int per_direction = ActivationCount(cell);
  if (names.empty()) {
    names = cell == Cell::kRnn ? std::vector<std::string>{"Tanh"}
            : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                 : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  }
  if (static_cast<int>(names.size()) == per_direction && directions == 2) {
    std::vector<std::string> both = names;
    both.insert(both.end(), names.begin(), names.end());
    names = std::move(both);
  }
  if (static_cast<int>(names.size()) != per_direction * directions) {
    return NodeError(op, "expected ", per_direction * directions, " activations, got ", names.size());
  }
  const std::vector<float> alphas = op.GetAttrOr<std::vector<float>>("activation_alpha", {});
  const std::vector<float> betas = op.GetAttrOr<std::vector<float>>("activation_beta", {});
  size_t next_alpha = 0, next_beta = 0;
  auto param = [](const std::vector<float>& list, size_t& next, double def) {
    return next < list.size() ? static_cast<double>(list[next++]) : def;
  };
  std::vector<Activation> out;
  for (std::string name : names) {
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    Activation a;
    using Fn = Activation::Fn;
    if (name == "relu") {
      a.fn = Fn::kRelu;
    } else if (name == "tanh") {
      a.fn = Fn::kTanh;
    } else if (name == "sigmoid") {
      a.fn = Fn::kSigmoid;
    } else if (name == "affine") {
      a = {Fn::kAffine, param(alphas, next_alpha, 1.0), param(betas, next_beta, 0.0)};
    } else if (name == "leakyrelu") {
      a = {Fn::kLeakyRelu, param(alphas, next_alpha, 0.01), 0};
    } else if (name == "thresholdedrelu") {
      a = {Fn::kThresholdedRelu, param(alphas, next_alpha, 1.0), 0};
    } else if (name == "scaledtanh") {
      a = {Fn::kScaledTanh, param(alphas, next_alpha, 1.0), param(betas, next_beta, 1.0)};
    } else if (name == "hardsigmoid") {
      a = {Fn::kHardSigmoid, param(alphas, next_alpha, 0.2), param(betas, next_beta, 0.5)};
    } else if (name == "elu") {
      a = {Fn::kElu, param(alphas, next_alpha, 1.0), 0};
    } else if (name == "softsign") {
      a.fn = Fn::kSoftsign;
    } else if (name == "softplus") {
      a.fn = Fn::kSoftplus;
    } else {
      return NodeError(op, "unknown activation '", name, "'");
    }
    out.push_back(a);
  }
  return out;
}

class RecurrentKernel final : public Kernel {
 public:
  RecurrentKernel(const ir::OpDesc& op, Cell cell) : op_(op), cell_(cell) {}

  absl::Status Compute(ExecuteContext& ctx) override;

 private:
  // Operands converted to double, with the dims every loop needs.
  struct Problem {
    int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1;
    bool batch_major = false;  // layout 1
    std::vector<double> x, w, r, b, h0, c0, p;
    std::vector<int64_t> lengths;
    std::vector<Activation> activations;
    double clip = 0;  // 0: none
    bool reverse = false;  // direction "reverse" (bidirectional: direction 1 runs backwards)
    bool linear_before_reset = false, input_forget = false;
  };

  absl::StatusOr<Problem> Read(ExecuteContext& ctx) const;
  // Runs direction `dir` over batch row `b`, writing Y (when non-null),
  // and leaves the final state in h / c.
  void RunRow(const Problem& pb, int64_t dir, int64_t b, std::vector<double>& h, std::vector<double>& c,
              double* y) const;

  ir::OpDesc op_;
  Cell cell_;
};

absl::StatusOr<std::vector<double>> AsDoubles(const Tensor& t) {
  GE_ASSIGN_OR_RETURN(Tensor d, ConvertTensor(t, DataType::kDouble));
  return std::vector<double>(d.data<double>(), d.data<double>() + d.NumElements());
}

absl::StatusOr<RecurrentKernel::Problem> RecurrentKernel::Read(ExecuteContext& ctx) const {
  Problem pb;
  const std::string direction = StringAttr(op_, "direction", "forward");
  pb.directions = direction == "bidirectional" ? 2 : 1;
  pb.reverse = direction == "reverse";
  pb.batch_major = IntAttr(op_, "layout", 0) == 1;
  const Shape& xs = ctx.input(0).shape();
  const Shape& ws = ctx.input(1).shape();
  const Shape& rs = ctx.input(2).shape();
  const int64_t gates = GateCount(cell_);
  if (xs.rank() != 3 || ws.rank() != 3 || rs.rank() != 3) return NodeError(op_, "X, W and R must have rank 3");
  pb.seq = xs.dim(pb.batch_major ? 1 : 0);
  pb.batch = xs.dim(pb.batch_major ? 0 : 1);
  pb.input = xs.dim(2);
  pb.hidden = ws.dim(1) / gates;
  if (ws.dim(0) != pb.directions || ws.dim(1) != gates * pb.hidden || ws.dim(2) != pb.input ||
      rs != Shape{pb.directions, gates * pb.hidden, pb.hidden}) {
    return NodeError(op_, "W ", ws.ToString(), " or R ", rs.ToString(), " does not fit X ", xs.ToString(),
                     " with ", pb.directions, " direction(s) and ", gates, " gate(s)");
  }
  GE_ASSIGN_OR_RETURN(pb.x, AsDoubles(ctx.input(0)));
  GE_ASSIGN_OR_RETURN(pb.w, AsDoubles(ctx.input(1)));
  GE_ASSIGN_OR_RETURN(pb.r, AsDoubles(ctx.input(2)));
  const int64_t state = pb.directions * pb.batch * pb.hidden;
  auto optional = [&](int i, int64_t count, std::vector<double>& out) -> absl::Status {
    if (!ctx.has_input(i)) return absl::OkStatus();
    if (ctx.input(i).NumElements() != count) {
      return NodeError(op_, "input ", i, " ", ctx.input(i).shape().ToString(), " must hold ", count, " values");
    }
    GE_ASSIGN_OR_RETURN(out, AsDoubles(ctx.input(i)));
    return absl::OkStatus();
  };
  GE_RETURN_IF_ERROR(optional(3, pb.directions * 2 * gates * pb.hidden, pb.b));
  GE_RETURN_IF_ERROR(optional(5, state, pb.h0));
  if (cell_ == Cell::kLstm) {
    GE_RETURN_IF_ERROR(optional(6, state, pb.c0));
    GE_RETURN_IF_ERROR(optional(7, pb.directions * 3 * pb.hidden, pb.p));
  }
  pb.lengths.assign(pb.batch, pb.seq);
  if (ctx.has_input(4)) {
    const Tensor& lens = ctx.input(4);
    if (lens.NumElements() != pb.batch) return NodeError(op_, "sequence_lens must hold ", pb.batch, " values");
    for (int64_t b = 0; b < pb.batch; ++b) {
      const int64_t n = lens.data<int32_t>()[b];
      if (n < 0 || n > pb.seq) return NodeError(op_, "sequence_lens[", b, "] = ", n, " is outside [0, ", pb.seq, "]");
      pb.lengths[b] = n;
    }
  }
  GE_ASSIGN_OR_RETURN(pb.activations, ParseActivations(op_, cell_, static_cast<int>(pb.directions)));
  pb.clip = FloatAttr(op_, "clip", 0.0f);
  pb.linear_before_reset = IntAttr(op_, "linear_before_reset", 0) != 0;
  pb.input_forget = IntAttr(op_, "input_forget", 0) != 0;
  return pb;
}

void RecurrentKernel::RunRow(const Problem& pb, int64_t dir, int64_t b, std::vector<double>& h,
                             std::vector<double>& c, double* y) const {
  const int64_t H = pb.hidden, I = pb.input, G = GateCount(cell_);
  const double* w = pb.w.data() + dir * G * H * I;
  const double* r = pb.r.data() + dir * G * H * H;
  const double* wb = pb.b.empty() ? nullptr : pb.b.data() + dir * 2 * G * H;
  const double* rb = wb == nullptr ? nullptr : wb + G * H;
  const double* p = pb.p.empty() ? nullptr : pb.p.data() + dir * 3 * H;
  const Activation* act = pb.activations.data() + dir * ActivationCount(cell_);
  auto clip = [&](double v) { return pb.clip > 0 ? std::clamp(v, -pb.clip, pb.clip) : v; };
  auto dot = [](const double* a, const double* v, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += a[i] * v[i];
    return s;
  };
  std::vector<double> xw(G * H), hr(G * H), next(H), reset(H), rh(H);
  const int64_t steps = pb.lengths[b];
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t t = dir == 1 || pb.reverse ? steps - 1 - s : s;
    const double* x = pb.x.data() + (pb.batch_major ? (b * pb.seq + t) : (t * pb.batch + b)) * I;
    for (int64_t k = 0; k < G * H; ++k) {
      xw[k] = dot(w + k * I, x, I) + (wb ? wb[k] : 0.0);
      hr[k] = dot(r + k * H, h.data(), H) + (rb ? rb[k] : 0.0);
    }
    if (cell_ == Cell::kRnn) {
      for (int64_t j = 0; j < H; ++j) next[j] = act[0](clip(xw[j] + hr[j]));
    } else if (cell_ == Cell::kGru) {  // gates z, r, h
      for (int64_t j = 0; j < H; ++j) {
        reset[j] = act[0](clip(xw[H + j] + hr[H + j]));
        rh[j] = reset[j] * h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        const double z = act[0](clip(xw[j] + hr[j]));
        // linear_before_reset: r scales (h * Rh^T + Rbh); else r scales h before Rh.
        const double recurrent = pb.linear_before_reset
                                     ? reset[j] * hr[2 * H + j]
                                     : dot(r + (2 * H + j) * H, rh.data(), H) + (rb ? rb[2 * H + j] : 0.0);
        const double candidate = act[1](clip(xw[2 * H + j] + recurrent));
        next[j] = (1 - z) * candidate + z * h[j];
      }
    } else {  // gates i, o, f, c
      for (int64_t j = 0; j < H; ++j) {
        const double i_gate = act[0](clip(xw[j] + hr[j] + (p ? p[j] * c[j] : 0.0)));
        const double f_gate =
            pb.input_forget ? 1 - i_gate : act[0](clip(xw[2 * H + j] + hr[2 * H + j] + (p ? p[2 * H + j] * c[j] : 0.0)));
        const double candidate = act[1](clip(xw[3 * H + j] + hr[3 * H + j]));
        c[j] = f_gate * c[j] + i_gate * candidate;
        const double o_gate = act[0](clip(xw[H + j] + hr[H + j] + (p ? p[H + j] * c[j] : 0.0)));
        next[j] = o_gate * act[2](c[j]);
      }
    }
    h = next;
    if (y != nullptr) {
      const int64_t offset = pb.batch_major ? ((b * pb.seq + t) * pb.directions + dir) * H
                                            : ((t * pb.directions + dir) * pb.batch + b) * H;
      std::copy(h.begin(), h.end(), y + offset);
    }
  }
}

absl::Status RecurrentKernel::Compute(ExecuteContext& ctx) {
  GE_ASSIGN_OR_RETURN(Problem pb, Read(ctx));
  const int64_t H = pb.hidden;
  const Shape y_shape = pb.batch_major ? Shape{pb.batch, pb.seq, pb.directions, H}
                                       : Shape{pb.seq, pb.directions, pb.batch, H};
  const Shape state_shape = pb.batch_major ? Shape{pb.batch, pb.directions, H} : Shape{pb.directions, pb.batch, H};
  GE_ASSIGN_OR_RETURN(Tensor y, Tensor::Allocate(DataType::kDouble, y_shape));
  GE_ASSIGN_OR_RETURN(Tensor yh, Tensor::Allocate(DataType::kDouble, state_shape));
  GE_ASSIGN_OR_RETURN(Tensor yc, Tensor::Allocate(DataType::kDouble, state_shape));
  for (int64_t dir = 0; dir < pb.directions; ++dir) {
    for (int64_t b = 0; b < pb.batch; ++b) {
      // initial_h, initial_c, Y_h and Y_c are [directions, batch, hidden]
      // (layout 1: [batch, directions, hidden]).
      const int64_t state_at = pb.batch_major ? (b * pb.directions + dir) * H : (dir * pb.batch + b) * H;
      std::vector<double> h(H, 0.0), c(H, 0.0);
      if (!pb.h0.empty()) std::copy_n(pb.h0.begin() + state_at, H, h.begin());
      if (!pb.c0.empty()) std::copy_n(pb.c0.begin() + state_at, H, c.begin());
      RunRow(pb, dir, b, h, c, y.data<double>());
      const int64_t out_at = state_at;
      std::copy(h.begin(), h.end(), yh.data<double>() + out_at);
      std::copy(c.begin(), c.end(), yc.data<double>() + out_at);
    }
  }
  const Tensor* results[] = {&y, &yh, &yc};
  for (int i = 0; i < std::min(ctx.num_outputs(), cell_ == Cell::kLstm ? 3 : 2); ++i) {
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(i, results[i]->shape()));
    GE_RETURN_IF_ERROR(ConvertInto(*results[i], out));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterRnnKernels(KernelTable& table) {
  const DataTypeSet floats{DataType::kFloat16, DataType::kFloat, DataType::kDouble};
  const DataTypeSet lengths{DataType::kInt32};
  const struct {
    const char* type;
    Cell cell;
  } ops[] = {{"RNN", Cell::kRnn}, {"GRU", Cell::kGru}, {"LSTM", Cell::kLstm}};
  for (const auto& [type, cell] : ops) {
    const Cell c = cell;
    table.Add({type,
               [c](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
                 return std::unique_ptr<Kernel>(new RecurrentKernel(op, c));
               },
               {floats, floats, floats, floats, lengths, floats}, {floats}});
  }
}

}  // namespace ge::engine::host_cpu

// RNN, GRU and LSTM on cpu_dense: fused kernels of the engine's own
// (oneDNN 2.6's RNN primitives take neither sequence_lens, clip, other
// activations nor ONNX's layouts, so they would cover only part of the op).
//
// Each run computes the input projection of every step and direction as
// one product, X [steps * batch, input] times W^T, with the biases folded
// in (Wb + Rb; GRU with linear_before_reset keeps Rb of the candidate on
// the recurrent side, where the reset gate scales it). Then every step
// multiplies the state rows by R^T (GRU without linear_before_reset:
// the update and reset columns first, then (r * h) by the candidate's
// columns) and applies the gates row by row in place: clip, activations
// (sigmoid and tanh vectorized, the others as ONNX defines them),
// peepholes, input_forget; with ONNX's default activations the cell is one
// fused loop of rnn_loops (RnnLoops::lstm_row and the others). Rows past
// their sequence_lens keep their state and leave Y zero; reverse
// directions start at each row's last step.
// W and R are packed once into column panels (rnn_loops.h) while their
// storage is the same constant; non-constant weights are packed per run.
// With several threads the directions and blocks of batch rows run
// independently (no barrier per step), and the input projection splits by
// rows; small recurrent products keep their steps on one thread, and steps
// on one thread keep a small projection there too (a parallel region costs
// a wake-up and a join). f32 only; anything else stays on the reference
// engine.
#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/cpu_dense/rnn_loops.h"
#include "runtime/engines/sdk/cpu_features.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

enum class Cell { kRnn, kGru, kLstm };

// The least input projection (multiply-adds) split over threads before
// steps that run on one thread (about 200 us on one).
constexpr int64_t kSerialStepsSplitWork = int64_t{1} << 23;
// The least recurrent product (multiply-adds over every step and
// direction) whose directions or blocks of rows run on threads of their
// own (about 25 us on one): below, waking a thread costs more than it
// saves (two steps of 16 rows at hidden 36 took 2.6 ms at 2 threads under
// load, against 0.05 at 1).
constexpr int64_t kParallelStepsWork = int64_t{1} << 20;

int64_t GateCount(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }
int64_t ActivationCount(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3; }

const RnnLoops& Loops() {
  static const RnnLoops& loops = sdk::HostVectorIsa() == sdk::VectorIsa::kBase ? base::Loops() : avx2::Loops();
  return loops;
}

// ---- Activations ----

enum class Fn {
  kSigmoid,
  kTanh,
  kRelu,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};

struct Act {
  Fn fn = Fn::kTanh;
  float alpha = 0, beta = 0;
};

// ONNX's activation names (compared lower-case), how many of
// activation_alpha / activation_beta each consumes, and their defaults.
struct ActSpec {
  const char* name;
  Fn fn;
  int params;  // 0: none, 1: alpha, 2: alpha and beta
  float alpha, beta;
};
constexpr ActSpec kActs[] = {{"sigmoid", Fn::kSigmoid, 0, 0, 0},
                             {"tanh", Fn::kTanh, 0, 0, 0},
                             {"relu", Fn::kRelu, 0, 0, 0},
                             {"affine", Fn::kAffine, 2, 1.0f, 0.0f},
                             {"leakyrelu", Fn::kLeakyRelu, 1, 0.01f, 0},
                             {"thresholdedrelu", Fn::kThresholdedRelu, 1, 1.0f, 0},
                             {"scaledtanh", Fn::kScaledTanh, 2, 1.0f, 1.0f},
                             {"hardsigmoid", Fn::kHardSigmoid, 2, 0.2f, 0.5f},
                             {"elu", Fn::kElu, 1, 1.0f, 0},
                             {"softsign", Fn::kSoftsign, 0, 0, 0},
                             {"softplus", Fn::kSoftplus, 0, 0, 0}};

void Apply(const Act& a, float* x, int64_t n) {
  switch (a.fn) {
    case Fn::kSigmoid: return Loops().sigmoid(x, n);
    case Fn::kTanh: return Loops().tanh(x, n);
    case Fn::kRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], 0.0f);
      return;
    case Fn::kAffine:
      for (int64_t i = 0; i < n; ++i) x[i] = a.alpha * x[i] + a.beta;
      return;
    case Fn::kLeakyRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : a.alpha * x[i];
      return;
    case Fn::kThresholdedRelu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] > a.alpha ? x[i] : 0.0f;
      return;
    case Fn::kScaledTanh:
      for (int64_t i = 0; i < n; ++i) x[i] = a.alpha * std::tanh(a.beta * x[i]);
      return;
    case Fn::kHardSigmoid:
      for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(a.alpha * x[i] + a.beta, 0.0f, 1.0f);
      return;
    case Fn::kElu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] >= 0 ? x[i] : a.alpha * std::expm1(x[i]);
      return;
    case Fn::kSoftsign:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::fabs(x[i]));
      return;
    case Fn::kSoftplus:
      for (int64_t i = 0; i < n; ++i) x[i] = std::log1p(std::exp(x[i]));
      return;
  }
}

// ---- Attributes ----

struct Spec {
  Cell cell = Cell::kLstm;
  int64_t directions = 1;
  bool reverse = false;      // direction "reverse"; bidirectional: direction 1 runs backwards
  bool batch_major = false;  // layout 1
  float clip = 0;            // 0: none
  bool linear_before_reset = false, input_forget = false;
  std::vector<Act> acts;  // ActivationCount per direction
};

absl::StatusOr<Spec> ReadSpec(const ir::OpDesc& op, Cell cell) {
  Spec s;
  s.cell = cell;
  const std::string direction = sdk::StringAttr(op, "direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return Unsupported(op, "direction '", direction, "'");
  }
  s.directions = direction == "bidirectional" ? 2 : 1;
  s.reverse = direction == "reverse";
  const int64_t layout = sdk::IntAttr(op, "layout", 0);
  if (layout != 0 && layout != 1) return Unsupported(op, "layout ", layout);
  s.batch_major = layout == 1;
  s.clip = sdk::FloatAttr(op, "clip", 0.0f);
  if (s.clip < 0 || std::isnan(s.clip)) return Unsupported(op, "clip ", s.clip);
  s.linear_before_reset = sdk::IntAttr(op, "linear_before_reset", 0) != 0;
  s.input_forget = sdk::IntAttr(op, "input_forget", 0) != 0;
  std::vector<std::string> names = op.GetAttrOr<std::vector<std::string>>("activations", {});
  if (names.empty()) {
    names = cell == Cell::kRnn   ? std::vector<std::string>{"Tanh"}
            : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                 : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  }
  const int64_t per_direction = ActivationCount(cell);
  if (static_cast<int64_t>(names.size()) == per_direction && s.directions == 2) {
    const std::vector<std::string> one = names;
    names.insert(names.end(), one.begin(), one.end());
  }
  if (static_cast<int64_t>(names.size()) != per_direction * s.directions) {
    return Unsupported(op, names.size(), " activations for ", s.directions, " direction(s)");
  }
  const std::vector<float> alphas = op.GetAttrOr<std::vector<float>>("activation_alpha", {});
  const std::vector<float> betas = op.GetAttrOr<std::vector<float>>("activation_beta", {});
  size_t next_alpha = 0, next_beta = 0;
  for (std::string name : names) {
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    const ActSpec* spec = nullptr;
    for (const ActSpec& a : kActs) {
      if (name == a.name) spec = &a;
    }
    if (spec == nullptr) return Unsupported(op, "activation '", name, "'");
    Act act{spec->fn, spec->alpha, spec->beta};
    if (spec->params >= 1 && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (spec->params >= 2 && next_beta < betas.size()) act.beta = betas[next_beta++];
    s.acts.push_back(act);
  }
  return s;
}

// Input ports of the ONNX ops.
enum Port { kX = 0, kW = 1, kR = 2, kB = 3, kLens = 4, kH0 = 5, kC0 = 6, kP = 7 };

absl::Status CheckRecurrent(const ir::OpDesc& op, Cell cell) {
  GE_RETURN_IF_ERROR(ReadSpec(op, cell).status());
  const int max_inputs = cell == Cell::kLstm ? 8 : 6;
  if (op.num_inputs() < 3 || op.num_inputs() > max_inputs) return Unsupported(op, op.num_inputs(), " inputs");
  if (op.num_outputs() > (cell == Cell::kLstm ? 3 : 2)) return Unsupported(op, op.num_outputs(), " outputs");
  for (int i = 0; i < op.num_inputs(); ++i) {
    const DataType d = InputDtype(op, i);
    const DataType want = i == kLens ? DataType::kInt32 : DataType::kFloat;
    if (d != DataType::kUndefined && d != want) {
      return Unsupported(op, "input ", i, " has dtype ", DataTypeName(d), " (", DataTypeName(want), " only)");
    }
  }
  for (int i : {kX, kW, kR}) {
    const Shape s = InputShape(op, i);
    if (!s.unknown_rank() && s.rank() != 3) return Unsupported(op, "input ", i, " has rank ", s.rank());
  }
  return absl::OkStatus();
}

// out = `cols` x `k` row-major `w` as panels (rnn_loops.h).
void PackPanels(const float* w, int64_t cols, int64_t k, float* out) {
  const int64_t panels = RnnPaddedCols(cols) / kRnnPanel;
  for (int64_t p = 0; p < panels; ++p) {
    for (int64_t i = 0; i < k; ++i) {
      float* dst = out + (p * k + i) * kRnnPanel;
      for (int64_t x = 0; x < kRnnPanel; ++x) {
        const int64_t col = p * kRnnPanel + x;
        dst[x] = col < cols ? w[col * k + i] : 0.0f;
      }
    }
  }
}

class RecurrentKernel final : public DenseKernel {
 public:
  RecurrentKernel(const ir::OpDesc& op, const DenseContext& ctx, Cell cell) : DenseKernel(op, ctx) {
    auto spec = ReadSpec(op, cell);
    spec_ = spec.ok() ? *std::move(spec) : Spec{};
    spec_error_ = spec.status();
    spec_.cell = cell;
  }

 private:
  // Dims of one set of shapes and the column counts of the products.
  struct Dims {
    int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
    int64_t gh = 0;     // gates * hidden: W's and R's rows per direction
    int64_t xcols = 0;  // padded gh: a row of the input projection per direction
    int64_t rcols = 0;  // padded columns of the recurrent product (GRU without lbr: z and r only)
    int64_t hcols = 0;  // GRU without lbr: padded hidden (the candidate's product), else 0
  };
  struct RnnPlan final : Plan {
    Dims d;
    bool weights_constant = false;
  };
  // W, R, B and P packed for one Dims, and the storage they came from.
  struct Packed {
    int64_t input = -1, hidden = -1, dirs = -1;
    std::vector<float> w, r, rh, bias_x, bias_r, peephole;
    std::shared_ptr<Buffer> sources[4];
    size_t offsets[4] = {};
  };

  bool gru_split() const { return spec_.cell == Cell::kGru && !spec_.linear_before_reset; }

  absl::StatusOr<Dims> DimsOf(const PlanRequest& r) const {
    Dims d;
    const Shape& x = r.shape(kX);
    const Shape& w = r.shape(kW);
    const int64_t gates = GateCount(spec_.cell);
    if (x.rank() != 3 || w.rank() != 3 || r.shape(kR).rank() != 3) {
      return sdk::NodeError(op(), "X, W and R must have rank 3");
    }
    d.dirs = spec_.directions;
    d.seq = x.dim(spec_.batch_major ? 1 : 0);
    d.batch = x.dim(spec_.batch_major ? 0 : 1);
    d.input = x.dim(2);
    d.hidden = w.dim(1) / gates;
    d.gh = gates * d.hidden;
    const int64_t hidden_attr = sdk::IntAttr(op(), "hidden_size", d.hidden);
    if (w != Shape{d.dirs, d.gh, d.input} || r.shape(kR) != Shape{d.dirs, d.gh, d.hidden} || hidden_attr != d.hidden) {
      return sdk::NodeError(op(), "W ", w.ToString(), " or R ", r.shape(kR).ToString(), " does not fit X ",
                            x.ToString(), " with ", d.dirs, " direction(s), ", gates, " gate(s) and hidden_size ",
                            hidden_attr);
    }
    const int64_t state = d.dirs * d.batch * d.hidden;
    const struct {
      int port;
      int64_t count;
    } optional[] = {{kB, d.dirs * 2 * d.gh}, {kLens, d.batch}, {kH0, state}, {kC0, state}, {kP, d.dirs * 3 * d.hidden}};
    for (const auto& [port, count] : optional) {
      if (r.has_input(port) && r.shape(port).NumElementsUnchecked() != count) {
        return sdk::NodeError(op(), "input ", port, " ", r.shape(port).ToString(), " must hold ", count, " values");
      }
    }
    d.xcols = RnnPaddedCols(d.gh);
    d.rcols = RnnPaddedCols(gru_split() ? 2 * d.hidden : d.gh);
    d.hcols = gru_split() ? RnnPaddedCols(d.hidden) : 0;
    return d;
  }

  // The run's scratch, taken in one order by the sizing pass and the run.
  struct Buffers {
    float *xw, *hr, *hh, *rh, *h, *c;
  };
  static Buffers TakeBuffers(const Dims& d, Scratch& s) {
    auto take = [&](int64_t floats) { return static_cast<float*>(s.Take(std::max<int64_t>(floats, 1) * 4)); };
    Buffers b;
    b.xw = take(d.seq * d.batch * d.dirs * d.xcols);
    b.hr = take(d.dirs * d.batch * d.rcols);
    b.hh = take(d.dirs * d.batch * d.hcols);
    b.rh = take(d.dirs * d.batch * d.hidden);
    b.h = take(d.dirs * d.batch * d.hidden);
    b.c = take(d.dirs * d.batch * d.hidden);
    return b;
  }

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    GE_RETURN_IF_ERROR(spec_error_);
    auto plan = std::make_unique<RnnPlan>();
    GE_ASSIGN_OR_RETURN(plan->d, DimsOf(r));
    Scratch sizing;
    TakeBuffers(plan->d, sizing);
    plan->workspace_bytes = sizing.required();
    plan->weights_constant = true;
    for (int port : {kW, kR, kB, kP}) {
      if (r.has_input(port) && !IsConstInput(port, r)) plan->weights_constant = false;
    }
    const bool known = r.const_input(kW) && r.const_input(kR) && (!r.has_input(kB) || r.const_input(kB)) &&
                       (!r.has_input(kP) || r.const_input(kP));
    if (plan->weights_constant && known) {
      Pack(plan->d, *r.const_input(kW), *r.const_input(kR), r.has_input(kB) ? r.const_input(kB) : nullptr,
           r.has_input(kP) ? r.const_input(kP) : nullptr);
      WeightPacks().fetch_add(1, std::memory_order_relaxed);
    }
    return plan;
  }

  bool PackedFrom(const Dims& d, const Tensor* const (&t)[4]) const {
    if (packed_.input != d.input || packed_.hidden != d.hidden || packed_.dirs != d.dirs) return false;
    for (int i = 0; i < 4; ++i) {
      const std::shared_ptr<Buffer> buffer = t[i] ? t[i]->buffer() : nullptr;
      if (buffer != packed_.sources[i] || (t[i] && t[i]->byte_offset() != packed_.offsets[i])) return false;
    }
    return true;
  }

  void Pack(const Dims& d, const Tensor& w, const Tensor& r, const Tensor* b, const Tensor* p) {
    const int64_t H = d.hidden, I = d.input, gh = d.gh;
    Packed& k = packed_;
    k.w.assign(d.dirs * d.xcols * I, 0.0f);
    k.r.assign(d.dirs * d.rcols * H, 0.0f);
    k.rh.assign(d.dirs * d.hcols * H, 0.0f);
    k.bias_x.assign(d.dirs * d.xcols, 0.0f);
    k.bias_r.assign(spec_.cell == Cell::kGru && spec_.linear_before_reset ? d.dirs * d.rcols : 0, 0.0f);
    k.peephole.clear();
    for (int64_t dir = 0; dir < d.dirs; ++dir) {
      const float* wd = w.data<float>() + dir * gh * I;
      const float* rd = r.data<float>() + dir * gh * H;
      PackPanels(wd, gh, I, k.w.data() + dir * d.xcols * I);
      if (gru_split()) {
        PackPanels(rd, 2 * H, H, k.r.data() + dir * d.rcols * H);
        PackPanels(rd + 2 * H * H, H, H, k.rh.data() + dir * d.hcols * H);
      } else {
        PackPanels(rd, gh, H, k.r.data() + dir * d.rcols * H);
      }
      if (b != nullptr) {
        const float* wb = b->data<float>() + dir * 2 * gh;
        const float* rb = wb + gh;
        for (int64_t j = 0; j < gh; ++j) k.bias_x[dir * d.xcols + j] = wb[j] + rb[j];
        if (!k.bias_r.empty()) {  // linear_before_reset: the reset gate scales Rbh
          for (int64_t j = 2 * H; j < 3 * H; ++j) {
            k.bias_x[dir * d.xcols + j] = wb[j];
            k.bias_r[dir * d.rcols + j] = rb[j];
          }
        }
      }
    }
    if (p != nullptr) k.peephole.assign(p->data<float>(), p->data<float>() + d.dirs * 3 * H);
    const Tensor* sources[4] = {&w, &r, b, p};
    for (int i = 0; i < 4; ++i) {
      k.sources[i] = sources[i] ? sources[i]->buffer() : nullptr;
      k.offsets[i] = sources[i] ? sources[i]->byte_offset() : 0;
    }
    k.input = I;
    k.hidden = H;
    k.dirs = d.dirs;
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) override {
    auto& plan = static_cast<RnnPlan&>(base_plan);
    const Dims& d = plan.d;
    const Tensor* b = ctx.has_input(kB) ? &ctx.input(kB) : nullptr;
    const Tensor* p = spec_.cell == Cell::kLstm && ctx.has_input(kP) ? &ctx.input(kP) : nullptr;
    const Tensor* weights[4] = {&ctx.input(kW), &ctx.input(kR), b, p};
    if (!plan.weights_constant || !PackedFrom(d, weights)) {
      Pack(d, ctx.input(kW), ctx.input(kR), b, p);
      if (plan.weights_constant) WeightPacks().fetch_add(1, std::memory_order_relaxed);
    }
    std::vector<int64_t> lengths(d.batch, d.seq);
    bool partial = false;
    if (ctx.has_input(kLens)) {
      const int32_t* lens = ctx.input(kLens).data<int32_t>();
      for (int64_t n = 0; n < d.batch; ++n) {
        if (lens[n] < 0 || lens[n] > d.seq) {
          return sdk::NodeError(op(), "sequence_lens[", n, "] = ", lens[n], " is outside [0, ", d.seq, "]");
        }
        lengths[n] = lens[n];
        partial = partial || lens[n] < d.seq;
      }
    }
    const Buffers buf = TakeBuffers(d, scratch);
    const int threads = omp_in_parallel() != 0 ? 1 : std::max(1, omp_get_max_threads());
    // Tasks: a direction and a block of its batch rows each; blocks of rows
    // only when there are enough rows to keep a thread's tiles full.
    // Steps of less than kParallelStepsWork multiply-adds in all stay on
    // one thread.
    const bool split = threads > 1 && d.seq * d.batch * d.hidden * d.gh * d.dirs >= kParallelStepsWork;
    const int64_t blocks = split && d.batch >= 8 ? std::min<int64_t>(d.batch, (threads + d.dirs - 1) / d.dirs) : 1;
    const int64_t tasks = d.dirs * blocks;
    const int team = split ? static_cast<int>(std::min<int64_t>(threads, tasks)) : 1;
    // The projection first, split by rows; steps on one thread keep a
    // projection of less than kSerialStepsSplitWork multiply-adds there
    // too: a parallel region of its own costs a thread's wake-up and join,
    // 50-100 us on a 2-core virtual machine, about what halving such a
    // projection saves (lstm_2layer at batch 4 ran slower at 2 threads
    // than at 1; docs/perf.md, "The recurrent rows", session 13).
    const int64_t work = d.seq * d.batch * d.input * d.gh * d.dirs;
    Project(d, ctx.input(kX).data<float>(), buf.xw, team > 1 || work >= kSerialStepsSplitWork ? threads : 1);
    InitState(d, ctx, kH0, buf.h);
    InitState(d, ctx, kC0, buf.c);

    const bool bm = spec_.batch_major;
    const Shape y_shape = bm ? Shape{d.batch, d.seq, d.dirs, d.hidden} : Shape{d.seq, d.dirs, d.batch, d.hidden};
    const Shape state_shape = bm ? Shape{d.batch, d.dirs, d.hidden} : Shape{d.dirs, d.batch, d.hidden};
    float* y = nullptr;
    if (ctx.num_outputs() > 0) {
      GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0, y_shape));
      y = out.data<float>();
      if (partial) std::memset(y, 0, out.NumElements() * sizeof(float));
    }
    auto task = [&](int64_t t) {
      const int64_t dir = t / blocks, blk = t % blocks;
      const int64_t n0 = d.batch * blk / blocks, n1 = d.batch * (blk + 1) / blocks;
      RunDirection(d, dir, n0, n1, lengths, buf, y);
    };
    if (team > 1) {
#pragma omp parallel for num_threads(team) schedule(static)
      for (int64_t t = 0; t < tasks; ++t) task(t);
    } else {
      for (int64_t t = 0; t < tasks; ++t) task(t);
    }

    const float* states[2] = {buf.h, buf.c};
    for (int i = 1; i < std::min<int>(ctx.num_outputs(), spec_.cell == Cell::kLstm ? 3 : 2); ++i) {
      GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(i, state_shape));
      CopyState(d, states[i - 1], out.data<float>());
    }
    return absl::OkStatus();
  }

  // xw[row, dir, :] = X[row] W[dir]^T + bias for every row of X (in X's
  // order: step-major for layout 0, batch-major for layout 1).
  void Project(const Dims& d, const float* x, float* xw, int threads) const {
    const int64_t rows = d.seq * d.batch;
    const int64_t work = rows * d.input * d.gh * d.dirs;
    const int64_t blocks = work >= (int64_t{1} << 18) ? std::min<int64_t>(threads, (rows + 2) / 3) : 1;
    auto block = [&](int64_t blk) {
      const int64_t r0 = rows * blk / blocks, r1 = rows * (blk + 1) / blocks;
      for (int64_t dir = 0; dir < d.dirs; ++dir) ProjectRows(d, dir, r0, r1, x, xw);
    };
    if (blocks > 1) {
#pragma omp parallel for num_threads(static_cast <int>(blocks)) schedule(static)
      for (int64_t blk = 0; blk < blocks; ++blk) block(blk);
    } else {
      block(0);
    }
  }

  // xw[row, dir, :] = X[row] W[dir]^T + bias for rows [r0, r1) of X.
  void ProjectRows(const Dims& d, int64_t dir, int64_t r0, int64_t r1, const float* x, float* xw) const {
    const RnnGemmArgs g{x + r0 * d.input,
                        d.input,
                        r1 - r0,
                        d.input,
                        packed_.w.data() + dir * d.xcols * d.input,
                        d.xcols / kRnnPanel,
                        xw + r0 * d.dirs * d.xcols + dir * d.xcols,
                        d.dirs * d.xcols,
                        packed_.bias_x.data() + dir * d.xcols,
                        false};
    Loops().gemm(g);
  }

  // The state buffer ([dirs, batch, hidden]) from initial_h / initial_c
  // (layout 1: [batch, dirs, hidden]), or zeros.
  void InitState(const Dims& d, ExecuteContext& ctx, int port, float* state) const {
    const int64_t H = d.hidden;
    if (!ctx.has_input(port) || (port == kC0 && spec_.cell != Cell::kLstm)) {
      std::fill_n(state, d.dirs * d.batch * H, 0.0f);
      return;
    }
    const float* src = ctx.input(port).data<float>();
    for (int64_t dir = 0; dir < d.dirs; ++dir) {
      for (int64_t n = 0; n < d.batch; ++n) {
        const int64_t from = spec_.batch_major ? (n * d.dirs + dir) * H : (dir * d.batch + n) * H;
        std::copy_n(src + from, H, state + (dir * d.batch + n) * H);
      }
    }
  }

  void CopyState(const Dims& d, const float* state, float* out) const {
    const int64_t H = d.hidden;
    for (int64_t dir = 0; dir < d.dirs; ++dir) {
      for (int64_t n = 0; n < d.batch; ++n) {
        const int64_t to = spec_.batch_major ? (n * d.dirs + dir) * H : (dir * d.batch + n) * H;
        std::copy_n(state + (dir * d.batch + n) * H, H, out + to);
      }
    }
  }

  // Direction `dir` runs ONNX's default activations in the cells of
  // RnnLoops (LSTM without input_forget, GRU with linear_before_reset).
  bool DefaultCell(int64_t dir) const {
    const Act* act = spec_.acts.data() + dir * ActivationCount(spec_.cell);
    switch (spec_.cell) {
      case Cell::kRnn: return act[0].fn == Fn::kTanh;
      case Cell::kGru: return spec_.linear_before_reset && act[0].fn == Fn::kSigmoid && act[1].fn == Fn::kTanh;
      case Cell::kLstm:
        return !spec_.input_forget && act[0].fn == Fn::kSigmoid && act[1].fn == Fn::kTanh && act[2].fn == Fn::kTanh;
    }
    return false;
  }

  void Clip(float* x, int64_t n) const {
    if (spec_.clip <= 0) return;
    for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], -spec_.clip, spec_.clip);
  }

  // Every step of direction `dir` for batch rows [n0, n1).
  void RunDirection(const Dims& d, int64_t dir, int64_t n0, int64_t n1, const std::vector<int64_t>& lengths,
                    const Buffers& buf, float* y) const {
    const int64_t H = d.hidden, rows = n1 - n0;
    const bool backwards = dir == 1 || spec_.reverse;
    const Act* act = spec_.acts.data() + dir * ActivationCount(spec_.cell);
    const bool fused = DefaultCell(dir);
    const float* peep = packed_.peephole.empty() ? nullptr : packed_.peephole.data() + dir * 3 * H;
    float* h = buf.h + (dir * d.batch + n0) * H;
    float* c = buf.c + (dir * d.batch + n0) * H;
    float* hr = buf.hr + (dir * d.batch + n0) * d.rcols;
    const RnnGemmArgs recurrent{h,
                                H,
                                rows,
                                H,
                                packed_.r.data() + dir * d.rcols * H,
                                d.rcols / kRnnPanel,
                                hr,
                                d.rcols,
                                packed_.bias_r.empty() ? nullptr : packed_.bias_r.data() + dir * d.rcols,
                                false};
    float* rh = buf.rh + (dir * d.batch + n0) * H;
    float* hh = buf.hh + (dir * d.batch + n0) * d.hcols;
    const RnnGemmArgs candidate{rh, H,       rows,    H,    packed_.rh.data() + dir * d.hcols * H, d.hcols / kRnnPanel,
                                hh, d.hcols, nullptr, false};
    // The step of row n at step s, or -1 when the row has finished.
    auto step_of = [&](int64_t n, int64_t s) -> int64_t {
      const int64_t len = lengths[n0 + n];
      if (s >= len) return -1;
      return backwards ? len - 1 - s : s;
    };
    auto xw_row = [&](int64_t n, int64_t t) {
      const int64_t row = spec_.batch_major ? (n0 + n) * d.seq + t : t * d.batch + n0 + n;
      return buf.xw + (row * d.dirs + dir) * d.xcols;
    };
    auto y_row = [&](int64_t n, int64_t t) {
      const int64_t at =
          spec_.batch_major ? (((n0 + n) * d.seq + t) * d.dirs + dir) * H : ((t * d.dirs + dir) * d.batch + n0 + n) * H;
      return y + at;
    };
    for (int64_t s = 0; s < d.seq; ++s) {
      Loops().gemm(recurrent);
      if (gru_split()) {  // z and r first, then (r * h) R_h^T
        for (int64_t n = 0; n < rows; ++n) {
          const int64_t t = step_of(n, s);
          float* g = hr + n * d.rcols;
          if (t < 0) {
            std::fill_n(rh + n * H, H, 0.0f);
            continue;
          }
          const float* xw = xw_row(n, t);
          for (int64_t j = 0; j < 2 * H; ++j) g[j] += xw[j];
          Clip(g, 2 * H);
          Apply(act[0], g, 2 * H);
          for (int64_t j = 0; j < H; ++j) rh[n * H + j] = g[H + j] * h[n * H + j];
        }
        Loops().gemm(candidate);
      }
      for (int64_t n = 0; n < rows; ++n) {
        const int64_t t = step_of(n, s);
        if (t < 0) continue;
        const float* xw = xw_row(n, t);
        float* g = hr + n * d.rcols;
        float* hn = h + n * H;
        float* cn = c + n * H;
        if (fused) {
          const RnnCellArgs cell{g, xw, peep, spec_.clip, hn, cn, H};
          const RnnLoops& loops = Loops();
          (spec_.cell == Cell::kLstm ? loops.lstm_row : spec_.cell == Cell::kGru ? loops.gru_row : loops.rnn_row)(cell);
          if (y != nullptr) std::copy_n(hn, H, y_row(n, t));
          continue;
        }
        switch (spec_.cell) {
          case Cell::kRnn:
            for (int64_t j = 0; j < H; ++j) g[j] += xw[j];
            Clip(g, H);
            Apply(act[0], g, H);
            std::copy_n(g, H, hn);
            break;
          case Cell::kGru: {
            float* cand = g + 2 * H;
            if (gru_split()) {
              cand = hh + n * d.hcols;
              for (int64_t j = 0; j < H; ++j) cand[j] += xw[2 * H + j];
            } else {  // linear_before_reset: r scales h R_h^T + Rb_h
              for (int64_t j = 0; j < 2 * H; ++j) g[j] += xw[j];
              Clip(g, 2 * H);
              Apply(act[0], g, 2 * H);
              for (int64_t j = 0; j < H; ++j) cand[j] = xw[2 * H + j] + g[H + j] * cand[j];
            }
            Clip(cand, H);
            Apply(act[1], cand, H);
            for (int64_t j = 0; j < H; ++j) hn[j] = (1.0f - g[j]) * cand[j] + g[j] * hn[j];
            break;
          }
          case Cell::kLstm: {  // gates i, o, f, c
            float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
            for (int64_t j = 0; j < 4 * H; ++j) g[j] += xw[j];
            if (peep != nullptr) {
              for (int64_t j = 0; j < H; ++j) {
                gi[j] += peep[j] * cn[j];
                gf[j] += peep[2 * H + j] * cn[j];
              }
            }
            Clip(gi, H);
            Clip(gf, 2 * H);  // f and c
            Apply(act[0], gi, H);
            if (spec_.input_forget) {
              for (int64_t j = 0; j < H; ++j) gf[j] = 1.0f - gi[j];
            } else {
              Apply(act[0], gf, H);
            }
            Apply(act[1], gc, H);
            for (int64_t j = 0; j < H; ++j) cn[j] = gf[j] * cn[j] + gi[j] * gc[j];
            if (peep != nullptr) {
              for (int64_t j = 0; j < H; ++j) go[j] += peep[H + j] * cn[j];
            }
            Clip(go, H);
            Apply(act[0], go, H);
            std::copy_n(cn, H, gc);
            Apply(act[2], gc, H);
            for (int64_t j = 0; j < H; ++j) hn[j] = go[j] * gc[j];
            break;
          }
        }
        if (y != nullptr) std::copy_n(hn, H, y_row(n, t));
      }
    }
  }

  Spec spec_;
  absl::Status spec_error_;
  Packed packed_;
};

template <Cell kCell>
absl::Status Check(const ir::OpDesc& op, const DenseContext&) {
  return CheckRecurrent(op, kCell);
}

template <Cell kCell>
DenseCreateFn Create() {
  return [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new RecurrentKernel(op, ctx, kCell));
  };
}

}  // namespace

void RegisterRnnKernels(DenseKernelTable& table) {
  const sdk::DataTypeSet f32{DataType::kFloat};
  table.Add({"RNN", f32, Check<Cell::kRnn>, Create<Cell::kRnn>()});
  table.Add({"GRU", f32, Check<Cell::kGru>, Create<Cell::kGru>()});
  table.Add({"LSTM", f32, Check<Cell::kLstm>, Create<Cell::kLstm>()});
}

}  // namespace ge::engine::cpu_dense

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
// columns) and applies the gates: clip, activations (sigmoid and tanh
// vectorized, the others as ONNX defines them), peepholes, input_forget;
// with ONNX's default activations the cell is one fused loop of rnn_loops
// (RnnLoops::lstm_row and the others). Rows past their sequence_lens keep
// their state and leave Y zero; reverse directions start at each row's
// last step.
// W and R are packed once into column panels (rnn_loops.h) while their
// storage is the same constant, non-constant weights per run, in groups of
// sixteen hidden units with each group's gates side by side (PackGrouped),
// so that a block of units owns a contiguous run of panels and the columns
// its cells read.
// With several threads the directions, blocks of batch rows (eight rows or
// more) and, for a smaller batch, blocks of hidden units run as tasks of
// one parallel region: directions and blocks of rows run their steps
// through (no barrier), blocks of units step together with one barrier
// per step (the next step reads every unit of h; the state alternates
// between two buffers, so a step writes its units while others still read
// the previous state). Tasks that own whole batches compute their own
// columns of the input projection inside the region; blocks of rows get
// it split by rows before. Small recurrent products keep their steps on
// one thread, and steps on one thread keep a small projection there too
// (a parallel region costs a wake-up and a join). f32 only; anything else
// stays on the reference engine.
// This file reads the attributes, packs the weights and runs a node; the
// steps and their split over threads are in rnn_steps.cc, the class they
// share in rnn_kernel.h.
#include <omp.h>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/cpu_dense/rnn_kernel.h"
#include "runtime/engines/cpu_dense/rnn_loops.h"
#include "runtime/engines/cpu_dense/shared_packings.h"
#include "runtime/engines/sdk/cpu_features.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace rnn {
namespace {

// The least input projection (multiply-adds) split over threads before
// steps that run on one thread (about 200 us on one).
constexpr int64_t kSerialStepsSplitWork = int64_t{1} << 23;

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

// out = gates x hidden rows of `k` (row-major `w`, gate-major) as grouped
// panels.
void PackGrouped(const float* w, int64_t gates, int64_t hidden, int64_t k, float* out) {
  const int64_t groups = Groups(hidden), cols = GroupedCols(groups, gates);
  for (int64_t col = 0; col < cols; ++col) {
    const int64_t q = col / (gates * kGroup), g = col / kGroup % gates, u = q * kGroup + col % kGroup;
    float* panel = out + (col / kRnnPanel) * k * kRnnPanel + col % kRnnPanel;
    for (int64_t i = 0; i < k; ++i)
      panel[i * kRnnPanel] = q < groups && u < hidden ? w[(g * hidden + u) * k + i] : 0.0f;
  }
}

}  // namespace

const RnnLoops& Loops() {
  static const RnnLoops& loops = sdk::HostVectorIsa() == sdk::VectorIsa::kBase ? base::Loops() : avx2::Loops();
  return loops;
}

RecurrentKernel::RecurrentKernel(const ir::OpDesc& op, const DenseContext& ctx, Cell cell) : DenseKernel(op, ctx) {
  auto spec = ReadSpec(op, cell);
  spec_ = spec.ok() ? *std::move(spec) : Spec{};
  spec_error_ = spec.status();
  spec_.cell = cell;
}

absl::StatusOr<RecurrentKernel::Dims> RecurrentKernel::DimsOf(const PlanRequest& r) const {
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
    return sdk::NodeError(op(), "W ", w.ToString(), " or R ", r.shape(kR).ToString(), " does not fit X ", x.ToString(),
                          " with ", d.dirs, " direction(s), ", gates, " gate(s) and hidden_size ", hidden_attr);
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
  d.groups = Groups(d.hidden);
  d.xgates = gates;
  d.rgates = gru_split() ? 2 : gates;
  d.xcols = GroupedCols(d.groups, d.xgates);
  d.rcols = GroupedCols(d.groups, d.rgates);
  d.hcols = gru_split() ? GroupedCols(d.groups, 1) : 0;
  return d;
}

RecurrentKernel::Buffers RecurrentKernel::TakeBuffers(const Dims& d, Scratch& s) {
  auto take = [&](int64_t floats) { return static_cast<float*>(s.Take(std::max<int64_t>(floats, 1) * 4)); };
  Buffers b;
  b.state = d.dirs * d.batch * d.hidden;
  b.xw = take(d.seq * d.batch * d.dirs * d.xcols);
  b.hr = take(d.dirs * d.batch * d.rcols);
  b.hh = take(d.dirs * d.batch * d.hcols);
  b.rh = take(b.state);
  b.h = take((d.seq + 1) * b.state);
  b.c = take(b.state);
  return b;
}

absl::StatusOr<std::unique_ptr<RecurrentKernel::Plan>> RecurrentKernel::Build(const PlanRequest& r) {
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
         r.has_input(kP) ? r.const_input(kP) : nullptr, true);
    WeightPacks().fetch_add(1, std::memory_order_relaxed);
  }
  return plan;
}

bool RecurrentKernel::PackedFrom(const Dims& d, const Tensor* const (&t)[4]) const {
  if (packed_.input != d.input || packed_.hidden != d.hidden || packed_.dirs != d.dirs) return false;
  for (int i = 0; i < 4; ++i) {
    const std::shared_ptr<Buffer> buffer = t[i] ? t[i]->buffer() : nullptr;
    if (buffer != packed_.sources[i] || (t[i] && t[i]->byte_offset() != packed_.offsets[i])) return false;
  }
  return true;
}

// `constant`: W and R hold the same values for their storage's life
// (shared packings).
void RecurrentKernel::Pack(const Dims& d, const Tensor& w, const Tensor& r, const Tensor* b, const Tensor* p,
                           bool constant) {
  const int64_t H = d.hidden, I = d.input, gh = d.gh, gates = d.xgates;
  Packed& k = packed_;
  // One matrix per direction, `rows` of its gates (from gate `first`)
  // packed as `count` gates.
  auto panels = [&](const Tensor& t, const char* kind, int64_t k_dim, int64_t first, int64_t count, int64_t cols) {
    auto make = [&] {
      auto out = std::make_shared<std::vector<float>>(d.dirs * cols * k_dim, 0.0f);
      for (int64_t dir = 0; dir < d.dirs; ++dir) {
        PackGrouped(t.data<float>() + dir * gh * k_dim + first * H * k_dim, count, H, k_dim,
                    out->data() + dir * cols * k_dim);
      }
      return out;
    };
    if (!constant) return Packed::Panels(make());
    const std::string key = absl::StrCat("rnn_grouped", kGroup, ":", kind, ",", d.dirs, ",", gh, ",", k_dim, ",", first,
                                         ",", count, ",", H);
    return Packed::Panels(SharedPackings::Get<std::vector<float>>(t, key, make));
  };
  k.w = panels(w, "w", I, 0, gates, d.xcols);
  k.r = panels(r, "r", H, 0, d.rgates, d.rcols);
  k.rh = gru_split() ? panels(r, "r", H, 2, 1, d.hcols) : nullptr;
  k.bias_x.assign(d.dirs * d.xcols, 0.0f);
  k.bias_r.assign(spec_.cell == Cell::kGru && spec_.linear_before_reset ? d.dirs * d.rcols : 0, 0.0f);
  k.peephole.clear();
  for (int64_t dir = 0; dir < d.dirs; ++dir) {
    if (b != nullptr) {
      const float* wb = b->data<float>() + dir * 2 * gh;
      const float* rb = wb + gh;
      float* bx = k.bias_x.data() + dir * d.xcols;
      for (int64_t g = 0; g < gates; ++g) {
        for (int64_t u = 0; u < H; ++u) bx[Grouped(g, u, gates)] = wb[g * H + u] + rb[g * H + u];
      }
      if (!k.bias_r.empty()) {  // linear_before_reset: the reset gate scales Rbh
        float* br = k.bias_r.data() + dir * d.rcols;
        for (int64_t u = 0; u < H; ++u) {
          bx[Grouped(2, u, gates)] = wb[2 * H + u];
          br[Grouped(2, u, gates)] = rb[2 * H + u];
        }
      }
    }
  }
  if (p != nullptr) {
    k.peephole.assign(d.dirs * d.groups * 3 * kGroup, 0.0f);
    for (int64_t dir = 0; dir < d.dirs; ++dir) {
      const float* pd = p->data<float>() + dir * 3 * H;
      float* out = k.peephole.data() + dir * d.groups * 3 * kGroup;
      for (int64_t g = 0; g < 3; ++g) {
        for (int64_t u = 0; u < H; ++u) out[Grouped(g, u, 3)] = pd[g * H + u];
      }
    }
  }
  const Tensor* sources[4] = {&w, &r, b, p};
  for (int i = 0; i < 4; ++i) {
    k.sources[i] = sources[i] ? sources[i]->buffer() : nullptr;
    k.offsets[i] = sources[i] ? sources[i]->byte_offset() : 0;
  }
  k.input = I;
  k.hidden = H;
  k.dirs = d.dirs;
}

absl::Status RecurrentKernel::Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) {
  auto& plan = static_cast<RnnPlan&>(base_plan);
  const Dims& d = plan.d;
  const Tensor* b = ctx.has_input(kB) ? &ctx.input(kB) : nullptr;
  const Tensor* p = spec_.cell == Cell::kLstm && ctx.has_input(kP) ? &ctx.input(kP) : nullptr;
  const Tensor* weights[4] = {&ctx.input(kW), &ctx.input(kR), b, p};
  if (!plan.weights_constant || !PackedFrom(d, weights)) {
    Pack(d, ctx.input(kW), ctx.input(kR), b, p, plan.weights_constant);
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
  Buffers buf = TakeBuffers(d, scratch);
  const int threads = omp_in_parallel() != 0 ? 1 : std::max(1, omp_get_max_threads());
  const Split split = SplitFor(d, threads);
  buf.kept = split.units > 1 ? d.seq + 1 : 2;
  const int64_t tasks = d.dirs * split.rows * split.units;
  const int team = static_cast<int>(std::min<int64_t>(threads, tasks));
  const float* x = ctx.input(kX).data<float>();
  // The input projection: inside the steps' region, each task its own
  // columns for every row, when tasks own whole batches (a split by
  // units, or by directions); else before the steps, split by rows over
  // the team (blocks of rows), or on the steps' one thread when it is
  // less than kSerialStepsSplitWork multiply-adds: a parallel region of
  // its own costs a thread's wake-up and join, 50-100 us on a 2-core
  // virtual machine, about what halving such a projection saves
  // (docs/perf.md, "The recurrent rows", session 13).
  const bool project_inside = team > 1 && split.rows == 1;
  if (!project_inside) {
    const int64_t work = d.seq * d.batch * d.input * d.gh * d.dirs;
    Project(d, x, buf.xw, team > 1 || work >= kSerialStepsSplitWork ? threads : 1);
  }
  InitState(d, ctx, kH0, split.units, buf.h_at(0));
  InitState(d, ctx, kC0, split.units, buf.c);

  const bool bm = spec_.batch_major;
  const Shape y_shape = bm ? Shape{d.batch, d.seq, d.dirs, d.hidden} : Shape{d.seq, d.dirs, d.batch, d.hidden};
  const Shape state_shape = bm ? Shape{d.batch, d.dirs, d.hidden} : Shape{d.dirs, d.batch, d.hidden};
  float* y = nullptr;
  if (ctx.num_outputs() > 0) {
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(0, y_shape));
    y = out.data<float>();
    if (partial) std::memset(y, 0, out.NumElements() * sizeof(float));
  }
  std::vector<Task> task_list;
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t dir = t / (split.rows * split.units), rest = t % (split.rows * split.units);
    const int64_t rb = rest / split.units, ub = rest % split.units;
    const auto [q0, q1] = GroupsOf(d, ub, split.units);
    task_list.push_back(Task{dir, d.batch * rb / split.rows, d.batch * (rb + 1) / split.rows, q0, q1, split.units});
  }
  UnitClaims claims(split.units > 1 ? tasks : 0);
  // Blocks of units: each member's copy of the whole state (Gather).
  std::vector<float> gathered(split.units > 1 ? team * d.batch * d.hidden : 0);
  // Member `member` of `members` runs tasks member, member + members, ...
  // through all their steps (directions, blocks of rows: no two share a
  // state); blocks of units go step by step (RunUnitSteps).
  auto run = [&](int member, int members) {
    if (split.units > 1) {
      float* gather = gathered.data() + member * d.batch * d.hidden;
      return RunUnitSteps(d, task_list, project_inside, x, lengths, buf, y, claims, gather, member, members);
    }
    for (int64_t t = member; t < tasks; t += members) {
      const Task& task = task_list[t];
      if (project_inside) ProjectTask(d, task, x, buf.xw);
      for (int64_t s = 0; s < d.seq; ++s) {
        StepGates(d, task, s, lengths, buf, nullptr);
        if (gru_split()) StepCandidate(d, task, buf, nullptr);
        StepCells(d, task, s, lengths, buf, y);
      }
    }
  };
  if (team > 1) {
#pragma omp parallel num_threads(team)
    run(omp_get_thread_num(), omp_get_num_threads());
  } else {
    run(0, 1);
  }

  const float* states[2] = {buf.h_at(d.seq), buf.c};
  for (int i = 1; i < std::min<int>(ctx.num_outputs(), spec_.cell == Cell::kLstm ? 3 : 2); ++i) {
    GE_ASSIGN_OR_RETURN(Tensor out, ctx.Output(i, state_shape));
    CopyState(d, states[i - 1], split.units, out.data<float>());
  }
  return absl::OkStatus();
}

// xw[row, dir, :] = X[row] W[dir]^T + bias for every row of X (in X's
// order: step-major for layout 0, batch-major for layout 1).
void RecurrentKernel::Project(const Dims& d, const float* x, float* xw, int threads) const {
  const int64_t rows = d.seq * d.batch;
  const int64_t work = rows * d.input * d.gh * d.dirs;
  const int64_t blocks = work >= (int64_t{1} << 18) ? std::min<int64_t>(threads, (rows + 2) / 3) : 1;
  auto block = [&](int64_t blk) {
    const int64_t r0 = rows * blk / blocks, r1 = rows * (blk + 1) / blocks;
    for (int64_t dir = 0; dir < d.dirs; ++dir) ProjectRows(d, dir, 0, d.groups, r0, r1, x, xw);
  };
  if (blocks > 1) {
#pragma omp parallel for num_threads(static_cast <int>(blocks)) schedule(static)
    for (int64_t blk = 0; blk < blocks; ++blk) block(blk);
  } else {
    block(0);
  }
}

// A task's columns of the projection (its direction, its groups) for
// every row: the only ones its steps read.
void RecurrentKernel::ProjectTask(const Dims& d, const Task& t, const float* x, float* xw) const {
  ProjectRows(d, t.dir, t.q0, t.q1, 0, d.seq * d.batch, x, xw);
}

// xw[row, dir, groups q0..q1] = X[row] W[dir]^T + bias for rows [r0, r1)
// of X.
void RecurrentKernel::ProjectRows(const Dims& d, int64_t dir, int64_t q0, int64_t q1, int64_t r0, int64_t r1,
                                  const float* x, float* xw) const {
  const int64_t col = dir * d.xcols + q0 * d.xgates * kGroup;
  const Block out = BlockOf(xw, d.seq * d.batch, d.xcols, d.xgates, dir, q0, q1);
  const RnnGemmArgs g{x + r0 * d.input,
                      d.input,
                      r1 - r0,
                      d.input,
                      packed_.w->data() + dir * d.xcols * d.input + q0 * d.xgates * kGroup * d.input,
                      out.ld / kRnnPanel,
                      out.at + r0 * out.ld,
                      out.ld,
                      packed_.bias_x.data() + col,
                      false};
  Loops().gemm(g);
}

// A state (in `units` blocks, UnitsOf) from initial_h / initial_c
// ([dirs, batch, hidden]; layout 1: [batch, dirs, hidden]), or zeros.
void RecurrentKernel::InitState(const Dims& d, ExecuteContext& ctx, int port, int64_t units, float* state) const {
  const int64_t H = d.hidden;
  if (!ctx.has_input(port) || (port == kC0 && spec_.cell != Cell::kLstm)) {
    std::fill_n(state, d.dirs * d.batch * H, 0.0f);
    return;
  }
  const float* src = ctx.input(port).data<float>();
  for (int64_t dir = 0; dir < d.dirs; ++dir) {
    for (int64_t ub = 0; ub < units; ++ub) {
      const auto [q0, q1] = GroupsOf(d, ub, units);
      const Block b = UnitsOf(state, d, dir, q0, q1);
      for (int64_t n = 0; n < d.batch; ++n) {
        const int64_t from = spec_.batch_major ? (n * d.dirs + dir) * H : (dir * d.batch + n) * H;
        std::copy_n(src + from + q0 * kGroup, b.ld, b.at + n * b.ld);
      }
    }
  }
}

// The output of a state (ONNX's layout) from its `units` blocks.
void RecurrentKernel::CopyState(const Dims& d, const float* state, int64_t units, float* out) const {
  const int64_t H = d.hidden;
  for (int64_t dir = 0; dir < d.dirs; ++dir) {
    for (int64_t ub = 0; ub < units; ++ub) {
      const auto [q0, q1] = GroupsOf(d, ub, units);
      const Block b = UnitsOf(state, d, dir, q0, q1);
      for (int64_t n = 0; n < d.batch; ++n) {
        const int64_t to = spec_.batch_major ? (n * d.dirs + dir) * H : (dir * d.batch + n) * H;
        std::copy_n(b.at + n * b.ld, b.ld, out + to + q0 * kGroup);
      }
    }
  }
}

namespace {

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
}  // namespace rnn

void RegisterRnnKernels(DenseKernelTable& table) {
  using rnn::Cell;
  const sdk::DataTypeSet f32{DataType::kFloat};
  table.Add({"RNN", f32, rnn::Check<Cell::kRnn>, rnn::Create<Cell::kRnn>()});
  table.Add({"GRU", f32, rnn::Check<Cell::kGru>, rnn::Create<Cell::kGru>()});
  table.Add({"LSTM", f32, rnn::Check<Cell::kLstm>, rnn::Create<Cell::kLstm>()});
}

}  // namespace ge::engine::cpu_dense

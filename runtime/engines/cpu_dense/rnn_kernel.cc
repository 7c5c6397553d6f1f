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
#include <omp.h>
#include <sched.h>
#include <strings.h>

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
#include "runtime/engines/cpu_dense/rnn_loops.h"
#include "runtime/engines/cpu_dense/shared_packings.h"
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
// Or the least bytes of W and R: a few steps of few rows stream them from
// L3 or memory at a core's bandwidth, which a second core doubles (a
// decoder's single GRU step at batch 1, hidden 256, input 384: W and R
// 1.2 and 0.8 MB, 83 us on one thread, of which the projection 43; a
// 1-row product streams 27 GB/s from memory on one core here).
constexpr int64_t kParallelWeightBytes = int64_t{1} << 20;
// The least batch whose rows split into blocks that run their steps on
// threads of their own.
constexpr int64_t kRowSplitBatch = 8;
// A smaller batch splits each step by units when the step (multiply-adds
// of one direction's recurrent product) has kUnitSplitStepWork and each of
// its rows kUnitSplitRowWork (hidden x gate columns): each step then waits
// for the others and copies their units of h, row by row (about 1-2 us a
// step on a 2-core virtual machine), which the half of a step it saves
// must exceed. On the AVX-512 host, 2 threads, quiet: lstm_2layer (hidden
// 128, 512 columns: 65,536 a row) at batch 1 0.186 -> 0.115 ms; an RNN of
// hidden 256 (65,536 a row) at batch 4 0.127 -> 0.118; an LSTM of hidden 96
// (36,864 a row) at batch 4 0.150 -> 0.088; an RNN of hidden 128 (16,384 a
// row) at batch 4 0.33 -> 0.49; an LSTM of hidden 64 (16,384) at batch 4
// 0.062 -> 0.076; a GRU of hidden 64 (12,288) at batch 4 0.35 -> 0.42.
constexpr int64_t kUnitSplitStepWork = int64_t{1} << 16;
constexpr int64_t kUnitSplitRowWork = int64_t{1} << 15;
// With passive waiting (ged's choice on a loaded host, base/openmp_env.h),
// the least multiply-adds over all steps that split by units: a helper
// that sleeps until woken, and may not be scheduled before the steps end,
// still holds the region's join (lstm_2layer at batch 4, load 9: 0.50 ms
// on one thread, 0.54 split).
constexpr int64_t kPassiveUnitSplitWork = int64_t{1} << 24;

int64_t GateCount(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }
int64_t ActivationCount(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3; }

// Whether OpenMP's idle threads sleep at once (OMP_WAIT_POLICY=passive; ged's
// programs set it at start-up when the host is loaded).
bool PassiveWaiting() {
  static const bool passive = [] {
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    return policy != nullptr && strcasecmp(policy, "passive") == 0;
  }();
  return passive;
}

// One wait of a spin loop: a pause, past kSpins of them a yield of the
// core (a member waited for may be descheduled on a loaded host).
void WaitABit(int spins) {
  constexpr int kSpins = 1 << 10;
  if (spins >= kSpins) {
    sched_yield();
    return;
  }
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

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

// The packed layout: hidden units in groups of kGroup (eight: a vector of
// the cells), each group's gates side by side. A [gates * hidden, k]
// matrix (W, R) is packed as panels (rnn_loops.h) of its columns in the
// order group 0's gates, group 1's gates, ...: column kGroup * (q * gates
// + g) + x of the product is gate g of unit kGroup * q + x (zero past
// `hidden`, and past the groups up to the last panel's end). Vectors over
// the same columns (biases, the rows of the products) use the same order.
// A block of an even number of groups (sixteen units) is then a
// contiguous run of whole panels, and the gates of its units are in its
// own columns: a thread that owns a block of units multiplies only its
// panels and updates its units' cells from its own columns. Hidden sizes
// off the eight units waste at most seven units per gate (groups of
// sixteen: up to 15; lstm_h100 ran 10 % slower on one thread).
constexpr int64_t kGroup = kRnnGroup;

int64_t Groups(int64_t hidden) { return (hidden + kGroup - 1) / kGroup; }

// The position of gate g of unit u in a grouped vector of `gates` gates.
int64_t Grouped(int64_t g, int64_t u, int64_t gates) { return ((u / kGroup) * gates + g) * kGroup + u % kGroup; }

// Columns of `groups` groups of `gates` gates, padded to whole panels.
int64_t GroupedCols(int64_t groups, int64_t gates) { return RnnPaddedCols(groups * gates * kGroup); }

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

class RecurrentKernel final : public DenseKernel {
 public:
  RecurrentKernel(const ir::OpDesc& op, const DenseContext& ctx, Cell cell) : DenseKernel(op, ctx) {
    auto spec = ReadSpec(op, cell);
    spec_ = spec.ok() ? *std::move(spec) : Spec{};
    spec_error_ = spec.status();
    spec_.cell = cell;
  }

 private:
  // Dims of one set of shapes and the column counts of the products (the
  // grouped layout: groups * gates * kGroup).
  struct Dims {
    int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
    int64_t gh = 0;      // gates * hidden: W's and R's rows per direction
    int64_t groups = 0;  // Groups(hidden)
    int64_t xgates = 0;  // gates of the input projection
    int64_t rgates = 0;  // gates of the recurrent product (GRU without lbr: z and r)
    int64_t xcols = 0;   // a row of the input projection per direction
    int64_t rcols = 0;   // a row of the recurrent product
    int64_t hcols = 0;   // GRU without lbr: a row of the candidate's product, else 0
  };
  struct RnnPlan final : Plan {
    Dims d;
    bool weights_constant = false;
  };
  // W, R, B and P packed for one Dims, and the storage they came from.
  // W and R of constant storage are shared with every kernel that packs
  // the same storage the same way (SharedPackings): an unrolled decoder's
  // steps (one GRU node per step, the same initializers) then stream one
  // copy, not one per node (gru_seq2seq_attn: 8 copies of 2 MB).
  struct Packed {
    using Panels = std::shared_ptr<const std::vector<float>>;
    int64_t input = -1, hidden = -1, dirs = -1;
    Panels w, r, rh;
    std::vector<float> bias_x, bias_r, peephole;
    std::shared_ptr<Buffer> sources[4];
    size_t offsets[4] = {};
  };
  // A direction's batch rows [n0, n1) and unit groups [q0, q1): one
  // thread's share of the steps.
  // `units`: the blocks of units its direction splits into.
  struct Task {
    int64_t dir, n0, n1, q0, q1, units;
  };

  bool gru_split() const { return spec_.cell == Cell::kGru && !spec_.linear_before_reset; }

  // A task's columns of a product in the run's scratch (the projection,
  // the recurrent product, the candidate's): `rows` rows of its groups'
  // `gates` gates, row-major (`ld` floats a row), apart from every other
  // task's: [dir][block of groups][row][columns]. Two threads writing
  // different columns of the same rows ran at half speed each (a 96 x 64
  // x 512 projection split by columns took as long on two threads as on
  // one; with each half stored apart, half as long).
  struct Block {
    float* at;
    int64_t ld;
  };
  static Block BlockOf(float* base, int64_t rows, int64_t cols, int64_t gates, int64_t dir, int64_t q0, int64_t q1) {
    return Block{base + dir * rows * cols + rows * q0 * gates * kGroup, GroupedCols(q1 - q0, gates)};
  }
  // The units of groups [q0, q1) of a state of direction `dir`: states are
  // stored [dir][block of units][batch][its units], with the run's blocks
  // (one block: the plain [dir][batch][hidden]). Threads that wrote their
  // units within shared rows of h and c ran a step's cells at a third of
  // their speed, even with no line written by two.
  static Block UnitsOf(float* state, const Dims& d, int64_t dir, int64_t q0, int64_t q1) {
    const int64_t u0 = q0 * kGroup, u1 = std::min(d.hidden, q1 * kGroup);
    return Block{state + (dir * d.batch + 0) * d.hidden + d.batch * u0, u1 - u0};
  }
  static Block UnitsOf(const float* state, const Dims& d, int64_t dir, int64_t q0, int64_t q1) {
    return UnitsOf(const_cast<float*>(state), d, dir, q0, q1);
  }
  // Groups [q0, q1) of block `ub` of `units`: pairs of groups (whole
  // panels), the last block with the odd group.
  static std::pair<int64_t, int64_t> GroupsOf(const Dims& d, int64_t ub, int64_t units) {
    const int64_t pairs = (d.groups + 1) / 2;
    return {std::min(d.groups, 2 * (pairs * ub / units)), std::min(d.groups, 2 * (pairs * (ub + 1) / units))};
  }
  // out[n - n0, :] = rows [n0, n1) of direction dir of `state`, every unit
  // (a step of a block of units multiplies the whole state: a copy first,
  // whose loads from the other threads' blocks are all in flight at once).
  static void Gather(const Dims& d, const float* state, int64_t dir, int64_t units, int64_t n0, int64_t n1,
                     float* out) {
    for (int64_t ub = 0; ub < units; ++ub) {
      const auto [q0, q1] = GroupsOf(d, ub, units);
      const Block b = UnitsOf(state, d, dir, q0, q1);
      for (int64_t n = n0; n < n1; ++n) std::memcpy(out + (n - n0) * d.hidden + q0 * kGroup, b.at + n * b.ld, b.ld * 4);
    }
  }

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
    d.groups = Groups(d.hidden);
    d.xgates = gates;
    d.rgates = gru_split() ? 2 : gates;
    d.xcols = GroupedCols(d.groups, d.xgates);
    d.rcols = GroupedCols(d.groups, d.rgates);
    d.hcols = gru_split() ? GroupedCols(d.groups, 1) : 0;
    return d;
  }

  // The run's scratch, taken in one order by the sizing pass and the run.
  // Step s reads state h[s] and writes h[s + 1]. Blocks of units keep the
  // state after every step (each writes its units while others still read
  // the state before, and Y is written from them at the end); the other
  // paths alternate two. States (h, c, rh) are stored by blocks of units
  // (UnitsOf).
  struct Buffers {
    float *xw, *hr, *hh, *rh, *h, *c;
    int64_t state;     // floats of one state (dirs x batch x hidden)
    int64_t kept = 0;  // states kept: every step's, or two that alternate
    float* h_at(int64_t s) const { return h + (kept > 2 ? s : s % 2) * state; }
  };
  static Buffers TakeBuffers(const Dims& d, Scratch& s) {
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
           r.has_input(kP) ? r.const_input(kP) : nullptr, true);
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

  // `constant`: W and R hold the same values for their storage's life
  // (shared packings).
  void Pack(const Dims& d, const Tensor& w, const Tensor& r, const Tensor* b, const Tensor* p, bool constant) {
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
      const std::string key = absl::StrCat("rnn_grouped", kGroup, ":", kind, ",", d.dirs, ",", gh, ",", k_dim, ",",
                                           first, ",", count, ",", H);
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

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) override {
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

  // How the steps split over `threads`: each direction into `rows` blocks
  // of batch rows times `units` blocks of unit groups.
  struct Split {
    int64_t rows = 1, units = 1;
  };
  static Split SplitFor(const Dims& d, int threads) {
    Split split;
    // Steps of less than kParallelStepsWork multiply-adds in all stay on
    // one thread; directions run on threads of their own; a batch of
    // kRowSplitBatch rows or more splits into blocks of rows (no barrier:
    // each block runs its steps through); with at least two threads per
    // direction, a smaller batch splits each step by units (the product's
    // columns and the cells of those units; the steps go together,
    // RunUnitSteps) when the step is large enough to pay for it.
    const int64_t step_work = d.batch * d.hidden * d.gh;
    const int64_t weight_bytes = (d.input + d.hidden) * d.gh * d.dirs * static_cast<int64_t>(sizeof(float));
    if (threads <= 1 || (d.seq * step_work * d.dirs < kParallelStepsWork && weight_bytes < kParallelWeightBytes)) {
      return split;
    }
    const int64_t per_dir = threads / d.dirs;
    const int64_t steps_work = d.seq * step_work * d.dirs;
    if (d.batch >= kRowSplitBatch) {
      split.rows = std::min<int64_t>(d.batch, (threads + d.dirs - 1) / d.dirs);
    } else if (per_dir >= 2 && step_work >= kUnitSplitStepWork && d.hidden * d.gh >= kUnitSplitRowWork &&
               (!PassiveWaiting() || steps_work >= kPassiveUnitSplitWork)) {
      split.units = std::min<int64_t>(per_dir, (d.groups + 1) / 2);
    }
    return split;
  }

  // The progress of steps split by units. The work comes in stages (the
  // projection when the tasks compute it, then each step, GRU without
  // linear_before_reset in two parts: the candidate's product reads every
  // unit of r * h), one item per task in each; claimed[b] counts the stages
  // whose item b a thread has taken, `done` the items finished. An item of
  // stage k is taken only when done reaches k * tasks, i.e. every item of
  // the stages before has finished.
  struct alignas(64) Counter {
    std::atomic<int64_t> v{0};
  };
  struct UnitClaims {
    explicit UnitClaims(int64_t tasks) : claimed(tasks > 0 ? new Counter[tasks] : nullptr) {}
    Counter done;
    std::unique_ptr<Counter[]> claimed;
  };

  // Member `member` of `members` of the region: takes its own task's item
  // (the tasks spread evenly over the members) in each stage, then any
  // other item of the stage nobody has taken, then waits for the stage to
  // finish. A member that starts late or is descheduled leaves its items to
  // the others rather than holding every step up (a barrier per step would
  // wait for it: lstm_2layer at batch 4 ran 15-20 ms a run instead of 0.5 on
  // a loaded host); what can still hold a step up is an item taken and not
  // finished. Waiting spins, then yields the core.
  void RunUnitSteps(const Dims& d, const std::vector<Task>& tasks, bool project_inside, const float* x,
                    const std::vector<int64_t>& lengths, const Buffers& buf, float* y, UnitClaims& claims,
                    float* gather, int member, int members) const {
    const int64_t blocks = static_cast<int64_t>(tasks.size());
    const int64_t phases = gru_split() ? 2 : 1, first = project_inside ? 1 : 0;
    const int64_t steps_end = first + d.seq * phases;
    // The last stage writes Y, each item whole rows of it, from the states
    // of every step.
    const int64_t total = (steps_end + (y != nullptr ? 1 : 0)) * blocks;
    auto item = [&](int64_t stage, int64_t b) {
      const Task& t = tasks[b];
      if (stage < first) return ProjectTask(d, t, x, buf.xw);
      if (stage == steps_end)
        return WriteY(d, buf, t.units, lengths, d.batch * b / blocks, d.batch * (b + 1) / blocks, y);
      const int64_t s = (stage - first) / phases;
      if ((stage - first) % phases == 0) {
        StepGates(d, t, s, lengths, buf, gather);
        if (phases == 1) StepCells(d, t, s, lengths, buf, nullptr);
      } else {
        StepCandidate(d, t, buf, gather);
        StepCells(d, t, s, lengths, buf, nullptr);
      }
    };
    const int64_t own = blocks * member / members;
    int64_t done = claims.done.v.load(std::memory_order_acquire);
    while (done < total) {
      const int64_t stage = done / blocks;
      for (int64_t k = 0; k < blocks; ++k) {
        std::atomic<int64_t>& claim = claims.claimed[(own + k) % blocks].v;
        int64_t expected = stage;
        if (claim.load(std::memory_order_relaxed) != stage ||
            !claim.compare_exchange_strong(expected, stage + 1, std::memory_order_acq_rel)) {
          continue;
        }
        item(stage, (own + k) % blocks);
        claims.done.v.fetch_add(1, std::memory_order_acq_rel);
      }
      for (int spins = 0;; ++spins) {
        done = claims.done.v.load(std::memory_order_acquire);
        if (done >= total || done / blocks != stage) break;
        WaitABit(spins);
      }
    }
  }

  // xw[row, dir, :] = X[row] W[dir]^T + bias for every row of X (in X's
  // order: step-major for layout 0, batch-major for layout 1).
  void Project(const Dims& d, const float* x, float* xw, int threads) const {
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
  void ProjectTask(const Dims& d, const Task& t, const float* x, float* xw) const {
    ProjectRows(d, t.dir, t.q0, t.q1, 0, d.seq * d.batch, x, xw);
  }

  // xw[row, dir, groups q0..q1] = X[row] W[dir]^T + bias for rows [r0, r1)
  // of X.
  void ProjectRows(const Dims& d, int64_t dir, int64_t q0, int64_t q1, int64_t r0, int64_t r1, const float* x,
                   float* xw) const {
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
  void InitState(const Dims& d, ExecuteContext& ctx, int port, int64_t units, float* state) const {
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
  void CopyState(const Dims& d, const float* state, int64_t units, float* out) const {
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

  // Where row n of direction dir at time t starts in Y.
  int64_t YAt(const Dims& d, int64_t dir, int64_t n, int64_t t) const {
    return spec_.batch_major ? ((n * d.seq + t) * d.dirs + dir) * d.hidden
                             : ((t * d.dirs + dir) * d.batch + n) * d.hidden;
  }

  // Y's rows of batch rows [n0, n1), every direction and step, from the
  // states after each step (blocks of units write Y at the end: writing
  // their units of its rows at every step cost as much as within h's).
  void WriteY(const Dims& d, const Buffers& buf, int64_t units, const std::vector<int64_t>& lengths, int64_t n0,
              int64_t n1, float* y) const {
    for (int64_t dir = 0; dir < d.dirs; ++dir) {
      for (int64_t s = 0; s < d.seq; ++s) {
        for (int64_t ub = 0; ub < units; ++ub) {
          const auto [q0, q1] = GroupsOf(d, ub, units);
          const Block b = UnitsOf(buf.h_at(s + 1), d, dir, q0, q1);
          for (int64_t n = n0; n < n1; ++n) {
            const int64_t time = TimeOf(dir, n, s, lengths);
            if (time >= 0) std::copy_n(b.at + n * b.ld, b.ld, y + YAt(d, dir, n, time) + q0 * kGroup);
          }
        }
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

  // The time step of row n (of the batch) at step s of direction `dir`, or
  // -1 when the row has finished; reverse directions start at each row's
  // last step.
  int64_t TimeOf(int64_t dir, int64_t n, int64_t s, const std::vector<int64_t>& lengths) const {
    const int64_t len = lengths[n];
    if (s >= len) return -1;
    return dir == 1 || spec_.reverse ? len - 1 - s : s;
  }

  // Row n's projection at time t: the task's columns.
  const float* XwRow(const Dims& d, const Buffers& buf, const Task& task, int64_t n, int64_t t) const {
    const int64_t row = spec_.batch_major ? n * d.seq + t : t * d.batch + n;
    const Block b = BlockOf(buf.xw, d.seq * d.batch, d.xcols, d.xgates, task.dir, task.q0, task.q1);
    return b.at + row * b.ld;
  }

  // Step s of a task, first part: its columns of h R^T (h the state step s
  // reads) and, for GRU without linear_before_reset, its units' update
  // and reset gates and r * h.
  // `gather`: room for the task's rows of a state when its direction
  // splits into blocks of units.
  void StepGates(const Dims& d, const Task& t, int64_t s, const std::vector<int64_t>& lengths, const Buffers& buf,
                 float* gather) const {
    const int64_t H = d.hidden, rg = d.rgates;
    const float* a = buf.h_at(s) + (t.dir * d.batch + t.n0) * H;  // one block: the plain layout
    if (t.units > 1) {
      Gather(d, buf.h_at(s), t.dir, t.units, t.n0, t.n1, gather);
      a = gather;
    }
    const Block hr = BlockOf(buf.hr, d.batch, d.rcols, rg, t.dir, t.q0, t.q1);
    const float* bias_r =
        packed_.bias_r.empty() ? nullptr : packed_.bias_r.data() + t.dir * d.rcols + t.q0 * rg * kGroup;
    const RnnGemmArgs recurrent{a,
                                H,
                                t.n1 - t.n0,
                                H,
                                packed_.r->data() + (t.dir * d.rcols + t.q0 * rg * kGroup) * H,
                                hr.ld / kRnnPanel,
                                hr.at + t.n0 * hr.ld,
                                hr.ld,
                                bias_r,
                                false};
    Loops().gemm(recurrent);
    if (!gru_split()) return;
    const Act& gate = spec_.acts[t.dir * ActivationCount(spec_.cell)];
    const Block rh = UnitsOf(buf.rh, d, t.dir, t.q0, t.q1);
    const Block h = UnitsOf(buf.h_at(s), d, t.dir, t.q0, t.q1);
    for (int64_t n = t.n0; n < t.n1; ++n) {
      const int64_t time = TimeOf(t.dir, n, s, lengths);
      if (time < 0) {
        std::fill_n(rh.at + n * rh.ld, rh.ld, 0.0f);
        continue;
      }
      // z and r of every group of the task side by side: one activation
      // over the row (units past `hidden` are zero and never read).
      const float* xw = XwRow(d, buf, t, n, time);
      float* zr = hr.at + n * hr.ld;
      const int64_t count = (t.q1 - t.q0) * 2 * kGroup;
      for (int64_t q = 0; q < t.q1 - t.q0; ++q) {
        float* out = zr + q * 2 * kGroup;
        const float* x = xw + q * 3 * kGroup;
        for (int64_t j = 0; j < 2 * kGroup; ++j) out[j] += x[j];
      }
      Clip(zr, count);
      Apply(gate, zr, count);
      for (int64_t u = 0; u < rh.ld; u += kGroup) {
        const float* r = zr + u * 2 + kGroup;
        float* out = rh.at + n * rh.ld + u;
        const float* state = h.at + n * h.ld + u;
        for (int64_t j = 0; j < std::min(kGroup, rh.ld - u); ++j) out[j] = r[j] * state[j];
      }
    }
  }

  // GRU without linear_before_reset: the task's columns of (r * h) R_h^T.
  void StepCandidate(const Dims& d, const Task& t, const Buffers& buf, float* gather) const {
    const int64_t H = d.hidden;
    const float* a = buf.rh + (t.dir * d.batch + t.n0) * H;
    if (t.units > 1) {
      Gather(d, buf.rh, t.dir, t.units, t.n0, t.n1, gather);
      a = gather;
    }
    const Block hh = BlockOf(buf.hh, d.batch, d.hcols, 1, t.dir, t.q0, t.q1);
    const RnnGemmArgs candidate{a,
                                H,
                                t.n1 - t.n0,
                                H,
                                packed_.rh->data() + (t.dir * d.hcols + t.q0 * kGroup) * H,
                                hh.ld / kRnnPanel,
                                hh.at + t.n0 * hh.ld,
                                hh.ld,
                                nullptr,
                                false};
    Loops().gemm(candidate);
  }

  // Step s of a task, last part: its units' cells (from h[s] into
  // h[s + 1]) and, when `y` is given, their Y. Rows past their
  // sequence_lens keep their state and leave Y zero.
  void StepCells(const Dims& d, const Task& t, int64_t s, const std::vector<int64_t>& lengths, const Buffers& buf,
                 float* y) const {
    const int64_t H = d.hidden, rg = d.rgates, xg = d.xgates;
    const Act* act = spec_.acts.data() + t.dir * ActivationCount(spec_.cell);
    const bool fused = DefaultCell(t.dir);
    const float* peep = packed_.peephole.empty() ? nullptr : packed_.peephole.data() + t.dir * d.groups * 3 * kGroup;
    const Block h_prev = UnitsOf(buf.h_at(s), d, t.dir, t.q0, t.q1);
    const Block h_next = UnitsOf(buf.h_at(s + 1), d, t.dir, t.q0, t.q1);
    const Block c = UnitsOf(buf.c, d, t.dir, t.q0, t.q1);
    const int64_t u0 = t.q0 * kGroup;
    const Block hr = BlockOf(buf.hr, d.batch, d.rcols, rg, t.dir, t.q0, t.q1);
    const Block hh = BlockOf(buf.hh, d.batch, d.hcols, 1, t.dir, t.q0, t.q1);
    const RnnLoops& loops = Loops();
    auto cell_fn = spec_.cell == Cell::kLstm  ? loops.lstm_row
                   : spec_.cell == Cell::kGru ? loops.gru_row
                                              : loops.rnn_row;
    for (int64_t n = t.n0; n < t.n1; ++n) {
      const int64_t time = TimeOf(t.dir, n, s, lengths);
      if (time < 0) {
        std::copy_n(h_prev.at + n * h_prev.ld, h_prev.ld, h_next.at + n * h_next.ld);
        continue;
      }
      const float* xw_row = XwRow(d, buf, t, n, time);
      if (fused) {  // every unit of the task in one call
        const float* pq = peep == nullptr ? nullptr : peep + t.q0 * 3 * kGroup;
        const int64_t at = n * c.ld;
        cell_fn(RnnCellArgs{hr.at + n * hr.ld, xw_row, pq, spec_.clip, h_prev.at + at, h_next.at + at, c.at + at, c.ld,
                            rg * kGroup});
      }
      if (!fused && spec_.cell == Cell::kRnn) {  // one gate: the units in order, padded
        float* g = hr.at + n * hr.ld;
        for (int64_t k = 0; k < hr.ld; ++k) g[k] += xw_row[k];
        Clip(g, hr.ld);
        Apply(act[0], g, hr.ld);
        std::copy_n(g, h_next.ld, h_next.at + n * h_next.ld);
      }
      if (!fused && gru_split()) {  // the candidates of every group side by side
        float* cand = hh.at + n * hh.ld;
        const int64_t count = (t.q1 - t.q0) * kGroup;
        for (int64_t u = 0; u < count; u += kGroup) {
          const float* x = xw_row + u * 3 + 2 * kGroup;
          for (int64_t j = 0; j < kGroup; ++j) cand[u + j] += x[j];
        }
        Clip(cand, count);
        Apply(act[1], cand, count);
        for (int64_t u = 0; u < h_next.ld; u += kGroup) {
          const float* z = hr.at + n * hr.ld + u * 2;
          const float* hp = h_prev.at + n * h_prev.ld + u;
          float* hn = h_next.at + n * h_next.ld + u;
          for (int64_t j = 0; j < std::min(kGroup, h_next.ld - u); ++j)
            hn[j] = (1.0f - z[j]) * cand[u + j] + z[j] * hp[j];
        }
      }
      const bool by_group = !fused && spec_.cell != Cell::kRnn && !gru_split();
      for (int64_t q = t.q0; q < t.q1 && by_group; ++q) {
        const int64_t u = q * kGroup, m = std::min(kGroup, H - u);
        float* g = hr.at + n * hr.ld + (q - t.q0) * rg * kGroup;
        const float* xw = xw_row + (q - t.q0) * xg * kGroup;
        const int64_t at = n * c.ld + u - u0;
        const float* hp = h_prev.at + at;
        float* hn = h_next.at + at;
        float* cn = c.at + at;
        const float* pq = peep == nullptr ? nullptr : peep + q * 3 * kGroup;
        switch (spec_.cell) {
          case Cell::kRnn: break;  // above
          case Cell::kGru: {       // linear_before_reset: r scales h R_h^T + Rb_h
            float *z = g, *r = g + kGroup, *cand = g + 2 * kGroup;
            for (int64_t j = 0; j < 2 * kGroup; ++j) z[j] += xw[j];
            Clip(z, 2 * kGroup);
            Apply(act[0], z, 2 * kGroup);  // z and r
            for (int64_t j = 0; j < m; ++j) cand[j] = xw[2 * kGroup + j] + r[j] * cand[j];
            Clip(cand, m);
            Apply(act[1], cand, m);
            for (int64_t j = 0; j < m; ++j) hn[j] = (1.0f - z[j]) * cand[j] + z[j] * hp[j];
            break;
          }
          case Cell::kLstm: {  // gates i, o, f, c
            float *gi = g, *go = g + kGroup, *gf = g + 2 * kGroup, *gc = g + 3 * kGroup;
            for (int64_t k = 0; k < 4; ++k) {
              for (int64_t j = 0; j < m; ++j) g[k * kGroup + j] += xw[k * kGroup + j];
            }
            if (pq != nullptr) {
              for (int64_t j = 0; j < m; ++j) {
                gi[j] += pq[j] * cn[j];
                gf[j] += pq[2 * kGroup + j] * cn[j];
              }
            }
            Clip(gi, m);
            Clip(gf, m);
            Clip(gc, m);
            Apply(act[0], gi, m);
            if (spec_.input_forget) {
              for (int64_t j = 0; j < m; ++j) gf[j] = 1.0f - gi[j];
            } else {
              Apply(act[0], gf, m);
            }
            Apply(act[1], gc, m);
            for (int64_t j = 0; j < m; ++j) cn[j] = gf[j] * cn[j] + gi[j] * gc[j];
            if (pq != nullptr) {
              for (int64_t j = 0; j < m; ++j) go[j] += pq[kGroup + j] * cn[j];
            }
            Clip(go, m);
            Apply(act[0], go, m);
            std::copy_n(cn, m, gc);
            Apply(act[2], gc, m);
            for (int64_t j = 0; j < m; ++j) hn[j] = go[j] * gc[j];
            break;
          }
        }
      }
      if (y != nullptr) std::copy_n(h_next.at + n * h_next.ld, h_next.ld, y + YAt(d, t.dir, n, time) + u0);
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

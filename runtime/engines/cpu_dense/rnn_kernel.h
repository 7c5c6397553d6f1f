// cpu_dense's recurrent kernel (RNN, GRU, LSTM), internal to the engine:
// the class shared by rnn_kernel.cc (attributes, packing, the run) and
// rnn_steps.cc (the steps, and how they split over threads). What the
// kernel computes and why is said at the top of rnn_kernel.cc.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/cpu_dense/rnn_loops.h"

namespace ge::engine::cpu_dense::rnn {

enum class Cell { kRnn, kGru, kLstm };

inline int64_t GateCount(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }
inline int64_t ActivationCount(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3; }

// The loops of the running CPU's vector ISA.
const RnnLoops& Loops();

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

// In place over n floats.
void Apply(const Act& a, float* x, int64_t n);

struct Spec {
  Cell cell = Cell::kLstm;
  int64_t directions = 1;
  bool reverse = false;      // direction "reverse"; bidirectional: direction 1 runs backwards
  bool batch_major = false;  // layout 1
  float clip = 0;            // 0: none
  bool linear_before_reset = false, input_forget = false;
  std::vector<Act> acts;  // ActivationCount per direction
};

// Input ports of the ONNX ops.
enum Port { kX = 0, kW = 1, kR = 2, kB = 3, kLens = 4, kH0 = 5, kC0 = 6, kP = 7 };

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
inline constexpr int64_t kGroup = kRnnGroup;

inline int64_t Groups(int64_t hidden) { return (hidden + kGroup - 1) / kGroup; }

// The position of gate g of unit u in a grouped vector of `gates` gates.
inline int64_t Grouped(int64_t g, int64_t u, int64_t gates) { return ((u / kGroup) * gates + g) * kGroup + u % kGroup; }

// Columns of `groups` groups of `gates` gates, padded to whole panels.
inline int64_t GroupedCols(int64_t groups, int64_t gates) { return RnnPaddedCols(groups * gates * kGroup); }

class RecurrentKernel final : public DenseKernel {
 public:
  RecurrentKernel(const ir::OpDesc& op, const DenseContext& ctx, Cell cell);

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
  static void Gather(const Dims& d, const float* state, int64_t dir, int64_t units, int64_t n0, int64_t n1, float* out);

  absl::StatusOr<Dims> DimsOf(const PlanRequest& r) const;

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
  static Buffers TakeBuffers(const Dims& d, Scratch& s);

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override;

  bool PackedFrom(const Dims& d, const Tensor* const (&t)[4]) const;

  // `constant`: W and R hold the same values for their storage's life
  // (shared packings).
  void Pack(const Dims& d, const Tensor& w, const Tensor& r, const Tensor* b, const Tensor* p, bool constant);

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) override;

  // How the steps split over `threads`: each direction into `rows` blocks
  // of batch rows times `units` blocks of unit groups.
  struct Split {
    int64_t rows = 1, units = 1;
  };
  static Split SplitFor(const Dims& d, int threads);

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
                    float* gather, int member, int members) const;

  // xw[row, dir, :] = X[row] W[dir]^T + bias for every row of X (in X's
  // order: step-major for layout 0, batch-major for layout 1).
  void Project(const Dims& d, const float* x, float* xw, int threads) const;

  // A task's columns of the projection (its direction, its groups) for
  // every row: the only ones its steps read.
  void ProjectTask(const Dims& d, const Task& t, const float* x, float* xw) const;

  // xw[row, dir, groups q0..q1] = X[row] W[dir]^T + bias for rows [r0, r1)
  // of X.
  void ProjectRows(const Dims& d, int64_t dir, int64_t q0, int64_t q1, int64_t r0, int64_t r1, const float* x,
                   float* xw) const;

  // A state (in `units` blocks, UnitsOf) from initial_h / initial_c
  // ([dirs, batch, hidden]; layout 1: [batch, dirs, hidden]), or zeros.
  void InitState(const Dims& d, ExecuteContext& ctx, int port, int64_t units, float* state) const;

  // The output of a state (ONNX's layout) from its `units` blocks.
  void CopyState(const Dims& d, const float* state, int64_t units, float* out) const;

  // Where row n of direction dir at time t starts in Y.
  int64_t YAt(const Dims& d, int64_t dir, int64_t n, int64_t t) const {
    return spec_.batch_major ? ((n * d.seq + t) * d.dirs + dir) * d.hidden
                             : ((t * d.dirs + dir) * d.batch + n) * d.hidden;
  }

  // Y's rows of batch rows [n0, n1), every direction and step, from the
  // states after each step (blocks of units write Y at the end: writing
  // their units of its rows at every step cost as much as within h's).
  void WriteY(const Dims& d, const Buffers& buf, int64_t units, const std::vector<int64_t>& lengths, int64_t n0,
              int64_t n1, float* y) const;

  // Direction `dir` runs ONNX's default activations in the cells of
  // RnnLoops (LSTM without input_forget, GRU with linear_before_reset).
  bool DefaultCell(int64_t dir) const;

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
  const float* XwRow(const Dims& d, const Buffers& buf, const Task& task, int64_t n, int64_t t) const;

  // Step s of a task, first part: its columns of h R^T (h the state step s
  // reads) and, for GRU without linear_before_reset, its units' update
  // and reset gates and r * h.
  // `gather`: room for the task's rows of a state when its direction
  // splits into blocks of units.
  void StepGates(const Dims& d, const Task& t, int64_t s, const std::vector<int64_t>& lengths, const Buffers& buf,
                 float* gather) const;

  // GRU without linear_before_reset: the task's columns of (r * h) R_h^T.
  void StepCandidate(const Dims& d, const Task& t, const Buffers& buf, float* gather) const;

  // Step s of a task, last part: its units' cells (from h[s] into
  // h[s + 1]) and, when `y` is given, their Y. Rows past their
  // sequence_lens keep their state and leave Y zero.
  void StepCells(const Dims& d, const Task& t, int64_t s, const std::vector<int64_t>& lengths, const Buffers& buf,
                 float* y) const;

  Spec spec_;
  absl::Status spec_error_;
  Packed packed_;
};

}  // namespace ge::engine::cpu_dense::rnn

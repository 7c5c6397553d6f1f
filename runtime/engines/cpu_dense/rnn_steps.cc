// The steps of cpu_dense's recurrent kernel (rnn_kernel.h), and how
// they split over threads (SplitFor): directions and blocks of batch rows
// run their steps through on threads of their own; a small batch splits
// each step by blocks of hidden units (RunUnitSteps), items claimed through
// atomic counters rather than a barrier per step.
#include <sched.h>
#include <strings.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "runtime/engines/cpu_dense/rnn_kernel.h"
#include "runtime/engines/cpu_dense/rnn_loops.h"

namespace ge::engine::cpu_dense::rnn {
namespace {

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

}  // namespace

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

void RecurrentKernel::Gather(const Dims& d, const float* state, int64_t dir, int64_t units, int64_t n0, int64_t n1,
                             float* out) {
  for (int64_t ub = 0; ub < units; ++ub) {
    const auto [q0, q1] = GroupsOf(d, ub, units);
    const Block b = UnitsOf(state, d, dir, q0, q1);
    for (int64_t n = n0; n < n1; ++n) std::memcpy(out + (n - n0) * d.hidden + q0 * kGroup, b.at + n * b.ld, b.ld * 4);
  }
}

RecurrentKernel::Split RecurrentKernel::SplitFor(const Dims& d, int threads) {
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

// Member `member` of `members` of the region: takes its own task's item
// (the tasks spread evenly over the members) in each stage, then any
// other item of the stage nobody has taken, then waits for the stage to
// finish. A member that starts late or is descheduled leaves its items to
// the others rather than holding every step up (a barrier per step would
// wait for it: lstm_2layer at batch 4 ran 15-20 ms a run instead of 0.5 on
// a loaded host); what can still hold a step up is an item taken and not
// finished. Waiting spins, then yields the core.
void RecurrentKernel::RunUnitSteps(const Dims& d, const std::vector<Task>& tasks, bool project_inside, const float* x,
                                   const std::vector<int64_t>& lengths, const Buffers& buf, float* y,
                                   UnitClaims& claims, float* gather, int member, int members) const {
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

// Y's rows of batch rows [n0, n1), every direction and step, from the
// states after each step (blocks of units write Y at the end: writing
// their units of its rows at every step cost as much as within h's).
void RecurrentKernel::WriteY(const Dims& d, const Buffers& buf, int64_t units, const std::vector<int64_t>& lengths,
                             int64_t n0, int64_t n1, float* y) const {
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
bool RecurrentKernel::DefaultCell(int64_t dir) const {
  const Act* act = spec_.acts.data() + dir * ActivationCount(spec_.cell);
  switch (spec_.cell) {
    case Cell::kRnn: return act[0].fn == Fn::kTanh;
    case Cell::kGru: return spec_.linear_before_reset && act[0].fn == Fn::kSigmoid && act[1].fn == Fn::kTanh;
    case Cell::kLstm:
      return !spec_.input_forget && act[0].fn == Fn::kSigmoid && act[1].fn == Fn::kTanh && act[2].fn == Fn::kTanh;
  }
  return false;
}

// Row n's projection at time t: the task's columns.
const float* RecurrentKernel::XwRow(const Dims& d, const Buffers& buf, const Task& task, int64_t n, int64_t t) const {
  const int64_t row = spec_.batch_major ? n * d.seq + t : t * d.batch + n;
  const Block b = BlockOf(buf.xw, d.seq * d.batch, d.xcols, d.xgates, task.dir, task.q0, task.q1);
  return b.at + row * b.ld;
}

// Step s of a task, first part: its columns of h R^T (h the state step s
// reads) and, for GRU without linear_before_reset, its units' update
// and reset gates and r * h.
// `gather`: room for the task's rows of a state when its direction
// splits into blocks of units.
void RecurrentKernel::StepGates(const Dims& d, const Task& t, int64_t s, const std::vector<int64_t>& lengths,
                                const Buffers& buf, float* gather) const {
  const int64_t H = d.hidden, rg = d.rgates;
  const float* a = buf.h_at(s) + (t.dir * d.batch + t.n0) * H;  // one block: the plain layout
  if (t.units > 1) {
    Gather(d, buf.h_at(s), t.dir, t.units, t.n0, t.n1, gather);
    a = gather;
  }
  const Block hr = BlockOf(buf.hr, d.batch, d.rcols, rg, t.dir, t.q0, t.q1);
  const float* bias_r = packed_.bias_r.empty() ? nullptr : packed_.bias_r.data() + t.dir * d.rcols + t.q0 * rg * kGroup;
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
void RecurrentKernel::StepCandidate(const Dims& d, const Task& t, const Buffers& buf, float* gather) const {
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
void RecurrentKernel::StepCells(const Dims& d, const Task& t, int64_t s, const std::vector<int64_t>& lengths,
                                const Buffers& buf, float* y) const {
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
  auto cell_fn = spec_.cell == Cell::kLstm ? loops.lstm_row : spec_.cell == Cell::kGru ? loops.gru_row : loops.rnn_row;
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

}  // namespace ge::engine::cpu_dense::rnn

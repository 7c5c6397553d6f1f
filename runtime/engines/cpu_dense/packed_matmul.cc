// The packed-weights GEMM path: packing, the switch, the team split.
#include "runtime/engines/cpu_dense/packed_matmul.h"

#include <omp.h>

#include <algorithm>
#include <atomic>

#include "runtime/engines/cpu_dense/dnnl_util.h"

namespace ge::engine::cpu_dense {
namespace {

std::atomic<int64_t>& MaxRows() {
  static std::atomic<int64_t> rows{OwnPathOnByDefault("GED_CPU_DENSE_GEMM") ? kPackedGemmMaxRows : 0};
  return rows;
}

// Below this many multiply-adds a product stays on the calling thread
// (an OpenMP fork and join costs about as much).
constexpr int64_t kSingleThreadWork = int64_t{1} << 17;

}  // namespace

int64_t PackedGemmMaxRows() { return MaxRows().load(std::memory_order_relaxed); }

void SetPackedGemmMaxRows(int64_t rows) { MaxRows().store(OwnLoopsSupported() ? rows : 0, std::memory_order_relaxed); }

bool PackedGemmFits(int64_t m, int64_t k, int64_t n) {
  const int64_t bound = PackedGemmMaxRows();
  if (m <= bound) return true;
  return bound == kPackedGemmMaxRows && m <= kPackedGemmMaxWideRows && (n >= 2 * k || n >= kPackedGemmMinCols);
}

std::vector<GemmStep> ToGemmSteps(const PostOpChain& chain) {
  std::vector<GemmStep> steps;
  for (const PostOp& op : chain.ops) steps.push_back({static_cast<int32_t>(op.kind), op.alpha, op.beta});
  return steps;
}

bool PanelWeights::PackedFrom(const Tensor& b, int64_t k, int64_t n, bool transposed) const {
  return packing_.PackedFrom(b, {k, n, transposed ? 1 : 0});
}

void PackPanels(const float* b, int64_t k, int64_t n, bool transposed, float* panels) {
  const int64_t count = GemmPanels(n);
  for (int64_t p = 0; p < count; ++p) {
    const int64_t cols = std::min(kGemmPanel, n - p * kGemmPanel);
    for (int64_t i = 0; i < k; ++i) {
      float* dst = panels + (p * k + i) * kGemmPanel;
      for (int64_t x = 0; x < cols; ++x) {
        const int64_t col = p * kGemmPanel + x;
        dst[x] = transposed ? b[col * k + i] : b[i * n + col];
      }
      std::fill(dst + cols, dst + kGemmPanel, 0.0f);
    }
  }
}

void UnpackPanels(const float* panels, int64_t k, int64_t n, bool transposed, float* b) {
  const int64_t count = GemmPanels(n);
  for (int64_t p = 0; p < count; ++p) {
    const int64_t cols = std::min(kGemmPanel, n - p * kGemmPanel);
    for (int64_t i = 0; i < k; ++i) {
      const float* src = panels + (p * k + i) * kGemmPanel;
      for (int64_t x = 0; x < cols; ++x) {
        const int64_t col = p * kGemmPanel + x;
        (transposed ? b[col * k + i] : b[i * n + col]) = src[x];
      }
    }
  }
}

PanelWeights::Panels PanelWeights::Get(const Tensor& b, int64_t k, int64_t n, bool transposed, bool* packed) {
  auto pack = [&](const Tensor& t) {
    std::vector<float> out(static_cast<size_t>(GemmPanels(n) * k * kGemmPanel));
    PackPanels(t.data<float>(), k, n, transposed, out.data());
    return out;
  };
  return packing_.Get(b, {k, n, transposed ? 1 : 0}, pack, packed);
}

void RunPackedGemm(const GemmArgs& args, int threads) {
  const int64_t panels = GemmPanels(args.n);
  const int64_t work = args.rows * args.n * std::max<int64_t>(args.k, 1);
  const int team = work < kSingleThreadWork || omp_in_parallel() != 0 ? 1 : std::max(1, threads);
  if (team == 1) {
    GemmArgs g = args;
    g.panel_begin = 0;
    g.panel_end = panels;
    avx2::PackedGemm(g);
    return;
  }
  // Panels when there are enough for everyone, else blocks of 6 rows.
  const bool by_panels = panels >= team || args.rows < 2 * 6;
#pragma omp parallel num_threads(team)
  {
    const int64_t i = omp_get_thread_num(), nt = omp_get_num_threads();
    GemmArgs g = args;
    if (by_panels) {
      g.panel_begin = panels * i / nt;
      g.panel_end = panels * (i + 1) / nt;
    } else {
      const int64_t blocks = (args.rows + 5) / 6;
      const int64_t r0 = std::min(args.rows, blocks * i / nt * 6), r1 = std::min(args.rows, blocks * (i + 1) / nt * 6);
      g.a += r0 * args.lda;
      g.c += r0 * args.ldc;
      if (g.add != nullptr) g.add += r0 * args.add_ld;
      g.rows = r1 - r0;
      g.panel_begin = 0;
      g.panel_end = panels;
    }
    if (g.rows > 0 && g.panel_end > g.panel_begin) avx2::PackedGemm(g);
  }
}

}  // namespace ge::engine::cpu_dense

// The product of cpu_dense's recurrent loops (rnn_loops.h), both builds
// (baseline and AVX2, the latter where the CPU runs it), against a double
// loop over the unpacked matrix: every row count the kernel dispatches
// differently (0 to 7, one block of rows and the next, row counts that leave
// one to three rows at a block's end), depths of zero, one, one below, at and
// past the reduction block, any panel count (within one stride of eight
// panels, exactly two, and one and a part), weights small enough for L2 and
// large enough to be prefetched, each initial value (zero, bias, accumulate
// into c), and a row stride of c wider than its panels.
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/engines/cpu_dense/rnn_loops.h"
#include "runtime/engines/sdk/cpu_features.h"

namespace ge::engine::cpu_dense {
namespace {

// `cols` x `k` row-major w as panels of kRnnPanel columns (rnn_loops.h).
std::vector<float> Pack(const std::vector<float>& w, int64_t cols, int64_t k) {
  const int64_t panels = RnnPaddedCols(cols) / kRnnPanel;
  std::vector<float> out(panels * k * kRnnPanel, 0.0f);
  for (int64_t col = 0; col < cols; ++col) {
    for (int64_t i = 0; i < k; ++i) out[((col / kRnnPanel) * k + i) * kRnnPanel + col % kRnnPanel] = w[col * k + i];
  }
  return out;
}

enum class Init { kZero, kBias, kAccumulate };

void Check(const RnnLoops& loops, int64_t rows, int64_t k, int64_t cols, Init init, std::mt19937& gen) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto random = [&](int64_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = dist(gen);
    return v;
  };
  const int64_t padded = RnnPaddedCols(cols), panels = padded / kRnnPanel;
  const int64_t lda = k + 3, ldc = padded + kRnnPanel;
  const std::vector<float> a = random(std::max<int64_t>(rows * lda, 1)), w = random(cols * k);
  const std::vector<float> bias = random(padded);
  std::vector<float> c = random(std::max<int64_t>(rows * ldc, 1));
  const std::vector<float> before = c;
  const std::vector<float> packed = Pack(w, cols, k);
  loops.gemm(RnnGemmArgs{a.data(), lda, rows, k, packed.data(), panels, c.data(), ldc,
                         init == Init::kBias ? bias.data() : nullptr, init == Init::kAccumulate});
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = c[r * ldc + j];
      if (j >= padded) {  // past the panels: untouched
        ASSERT_EQ(got, before[r * ldc + j]) << "row " << r << " col " << j;
        continue;
      }
      double want = init == Init::kBias ? bias[j] : init == Init::kAccumulate ? before[r * ldc + j] : 0.0;
      double magnitude = std::fabs(want);
      for (int64_t i = 0; i < k && j < cols; ++i) {
        want += static_cast<double>(a[r * lda + i]) * w[j * k + i];
        magnitude += std::fabs(static_cast<double>(a[r * lda + i]) * w[j * k + i]);
      }
      ASSERT_NEAR(got, want, 1e-6 * (magnitude + 1.0))
          << loops.name << " rows " << rows << " k " << k << " cols " << cols << " init " << static_cast<int>(init)
          << " at " << r << "," << j;
    }
  }
}

void CheckAll(const RnnLoops& loops) {
  std::mt19937 gen(7);
  for (int64_t rows : {0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 16, 24, 96, 97, 99, 150}) {
    for (int64_t k : {1, 64, 255}) {
      for (int64_t cols : {16, 37, 64}) Check(loops, rows, k, cols, Init(rows % 3), gen);
    }
  }
  for (Init init : {Init::kZero, Init::kBias, Init::kAccumulate}) {
    for (int64_t rows : {1, 3, 4, 9, 100}) {
      for (int64_t k : {0, 256, 257, 600}) Check(loops, rows, k, 48, init, gen);
    }
  }
  // Wider than a stride of panels: an LSTM's 4 x hidden columns.
  for (int64_t rows : {4, 16, 97}) {
    for (int64_t k : {0, 100, 300}) {
      for (int64_t cols : {256, 200}) Check(loops, rows, k, cols, Init((rows + k) % 3), gen);
    }
  }
  // Weights past 256 KB, whose panels the loops prefetch: a large hidden
  // size's R at a step's row counts and a projection's, columns off the
  // panels, depths past the reduction block.
  for (int64_t rows : {1, 2, 3, 5, 8, 13, 100}) {
    for (const auto& [k, cols] : {std::pair<int64_t, int64_t>{256, 1024}, {300, 250}, {512, 130}}) {
      Check(loops, rows, k, cols, Init((rows + cols) % 3), gen);
    }
  }
}

TEST(RnnLoopsTest, BaseGemmMatchesReference) { CheckAll(base::Loops()); }

TEST(RnnLoopsTest, Avx2GemmMatchesReference) {
  if (sdk::HostVectorIsa() == sdk::VectorIsa::kBase) GTEST_SKIP() << "the CPU does not run AVX2";
  CheckAll(avx2::Loops());
}

}  // namespace
}  // namespace ge::engine::cpu_dense

// cpu_dense's first-run weight packing under concurrent calls: the packing
// they share (packed_weights.h), the packed MatMul's PanelWeights, the
// small-output convolution's SmallConvWeights and the few-output-channel
// convolution's NarrowConvWeights called from several threads at once, as
// two first runs of one kernel would. Every caller must get panels equal to
// a packing of its own weights, one packing must serve calls that arrive
// together for the same storage, and panels a caller holds must stay valid
// while others pack other storage. Small on purpose: it is the target to
// build with -fsanitize=thread.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include "runtime/engines/cpu_dense/narrow_conv.h"
#include "runtime/engines/cpu_dense/packed_matmul.h"
#include "runtime/engines/cpu_dense/packed_weights.h"
#include "runtime/engines/cpu_dense/small_conv.h"
#include "tests/testing/kernel_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

constexpr int kThreads = 8;

// B [k, n] as panels, straight from the layout gemm_loops.h describes.
std::vector<float> ReferencePanels(const Tensor& b, int64_t k, int64_t n) {
  std::vector<float> out(GemmPanels(n) * k * kGemmPanel, 0.0f);
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t col = 0; col < n; ++col) {
      out[((col / kGemmPanel) * k + i) * kGemmPanel + col % kGemmPanel] = b.data<float>()[i * n + col];
    }
  }
  return out;
}

// W [oc, ic, kh, kw] as conv_loops.h's panels.
std::vector<float> ReferenceConvPanels(const Tensor& w) {
  const int64_t oc = w.shape().dim(0), ic = w.shape().dim(1), taps = w.shape().dim(2) * w.shape().dim(3);
  std::vector<float> out(oc * ic * taps, 0.0f);
  for (int64_t o = 0; o < oc; ++o) {
    for (int64_t c = 0; c < ic; ++c) {
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t depth = ((c / kConvLanes) * taps + t) * kConvLanes + c % kConvLanes;
        out[(o / kConvPanel) * ic * taps * kConvPanel + depth * kConvPanel + o % kConvPanel] =
            w.data<float>()[(o * ic + c) * taps + t];
      }
    }
  }
  return out;
}

// Runs `body(thread)` on kThreads threads released together.
template <typename Body>
void RunTogether(Body body) {
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      body(t);
    });
  }
  for (std::thread& th : threads) th.join();
}

// Calls get(&packed) from kThreads threads released together; expects one
// packing shared by all and returns what they got, each checked against `want`.
template <typename Get>
std::shared_ptr<const std::vector<float>> ExpectOnePackingShared(const Get& get, const std::vector<float>* want) {
  std::vector<std::shared_ptr<const std::vector<float>>> got(kThreads);
  std::atomic<int> packs{0};
  RunTogether([&](int t) {
    bool packed = false;
    got[t] = get(&packed);
    if (packed) packs.fetch_add(1);
  });
  EXPECT_EQ(packs.load(), 1);
  for (int t = 0; t < kThreads; ++t) {
    if (got[t] == nullptr) {
      ADD_FAILURE() << "thread " << t << " got no packing";
      return nullptr;
    }
    EXPECT_EQ(got[t], got[0]) << "thread " << t << " has a packing of its own";
    if (want != nullptr) {
      EXPECT_EQ(*got[t], *want) << "thread " << t;
    }
  }
  return got[0];
}

TEST(WeightPacking, PanelWeightsFirstCallsAtOncePackOnceAndShare) {
  constexpr int64_t kK = 300, kN = 70;  // a panel tail
  const Tensor b = test::RandomTensor(DataType::kFloat, Shape{kK, kN}, 1);
  PanelWeights weights;
  const std::vector<float> want = ReferencePanels(b, kK, kN);
  ExpectOnePackingShared([&](bool* packed) { return weights.Get(b, kK, kN, /*transposed=*/false, packed); }, &want);
  EXPECT_TRUE(weights.PackedFrom(b, kK, kN, false));
  EXPECT_FALSE(weights.PackedFrom(b, kK, kN, true));
}

TEST(WeightPacking, PanelWeightsHeldPanelsSurviveRepackingForOtherStorage) {
  // Four weights in turn from every thread: each call repacks (the storage
  // differs from the last), while other threads still read panels they got.
  constexpr int64_t kK = 24, kN = 20;
  std::vector<Tensor> bs;
  std::vector<std::vector<float>> want;
  for (int i = 0; i < 4; ++i) {
    bs.push_back(test::RandomTensor(DataType::kFloat, Shape{kK, kN}, 10 + i));
    want.push_back(ReferencePanels(bs.back(), kK, kN));
  }
  PanelWeights weights;
  std::atomic<int> wrong{0};
  RunTogether([&](int t) {
    for (int it = 0; it < 200; ++it) {
      const int i = (t + it) % 4;
      const PanelWeights::Panels panels = weights.Get(bs[i], kK, kN, /*transposed=*/false);
      if (*panels != want[i]) wrong.fetch_add(1);
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(WeightPacking, PanelWeightsTransposedAndNewDims) {
  // B stored [n, k] (Gemm's transB): the same panels as its transpose.
  constexpr int64_t kK = 17, kN = 33;
  const Tensor b = test::RandomTensor(DataType::kFloat, Shape{kK, kN}, 3);
  Tensor bt = *Tensor::Allocate(DataType::kFloat, Shape{kN, kK});
  for (int64_t i = 0; i < kK; ++i) {
    for (int64_t j = 0; j < kN; ++j) bt.data<float>()[j * kK + i] = b.data<float>()[i * kN + j];
  }
  PanelWeights weights;
  bool packed = false;
  EXPECT_EQ(*weights.Get(bt, kK, kN, /*transposed=*/true, &packed), ReferencePanels(b, kK, kN));
  EXPECT_TRUE(packed);
  weights.Get(bt, kK, kN, /*transposed=*/true, &packed);
  EXPECT_FALSE(packed);
  // The same storage read with other dims is another packing.
  weights.Get(bt, kN, kK, /*transposed=*/false, &packed);
  EXPECT_TRUE(packed);
}

TEST(WeightPacking, SmallConvWeightsFirstCallsAtOncePackOnceAndShare) {
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{32, 16, 3, 3}, 4);
  SmallConvWeights weights;
  const std::vector<float> want = ReferenceConvPanels(w);
  ExpectOnePackingShared([&](bool* packed) { return weights.Get(w, packed); }, &want);
  EXPECT_TRUE(weights.PackedFrom(w));
}

TEST(WeightPacking, SmallConvWeightsHeldPanelsSurviveRepackingForOtherStorage) {
  std::vector<Tensor> ws;
  std::vector<std::vector<float>> want;
  for (int i = 0; i < 3; ++i) {
    ws.push_back(test::RandomTensor(DataType::kFloat, Shape{16, 8, 2, 2}, 20 + i));
    want.push_back(ReferenceConvPanels(ws.back()));
  }
  SmallConvWeights weights;
  std::atomic<int> wrong{0};
  RunTogether([&](int t) {
    for (int it = 0; it < 200; ++it) {
      const int i = (t + it) % 3;
      const SmallConvWeights::Panels panels = weights.Get(ws[i]);
      if (*panels != want[i]) wrong.fetch_add(1);
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(WeightPacking, StoragePackedWeightsKeysOnStorageAndShapeKey) {
  const Tensor a = test::RandomTensor(DataType::kFloat, Shape{4, 4}, 30);
  const Tensor b = test::RandomTensor(DataType::kFloat, Shape{4, 4}, 31);
  StoragePackedWeights packing("test");
  int calls = 0;
  auto pack = [&](const Tensor& t) {
    ++calls;
    return std::vector<float>(t.data<float>(), t.data<float>() + t.shape().NumElementsUnchecked());
  };
  bool packed = false;
  const StoragePackedWeights::Data first = packing.Get(a, {4, 4}, pack, &packed);
  EXPECT_TRUE(packed);
  EXPECT_EQ(packing.Get(a, {4, 4}, pack, &packed), first);  // same storage and key: no packing
  EXPECT_FALSE(packed);
  EXPECT_TRUE(packing.PackedFrom(a, {4, 4}));
  EXPECT_FALSE(packing.PackedFrom(a, {16, 1}));
  EXPECT_FALSE(packing.PackedFrom(b, {4, 4}));
  packing.Get(a, {16, 1}, pack, &packed);  // another key repacks
  EXPECT_TRUE(packed);
  const StoragePackedWeights::Data other = packing.Get(b, {16, 1}, pack, &packed);  // other storage too
  EXPECT_TRUE(packed);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ((*other)[5], b.data<float>()[5]);
  EXPECT_EQ((*first)[5], a.data<float>()[5]);  // a held packing outlives its replacement
}

TEST(WeightPacking, NarrowConvWeightsFirstCallsAtOncePackOnceAndShare) {
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{3, 20, 3, 3}, 40);
  NarrowConvWeights weights;
  const NarrowConvWeights::Packed first =
      ExpectOnePackingShared([&](bool* packed) { return weights.Get(w, packed); }, nullptr);
  ASSERT_NE(first, nullptr);
  // (output channel, 8-channel block, tap, lane), the blocks' tails zero.
  const int64_t blocks = 3, taps = 9;
  ASSERT_EQ(first->size(), static_cast<size_t>(3 * blocks * taps * 8));
  for (int64_t o = 0; o < 3; ++o) {
    for (int64_t c = 0; c < 24; ++c) {
      for (int64_t k = 0; k < taps; ++k) {
        const float want = c < 20 ? w.data<float>()[(o * 20 + c) * taps + k] : 0.0f;
        EXPECT_EQ((*first)[((o * blocks + c / 8) * taps + k) * 8 + c % 8], want) << o << " " << c << " " << k;
      }
    }
  }
}

}  // namespace
}  // namespace ge::engine::cpu_dense

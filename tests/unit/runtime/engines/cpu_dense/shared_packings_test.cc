// Packings shared between kernels (shared_packings.h): two holders of one
// constant storage (the kernels of two per-shape plans) share one packing;
// another kind, key, view or storage packs again; the packing goes with the
// last holder; first calls from many holders at once pack once; with sharing
// off every holder packs its own. Small on purpose, like
// weight_packing_test: it builds alone under -fsanitize=thread.
#include "runtime/engines/cpu_dense/shared_packings.h"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include "runtime/engines/cpu_dense/packed_matmul.h"
#include "runtime/engines/cpu_dense/packed_weights.h"
#include "tests/testing/kernel_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

std::vector<float> Copy(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.shape().NumElementsUnchecked());
}

TEST(SharedPackings, TwoHoldersOfOneStorageShareOnePacking) {
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{8, 8}, 50);
  StoragePackedWeights first("test_share"), second("test_share");
  int calls = 0;
  auto pack = [&](const Tensor& t) {
    ++calls;
    return Copy(t);
  };
  bool packed = false;
  const StoragePackedWeights::Data a = first.Get(w, {8, 8}, pack, &packed);
  EXPECT_TRUE(packed);
  const StoragePackedWeights::Data b = second.Get(w, {8, 8}, pack, &packed);
  EXPECT_FALSE(packed) << "the second holder packed the same storage again";
  EXPECT_EQ(a, b);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(*a, Copy(w));
  // A view of the same storage with other dims is another packing.
  const Tensor view(DataType::kFloat, Shape{4, 16}, w.buffer(), w.byte_offset());
  second.Get(view, {8, 8}, pack, &packed);
  EXPECT_TRUE(packed);
  // So are another kind and another key.
  StoragePackedWeights other_kind("test_share_other");
  other_kind.Get(w, {8, 8}, pack, &packed);
  EXPECT_TRUE(packed);
  first.Get(w, {64, 1}, pack, &packed);
  EXPECT_TRUE(packed);
  EXPECT_EQ(calls, 4);
}

TEST(SharedPackings, APackingGoesWithItsLastHolder) {
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{6, 5}, 51);
  int calls = 0;
  auto pack = [&](const Tensor& t) {
    ++calls;
    return Copy(t);
  };
  std::weak_ptr<const std::vector<float>> seen;
  {
    auto first = std::make_unique<StoragePackedWeights>("test_last");
    auto second = std::make_unique<StoragePackedWeights>("test_last");
    seen = first->Get(w, {}, pack);
    second->Get(w, {}, pack);
    first.reset();
    EXPECT_FALSE(seen.expired()) << "freed while a holder remains";
  }
  EXPECT_TRUE(seen.expired()) << "kept after the last holder went";
  StoragePackedWeights again("test_last");
  bool packed = false;
  EXPECT_EQ(*again.Get(w, {}, pack, &packed), Copy(w));
  EXPECT_TRUE(packed);
  EXPECT_EQ(calls, 2);
}

TEST(SharedPackings, FirstCallsOfManyHoldersAtOncePackOnce) {
  constexpr int kThreads = 8;
  const Tensor b = test::RandomTensor(DataType::kFloat, Shape{40, 37}, 52);  // [k, n], odd n
  std::vector<PanelWeights> holders(kThreads);
  std::vector<PanelWeights::Panels> got(kThreads);
  std::atomic<int> packs{0};
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      bool packed = false;
      got[t] = holders[t].Get(b, 40, 37, false, &packed);
      if (packed) packs.fetch_add(1);
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(packs.load(), 1);
  PanelWeights alone;
  SharedPackings::SetEnabled(false);
  const PanelWeights::Panels want = alone.Get(b, 40, 37, false);
  SharedPackings::SetEnabled(true);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(got[t], got[0]);
    EXPECT_EQ(*got[t], *want) << "thread " << t;
  }
}

TEST(SharedPackings, WithSharingOffEveryHolderPacks) {
  const Tensor w = test::RandomTensor(DataType::kFloat, Shape{3, 3}, 53);
  SharedPackings::SetEnabled(false);
  StoragePackedWeights first("test_off"), second("test_off");
  auto pack = [](const Tensor& t) { return Copy(t); };
  const int64_t made = SharedPackings::Made().load();
  const StoragePackedWeights::Data a = first.Get(w, {}, pack);
  const StoragePackedWeights::Data b = second.Get(w, {}, pack);
  SharedPackings::SetEnabled(true);
  EXPECT_NE(a, b);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(SharedPackings::Made().load(), made + 2);
}

}  // namespace
}  // namespace ge::engine::cpu_dense

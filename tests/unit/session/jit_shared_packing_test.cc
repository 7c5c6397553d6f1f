// The per-shape plans of one graph (jit_graph.h) share the packed forms of
// its constant weights (cpu_dense's shared_packings.h): a second shape's
// plan packs nothing, its outputs are those of plans that pack their own
// copies, and first runs of two shapes at once pack each weight once.
#include <cmath>
#include <latch>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/ir/text_format.h"
#include "gtest/gtest.h"
#include "runtime/engines/cpu_dense/shared_packings.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"

namespace ge::session {
namespace {

using engine::cpu_dense::SharedPackings;

std::string Values(int64_t n, float scale) {
  std::string out;
  for (int64_t i = 0; i < n; ++i) absl::StrAppend(&out, i ? "," : "", scale * static_cast<float>((i * 37) % 23 - 11));
  return out;
}

class JitSharedPackingTest : public ge::testing::EnginesTest {
 protected:
  // A MatMul with constant weights (the packed GEMM at few rows) and a
  // convolution with constant weights, both over a dynamic batch.
  static std::unique_ptr<ir::Graph> Graph() {
    auto g = ir::ParseGraph(absl::StrCat(R"(graph g {
      x = Data() {index = 0} -> (f32[-1,48] as "x")
      c = Data() {index = 1} -> (f32[-1,8,10,10] as "c")
      w = Const() {value = tensor<f32[48,40]>[)",
                                         Values(48 * 40, 0.01f), R"(]} -> (f32[48,40])
      k = Const() {value = tensor<f32[16,8,3,3]>[)",
                                         Values(16 * 8 * 9, 0.02f), R"(]} -> (f32[16,8,3,3])
      m = MatMul(x:0, w:0) -> (f32[-1,40])
      y = Conv(c:0, k:0) {pads = [1,1,1,1]} -> (f32[-1,16,10,10])
      out = NetOutput(m:0, y:0)
    })"));
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : nullptr;
  }
  static std::vector<Value> Inputs(int64_t batch) {
    std::vector<float> x(batch * 48), c(batch * 800);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(i % 13) - 0.6f;
    for (size_t i = 0; i < c.size(); ++i) c[i] = 0.05f * static_cast<float>(i % 17) - 0.4f;
    return {Tensor::FromVector<float>(x, Shape{batch, 48}), Tensor::FromVector<float>(c, Shape{batch, 8, 10, 10})};
  }
  // The outputs of a session whose plans pack their own weights.
  std::vector<Value> Unshared(int64_t batch) {
    SharedPackings::SetEnabled(false);
    Session s(*engines_, {}, &pool_);
    EXPECT_TRUE(s.AddGraph(1, Graph()).ok());
    auto out = s.RunGraph(1, Inputs(batch));
    SharedPackings::SetEnabled(true);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *std::move(out) : std::vector<Value>{};
  }
  static void ExpectIdentical(const std::vector<Value>& got, const std::vector<Value>& want, int64_t batch) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t o = 0; o < got.size(); ++o) {
      const Tensor& g = got[o].tensor();
      const Tensor& w = want[o].tensor();
      ASSERT_EQ(g.shape(), w.shape()) << "batch " << batch << " output " << o;
      for (int64_t k = 0; k < g.NumElements(); ++k) {
        ASSERT_EQ(g.data<float>()[k], w.data<float>()[k]) << "batch " << batch << " output " << o << " at " << k;
      }
    }
  }

  ThreadPool pool_{2, "jit-shared-packing-test"};
};

TEST_F(JitSharedPackingTest, ASecondShapesPlanPacksNothingAndComputesTheSame) {
  Session s(*engines_, {}, &pool_);
  ASSERT_TRUE(s.AddGraph(1, Graph()).ok());
  const int64_t before = SharedPackings::Made().load();
  auto first = s.RunGraph(1, Inputs(2));
  ASSERT_TRUE(first.ok()) << first.status();
  const int64_t one_plan = SharedPackings::Made().load() - before;
  ASSERT_GE(one_plan, 1) << "nothing packed its weights: the test sees no sharing";
  auto second = s.RunGraph(1, Inputs(5));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(SharedPackings::Made().load() - before, one_plan) << "the second shape's plan packed the weights again";
  const JitStats stats = *s.GetJitStats(1);
  EXPECT_EQ(stats.compilations, 2);
  ExpectIdentical(*first, Unshared(2), 2);
  ExpectIdentical(*second, Unshared(5), 5);
  // Later runs of both shapes keep their results.
  auto again = s.RunGraph(1, Inputs(2));
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectIdentical(*again, *first, 2);
}

TEST_F(JitSharedPackingTest, FirstRunsOfTwoShapesAtOncePackEachWeightOnce) {
  const int64_t start = SharedPackings::Made().load();
  {
    Session one(*engines_, {}, &pool_);
    ASSERT_TRUE(one.AddGraph(1, Graph()).ok());
    ASSERT_TRUE(one.RunGraph(1, Inputs(3)).ok());
  }
  const int64_t one_plan = SharedPackings::Made().load() - start;
  const std::vector<int64_t> batches = {3, 7};
  std::vector<std::vector<Value>> want;
  for (int64_t b : batches) want.push_back(Unshared(b));
  Session s(*engines_, {}, &pool_);
  ASSERT_TRUE(s.AddGraph(1, Graph()).ok());
  const int64_t before = SharedPackings::Made().load();
  std::vector<absl::StatusOr<std::vector<Value>>> got(batches.size(), absl::UnknownError("not run"));
  std::latch go(static_cast<std::ptrdiff_t>(batches.size()));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < batches.size(); ++t) {
    threads.emplace_back([&, t] {
      go.arrive_and_wait();
      got[t] = s.RunGraph(1, Inputs(batches[t]));
    });
  }
  for (std::thread& th : threads) th.join();
  for (size_t t = 0; t < batches.size(); ++t) {
    ASSERT_TRUE(got[t].ok()) << got[t].status();
    ExpectIdentical(*got[t], want[t], batches[t]);
  }
  EXPECT_EQ(SharedPackings::Made().load() - before, one_plan);
}

}  // namespace
}  // namespace ge::session

// Sessions used from several threads at once, as the daemon will use them:
// concurrent first runs compile a graph once, runs of one graph and of
// different graphs proceed together on a shared intra-op pool with correct
// results, and graphs are added, compiled and removed while others run.
// Labelled `concurrency`: scripts/sanitize.sh tsan runs it under TSan.
#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "base/ir/text_format.h"
#include "base/strings.h"
#include "gtest/gtest.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"

namespace ge::session {
namespace {

constexpr int kThreads = 4;

class SessionConcurrencyTest : public ge::testing::EnginesTest {
 protected:
  // y = relu(x) * k + x, x: f32[-1, 8]; big enough inputs split over the pool.
  static std::unique_ptr<ir::Graph> Graph(float k) {
    auto g = ir::ParseGraph(StrCat(R"(graph main {
      x = Data() {index = 0} -> (f32[-1,8])
      k = Const() {value = tensor<f32[]>[)", k, R"(]} -> (f32[])
      r = Relu(x:0) -> (f32[-1,8])
      m = Mul(r:0, k:0) -> (f32[-1,8])
      y = Add(m:0, x:0) -> (f32[-1,8])
      out = NetOutput(y:0)
    })"));
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : nullptr;
  }

  // Runs graph `id` (built with `k`) on `rows` rows and checks every value.
  static void RunAndCheck(Session& session, uint32_t id, float k, int64_t rows, std::atomic<int>* failures) {
    std::vector<float> x(rows * 8);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) - 8;
    auto outputs = session.RunGraph(id, {Tensor::FromVector<float>(x, Shape{rows, 8})});
    if (!outputs.ok() || outputs->size() != 1) {
      ADD_FAILURE() << "graph " << id << ": " << outputs.status();
      ++*failures;
      return;
    }
    const Tensor& y = (*outputs)[0].tensor();
    for (size_t i = 0; i < x.size(); ++i) {
      if (y.data<float>()[i] != std::max(x[i], 0.0f) * k + x[i]) {
        ADD_FAILURE() << "graph " << id << " rows " << rows << ": wrong value at " << i;
        ++*failures;
        return;
      }
    }
  }

  ThreadPool pool_{3, "session-concurrency"};
};


TEST_F(SessionConcurrencyTest, ConcurrentFirstRunsCompileOnce) {
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(session.AddGraph(1, Graph(2)).ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { RunAndCheck(session, 1, 2, 16 + t, &failures); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(session.GetCompiledGraph(1).ok());
}

TEST_F(SessionConcurrencyTest, RunsOfOneAndOfDifferentGraphsOverlap) {
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(session.AddGraph(1, Graph(2)).ok());
  ASSERT_TRUE(session.AddGraph(2, Graph(-3)).ok());
  ASSERT_TRUE(session.CompileGraph(2).ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const bool first = (t + i) % 2 == 0;
        RunAndCheck(session, first ? 1 : 2, first ? 2.0f : -3.0f, 1 + (t * 37 + i * 11) % 300, &failures);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(SessionConcurrencyTest, GraphsComeAndGoWhileOthersRun) {
  Session session(*engines_, {}, &pool_);
  ASSERT_TRUE(session.AddGraph(1, Graph(0.5f)).ok());
  std::atomic<int> failures{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> runners;
  for (int t = 0; t < 2; ++t) {
    runners.emplace_back([&, t] {
      while (!done.load()) RunAndCheck(session, 1, 0.5f, 8 + t, &failures);
    });
  }
  // Each churner owns its own ids: a graph is never removed while it runs
  // (the session hands out its entries without reference counts).
  std::vector<std::thread> churners;
  for (int t = 0; t < 2; ++t) {
    churners.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        const uint32_t id = 100 + t * 1000 + i;
        if (!session.AddGraph(id, Graph(1)).ok() || !session.CompileGraph(id).ok() ||
            !session.GetGraphInfo(id).ok()) {
          ++failures;
        }
        RunAndCheck(session, id, 1, 4, &failures);
        if (!session.RemoveGraph(id).ok()) ++failures;
      }
    });
  }
  for (auto& t : churners) t.join();
  done = true;
  for (auto& t : runners) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace ge::session

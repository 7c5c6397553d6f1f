// Random ops through a whole session (issue 21 item 2): with ge.exec.seed
// the static and the dynamic executor give the same values run by run,
// each run advances the stream, a `seed` attribute wins over the option,
// and nothing folds a random op into a constant.
#include <string>
#include <vector>

#include "base/ir/text_format.h"
#include "gtest/gtest.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"

namespace ge::session {
namespace {

constexpr char kGraph[] = R"(graph main {
  x = Data() {index = 0} -> (f32[4,5])
  r = RandomNormalLike(x:0) -> (f32[4,5])
  y = Add(r:0, x:0) -> (f32[4,5])
  u = RandomUniform() {shape = [4, 5], low = -2.0, high = 2.0} -> (f32[4,5])
  b = Bernoulli(x:0) {seed = 7.0} -> (f32[4,5])
  out = NetOutput(y:0, u:0, b:0)
})";

class RandomOpsSessionTest : public ge::testing::EnginesTest {
 protected:
  // The outputs of `runs` runs of kGraph in a session with `options`.
  std::vector<std::vector<Tensor>> Runs(const OptionMap& options, int runs) {
    std::vector<std::vector<Tensor>> out;
    auto graph = ir::ParseGraph(kGraph);
    EXPECT_TRUE(graph.ok()) << graph.status();
    if (!graph.ok()) return out;
    Session session(*engines_, options, &pool_);
    EXPECT_TRUE(session.AddGraph(1, std::move(*graph)).ok());
    std::vector<float> x(20);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 3) * 0.4f;  // probabilities 0, 0.4, 0.8
    for (int r = 0; r < runs; ++r) {
      auto outputs = session.RunGraph(1, {Tensor::FromVector<float>(x, Shape{4, 5})});
      EXPECT_TRUE(outputs.ok()) << outputs.status();
      if (!outputs.ok()) return out;
      std::vector<Tensor> tensors;
      for (const Value& v : *outputs) tensors.push_back(v.tensor());
      out.push_back(std::move(tensors));
    }
    auto compiled = session.GetCompiledGraph(1);
    EXPECT_TRUE(compiled.ok());
    if (compiled.ok()) {
      for (const char* name : {"r", "u", "b"}) {
        const ir::Node* node = (*compiled)->graph->FindNode(name);
        EXPECT_NE(node, nullptr) << name << " was folded away";
        if (node != nullptr) {
          EXPECT_TRUE(node->op_desc().GetAttr<int64_t>("_ge_random_key")) << name;
        }
      }
    }
    return out;
  }

  static bool Same(const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() && a.dtype() == b.dtype() &&
           std::equal(a.data<float>(), a.data<float>() + a.NumElements(), b.data<float>());
  }

  ThreadPool pool_{2, "random-test"};
};

TEST_F(RandomOpsSessionTest, StaticAndDynamicExecutorsDrawTheSameValuesRunByRun) {
  const auto fixed = Runs({{"ge.exec.seed", "42"}}, 3);
  const auto dynamic = Runs({{"ge.exec.seed", "42"}, {"ge.exec.static_model_ops_lower_limit", "-1"}}, 3);
  const auto parallel = Runs({{"ge.exec.seed", "42"},
                              {"ge.exec.static_model_ops_lower_limit", "-1"},
                              {"ge.exec.inter_op_parallelism", "3"},
                              {"ge.oo.constantFolding", "0"}},
                             3);
  ASSERT_EQ(fixed.size(), 3u);
  ASSERT_EQ(dynamic.size(), 3u);
  ASSERT_EQ(parallel.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    for (int o = 0; o < 3; ++o) {
      EXPECT_TRUE(Same(fixed[r][o], dynamic[r][o])) << "run " << r << " output " << o;
      EXPECT_TRUE(Same(fixed[r][o], parallel[r][o])) << "run " << r << " output " << o;
    }
  }
  // Each run draws fresh values; a probability of 0 never gives 1.
  EXPECT_FALSE(Same(fixed[0][0], fixed[1][0]));
  EXPECT_FALSE(Same(fixed[0][1], fixed[1][1]));
  for (int64_t i = 0; i < 20; i += 3) EXPECT_EQ(fixed[0][2].data<float>()[i], 0.0f);
  for (int64_t i = 0; i < 20; ++i) {
    EXPECT_GE(fixed[0][1].data<float>()[i], -2.0f);
    EXPECT_LT(fixed[0][1].data<float>()[i], 2.0f);
  }
}

TEST_F(RandomOpsSessionTest, TheSeedAttributeWinsOverTheSessionSeed) {
  const auto a = Runs({{"ge.exec.seed", "1"}}, 1);
  const auto b = Runs({{"ge.exec.seed", "2"}}, 1);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_FALSE(Same(a[0][0], b[0][0]));  // r follows the session's seed
  EXPECT_FALSE(Same(a[0][1], b[0][1]));
  EXPECT_TRUE(Same(a[0][2], b[0][2]));  // b has seed = 7.0
  // Without ge.exec.seed each loaded graph draws its own.
  const auto c = Runs({}, 1), d = Runs({}, 1);
  ASSERT_EQ(c.size(), 1u);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_FALSE(Same(c[0][1], d[0][1]));
  EXPECT_TRUE(Same(c[0][2], a[0][2]));
}

TEST_F(RandomOpsSessionTest, TheSeedOptionIsValidated) {
  auto graph = ir::ParseGraph(kGraph);
  ASSERT_TRUE(graph.ok());
  Session session(*engines_, {{"ge.exec.seed", "abc"}}, &pool_);
  absl::Status s = session.AddGraph(1, std::move(*graph));
  if (s.ok()) s = session.RunGraph(1, {Tensor::FromVector<float>(std::vector<float>(20), Shape{4, 5})}).status();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ge.exec.seed"), std::string::npos) << s;
}

}  // namespace
}  // namespace ge::session

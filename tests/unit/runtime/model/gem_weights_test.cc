// A weight read by several partitions: one buffer in the compiled model (the
// partitioners copy the Const into each unit that reads it, sharing its
// storage), stored once in a .gem whatever the weights' placement (inline,
// external, the cache's buffers), one buffer again after loading, and the
// same results; hostile aliases are refused (runtime/model/gem_weights.h).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "base/ir/text_format.h"
#include "base/strings.h"
#include "compiler/build/model_builder.h"
#include "ge/v1/model.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/model/gem.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"

namespace ge::runtime {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr int kN = 128;
constexpr size_t kWeightBytes = kN * kN * sizeof(float);

float WeightAt(int i) { return static_cast<float>(i % 7 - 3) * 0.25f; }

// x -> MatMul(w) -> Neg on host_cpu (a dynamic unit) -> MatMul(w): the one
// weight is read by two static units.
std::string TwoUnitsOneWeight() {
  std::string values;
  for (int i = 0; i < kN * kN; ++i) StrAppend(&values, i == 0 ? "" : ", ", WeightAt(i));
  return StrCat(R"(graph main {
      x = Data() {index = 0} -> (f32[1,)",
                kN, R"(])
      w = Const() {value = tensor<f32[)",
                kN, ",", kN, "]>[", values, "]} -> (f32[", kN, ",", kN, R"(])
      a = MatMul(x:0, w:0) -> (f32[1,)",
                kN, R"(])
      n = Neg(a:0) {_ge_engine = "host_cpu"} -> (f32[1,)",
                kN, R"(])
      b = MatMul(n:0, w:0) -> (f32[1,)",
                kN, R"(])
      out = NetOutput(b:0)
    })");
}

Tensor Input() {
  std::vector<float> x(kN);
  for (int i = 0; i < kN; ++i) x[i] = static_cast<float>(i % 5) - 2.0f;
  return Tensor::FromVector<float>(x, Shape{1, kN});
}

// -(x W) W in double.
std::vector<double> Expected() {
  std::vector<double> a(kN, 0.0), b(kN, 0.0);
  const Tensor x = Input();
  for (int k = 0; k < kN; ++k) {
    for (int j = 0; j < kN; ++j) a[j] += x.data<float>()[k] * WeightAt(k * kN + j);
  }
  for (int k = 0; k < kN; ++k) {
    for (int j = 0; j < kN; ++j) b[j] -= a[k] * WeightAt(k * kN + j);
  }
  return b;
}

// The storages of every [kN, kN] Const of the tree, and how many Consts.
std::set<const void*> WeightStorages(const ir::Graph& root, int* consts) {
  std::set<const void*> storages;
  auto visit = [&](const ir::Graph& g) {
    for (const ir::Node* n : g.nodes()) {
      if (n->type() != ir::kConst) continue;
      auto t = n->op_desc().GetAttr<Tensor>(ir::kAttrValue);
      if (!t || t->shape() != Shape{kN, kN}) continue;
      ++*consts;
      storages.insert(t->raw_data());
    }
  };
  visit(root);
  for (const ir::Graph* sub : root.subgraphs()) visit(*sub);
  return storages;
}

class GemWeightsTest : public ge::testing::EnginesTest {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gem_weights_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CompiledModel Build() {
    auto graph = ir::ParseGraph(TwoUnitsOneWeight());
    EXPECT_TRUE(graph.ok()) << graph.status();
    auto model = compiler::BuildCompiledModel(std::move(*graph), {{"ge.exec.static_model_ops_lower_limit", "1"}},
                                              *engines_, nullptr);
    EXPECT_TRUE(model.ok()) << model.status();
    return std::move(*model);
  }

  // One buffer for the weight in the flat graph and the partitioned form,
  // read by at least two Consts of the partitioned form (one per unit).
  void ExpectOneBuffer(const CompiledModel& model, const std::string& context) {
    ASSERT_NE(model.partitioned, nullptr) << context;
    int flat = 0, partitioned = 0;
    std::set<const void*> storages = WeightStorages(*model.graph, &flat);
    const std::set<const void*> more = WeightStorages(*model.partitioned, &partitioned);
    storages.insert(more.begin(), more.end());
    EXPECT_EQ(storages.size(), 1u) << context << ": the weight is held in more than one buffer";
    EXPECT_GE(partitioned, 2) << context << ": the units do not each hold the weight";
  }

  void ExpectRunsRight(CompiledModel model, const std::string& context) {
    session::Session session(*engines_, {}, nullptr);
    absl::Status added = session.AddCompiledModel(0, std::move(model));
    ASSERT_TRUE(added.ok()) << context << ": " << added;
    EXPECT_GE(*session.NumStaticSubgraphs(0), 2) << context;
    const std::vector<double> expected = Expected();
    for (int run = 0; run < 2; ++run) {  // the second run reads the packings of the first
      auto out = session.RunGraph(0, {Input()});
      ASSERT_TRUE(out.ok()) << context << ": " << out.status();
      const Tensor& b = (*out)[0].tensor();
      ASSERT_EQ(b.NumElements(), kN) << context;
      for (int j = 0; j < kN; ++j) {
        EXPECT_NEAR(b.data<float>()[j], expected[j], 1e-3 * (1 + std::fabs(expected[j]))) << context << " at " << j;
      }
    }
  }

  fs::path dir_;
};

TEST_F(GemWeightsTest, AWeightReadByTwoPartitionsIsOneBuffer) {
  CompiledModel model = Build();
  ExpectOneBuffer(model, "compiled");
  // No unit reads the weight through an input: each has it as a constant.
  for (const ir::Node* call : model.partitioned->nodes()) {
    for (int i = 0; i < call->num_inputs(); ++i) {
      ASSERT_NE(call->input(i).node, nullptr);
      EXPECT_NE(call->input(i).node->type(), ir::kConst) << call->name() << " input " << i;
    }
  }
  ExpectRunsRight(std::move(model), "compiled");
}

TEST_F(GemWeightsTest, GemStoresTheWeightOnceAndLoadsOneBuffer) {
  for (bool external : {false, true}) {
    const std::string context = external ? "external weights" : "inline weights";
    const std::string path = (dir_ / (external ? "ext.gem" : "inline.gem")).string();
    ASSERT_TRUE(SaveGem(Build(), path, *engines_, {.external_weights = external}).ok()) << context;
    // Stored once, not once per partition: a second copy would double it.
    const uintmax_t stored = external ? fs::file_size(path + ".weights") : fs::file_size(path);
    EXPECT_GE(stored, kWeightBytes) << context;
    EXPECT_LT(stored, kWeightBytes + kWeightBytes / 2) << context;
    {
      v1::CompiledModelDef def;
      std::ifstream in(path, std::ios::binary);
      ASSERT_TRUE(def.ParseFromIstream(&in));
      EXPECT_EQ(def.format_version(), kGemFormatVersion);
      EXPECT_GE(def.weight_aliases_size(), 2) << context;
      EXPECT_EQ(def.shared_weights_size() + def.subgraph_shared_weights_size(), 0) << context;
    }
    auto loaded = LoadGem(path, *engines_);
    ASSERT_TRUE(loaded.ok()) << context << ": " << loaded.status();
    ExpectOneBuffer(*loaded, context + ", loaded");
    ExpectRunsRight(*std::move(loaded), context + ", loaded");
  }
}

TEST_F(GemWeightsTest, TheCachesBuffersLoadOneBuffer) {
  CompiledModel model = Build();
  auto bytes = SerializeGem(*model.graph, nullptr, model.options, *engines_, /*external_weights=*/true,
                            "model.gem.weights", model.partitioned.get(), &model.variables);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_LT(bytes->weights.size(), kWeightBytes + kWeightBytes / 2);
  auto loaded = LoadGemFromBuffers(bytes->gem, bytes->weights, "cached", *engines_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ExpectOneBuffer(*loaded, "from buffers");
  ExpectRunsRight(*std::move(loaded), "from buffers");
}

TEST_F(GemWeightsTest, HostileAliasesAreRefused) {
  const std::string path = (dir_ / "m.gem").string();
  auto refused = [&](auto edit, const std::string& what) {
    ASSERT_TRUE(SaveGem(Build(), path, *engines_).ok());
    {
      v1::CompiledModelDef def;
      std::ifstream in(path, std::ios::binary);
      ASSERT_TRUE(def.ParseFromIstream(&in));
      ASSERT_GE(def.weight_aliases_size(), 1);
      edit(def);
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      ASSERT_TRUE(def.SerializeToOstream(&out));
    }
    auto loaded = LoadGem(path, *engines_);
    ASSERT_FALSE(loaded.ok()) << what;
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument) << what << ": " << loaded.status();
    EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("weight alias")) << what;
  };
  refused([](v1::CompiledModelDef& d) { d.mutable_weight_aliases(0)->mutable_source()->set_node("nothing"); },
          "a source that is not there");
  refused([](v1::CompiledModelDef& d) { d.mutable_weight_aliases(0)->mutable_node()->set_node("x"); },
          "an alias of a Data node");
  refused([](v1::CompiledModelDef& d) { *d.add_weight_aliases() = d.weight_aliases(0); }, "a Const aliased twice");
  refused(
      [](v1::CompiledModelDef& d) {
        v1::WeightAlias* a = d.mutable_weight_aliases(0);
        a->mutable_node()->set_partitioned(false);
        a->mutable_source()->set_partitioned(true);
      },
      "a Const of the graph from the partitioned form");
  refused(
      [](v1::CompiledModelDef& d) {
        v1::WeightAlias* a = d.mutable_weight_aliases(0);
        a->mutable_source()->set_node("nothing");
        a->mutable_node()->set_graph("no_such_graph");
      },
      "a graph that is not there");
}

}  // namespace
}  // namespace ge::runtime

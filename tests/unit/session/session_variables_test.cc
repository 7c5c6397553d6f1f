// Session variables: state across runs and graphs, init values, get/set,
// isolation between sessions, memory back at baseline after destruction,
// FileConstant weights shared by two models and two sessions, and a .gem
// round trip that carries its variables.
#include <filesystem>
#include <fstream>

#include "base/ir/proto_convert.h"
#include "base/ir/text_format.h"
#include "compiler/build/model_builder.h"
#include "gtest/gtest.h"
#include "runtime/model/external_weights.h"
#include "runtime/model/gem.h"
#include "runtime/variables/file_constant.h"
#include "session/session.h"
#include "tests/testing/engines_test.h"

namespace ge::session {
namespace {
namespace fs = std::filesystem;

class SessionVariablesTest : public ge::testing::EnginesTest {
 protected:
  static std::unique_ptr<ir::Graph> Parse(const std::string& text) {
    auto g = ir::ParseGraph(text);
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : nullptr;
  }
  // counter += x; returns the new value.
  static std::unique_ptr<ir::Graph> Counter() {
    return Parse(R"(graph counter {
      x = Data() {index = 0} -> (f32[2])
      c = Variable() {dtype = 1, shape = shape[2], value = tensor<f32[2]>[10.0, 20.0]} -> (f32[2])
      n = AssignAdd(c:0, x:0) -> (f32[2])
      out = NetOutput(n:0)
    })");
  }
  static float Run(Session& s, uint32_t graph, float a, float b) {
    auto out = s.RunGraph(graph, {Tensor::FromVector<float>({a, b}, Shape{2})});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? (*out)[0].tensor().data<float>()[1] : -1;
  }

};


TEST_F(SessionVariablesTest, StateIsKeptAcrossRunsAndGraphsButNotSessions) {
  Session s1(*engines_, {}, nullptr);
  Session s2(*engines_, {}, nullptr);
  ASSERT_TRUE(s1.AddGraph(1, Counter()).ok());
  ASSERT_TRUE(s1.AddGraph(2, Counter()).ok());
  ASSERT_TRUE(s2.AddGraph(1, Counter()).ok());
  EXPECT_EQ(Run(s1, 1, 0, 1), 21.0f);  // init value copied in on first allocation
  EXPECT_EQ(Run(s1, 1, 0, 1), 22.0f);
  EXPECT_EQ(Run(s1, 2, 0, 5), 27.0f);  // another graph of the session, same variable
  EXPECT_EQ(Run(s2, 1, 0, 1), 21.0f);  // another session: its own variable
  auto c = s1.GetVariable("c");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->data<float>()[1], 27.0f);
  ASSERT_TRUE(s1.SetVariable("c", Tensor::FromVector<float>({0, 100}, Shape{2})).ok());
  EXPECT_EQ(Run(s1, 1, 0, 1), 101.0f);
  EXPECT_EQ(s1.ListVariables(), std::vector<std::string>{"c"});
  EXPECT_EQ(s1.GetVariable("nope").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s1.SetVariable("c", Tensor::FromVector<float>({1}, Shape{1})).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SessionVariablesTest, VariableOpsSurviveGraphDefAndText) {
  auto graph = Parse(R"(graph g {
    x = Data() {index = 0} -> (f32[2])
    v = Variable() {dtype = 1, shape = shape[2], _init_value = tensor<f32[2]>[1.0, 2.0]} -> (f32[2])
    a = Assign(v:0, x:0) {_var_name = "v"} -> (f32[2])
    b = AssignAdd(v:0, x:0) ^a -> (f32[2])
    c = AssignSub(v:0, x:0) ^b -> (f32[2])
    i = VarIsInitializedOp(v:0) -> (bool[])
    f = FileConstant() {dtype = 1, shape = shape[2], file_id = "bin0", offset = 8} -> (f32[2])
    out = NetOutput(c:0, i:0, f:0)
  })");
  v1::GraphDef def;
  ASSERT_TRUE(ir::GraphToProto(*graph, &def).ok());
  auto back = ir::GraphFromProto(def);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ir::PrintGraph(**back), ir::PrintGraph(*graph));
  EXPECT_EQ(ir::PrintGraph(*Parse(ir::PrintGraph(*graph))), ir::PrintGraph(*graph));
}

TEST_F(SessionVariablesTest, VarIsInitializedTurnsTrueAfterTheFirstAssign) {
  Session s(*engines_, {}, nullptr);
  ASSERT_TRUE(s.AddGraph(1, Parse(R"(graph g {
    x = Data() {index = 0} -> (f32[2])
    v = Variable() {dtype = 1, shape = shape[2]} -> (f32[2])
    i = VarIsInitializedOp(v:0) -> (bool[])
    a = Assign(v:0, x:0) ^i -> (f32[2])
    out = NetOutput(i:0, a:0)
  })")).ok());
  for (bool expected : {false, true}) {
    auto out = s.RunGraph(1, {Tensor::FromVector<float>({1, 2}, Shape{2})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].tensor().data<bool>()[0], expected);
  }
  EXPECT_EQ(s.GetVariable("v")->data<float>()[1], 2.0f);
}

TEST_F(SessionVariablesTest, DestroyingTheSessionReturnsMemoryToBaseline) {
  device::CpuDevice device({"cpu:0", 0, 1});
  const int64_t baseline = device.memory_stats().in_use_bytes;
  {
    Session s(*engines_, {}, nullptr, &device);
    ASSERT_TRUE(s.AddGraph(1, Counter()).ok());
    EXPECT_EQ(Run(s, 1, 1, 1), 21.0f);
    EXPECT_GT(device.memory_stats().in_use_bytes, baseline);
    EXPECT_NE(variables::VarManagerPool::Global().Get(s.id()), nullptr);
  }
  EXPECT_EQ(device.memory_stats().in_use_bytes, baseline);
}

TEST_F(SessionVariablesTest, AssignOrdersAfterReadsOfTheOldValue) {
  // y reads v before the write: VariablePrepareOpPass orders it first.
  Session s(*engines_, {}, nullptr);
  ASSERT_TRUE(s.AddGraph(1, Parse(R"(graph g {
    x = Data() {index = 0} -> (f32[2])
    v = Variable() {dtype = 1, shape = shape[2], value = tensor<f32[2]>[1.0, 2.0]} -> (f32[2])
    y = Mul(v:0, x:0) -> (f32[2])
    a = Assign(v:0, x:0) -> (f32[2])
    out = NetOutput(y:0, a:0)
  })")).ok());
  auto out = s.RunGraph(1, {Tensor::FromVector<float>({5, 5}, Shape{2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().data<float>()[1], 10.0f);
  EXPECT_EQ((*out)[1].tensor().data<float>()[1], 5.0f);
  out = s.RunGraph(1, {Tensor::FromVector<float>({5, 5}, Shape{2})});
  EXPECT_EQ((*out)[0].tensor().data<float>()[1], 25.0f);
}

TEST_F(SessionVariablesTest, StaticExecutorBindsVariableMemory) {
  Session s(*engines_, {{"ge.exec.static_model_ops_lower_limit", "0"}}, nullptr);
  ASSERT_TRUE(s.AddGraph(1, Parse(R"(graph g {
    x = Data() {index = 0} -> (f32[2,8])
    w = Variable() {dtype = 1, shape = shape[2,8], value = tensor<f32[2,8]>splat(1.5)} -> (f32[2,8])
    y = Add(x:0, w:0) -> (f32[2,8])
    out = NetOutput(y:0)
  })")).ok());
  const Tensor x = Tensor::FromVector<float>(std::vector<float>(16, 1.0f), Shape{2, 8});
  auto out = s.RunGraph(1, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(*s.RunsStatically(1));
  EXPECT_EQ((*out)[0].tensor().data<float>()[15], 2.5f);
  // The address table holds the variable's memory: a write shows in the next run.
  ASSERT_TRUE(s.SetVariable("w", Tensor::FromVector<float>(std::vector<float>(16, -4.0f), Shape{2, 8})).ok());
  out = s.RunGraph(1, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().data<float>()[15], -3.0f);
}

class SharedWeightsTest : public SessionVariablesTest {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ged_sv_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream out(dir_ / "w.bin", std::ios::binary);
    const float w[4] = {1, 2, 3, 4};
    out.write(reinterpret_cast<const char*>(w), sizeof(w));
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::unique_ptr<ir::Graph> WeightModel(const std::string& op) const {
    return Parse(R"(graph m {
      x = Data() {index = 0} -> (f32[4])
      w = FileConstant() {dtype = 1, shape = shape[4], file_path = ")" + (dir_ / "w.bin").string() + R"("} -> (f32[4])
      y = )" + op + R"((x:0, w:0) -> (f32[4])
      out = NetOutput(y:0)
    })");
  }
  fs::path dir_;
};

TEST_F(SharedWeightsTest, OneLoadServesTwoModelsAndTwoSessions) {
  auto& cache = variables::FileConstantCache::Global();
  const int64_t loads = cache.loads();
  {
    Session s1(*engines_, {}, nullptr);
    Session s2(*engines_, {}, nullptr);
    ASSERT_TRUE(s1.AddGraph(1, WeightModel("Add")).ok());
    ASSERT_TRUE(s1.AddGraph(2, WeightModel("Mul")).ok());
    ASSERT_TRUE(s2.AddGraph(1, WeightModel("Add")).ok());
    for (auto [s, g, expect] : {std::tuple{&s1, 1u, 5.0f}, {&s1, 2u, 4.0f}, {&s2, 1u, 5.0f}}) {
      auto out = s->RunGraph(g, {Tensor::FromVector<float>({1, 1, 1, 1}, Shape{4})});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ((*out)[0].tensor().data<float>()[3], expect);
    }
    EXPECT_EQ(cache.loads(), loads + 1);
  }
  EXPECT_EQ(cache.live(), 0u);
}

TEST_F(SessionVariablesTest, GemCarriesItsVariables) {
  auto model = compiler::BuildCompiledModel(Counter(), {}, *engines_, nullptr);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->variables.vars.size(), 1u);
  EXPECT_GE(model->variables.vars[0].logic_addr, variables::kVarMemoryLogicBase);
  const std::string path = (fs::temp_directory_path() / ("ged_vars_" + std::to_string(::getpid()) + ".gem")).string();
  ASSERT_TRUE(runtime::SaveGem(*model, path, *engines_).ok());
  auto loaded = runtime::LoadGem(path, *engines_);
  fs::remove(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->variables.vars.size(), 1u);
  EXPECT_EQ(loaded->variables.vars[0].name, "c");
  EXPECT_EQ(loaded->variables.vars[0].logic_addr, model->variables.vars[0].logic_addr);
  EXPECT_EQ(loaded->variables.vars[0].init_value.data<float>()[1], 20.0f);
  Session s(*engines_, {}, nullptr);
  ASSERT_TRUE(s.AddCompiledModel(7, *std::move(loaded)).ok());
  EXPECT_EQ(Run(s, 7, 0, 2), 22.0f);
  EXPECT_EQ(Run(s, 7, 0, 2), 24.0f);
}

// ge.externalWeight 1 and 2: the Const becomes a FileConstant in a file
// beside the .gem, and the loaded model (static: its program binds the
// weight through the session) computes what the inline one does.
TEST_F(SharedWeightsTest, ExternalWeightModelsRunLikeInlineOnes) {
  std::string weights;
  for (int i = 0; i < 512; ++i) weights += (i ? ", " : "") + std::to_string(i) + ".0";
  const std::string text = R"(graph m {
    x = Data() {index = 0} -> (f32[512])
    w = Const() {value = tensor<f32[512]>[)" + weights + R"(]} -> (f32[512])
    y = Add(x:0, w:0) -> (f32[512])
    out = NetOutput(y:0)
  })";
  const Tensor x = Tensor::FromVector<float>(std::vector<float>(512, 0.5f), Shape{512});
  for (int mode : {1, 2}) {
    auto model = compiler::BuildCompiledModel(Parse(text), {{"ge.exec.static_model_ops_lower_limit", "0"}}, *engines_,
                                              nullptr);
    ASSERT_TRUE(model.ok()) << model.status();
    const bool is_static = model->program.has_value();
    const std::string gem = (dir_ / ("m" + std::to_string(mode) + ".gem")).string();
    ASSERT_TRUE(runtime::ExternalizeWeights(*model, gem, mode).ok());
    EXPECT_EQ(model->graph->FindNode("w")->type(), "FileConstant");
    ASSERT_TRUE(runtime::SaveGem(*model, gem, *engines_).ok());
    EXPECT_LT(fs::file_size(gem), 2048u);
    EXPECT_TRUE(fs::exists(mode == 2 ? dir_ / "m2.weights.bin" : dir_ / "m1_weights" / "0.bin"));
    auto loaded = runtime::LoadGem(gem, *engines_);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    EXPECT_EQ(loaded->program.has_value(), is_static);
    Session s(*engines_, {}, nullptr);
    ASSERT_TRUE(s.AddCompiledModel(1, *std::move(loaded)).ok());
    auto out = s.RunGraph(1, {x});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].tensor().data<float>()[511], 511.5f) << "mode " << mode;
  }
  auto model = compiler::BuildCompiledModel(Parse(text), {}, *engines_, nullptr);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(runtime::ExternalizeWeights(*model, (dir_ / "x.gem").string(), 3).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ge::session

// Pipeline stages at run time: a graph with `_stage_level`s is compiled
// (StagePartitioner, placement, partitioning, flattening) and run by the
// DynamicExecutor in both forms the compiler leaves (the partitioned one,
// whose root runs one PartitionedCall per stage, also with the stages'
// static units on StaticExecutors as in mixed execution, and the flat one),
// with one and two inter-op threads and with a stage on an independent
// engine's stream. Stage 1 reads nothing from stage 0 and stage 0 is slow, so only
// the stage order keeps stage 1 from starting first: the probe kernels log
// when each node starts and ends, a StageObserver logs the stage
// boundaries and the sync points, and the test asserts both orders and the
// outputs. A graph whose later stage feeds an earlier one is refused.
#include "runtime/executor/pipeline_stages.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/ir/op_types.h"
#include "base/ir/text_format.h"
#include "base/status.h"
#include "compiler/build/graph_compiler.h"
#include "compiler/build/task_builder.h"
#include "runtime/executor/static_executor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/executor/dynamic_executor.h"

namespace ge::runtime {
namespace {

using ::testing::HasSubstr;

// What happened, in order, across every thread of a run.
class EventLog {
 public:
  void Add(std::string event) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(event));
  }
  std::vector<std::string> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(events_);
  }

 private:
  std::mutex mu_;
  std::vector<std::string> events_;
};

EventLog g_log;

// Neg and Relu on f32 of the test engines: log "start <node>" and
// "end <node>", sleeping `_sleep_ms` in between.
class ProbeKernel final : public engine::Kernel {
 public:
  explicit ProbeKernel(const ir::OpDesc& op)
      : name_(op.name()), negate_(op.type() == "Neg"), sleep_ms_(op.GetAttrOr<int64_t>("_sleep_ms", 0)) {}
  absl::Status Compute(engine::ExecuteContext& ctx) override {
    g_log.Add("start " + name_);
    if (sleep_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
    const Tensor& x = ctx.input(0);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      const float v = x.data<float>()[i];
      y.data<float>()[i] = negate_ ? -v : std::max(v, 0.0f);
    }
    g_log.Add("end " + name_);
    return absl::OkStatus();
  }

 private:
  std::string name_;
  bool negate_;
  int64_t sleep_ms_;
};

// "probe" (host), or with `independent` "probe_stream" (its own stream).
class ProbeEngine final : public engine::Engine {
 public:
  class Store final : public engine::OpsKernelInfoStore {
   public:
    absl::Status CheckSupported(const ir::Node& node) const override {
      if (node.type() == "Neg" || node.type() == "Relu") return absl::OkStatus();
      return absl::UnimplementedError("probe runs Neg and Relu only");
    }
    std::vector<std::string> SupportedOpTypes() const override { return {"Neg", "Relu"}; }
  };
  class Factory final : public engine::KernelFactory {
   public:
    absl::StatusOr<std::unique_ptr<engine::Kernel>> CreateKernel(const ir::OpDesc& op) const override {
      return std::unique_ptr<engine::Kernel>(new ProbeKernel(op));
    }
  };
  explicit ProbeEngine(bool independent) {
    attributes_.name = independent ? "probe_stream" : "probe";
    attributes_.independent_stream = independent;
    attributes_.compute_cost = 10;  // the fallback cost: placed where forced
  }
  const engine::OpsKernelInfoStore& info_store() const override { return store_; }
  const engine::KernelFactory& kernel_factory() const override { return factory_; }

 private:
  Store store_;
  Factory factory_;
};

class LoggingObserver final : public StageObserver {
 public:
  void StageStarted(int64_t level) override { g_log.Add("stage start " + std::to_string(level)); }
  void StageFinished(int64_t level) override { g_log.Add("stage end " + std::to_string(level)); }
  void SyncRecorded(int64_t level, std::string_view stream) override {
    g_log.Add("record " + std::to_string(level) + " on " + (stream == "host" ? "host" : "stream"));
  }
  void SyncWaited(int64_t level, std::string_view stream) override {
    g_log.Add("wait " + std::to_string(level) + " on " + (stream == "host" ? "host" : "stream"));
  }
};

// Stage 1 (listed first, so a topological order may well start with it)
// reads only x; stage 0 sleeps. `early_engine` / `late_engine` place the
// probes of stage 0 and stage 1. With `mixed`, each stage ends in a host_cpu
// Abs (dynamic by GE's host-CPU rule), so its probes form a static unit.
std::string StagedModel(const std::string& early_engine, const std::string& late_engine, bool mixed) {
  const std::string tail = mixed ? R"(
      early_out = Abs(early) {_ge_engine = "host_cpu", _stage_level = 0} -> (f32[3])
      late_out = Abs(late2) {_ge_engine = "host_cpu", _stage_level = 1} -> (f32[3])
      out = NetOutput(early_out, late_out)
    })"
                                 : R"(
      out = NetOutput(early, late2)
    })";
  return R"(graph main {
      x = Data() {index = 0} -> (f32[3])
      late = Relu(x) {_ge_engine = ")" + late_engine + R"(", _stage_level = 1} -> (f32[3])
      late2 = Neg(late) {_ge_engine = ")" + late_engine + R"(", _stage_level = 1} -> (f32[3])
      early = Neg(x) {_ge_engine = ")" + early_engine + R"(", _stage_level = 0, _sleep_ms = 40} -> (f32[3]))" +
         tail;
}

int IndexOf(const std::vector<std::string>& log, const std::string& event) {
  auto it = std::find(log.begin(), log.end(), event);
  return it == log.end() ? -1 : static_cast<int>(it - log.begin());
}

struct StageCase {
  const char* name;
  bool flat;              // run the flat graph, else the partitioned one
  int threads;            // ge.exec.inter_op_parallelism
  const char* early;      // engine of stage 0's probe
  const char* late;       // engine of stage 1's probes
  const char* recorded;   // where stage 0's sync point is recorded
  const char* waited;     // and where stage 1 waits for it
  bool mixed = false;     // the stages' static units on StaticExecutors
};

class PipelineStagesTest : public ::testing::TestWithParam<StageCase> {
 protected:
  static void SetUpTestSuite() {
    auto registry = engine::CreateEngineRegistry({}, {});
    ASSERT_TRUE(registry.ok()) << registry.status();
    engines_ = registry->release();
    ASSERT_TRUE(engines_->AddEngine(std::make_unique<ProbeEngine>(false), {}).ok());
    ASSERT_TRUE(engines_->AddEngine(std::make_unique<ProbeEngine>(true), {}).ok());
  }
  static void TearDownTestSuite() { delete engines_; }

  static engine::EngineRegistry* engines_;
};

engine::EngineRegistry* PipelineStagesTest::engines_ = nullptr;

TEST_P(PipelineStagesTest, StagesRunInOrderThroughTheirSyncPoints) {
  const StageCase& c = GetParam();
  auto graph = ir::ParseGraph(StagedModel(c.early, c.late, c.mixed));
  ASSERT_TRUE(graph.ok()) << graph.status();
  OptionMap option_map = {{"ge.exec.exclude_engines", "cpu_dense,cpu_vector"}};
  // Mixed: every static cluster stays a static unit, however small.
  if (c.mixed) option_map.emplace("ge.exec.static_model_ops_lower_limit", "1");
  auto options = compiler::CompileOptions::FromOptions(option_map);
  ASSERT_TRUE(options.ok()) << options.status();
  options->keep_partitioned_graph = true;
  compiler::GraphCompiler compiler(*engines_, nullptr);
  auto compiled = compiler.Compile(*std::move(graph), *options);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const ir::Graph& run_graph = c.flat ? *(*compiled)->graph : *(*compiled)->partitioned;
  if (!c.flat) {  // the root runs one call per stage
    int stage_calls = 0;
    for (const ir::Node* n : run_graph.nodes()) stage_calls += n->type() == ir::kPartitionedCall;
    ASSERT_EQ(stage_calls, 2);
  }
  LoggingObserver observer;
  ExecutorOptions exec_options;
  exec_options.inter_op_parallelism = c.threads;
  exec_options.stage_observer = &observer;
  device::CpuDevice device(device::DeviceSpec{"cpu:0", 0, 1});
  if (c.mixed) {  // as Session::LoadMixed does
    exec_options.static_loader = [&device](const ir::Graph& g) -> absl::StatusOr<std::unique_ptr<StaticExecutor>> {
      GE_ASSIGN_OR_RETURN(StaticProgram program, compiler::BuildStaticProgram(g, *engines_, 1));
      return StaticExecutor::Load(std::move(program), *engines_, device, {});
    };
  }
  auto exec = DynamicExecutor::Create(run_graph, *engines_, exec_options);
  ASSERT_TRUE(exec.ok()) << exec.status();
  if (c.mixed) {
    ASSERT_EQ((*exec)->num_static_subgraphs(), 2) << ir::PrintGraph(run_graph);  // one unit per stage
  }
  for (int run = 0; run < 2; ++run) {
    g_log.Take();
    auto out = (*exec)->Run({Tensor::FromVector<float>({-1, 2, -3}, Shape{3})});
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<std::string> log = g_log.Take();
    std::string joined;
    for (const std::string& e : log) joined += e + "; ";
    // Outputs: early = -x, late2 = -relu(x) (their absolute values when mixed).
    ASSERT_EQ(out->size(), 2u);
    EXPECT_EQ(std::vector<float>((*out)[0].tensor().data<float>(), (*out)[0].tensor().data<float>() + 3),
              c.mixed ? (std::vector<float>{1, 2, 3}) : (std::vector<float>{1, -2, 3}));
    EXPECT_EQ(std::vector<float>((*out)[1].tensor().data<float>(), (*out)[1].tensor().data<float>() + 3),
              c.mixed ? (std::vector<float>{0, 2, 0}) : (std::vector<float>{0, -2, 0}));
    // Stage 0 completes, its sync point is recorded and waited, then stage 1 runs.
    const std::vector<std::string> order = {"stage start 0",
                                            "start early",
                                            "end early",
                                            "stage end 0",
                                            std::string("record 0 on ") + c.recorded,
                                            std::string("wait 0 on ") + c.waited,
                                            "stage start 1",
                                            "start late",
                                            "end late",
                                            "start late2",
                                            "end late2",
                                            "stage end 1"};
    int previous = -1;
    for (const std::string& event : order) {
      const int at = IndexOf(log, event);
      EXPECT_GT(at, previous) << "'" << event << "' out of order in: " << joined;
      previous = std::max(previous, at);
    }
    // Exactly one sync point per stage boundary is waited for by each node of stage 1.
    EXPECT_EQ(std::count_if(log.begin(), log.end(), [](const std::string& e) { return e.rfind("wait 0", 0) == 0; }),
              c.flat ? 2 : 1)
        << joined;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Forms, PipelineStagesTest,
    ::testing::Values(StageCase{"FlatSequential", true, 1, "probe", "probe", "host", "host"},
                      StageCase{"FlatTwoThreads", true, 2, "probe", "probe", "host", "host"},
                      StageCase{"CallsSequential", false, 1, "probe", "probe", "host", "host"},
                      StageCase{"CallsTwoThreads", false, 2, "probe", "probe", "host", "host"},
                      StageCase{"FlatStage0OnStream", true, 2, "probe_stream", "probe", "stream", "host"},
                      StageCase{"FlatStage1OnStream", true, 2, "probe", "probe_stream", "host", "stream"},
                      StageCase{"CallsStage0OnStream", false, 1, "probe_stream", "probe", "stream", "host"},
                      StageCase{"CallsStage1OnStream", false, 2, "probe", "probe_stream", "host", "stream"},
                      StageCase{"MixedSequential", false, 1, "probe", "probe", "host", "host", true},
                      StageCase{"MixedTwoThreads", false, 2, "probe", "probe", "host", "host", true}),
    [](const ::testing::TestParamInfo<StageCase>& info) { return std::string(info.param.name); });

TEST_F(PipelineStagesTest, ALaterStageFeedingAnEarlierOneIsRefused) {
  auto graph = ir::ParseGraph(R"(graph main {
      x = Data() {index = 0} -> (f32[3])
      a = Relu(x) {_engine_name = "probe", _stage_level = 1} -> (f32[3])
      b = Neg(a) {_engine_name = "probe", _stage_level = 0} -> (f32[3])
      out = NetOutput(b)
    })");
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (int threads : {1, 2}) {
    ExecutorOptions options;
    options.inter_op_parallelism = threads;
    auto exec = DynamicExecutor::Create(**graph, *engines_, options);
    ASSERT_FALSE(exec.ok());
    EXPECT_EQ(exec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(exec.status().message()), HasSubstr("cannot run in ascending order"));
  }
}

TEST(PipelineStagesTableTest, OneLevelOrNoneHasNothingToOrder) {
  EXPECT_FALSE(PipelineStages({-1, -1}).active());
  EXPECT_FALSE(PipelineStages({3, -1, 3}).active());
  PipelineStages stages({-1, 5, 2, 5, 9});
  ASSERT_TRUE(stages.active());
  EXPECT_EQ(stages.num_stages(), 3);
  EXPECT_EQ(stages.stage_of(0), -1);
  EXPECT_EQ(stages.stage_of(1), 1);
  EXPECT_EQ(stages.level(0), 2);
  EXPECT_EQ(stages.members(1), (std::vector<int>{1, 3}));
}

}  // namespace
}  // namespace ge::runtime

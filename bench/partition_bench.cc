// partition_bench: how partitioning scales with graph size (10k, 100k, 1M
// nodes of mixed static and dynamic segments). Building the graph is not
// timed. Results and commands are in docs/perf.md.
#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <string>

#include "base/ir/flatten.h"
#include "bench/partition_bench_graph.h"
#include "compiler/partition/dynamic_shape_partitioner.h"
#include "compiler/partition/engine_partitioner.h"
#include "compiler/partition/subgraph_partitioner.h"

namespace ge::bench {
namespace {

std::unique_ptr<ir::Graph> Build(benchmark::State& state) {
  SyntheticGraphSpec spec;
  spec.nodes = state.range(0);
  return MakeSyntheticGraph(spec);
}

void Report(benchmark::State& state) {
  state.counters["nodes_per_s"] =
      benchmark::Counter(static_cast<double>(state.range(0)), benchmark::Counter::kIsIterationInvariantRate);
}

// Milliseconds spent in each partitioner step (last iteration).
class StepTimer final : public partition::PartitionObserver {
 public:
  void OnStep(std::string_view, std::string_view step, bool after, const ir::Graph&, partition::ClusterSet*) override {
    const auto now = std::chrono::steady_clock::now();
    if (after) ms_[std::string(step)] = std::chrono::duration<double, std::milli>(now - start_).count();
    start_ = now;
  }
  void Report(benchmark::State& state) const {
    for (const auto& [step, ms] : ms_) state.counters[step + "_ms"] = ms;
  }

 private:
  std::chrono::steady_clock::time_point start_;
  std::map<std::string, double> ms_;
};

void BM_DynamicShapePartition(benchmark::State& state) {
  int64_t subgraphs = 0;
  StepTimer timer;
  for (auto _ : state) {
    state.PauseTiming();
    auto g = Build(state);
    state.ResumeTiming();
    partition::DynamicShapePartitioner partitioner;
    partitioner.set_observer(&timer);
    auto made = partitioner.Partition(*g);
    if (!made.ok()) state.SkipWithError(std::string(made.status().message()).c_str());
    state.PauseTiming();
    if (made.ok()) subgraphs = static_cast<int64_t>(made->size());
    g.reset();
    state.ResumeTiming();
  }
  state.counters["subgraphs"] = static_cast<double>(subgraphs);
  timer.Report(state);
  Report(state);
}

void BM_PartitionAndFlatten(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    auto g = Build(state);
    state.ResumeTiming();
    partition::DynamicShapePartitioner partitioner;
    auto made = partitioner.Partition(*g);
    auto flat = made.ok() ? ir::FlattenPartitionedCalls(*g) : absl::StatusOr<int>(made.status());
    if (!flat.ok()) state.SkipWithError(std::string(flat.status().message()).c_str());
    state.PauseTiming();
    g.reset();
    state.ResumeTiming();
  }
  Report(state);
}

void BM_EnginePartitionSplitMerge(benchmark::State& state) {
  engine::EngineRegistry engines;
  partition::EnginePartitioner partitioner(engines, nullptr);
  int64_t subgraphs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto g = Build(state);
    // Two engines by segment, so that clusters break every few dozen nodes.
    int64_t i = 0;
    g->ForEachNode([&](ir::Node* n) {
      n->mutable_op_desc().SetAttr(ir::kAttrEngineName, std::string((i++ / 40) % 2 ? "engine_a" : "engine_b"));
    });
    state.ResumeTiming();
    auto part = partitioner.Split(*g, partition::EnginePartitionMode::kAtomic);
    absl::Status merged = part.ok() ? partitioner.MergeAfterSubGraphOptimization(*part) : part.status();
    if (!merged.ok()) state.SkipWithError(std::string(merged.message()).c_str());
    state.PauseTiming();
    if (part.ok()) subgraphs = part->num_pairs;
    g.reset();
    state.ResumeTiming();
  }
  state.counters["pairs"] = static_cast<double>(subgraphs);
  Report(state);
}

void BM_ElementwiseBackend(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    auto g = Build(state);
    state.ResumeTiming();
    auto made = partition::ApplySubgraphBackends(*g, {"elementwise"});
    if (!made.ok()) state.SkipWithError(std::string(made.status().message()).c_str());
    state.PauseTiming();
    g.reset();
    state.ResumeTiming();
  }
  Report(state);
}

#define GED_PARTITION_SIZES ->Arg(10000)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->UseRealTime()
BENCHMARK(BM_DynamicShapePartition) GED_PARTITION_SIZES;
BENCHMARK(BM_PartitionAndFlatten) GED_PARTITION_SIZES;
BENCHMARK(BM_EnginePartitionSplitMerge) GED_PARTITION_SIZES;
BENCHMARK(BM_ElementwiseBackend) GED_PARTITION_SIZES;

}  // namespace
}  // namespace ge::bench

BENCHMARK_MAIN();

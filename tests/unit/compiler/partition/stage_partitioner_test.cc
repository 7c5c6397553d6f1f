// StagePartitioner golden tests: upstream propagation of `_stage_level`,
// the tail stage, the stage calls' attributes, graphs without stages, and
// stages that cannot be cut out.
#include "compiler/partition/stage_partitioner.h"

#include "base/ir/verifier.h"
#include "gtest/gtest.h"
#include "tests/unit/compiler/partition/partition_test_util.h"

namespace ge::partition {
namespace {

using testing::Dedent;
using testing::MustParse;

TEST(StagePartitionerTest, PropagatesUpstreamAndFillsTheLastStage) {
  auto g = MustParse(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      k = Const() {value = tensor<f32[2]>[1.0, 2.0]} -> (f32[2])
      a = Add(x:0, k:0) {_stage_level = 0} -> (f32[2])
      b = Relu(a:0) -> (f32[2])
      d = Neg(b:0) {_stage_level = 1} -> (f32[2])
      e = Exp(d:0) -> (f32[2])
      out = NetOutput(e:0, a:0)
    }
  )");
  StagePartitioner partitioner;
  auto made = partitioner.Partition(*g);
  ASSERT_TRUE(made.ok()) << made.status();
  ASSERT_EQ(made->size(), 2u);
  ASSERT_TRUE(ir::VerifyGraph(*g).ok()) << ir::VerifyGraph(*g);
  // k feeds stage 0 and takes its level; b feeds stage 1; e follows the
  // last stage.
  EXPECT_EQ(ir::PrintGraph(*g), Dedent(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      out = NetOutput(stage_1:0, stage_0:0)
      stage_0 = PartitionedCall(x:0) {_force_unknown_shape = true, _partitioned_by = "StagePartitioner", _stage_level = 0} subgraphs(main_stage_0) -> (f32[2])
      stage_1 = PartitionedCall(stage_0:0) {_force_unknown_shape = true, _partitioned_by = "StagePartitioner", _stage_level = 1} subgraphs(main_stage_1) -> (f32[2])
    }

    graph main_stage_0 parent(main, stage_0) {
      k = Const() {_stage_level = 0, value = tensor<f32[2]>[1, 2]} -> (f32[2])
      a = Add(stage_0/in0:0, k:0) {_stage_level = 0} -> (f32[2])
      stage_0/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      stage_0/out = InnerNetOutput(a:0)
    }

    graph main_stage_1 parent(main, stage_1) {
      b = Relu(stage_1/in0:0) {_stage_level = 1} -> (f32[2])
      d = Neg(b:0) {_stage_level = 1} -> (f32[2])
      e = Exp(d:0) {_stage_level = 1} -> (f32[2])
      stage_1/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      stage_1/out = InnerNetOutput(e:0)
    }
  )"));
}

TEST(StagePartitionerTest, LeavesGraphsWithoutStagesAlone) {
  auto g = MustParse(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      a = Relu(x:0) -> (f32[2])
      out = NetOutput(a:0)
    }
  )");
  const std::string before = ir::PrintGraph(*g);
  StagePartitioner partitioner;
  auto made = partitioner.Partition(*g);
  ASSERT_TRUE(made.ok());
  EXPECT_TRUE(made->empty());
  EXPECT_EQ(ir::PrintGraph(*g), before);
}

TEST(StagePartitionerTest, RefusesStagesJoinedThroughAnother) {
  // a (stage 0) -> b (stage 1) -> c (stage 0): stage 0 cannot be one call.
  auto g = MustParse(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      a = Relu(x:0) {_stage_level = 0} -> (f32[2])
      b = Neg(a:0) {_stage_level = 1} -> (f32[2])
      c = Exp(b:0) {_stage_level = 0} -> (f32[2])
      out = NetOutput(c:0)
    }
  )");
  StagePartitioner partitioner;
  auto made = partitioner.Partition(*g);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(made.status().message()).find("stage 0 cannot be cut out: nodes 'a' and 'c' are joined "
                                                      "through stage 1"),
            std::string::npos)
      << made.status();
}

TEST(StagePartitionerTest, RefusesNegativeLevels) {
  auto g = MustParse(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      a = Relu(x:0) {_stage_level = -1} -> (f32[2])
      out = NetOutput(a:0)
    }
  )");
  StagePartitioner partitioner;
  EXPECT_EQ(partitioner.Partition(*g).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ge::partition

// DynamicShapePartitioner golden tests: text graph in, text graph out, for
// each classification rule, each merge step, the lower-limit threshold at
// 3, 4, 5 and -1, the whole-graph decisions and the data-flow re-split.
#include "compiler/partition/dynamic_shape_partitioner.h"

#include "base/ir/op_types.h"
#include "base/ir/verifier.h"
#include "gtest/gtest.h"
#include "tests/unit/compiler/partition/partition_test_util.h"

namespace ge::partition {
namespace {

using testing::Dedent;
using testing::MustParse;

// Partitions `text` and returns the printed result.
std::string Partition(std::string_view text, DynamicShapeOptions options = {}) {
  auto g = MustParse(text);
  if (g == nullptr) return "";
  DynamicShapePartitioner partitioner(options);
  auto made = partitioner.Partition(*g);
  EXPECT_TRUE(made.ok()) << made.status();
  absl::Status verified = ir::VerifyGraph(*g);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << ir::PrintGraph(*g);
  return ir::PrintGraph(*g);
}

DynamicShapeOptions Limit(int64_t limit) {
  DynamicShapeOptions o;
  o.static_model_ops_lower_limit = limit;
  o.reference_engine = "host_cpu";  // as the partition pipeline passes the reference engine's name
  return o;
}

// x -> a -> b -> c -> out, plus a -> d -> out; `b_line` defines b.
std::string Chain(std::string_view b_line) {
  return StrCat(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      a = Relu(x:0) -> (f32[2])
      )",
                b_line, R"(
      c = Neg(b:0) -> (f32[2])
      d = Exp(a:0) -> (f32[2])
      out = NetOutput(c:0, d:0)
    }
  )");
}

// The expected result for Chain(): {a, d} static, {b, c} dynamic (b by the
// rule under test, c by its unknown input or by absorption).
std::string ChainSplit(std::string_view b_line, std::string_view c_line) {
  return Dedent(StrCat(R"(
    graph main {
      attr _dynamic_shape_partitioned = true
      x = Data() {index = 0} -> (f32[2])
      out = NetOutput(dynamic_1:0, static_0:1)
      static_0 = PartitionedCall(x:0) {_is_unknown_shape = false, _partitioned_by = "DynamicShapePartitioner"} subgraphs(main_static_0) -> (f32[2], f32[2])
      dynamic_1 = PartitionedCall(static_0:0) {_is_unknown_shape = true, _partitioned_by = "DynamicShapePartitioner"} subgraphs(main_dynamic_1) -> (f32[2])
    }

    graph main_static_0 parent(main, static_0) {
      attr _is_unknown_shape = false
      a = Relu(static_0/in0:0) {_is_unknown_shape = false} -> (f32[2])
      d = Exp(a:0) {_is_unknown_shape = false} -> (f32[2])
      static_0/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      static_0/out = InnerNetOutput(a:0, d:0)
    }

    graph main_dynamic_1 parent(main, dynamic_1) {
      attr _is_unknown_shape = true
      )",
                       b_line, "\n      ", c_line, R"(
      dynamic_1/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      dynamic_1/out = InnerNetOutput(c:0)
    }
  )"));
}

// ---- The six classification rules ----

TEST(DynamicShapePartitionerTest, Rule1UnknownDims) {
  EXPECT_EQ(Partition(Chain("b = Relu(a:0) -> (f32[-1])"), Limit(2)),
            ChainSplit("b = Relu(dynamic_1/in0:0) {_is_unknown_shape = true} -> (f32[-1])",
                       "c = Neg(b:0) {_is_unknown_shape = true} -> (f32[2])"));
}

TEST(DynamicShapePartitionerTest, Rule1UnknownRankAndSequences) {
  for (const char* type : {"f32[?]", "seq<f32[2]>"}) {
    const std::string printed = Partition(Chain(StrCat("b = Relu(a:0) -> (", type, ")")), Limit(2));
    EXPECT_NE(printed.find(StrCat("b = Relu(dynamic_1/in0:0) {_is_unknown_shape = true} -> (", type, ")")),
              std::string::npos)
        << printed;
  }
}

TEST(DynamicShapePartitionerTest, Rule2ForceUnknownShape) {
  // c is static by itself; as a one-op static cluster (limit 2) it is
  // downgraded and joins b.
  EXPECT_EQ(Partition(Chain("b = Relu(a:0) {_force_unknown_shape = true} -> (f32[2])"), Limit(2)),
            ChainSplit("b = Relu(dynamic_1/in0:0) {_force_unknown_shape = true, _is_unknown_shape = true} -> (f32[2])",
                       "c = Neg(b:0) {_is_unknown_shape = true} -> (f32[2])"));
}

TEST(DynamicShapePartitionerTest, Rule4NoAddressRefresh) {
  EXPECT_EQ(Partition(Chain("b = Relu(a:0) {_is_support_addr_refresh = false} -> (f32[2])"), Limit(2)),
            ChainSplit("b = Relu(dynamic_1/in0:0) {_is_support_addr_refresh = false, _is_unknown_shape = true} -> "
                       "(f32[2])",
                       "c = Neg(b:0) {_is_unknown_shape = true} -> (f32[2])"));
}

TEST(DynamicShapePartitionerTest, Rule5HostCpuEngine) {
  EXPECT_EQ(Partition(Chain("b = Relu(a:0) {_engine_name = \"host_cpu\"} -> (f32[2])"), Limit(2)),
            ChainSplit("b = Relu(dynamic_1/in0:0) {_engine_name = \"host_cpu\", _is_unknown_shape = true} -> (f32[2])",
                       "c = Neg(b:0) {_is_unknown_shape = true} -> (f32[2])"));
}

constexpr const char* kTiling = R"(
graph main {
  x = Data() {index = 0} -> (f32[2,3])
  a = Relu(x:0) -> (f32[2,3])
  s = Shape(a:0) -> (i64[2])
  k = Const() {value = tensor<i64[2]>[3, 2]} -> (i64[2])
  b = Reshape(a:0, s:0) -> (f32[2,3])
  c = Reshape(a:0, k:0) -> (f32[3,2])
  out = NetOutput(b:0, c:0)
}
)";

TEST(DynamicShapePartitionerTest, Rule3TilingDependencyWithoutOffload) {
  // b's shape input is computed (a tiling dependency); c's is a Const.
  EXPECT_EQ(Partition(kTiling, Limit(2)), Dedent(R"(
    graph main {
      attr _dynamic_shape_partitioned = true
      x = Data() {index = 0} -> (f32[2,3])
      out = NetOutput(dynamic_1:0, static_0:2)
      static_0 = PartitionedCall(x:0) {_is_unknown_shape = false, _partitioned_by = "DynamicShapePartitioner"} subgraphs(main_static_0) -> (f32[2,3], i64[2], f32[3,2])
      dynamic_1 = PartitionedCall(static_0:0, static_0:1) {_is_unknown_shape = true, _partitioned_by = "DynamicShapePartitioner"} subgraphs(main_dynamic_1) -> (f32[2,3])
    }

    graph main_static_0 parent(main, static_0) {
      attr _is_unknown_shape = false
      a = Relu(static_0/in0:0) {_is_unknown_shape = false} -> (f32[2,3])
      s = Shape(a:0) {_is_unknown_shape = false} -> (i64[2])
      k = Const() {_is_unknown_shape = false, value = tensor<i64[2]>[3, 2]} -> (i64[2])
      c = Reshape(a:0, k:0) {_is_unknown_shape = false} -> (f32[3,2])
      static_0/in0 = InnerData() {_parent_index = 0} -> (f32[2,3])
      static_0/out = InnerNetOutput(a:0, s:0, c:0)
    }

    graph main_dynamic_1 parent(main, dynamic_1) {
      attr _is_unknown_shape = true
      b = Reshape(dynamic_1/in0:0, dynamic_1/in1:0) {_is_unknown_shape = true} -> (f32[2,3])
      dynamic_1/in0 = InnerData() {_parent_index = 0} -> (f32[2,3])
      dynamic_1/in1 = InnerData() {_parent_index = 1} -> (i64[2])
      dynamic_1/out = InnerNetOutput(b:0)
    }
  )"));
  // With tiling offload the graph stays whole and static, unless the node
  // opts out.
  DynamicShapeOptions offload = Limit(2);
  offload.tiling_offload = true;
  const std::string whole = Partition(kTiling, offload);
  EXPECT_NE(whole.find("attr _dynamic_shape_partitioned = false"), std::string::npos) << whole;
  std::string opted_out(kTiling);
  opted_out.replace(opted_out.find("b = Reshape(a:0, s:0)"), 21, "b = Reshape(a:0, s:0) {_support_tiling_offload = false}");
  EXPECT_NE(Partition(opted_out, offload).find("attr _dynamic_shape_partitioned = true"), std::string::npos);
}

TEST(DynamicShapePartitionerTest, Rule6DynamicNodeInASubgraph) {
  EXPECT_EQ(Partition(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      p = Data() {index = 1} -> (bool[])
      a = Relu(x:0) -> (f32[2])
      c = If(p:0, a:0) subgraphs(then_b, else_b) -> (f32[2])
      d = Exp(a:0) -> (f32[2])
      out = NetOutput(c:0, d:0)
    }
    graph then_b parent(main, c) {
      i = Data() {index = 0} -> (f32[2])
      r = Relu(i:0) {_force_unknown_shape = true} -> (f32[2])
      o = NetOutput(r:0)
    }
    graph else_b parent(main, c) {
      i = Data() {index = 0} -> (f32[2])
      o = NetOutput(i:0)
    }
  )",
                      Limit(2)),
            Dedent(R"(
    graph main {
      attr _dynamic_shape_partitioned = true
      x = Data() {index = 0} -> (f32[2])
      p = Data() {index = 1} -> (bool[])
      out = NetOutput(dynamic_1:0, static_0:1)
      static_0 = PartitionedCall(x:0) {_is_unknown_shape = false, _partitioned_by = "DynamicShapePartitioner"} subgraphs(main_static_0) -> (f32[2], f32[2])
      dynamic_1 = PartitionedCall(p:0, static_0:0) {_is_unknown_shape = true, _partitioned_by = "DynamicShapePartitioner"} subgraphs(main_dynamic_1) -> (f32[2])
    }

    graph then_b parent(main_dynamic_1, c) {
      i = Data() {index = 0} -> (f32[2])
      r = Relu(i:0) {_force_unknown_shape = true} -> (f32[2])
      o = NetOutput(r:0)
    }

    graph else_b parent(main_dynamic_1, c) {
      i = Data() {index = 0} -> (f32[2])
      o = NetOutput(i:0)
    }

    graph main_static_0 parent(main, static_0) {
      attr _is_unknown_shape = false
      a = Relu(static_0/in0:0) {_is_unknown_shape = false} -> (f32[2])
      d = Exp(a:0) {_is_unknown_shape = false} -> (f32[2])
      static_0/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      static_0/out = InnerNetOutput(a:0, d:0)
    }

    graph main_dynamic_1 parent(main, dynamic_1) {
      attr _is_unknown_shape = true
      c = If(dynamic_1/in0:0, dynamic_1/in1:0) {_is_unknown_shape = true} subgraphs(then_b, else_b) -> (f32[2])
      dynamic_1/in0 = InnerData() {_parent_index = 0} -> (bool[])
      dynamic_1/in1 = InnerData() {_parent_index = 1} -> (f32[2])
      dynamic_1/out = InnerNetOutput(c:0)
    }
  )"));
}

TEST(DynamicShapePartitionerTest, ReportsTheRuleOfEachNode) {
  auto g = MustParse(Chain("b = Relu(a:0) {_engine_name = \"host_cpu\"} -> (f32[2])"));
  DynamicShapePartitioner partitioner(Limit(2));
  ASSERT_TRUE(partitioner.Partition(*g).ok());
  const ir::Graph* dynamic = g->FindSubgraph("main_dynamic_1");
  ASSERT_NE(dynamic, nullptr);
  EXPECT_EQ(partitioner.RuleOf(dynamic->FindNode("b")), UnknownRule::kHostCpuEngine);
  EXPECT_EQ(partitioner.RuleOf(dynamic->FindNode("c")), UnknownRule::kNone);  // joined by downgrade
  EXPECT_EQ(UnknownRuleName(UnknownRule::kHostCpuEngine), "host CPU engine");
}

// ---- Merge steps ----

TEST(DynamicShapePartitionerTest, DynamicPathAbsorption) {
  // u1 -> s1..s4 -> u2 and u1 -> u2: the static chain lies on a path
  // between two dynamic clusters and is absorbed although it is big enough;
  // t1..t4 is not on such a path and stays static.
  EXPECT_EQ(Partition(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      u1 = Relu(x:0) {_force_unknown_shape = true} -> (f32[2])
      s1 = Neg(u1:0) -> (f32[2])
      s2 = Neg(s1:0) -> (f32[2])
      s3 = Neg(s2:0) -> (f32[2])
      s4 = Neg(s3:0) -> (f32[2])
      u2 = Add(s4:0, u1:0) {_force_unknown_shape = true} -> (f32[2])
      t1 = Exp(x:0) -> (f32[2])
      t2 = Exp(t1:0) -> (f32[2])
      t3 = Exp(t2:0) -> (f32[2])
      t4 = Exp(t3:0) -> (f32[2])
      out = NetOutput(u2:0, t4:0)
    }
  )"),
            Dedent(R"(
    graph main {
      attr _dynamic_shape_partitioned = true
      x = Data() {index = 0} -> (f32[2])
      out = NetOutput(dynamic_0:0, static_1:0)
      dynamic_0 = PartitionedCall(x:0) {_is_unknown_shape = true, _partitioned_by = "DynamicShapePartitioner"} subgraphs(main_dynamic_0) -> (f32[2])
      static_1 = PartitionedCall(x:0) {_is_unknown_shape = false, _partitioned_by = "DynamicShapePartitioner"} subgraphs(main_static_1) -> (f32[2])
    }

    graph main_dynamic_0 parent(main, dynamic_0) {
      attr _is_unknown_shape = true
      u1 = Relu(dynamic_0/in0:0) {_force_unknown_shape = true, _is_unknown_shape = true} -> (f32[2])
      s1 = Neg(u1:0) {_is_unknown_shape = true} -> (f32[2])
      s2 = Neg(s1:0) {_is_unknown_shape = true} -> (f32[2])
      s3 = Neg(s2:0) {_is_unknown_shape = true} -> (f32[2])
      s4 = Neg(s3:0) {_is_unknown_shape = true} -> (f32[2])
      u2 = Add(s4:0, u1:0) {_force_unknown_shape = true, _is_unknown_shape = true} -> (f32[2])
      dynamic_0/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      dynamic_0/out = InnerNetOutput(u2:0)
    }

    graph main_static_1 parent(main, static_1) {
      attr _is_unknown_shape = false
      t1 = Exp(static_1/in0:0) {_is_unknown_shape = false} -> (f32[2])
      t2 = Exp(t1:0) {_is_unknown_shape = false} -> (f32[2])
      t3 = Exp(t2:0) {_is_unknown_shape = false} -> (f32[2])
      t4 = Exp(t3:0) {_is_unknown_shape = false} -> (f32[2])
      static_1/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      static_1/out = InnerNetOutput(t4:0)
    }
  )"));
}

TEST(DynamicShapePartitionerTest, StaticSinglePathMerge) {
  // s1 and s3 may not merge: s1 -> u -> s3 is a second path. s3 and s4
  // merge along their single edge.
  EXPECT_EQ(Partition(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      s1 = Neg(x:0) -> (f32[2])
      u = Relu(s1:0) {_force_unknown_shape = true} -> (f32[2])
      s3 = Add(s1:0, u:0) -> (f32[2])
      s4 = Exp(s3:0) -> (f32[2])
      out = NetOutput(s4:0)
    }
  )",
                      Limit(1)),
            Dedent(R"(
    graph main {
      attr _dynamic_shape_partitioned = true
      x = Data() {index = 0} -> (f32[2])
      out = NetOutput(static_2:0)
      static_0 = PartitionedCall(x:0) {_is_unknown_shape = false, _partitioned_by = "DynamicShapePartitioner"} subgraphs(main_static_0) -> (f32[2])
      dynamic_1 = PartitionedCall(static_0:0) {_is_unknown_shape = true, _partitioned_by = "DynamicShapePartitioner"} subgraphs(main_dynamic_1) -> (f32[2])
      static_2 = PartitionedCall(static_0:0, dynamic_1:0) {_is_unknown_shape = false, _partitioned_by = "DynamicShapePartitioner"} subgraphs(main_static_2) -> (f32[2])
    }

    graph main_static_0 parent(main, static_0) {
      attr _is_unknown_shape = false
      s1 = Neg(static_0/in0:0) {_is_unknown_shape = false} -> (f32[2])
      static_0/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      static_0/out = InnerNetOutput(s1:0)
    }

    graph main_dynamic_1 parent(main, dynamic_1) {
      attr _is_unknown_shape = true
      u = Relu(dynamic_1/in0:0) {_force_unknown_shape = true, _is_unknown_shape = true} -> (f32[2])
      dynamic_1/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      dynamic_1/out = InnerNetOutput(u:0)
    }

    graph main_static_2 parent(main, static_2) {
      attr _is_unknown_shape = false
      s3 = Add(static_2/in0:0, static_2/in1:0) {_is_unknown_shape = false} -> (f32[2])
      s4 = Exp(s3:0) {_is_unknown_shape = false} -> (f32[2])
      static_2/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      static_2/in1 = InnerData() {_parent_index = 1} -> (f32[2])
      static_2/out = InnerNetOutput(s4:0)
    }
  )"));
}

// d1 -> s1..s4 (+ a Const, not an op) -> d2: a static cluster of four ops
// between two dynamic ones that are not directly connected.
constexpr const char* kThreshold = R"(
graph main {
  x = Data() {index = 0} -> (f32[2])
  d1 = Relu(x:0) {_force_unknown_shape = true} -> (f32[2])
  k = Const() {value = tensor<f32[2]>[1.0, 2.0]} -> (f32[2])
  s1 = Add(d1:0, k:0) -> (f32[2])
  s2 = Neg(s1:0) -> (f32[2])
  s3 = Neg(s2:0) -> (f32[2])
  s4 = Neg(s3:0) -> (f32[2])
  d2 = Relu(s4:0) {_force_unknown_shape = true} -> (f32[2])
  out = NetOutput(d2:0)
}
)";

// The call lines of the partitioned root, one per subgraph.
std::string Calls(const std::string& printed) {
  std::string out;
  size_t p = 0;
  while ((p = printed.find(" = PartitionedCall(", p)) != std::string::npos) {
    const size_t begin = printed.rfind('\n', p) + 3;
    const size_t kind = printed.find("_is_unknown_shape = ", p) + 20;
    out += printed.substr(begin, p - begin) + (printed.compare(kind, 4, "true") == 0 ? "(dynamic) " : "(static) ");
    ++p;
  }
  return out;
}

TEST(DynamicShapePartitionerTest, LowerLimitThreshold) {
  EXPECT_EQ(Calls(Partition(kThreshold, Limit(3))), "dynamic_0(dynamic) static_1(static) dynamic_2(dynamic) ");
  EXPECT_EQ(Calls(Partition(kThreshold, Limit(4))), "dynamic_0(dynamic) static_1(static) dynamic_2(dynamic) ");
  // Four ops < 5: downgraded, then absorbed with both neighbours.
  EXPECT_EQ(Calls(Partition(kThreshold, Limit(5))), "dynamic_0(dynamic) ");
  EXPECT_EQ(Calls(Partition(kThreshold, Limit(-1))), "dynamic_0(dynamic) ");
  // The default is 4.
  EXPECT_EQ(Calls(Partition(kThreshold)), "dynamic_0(dynamic) static_1(static) dynamic_2(dynamic) ");
}

TEST(DynamicShapePartitionerTest, LowerLimitFullText) {
  EXPECT_EQ(Partition(kThreshold, Limit(5)), Dedent(R"(
    graph main {
      attr _dynamic_shape_partitioned = true
      x = Data() {index = 0} -> (f32[2])
      out = NetOutput(dynamic_0:0)
      dynamic_0 = PartitionedCall(x:0) {_is_unknown_shape = true, _partitioned_by = "DynamicShapePartitioner"} subgraphs(main_dynamic_0) -> (f32[2])
    }

    graph main_dynamic_0 parent(main, dynamic_0) {
      attr _is_unknown_shape = true
      d1 = Relu(dynamic_0/in0:0) {_force_unknown_shape = true, _is_unknown_shape = true} -> (f32[2])
      k = Const() {_is_unknown_shape = true, value = tensor<f32[2]>[1, 2]} -> (f32[2])
      s1 = Add(d1:0, k:0) {_is_unknown_shape = true} -> (f32[2])
      s2 = Neg(s1:0) {_is_unknown_shape = true} -> (f32[2])
      s3 = Neg(s2:0) {_is_unknown_shape = true} -> (f32[2])
      s4 = Neg(s3:0) {_is_unknown_shape = true} -> (f32[2])
      d2 = Relu(s4:0) {_force_unknown_shape = true, _is_unknown_shape = true} -> (f32[2])
      dynamic_0/in0 = InnerData() {_parent_index = 0} -> (f32[2])
      dynamic_0/out = InnerNetOutput(d2:0)
    }
  )"));
}

TEST(DynamicShapePartitionerTest, ControlFlowGroupMerge) {
  // a and c share no edge: without a group they are two static subgraphs;
  // in one control-flow group they become one, dynamic when either is.
  constexpr const char* kGroup = R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      a = Relu(x:0) {A} -> (f32[2])
      c = Neg(x:0) {C} -> (f32[2])
      z = Exp(x:0) {_force_unknown_shape = true} -> (f32[2])
      out = NetOutput(a:0, c:0, z:0)
    }
  )";
  auto with = [&](std::string_view a_attrs, std::string_view c_attrs) {
    std::string text(kGroup);
    text.replace(text.find("{A}"), 3, StrCat("{", a_attrs, "}"));
    text.replace(text.find("{C}"), 3, StrCat("{", c_attrs, "}"));
    return Calls(Partition(text, Limit(1)));
  };
  EXPECT_EQ(with("", ""), "static_0(static) static_1(static) dynamic_2(dynamic) ");
  EXPECT_EQ(with("_control_flow_group = 1", "_control_flow_group = 1"), "static_0(static) dynamic_1(dynamic) ");
  EXPECT_EQ(with("_control_flow_group = 1", "_control_flow_group = 2"),
            "static_0(static) static_1(static) dynamic_2(dynamic) ");
  EXPECT_EQ(with("_control_flow_group = 1, _force_unknown_shape = true", "_control_flow_group = 1"),
            "dynamic_0(dynamic) dynamic_1(dynamic) ");
}

TEST(DynamicShapePartitionerTest, RefVariableJoinsItsConsumer) {
  constexpr const char* kVariable = R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      v = Variable() {dtype = 1, shape = shape[2]FLAG} -> (f32[2])
      d = Add(x:0, v:0) {_force_unknown_shape = true} -> (f32[2])
      out = NetOutput(d:0)
    }
  )";
  std::string plain(kVariable);
  plain.replace(plain.find("FLAG"), 4, "");
  std::string ref(kVariable);
  ref.replace(ref.find("FLAG"), 4, ", _ref_variable = true");
  // With limit 0 nothing is downgraded: the plain Variable stays a static
  // subgraph of its own, the ref variable joins its consumer.
  EXPECT_EQ(Calls(Partition(plain, Limit(0))), "static_0(static) dynamic_1(dynamic) ");
  EXPECT_EQ(Calls(Partition(ref, Limit(0))), "dynamic_0(dynamic) ");
}

// ---- Whole-graph decisions ----

constexpr const char* kAllStatic = R"(
graph main {
  x = Data() {index = 0} -> (f32[2])
  a = Relu(x:0) -> (f32[2])
  b = Neg(a:0) -> (f32[2])
  c = Exp(b:0) -> (f32[2])
  out = NetOutput(c:0)
}
)";

TEST(DynamicShapePartitionerTest, AllStaticGraphIsNotSplit) {
  EXPECT_EQ(Partition(kAllStatic), Dedent(R"(
    graph main {
      attr _dynamic_shape_partitioned = false
      attr _is_unknown_shape = false
      x = Data() {index = 0} -> (f32[2])
      a = Relu(x:0) -> (f32[2])
      b = Neg(a:0) -> (f32[2])
      c = Exp(b:0) -> (f32[2])
      out = NetOutput(c:0)
    }
  )"));
}

TEST(DynamicShapePartitionerTest, HostSchedulingThreshold) {
  DynamicShapeOptions options;
  options.host_scheduling_max_threshold = 4;  // three ops < 4: one dynamic graph
  EXPECT_EQ(Calls(Partition(kAllStatic, options)), "dynamic_0(dynamic) ");
  auto g = MustParse(kAllStatic);
  DynamicShapePartitioner partitioner(options);
  ASSERT_TRUE(partitioner.Partition(*g).ok());
  EXPECT_EQ(partitioner.RuleOf(g->FindSubgraph("main_dynamic_0")->FindNode("a")), UnknownRule::kHostScheduling);
  options.host_scheduling_max_threshold = 3;  // not below: static, unsplit
  EXPECT_NE(Partition(kAllStatic, options).find("attr _dynamic_shape_partitioned = false"), std::string::npos);
}

// Gear branches: an all-static graph becomes one static unit, even with a
// cluster that small (the lower limit does not downgrade it).
TEST(DynamicShapePartitionerTest, WrapStaticGraphMakesOneStaticUnit) {
  DynamicShapeOptions options = Limit(8);
  options.wrap_static_graph = true;
  EXPECT_EQ(Calls(Partition(kAllStatic, options)), "static_0(static) ");
  // A graph with a dynamic node splits as usual.
  EXPECT_NE(Calls(Partition(Chain("b = Relu(a:0) -> (f32[-1])"), options)).find("(dynamic)"), std::string::npos);
}

// ---- Data-flow re-split ----

TEST(DynamicShapePartitionerTest, DataFlowOpsStraddlingAreResplit) {
  constexpr const char* kStack = R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      h = Stack() -> (i32[])
      hi = Identity(h:0) -> (i32[])
      push = StackPush(hi:0, x:0) {_force_unknown_shape = true} -> (f32[2])
      pop = StackPop(h:0) ^push -> (f32[2])
      close = StackClose(h:0) ^pop
      y = Neg(pop:0) -> (f32[2])
      out = NetOutput(y:0)
    }
  )";
  auto g = MustParse(kStack);
  DynamicShapePartitioner partitioner(Limit(1));
  auto made = partitioner.Partition(*g);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(partitioner.resplits(), 1);
  // Every data-flow op of the stack is forced dynamic (Identity is not a
  // data-flow op but sits between them and follows); y stays static.
  for (const PartitionedSubgraph& s : *made) {
    const bool dynamic = s.call->op_desc().GetAttrOr<bool>("_is_unknown_shape", false);
    s.subgraph->ForEachNode([&](ir::Node* n) {
      if (IsDataFlowOp(*n)) {
        EXPECT_TRUE(dynamic) << n->name() << " in " << s.subgraph->name();
        EXPECT_TRUE(n->op_desc().GetAttrOr<bool>("_force_unknown_shape", false)) << n->name();
      }
      if (n->name() == "y") {
        EXPECT_FALSE(dynamic);
      }
    });
  }
  EXPECT_EQ(Calls(ir::PrintGraph(*g)), "dynamic_0(dynamic) static_1(static) ");
}

}  // namespace
}  // namespace ge::partition

namespace ge::partition {
namespace {

// A Const read by nodes of two units (one static, one dynamic: host_cpu)
// is copied into each reader's unit: no call reads a Const through an
// input (the reader's kernel then sees a constant, not a unit input bound
// to another buffer every run), each copy holds the same tensor storage,
// and a reader that stays outside every unit (the NetOutput) still reads it
// through its unit's output.
TEST(DynamicShapePartitionerTest, AConstReadByTwoUnitsIsCopiedIntoEach) {
  auto g = MustParse(R"(
    graph main {
      x = Data() {index = 0} -> (f32[2])
      w = Const() {value = tensor<f32[2]>[1.5, -2]} -> (f32[2])
      a = Mul(x:0, w:0) -> (f32[2])
      b = Add(a:0, w:0) {_engine_name = "host_cpu"} -> (f32[2])
      c = Sub(b:0, w:0) {_engine_name = "host_cpu"} -> (f32[2])
      out = NetOutput(c:0, w:0)
    }
  )");
  ASSERT_NE(g, nullptr);
  const Tensor original = *g->FindNode("w")->op_desc().GetAttr<Tensor>(ir::kAttrValue);
  DynamicShapePartitioner partitioner(Limit(1));
  auto made = partitioner.Partition(*g);
  ASSERT_TRUE(made.ok()) << made.status();
  absl::Status verified = ir::VerifyGraph(*g);
  ASSERT_TRUE(verified.ok()) << verified << "\n" << ir::PrintGraph(*g);
  int calls = 0, readers = 0;
  for (ir::Node* call : g->nodes()) {
    if (call->type() != ir::kPartitionedCall) continue;
    ++calls;
    for (int i = 0; i < call->num_inputs(); ++i) {
      ASSERT_NE(call->input(i).node, nullptr);
      EXPECT_NE(call->input(i).node->type(), ir::kConst) << call->name() << " input " << i << "\n"
                                                         << ir::PrintGraph(*g);
    }
    const ir::Graph* sub = g->FindSubgraph(call->op_desc().subgraph_names()[0]);
    ASSERT_NE(sub, nullptr);
    const std::optional<bool> unit_dynamic = call->op_desc().GetAttr<bool>("_is_unknown_shape");
    ASSERT_TRUE(unit_dynamic.has_value()) << call->name();
    for (const ir::Node* n : sub->nodes()) {
      if (n->type() != "Mul" && n->type() != "Add" && n->type() != "Sub") continue;
      ++readers;
      const ir::Node* w = n->input(1).node;
      ASSERT_NE(w, nullptr);
      EXPECT_EQ(w->type(), ir::kConst) << n->name() << "\n" << ir::PrintGraph(*g);
      EXPECT_EQ(w->owner_graph(), sub) << n->name();
      // The copy takes its unit's verdict like the unit's own nodes.
      EXPECT_EQ(w->op_desc().GetAttr<bool>("_is_unknown_shape"), unit_dynamic) << n->name();
      const std::optional<Tensor> value = w->op_desc().GetAttr<Tensor>(ir::kAttrValue);
      ASSERT_TRUE(value.has_value());
      EXPECT_EQ(value->raw_data(), original.raw_data()) << n->name() << ": a copy of the storage, not of the values";
    }
  }
  EXPECT_EQ(calls, 2) << ir::PrintGraph(*g);
  EXPECT_EQ(readers, 3);
  // The NetOutput reads w through a call output.
  const ir::Node* out = g->OutputNode();
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->input(1).node->type(), ir::kPartitionedCall) << ir::PrintGraph(*g);
}

}  // namespace
}  // namespace ge::partition

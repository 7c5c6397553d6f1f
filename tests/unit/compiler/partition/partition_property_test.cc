// Property tests on thousands of random DAGs with random dynamic marks:
// the dynamic shape partitioner leaves no cluster cycle (the partitioned
// graph verifies, so the calls form a DAG), puts every node in exactly one
// subgraph, never puts a dynamic node in a static subgraph, and the
// partitioned graph, flattened, executes to the same outputs as the
// original on the built engines. The subgraph API gets the same checks.
#include <optional>
#include <random>
#include <vector>

#include "base/ir/flatten.h"
#include "base/ir/op_types.h"
#include "base/ir/text_format.h"
#include "base/ir/verifier.h"
#include "compiler/partition/dynamic_shape_partitioner.h"
#include "compiler/partition/partition_report.h"
#include "compiler/partition/subgraph_partitioner.h"
#include "gtest/gtest.h"
#include "tests/unit/compiler/partition/exec_test_util.h"

namespace ge::partition {
namespace {

using testing::BuiltEngines;
using testing::Execute;
using testing::RandomGraph;
using testing::RandomInputs;
using testing::SameOutputs;

struct Placement {
  const ir::Graph* graph;
  int count;
  std::vector<const void*> storage;  // a Const's value storage, per occurrence
};

const void* ConstStorage(const ir::Node& n) {
  if (n.type() != ir::kConst) return nullptr;
  const std::optional<Tensor> value = n.op_desc().GetAttr<Tensor>(ir::kAttrValue);
  return value ? value->raw_data() : nullptr;
}

// Checks that every node of `original` (by name) sits in exactly one graph
// of `partitioned`'s tree: Data and NetOutput in the root, the others in a
// partition subgraph (when `all_in_subgraphs`). A Const may also appear in
// the units that read it, each copy holding the same storage (the
// partitioners copy a Const into every unit that reads it).
void ExpectEachNodeOnce(const ir::Graph& original, const ir::Graph& partitioned, bool all_in_subgraphs,
                        const std::string& context) {
  StringMap<Placement> where;
  auto note = [&](const ir::Graph& g) {
    g.ForEachNode([&](ir::Node* n) {
      auto& p = where[n->name()];
      p.graph = &g;
      ++p.count;
      p.storage.push_back(ConstStorage(*n));
    });
  };
  note(partitioned);
  for (const ir::Graph* g : partitioned.subgraphs()) note(*g);
  original.ForEachNode([&](ir::Node* n) {
    auto it = where.find(n->name());
    ASSERT_TRUE(it != where.end()) << context << ": node " << n->name() << " is lost";
    if (n->type() == ir::kConst) {
      for (const void* storage : it->second.storage) {
        EXPECT_EQ(storage, it->second.storage.front()) << context << ": Const " << n->name() << " was copied by value";
      }
    } else {
      EXPECT_EQ(it->second.count, 1) << context << ": node " << n->name() << " appears more than once";
    }
    const bool io = n->type() == ir::kData || n->type() == ir::kNetOutput;
    if (io) {
      EXPECT_EQ(it->second.graph, &partitioned) << context << ": " << n->name() << " left the root";
    } else if (all_in_subgraphs) {
      EXPECT_NE(it->second.graph, &partitioned) << context << ": " << n->name() << " is in no subgraph";
    }
  });
}

ir::FlattenOptions ExecutableFlatten() {
  ir::FlattenOptions o;
  o.noop_attrs["_engine_name"] = std::string("ge_local");
  o.always_insert_noops = true;  // exercise the NoOps on the executor too
  return o;
}

TEST(PartitionPropertyTest, DynamicShapePartitionKeepsMeaning) {
  std::mt19937 rng(20240611);
  const int64_t limits[] = {-1, 1, 2, 3, 4, 8};
  int split_graphs = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    auto original = RandomGraph(rng);
    auto g = original->Clone();
    DynamicShapeOptions options;
    options.static_model_ops_lower_limit = limits[rng() % 6];
    options.reference_engine = "";  // rule 5 would make every node dynamic here
    const std::string context = "trial " + std::to_string(trial) + " limit " +
                                std::to_string(options.static_model_ops_lower_limit);
    DynamicShapePartitioner partitioner(options);
    auto made = partitioner.Partition(*g);
    ASSERT_TRUE(made.ok()) << context << ": " << made.status();
    ASSERT_TRUE(ir::VerifyGraph(*g).ok()) << context << ": " << ir::VerifyGraph(*g);
    split_graphs += !made->empty();
    ExpectEachNodeOnce(*original, *g, /*all_in_subgraphs=*/!made->empty(), context);
    for (const PartitionedSubgraph& s : *made) {
      const bool dynamic = s.call->op_desc().GetAttrOr<bool>("_is_unknown_shape", false);
      s.subgraph->ForEachNode([&](ir::Node* n) {
        if (!dynamic) {
          EXPECT_FALSE(n->op_desc().GetAttrOr<bool>("_force_unknown_shape", false))
              << context << ": dynamic node " << n->name() << " in static " << s.subgraph->name();
        }
      });
    }
    if (options.static_model_ops_lower_limit == -1 && !made->empty()) {
      EXPECT_EQ(made->size(), 1u) << context;
    }
    auto flat = ir::FlattenPartitionedCalls(*g, ExecutableFlatten());
    ASSERT_TRUE(flat.ok()) << context << ": " << flat.status();
    ASSERT_TRUE(ir::VerifyGraph(*g).ok()) << context << ": " << ir::VerifyGraph(*g);
    std::vector<Value> inputs = RandomInputs(*original, rng);
    auto expected = Execute(*original, BuiltEngines(), inputs);
    ASSERT_TRUE(expected.ok()) << context << ": " << expected.status();
    auto actual = Execute(*g, BuiltEngines(), inputs);
    ASSERT_TRUE(actual.ok()) << context << ": " << actual.status();
    std::string why;
    ASSERT_TRUE(SameOutputs(*expected, *actual, &why)) << context << ": " << why;
  }
  EXPECT_GT(split_graphs, 1500);
}

TEST(PartitionPropertyTest, SubgraphBackendKeepsMeaning) {
  std::mt19937 rng(777);
  // Relu, Neg and Add regions; control edges and far-reaching inputs make
  // candidate sets that must be split to stay acyclic.
  ContainOpProperty property("region", {"Relu", "Neg", "Add"});
  int splits = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    testing::RandomGraphSpec spec;
    spec.control_probability = 0.15;
    auto original = RandomGraph(rng, spec);
    auto g = original->Clone();
    const std::string context = "trial " + std::to_string(trial);
    SubgraphPartitioner partitioner(property);
    auto made = partitioner.Partition(*g);
    ASSERT_TRUE(made.ok()) << context << ": " << made.status();
    ASSERT_TRUE(ir::VerifyGraph(*g).ok()) << context << ": " << ir::VerifyGraph(*g) << "\n" << ir::PrintGraph(*original);
    splits += partitioner.split_sets();
    ExpectEachNodeOnce(*original, *g, /*all_in_subgraphs=*/false, context);
    for (const PartitionedSubgraph& s : *made) {
      s.subgraph->ForEachNode([&](ir::Node* n) {
        const std::string& t = n->type();
        EXPECT_TRUE(t == "Relu" || t == "Neg" || t == "Add" || t == "InnerData" || t == "InnerNetOutput")
            << context << ": " << t << " selected";
      });
    }
    auto flat = ir::FlattenPartitionedCalls(*g, ExecutableFlatten());
    ASSERT_TRUE(flat.ok()) << context << ": " << flat.status();
    std::vector<Value> inputs = RandomInputs(*original, rng);
    auto expected = Execute(*original, BuiltEngines(), inputs);
    auto actual = Execute(*g, BuiltEngines(), inputs);
    ASSERT_TRUE(expected.ok() && actual.ok()) << context;
    std::string why;
    ASSERT_TRUE(SameOutputs(*expected, *actual, &why)) << context << ": " << why;
  }
  EXPECT_GT(splits, 0);  // the cycle-splitting path was exercised
}

}  // namespace
}  // namespace ge::partition

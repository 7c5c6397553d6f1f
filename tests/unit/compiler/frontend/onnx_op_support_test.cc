// Tests of GedInferenceCoversGraph: when the importer may type a model with
// ged's own shape inference instead of libonnx's.
#include "compiler/frontend/onnx_op_support.h"

#include "compiler/frontend/onnx_model_check.h"
#include "gtest/gtest.h"
#include "tests/testing/onnx_builder.h"

namespace ge::frontend {
namespace {

using namespace ::ge::onnx_builder;  // NOLINT

bool Covers(const onnx::ModelProto& model) {
  absl::StatusOr<OpsetMap> opsets = CheckOpsets(model);
  EXPECT_TRUE(opsets.ok()) << opsets.status();
  if (!opsets.ok()) return false;
  return GedInferenceCoversGraph(model.graph(), *opsets, ops::OpRegistry::Global(),
                                 BuiltinOpsetAdapters());
}

onnx::ModelProto ElementwiseModel(int64_t opset) {
  onnx::ModelProto model = MakeModel(opset);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {2, 3});
  AddNode(g, "Relu", {"x"}, {"r"});
  AddNode(g, "Add", {"r", "x"}, {"a"});
  AddOutputOfRank(g, "a", kF32, 2);
  return model;
}

TEST(GedInferenceCoversGraphTest, CanonicalDefaultDomainOpsAreCovered) {
  onnx::ModelProto model = ElementwiseModel(17);
  AttrTensor(AddNode(model.mutable_graph(), "Constant", {}, {"c"}), "value",
             FloatTensorProto("", {1, 2}, {2}));
  EXPECT_TRUE(Covers(model));
}

TEST(GedInferenceCoversGraphTest, AnEmptyGraphIsCovered) { EXPECT_TRUE(Covers(MakeModel(17))); }

TEST(GedInferenceCoversGraphTest, AnOpAnAdapterRewritesIsNot) {
  // Squeeze-11 takes axes as an attribute; its adapter reads ONNX's types.
  onnx::ModelProto model = MakeModel(11);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {2, 1, 3});
  AttrInts(AddNode(g, "Squeeze", {"x"}, {"s"}), "axes", {1});
  AddOutputOfRank(g, "s", kF32, 2);
  EXPECT_FALSE(Covers(model));
}

TEST(GedInferenceCoversGraphTest, ANodeOwningASubgraphIsNot) {
  onnx::ModelProto model = MakeModel(17);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "c", kBool, {});
  AddInput(g, "x", kF32, {2});
  onnx::NodeProto* if_node = AddNode(g, "If", {"c"}, {"y"});
  for (const char* branch : {"then_branch", "else_branch"}) {
    onnx::GraphProto* body = AttrGraph(if_node, branch);
    AddNode(body, "Relu", {"x"}, {std::string(branch) + "_out"});
    AddOutputOfRank(body, std::string(branch) + "_out", kF32, 1);
  }
  AddOutputOfRank(g, "y", kF32, 1);
  EXPECT_FALSE(Covers(model));
}

TEST(GedInferenceCoversGraphTest, ANodeOfAnotherDomainIsNot) {
  onnx::ModelProto model = ElementwiseModel(17);
  auto* imp = model.add_opset_import();
  imp->set_domain("com.example");
  imp->set_version(1);
  AddNode(model.mutable_graph(), "Relu", {"a"}, {"b"})->set_domain("com.example");
  EXPECT_FALSE(Covers(model));
}

}  // namespace
}  // namespace ge::frontend

// Cross-check of ged's shape inference against ONNX's: a model is imported
// without ONNX shape inference (only declared types), ged's ops::InferShapes
// fills every value's type, and each type must equal what libonnx's shape
// inference writes into value_info for the same tensor name.
#include <map>

#include "base/ir/graph_equal.h"
#include "base/ir/op_types.h"
#include "base/ops/op_registry.h"
#include "compiler/frontend/onnx_importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/shape_inference/implementation.h"
#include "tests/testing/onnx_builder.h"

namespace ge::frontend {
namespace {

using namespace ::ge::onnx_builder;  // NOLINT

onnx::TensorProto Int64Proto(const std::string& name, const std::vector<int64_t>& values) {
  return TensorToProto(
      Tensor::FromVector<int64_t>(values, Shape{static_cast<int64_t>(values.size())}), name);
}

// Forgets every type ONNX inferred: only Data, Const and FileConstant keep
// theirs (what a graph has before inference).
void ForgetInferredTypes(ir::Graph& graph) {
  for (ir::Node* node : graph.nodes()) {
    if (node->type() == ir::kData || node->type() == ir::kConst ||
        node->type() == ir::kFileConstant) {
      continue;
    }
    ir::OpDesc& op = node->mutable_op_desc();
    for (ir::IoDesc& in : op.mutable_inputs()) in.type = UnknownValueType();
    for (ir::IoDesc& out : op.mutable_outputs()) out.type = UnknownValueType();
  }
}

// The import types a model that ged's inference covers with that inference
// instead of libonnx's (OnnxImportOptions): the graph must be the one the
// import with libonnx's inference gives.
void ExpectSameImportEitherWay(const onnx::ModelProto& model) {
  auto by_default = ImportOnnxModel(model, "");
  ASSERT_TRUE(by_default.ok()) << by_default.status();
  OnnxImportOptions forced;
  forced.force_onnx_shape_inference = true;
  auto by_onnx = ImportOnnxModel(model, "", forced);
  ASSERT_TRUE(by_onnx.ok()) << by_onnx.status();
  std::string diff;
  EXPECT_TRUE(ir::GraphsEqual(**by_default, **by_onnx, &diff)) << diff;
}

// The import runs ONNX's inference too (forced), so that opset adapters see
// the shapes they would in production; the types are then forgotten and
// re-inferred by ged.
void CrossCheck(const onnx::ModelProto& model) {
  ExpectSameImportEitherWay(model);
  OnnxImportOptions options;
  options.force_onnx_shape_inference = true;
  auto graph = ImportOnnxModel(model, "", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  ForgetInferredTypes(**graph);
  absl::Status inferred_by_ged = ops::InferShapes(**graph);
  ASSERT_TRUE(inferred_by_ged.ok()) << inferred_by_ged;
  std::map<std::string, ir::ValueType> ged_types;
  for (const ir::Node* node : (*graph)->nodes()) {
    for (const ir::IoDesc& out : node->op_desc().outputs()) {
      if (!out.name.empty()) ged_types[out.name] = out.type;
    }
  }

  onnx::ModelProto onnx_model = model;
  onnx::shape_inference::InferShapes(onnx_model);
  std::vector<const onnx::ValueInfoProto*> infos;
  for (const auto& vi : onnx_model.graph().value_info()) infos.push_back(&vi);
  for (const auto& vi : onnx_model.graph().output()) infos.push_back(&vi);
  ASSERT_FALSE(infos.empty());
  int compared = 0;
  for (const onnx::ValueInfoProto* vi : infos) {
    auto onnx_type = OnnxTypeToValueType(vi->type());
    ASSERT_TRUE(onnx_type.ok()) << onnx_type.status();
    auto it = ged_types.find(vi->name());
    ASSERT_NE(it, ged_types.end()) << "ged has no value '" << vi->name() << "'";
    ++compared;
    EXPECT_EQ(it->second, *onnx_type)
        << "value '" << vi->name() << "': ged " << it->second.ToString() << ", ONNX "
        << onnx_type->ToString();
  }
  EXPECT_EQ(compared, static_cast<int>(infos.size()));
}

TEST(ShapeCrossCheckTest, ConvNet) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "input", kF32, {2, 3, 16, 16});
  AddInitializer(g, "W", *Tensor::Allocate(DataType::kFloat, Shape{8, 3, 3, 3}));
  AddInitializer(g, "B", *Tensor::Allocate(DataType::kFloat, Shape{8}));
  AddInitializer(g, "W2", *Tensor::Allocate(DataType::kFloat, Shape{10, 72}));
  onnx::NodeProto* conv = AddNode(g, "Conv", {"input", "W", "B"}, {"c"}, "conv");
  AttrInts(conv, "kernel_shape", {3, 3});
  AttrInts(conv, "strides", {2, 2});
  AttrInts(conv, "pads", {1, 1, 1, 1});
  AddNode(g, "Relu", {"c"}, {"r"}, "relu");
  onnx::NodeProto* pool = AddNode(g, "MaxPool", {"r"}, {"p"}, "pool");
  AttrInts(pool, "kernel_shape", {3, 3});
  AttrInts(pool, "strides", {2, 2});
  AttrInts(pool, "pads", {1, 1, 1, 1});
  onnx::NodeProto* avg = AddNode(g, "AveragePool", {"p"}, {"a"}, "avg");
  AttrInts(avg, "kernel_shape", {2, 2});
  AttrInt(avg, "ceil_mode", 1);
  AddNode(g, "Flatten", {"a"}, {"f"}, "flatten");
  onnx::NodeProto* gemm = AddNode(g, "Gemm", {"f", "W2"}, {"logits"}, "fc");
  AttrInt(gemm, "transB", 1);
  AddNode(g, "Softmax", {"logits"}, {"prob"}, "softmax");
  AddOutputOfRank(g, "prob", kF32, 2);
  CrossCheck(model);
}

TEST(ShapeCrossCheckTest, BroadcastingElementwise) {
  onnx::ModelProto model = MakeModel(14);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {2, 1, 4});
  AddInput(g, "y", kF32, {3, 1});
  AddInput(g, "z", kF32, {4});
  AddNode(g, "Add", {"x", "y"}, {"s"});
  AddNode(g, "Mul", {"s", "z"}, {"m"});
  AddNode(g, "Sub", {"m", "x"}, {"d"});
  AddNode(g, "Sigmoid", {"d"}, {"sg"});
  AddNode(g, "Greater", {"sg", "z"}, {"gt"});
  AddNode(g, "Where", {"gt", "sg", "y"}, {"w"});
  AddOutputOfRank(g, "w", kF32, 3);
  CrossCheck(model);
}

TEST(ShapeCrossCheckTest, ShapeManipulation) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {2, 3, 4});
  AddInput(g, "e", kF32, {4, 2});
  *g->add_initializer() = Int64Proto("shape", {4, 6});
  *g->add_initializer() = Int64Proto("axes", {0});
  *g->add_initializer() = Int64Proto("starts", {1});
  *g->add_initializer() = Int64Proto("ends", {3});
  onnx::NodeProto* t = AddNode(g, "Transpose", {"x"}, {"t"});
  AttrInts(t, "perm", {2, 0, 1});
  AddNode(g, "Reshape", {"t", "shape"}, {"r"});
  onnx::NodeProto* cat = AddNode(g, "Concat", {"r", "e"}, {"c"});
  AttrInt(cat, "axis", 1);
  AddNode(g, "Unsqueeze", {"c", "axes"}, {"u"});
  AddNode(g, "Squeeze", {"u", "axes"}, {"sq"});
  AddNode(g, "Slice", {"sq", "starts", "ends", "axes"}, {"sl"});
  AddNode(g, "Shape", {"sl"}, {"shp"});
  AddOutputOfRank(g, "sl", kF32, 2);
  AddOutputOfRank(g, "shp", kI64, 1);
  CrossCheck(model);
}

TEST(ShapeCrossCheckTest, MatMulReduceGather) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "a", kF32, {5, 2, 3});
  AddInput(g, "b", kF32, {3, 7});
  AddInput(g, "idx", kI64, {4});
  *g->add_initializer() = Int64Proto("axes", {1});
  AddNode(g, "MatMul", {"a", "b"}, {"mm"});
  onnx::NodeProto* rs = AddNode(g, "ReduceSum", {"mm", "axes"}, {"rs"});
  AttrInt(rs, "keepdims", 0);
  onnx::NodeProto* gather = AddNode(g, "Gather", {"rs", "idx"}, {"ga"});
  AttrInt(gather, "axis", 1);
  onnx::NodeProto* cast = AddNode(g, "Cast", {"ga"}, {"ca"});
  AttrInt(cast, "to", onnx::TensorProto::DOUBLE);
  AddOutputOfRank(g, "ca", onnx::TensorProto::DOUBLE, 2);
  CrossCheck(model);
}

TEST(ShapeCrossCheckTest, OldOpsetThroughAdapters) {
  // Squeeze-11's axes attribute and Softmax-11's 2-D coercion are rewritten;
  // the ONNX tensors keep their names and types.
  onnx::ModelProto model = MakeModel(11);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {2, 1, 3, 4});
  onnx::NodeProto* sq = AddNode(g, "Squeeze", {"x"}, {"s"}, "squeeze");
  AttrInts(sq, "axes", {1});
  AddNode(g, "Softmax", {"s"}, {"p"}, "softmax");  // axis 1 of [2,3,4]: coerced
  onnx::NodeProto* unsq = AddNode(g, "Unsqueeze", {"p"}, {"u"}, "unsqueeze");
  AttrInts(unsq, "axes", {0});
  AddOutputOfRank(g, "u", kF32, 4);
  CrossCheck(model);
}

}  // namespace
}  // namespace ge::frontend

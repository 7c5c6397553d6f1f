// Old-opset models through the whole importer: the adapters' output becomes
// ged nodes (their Constants become Consts wired to the right inputs) that
// pass ops::ValidateOp, and ged's shape inference agrees with ONNX's on the
// result.
#include <map>

#include "base/ir/op_types.h"
#include "base/ops/op_registry.h"
#include "compiler/frontend/onnx_importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/shape_inference/implementation.h"
#include "tests/testing/onnx_builder.h"

namespace ge::frontend {
namespace {

using ::testing::ElementsAre;
using namespace ::ge::onnx_builder;  // NOLINT
using Kind = ir::AttrValue::Kind;

// The node of type `type` (the only one) in `graph`.
const ir::Node* OnlyNodeOfType(const ir::Graph& graph, std::string_view type) {
  const ir::Node* found = nullptr;
  int count = 0;
  for (const ir::Node* n : graph.nodes()) {
    if (n->type() == type) {
      found = n;
      ++count;
    }
  }
  EXPECT_EQ(count, 1) << type;
  return found;
}

// The Const value feeding input `i` of `node`.
Tensor ConstInput(const ir::Node* node, int i) {
  const ir::Node* producer = node->input(i).node;
  EXPECT_NE(producer, nullptr) << node->name() << " input " << i;
  if (producer == nullptr) return Tensor();
  EXPECT_EQ(producer->type(), ir::kConst);
  return producer->op_desc().GetAttrOr<Tensor>(ir::kAttrValue, Tensor());
}

// x[2,1,6,4] -> Squeeze-1 -> Slice-1 -> Clip-6 -> Softmax-1 (coerced at
// axis 1) -> Dropout-7 -> BatchNormalization-9 (training outputs unused) ->
// Split-2 -> ReduceSum-1 / Unsqueeze-1.
onnx::ModelProto Opset9Model() {
  onnx::ModelProto model = MakeModel(9);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {2, 1, 6, 4});
  AttrInts(AddNode(g, "Squeeze", {"x"}, {"s"}, "squeeze"), "axes", {1});
  onnx::NodeProto* slice = AddNode(g, "Slice", {"s"}, {"sl"}, "slice");
  AttrInts(slice, "starts", {0});
  AttrInts(slice, "ends", {4});
  AttrInts(slice, "axes", {1});
  onnx::NodeProto* clip = AddNode(g, "Clip", {"sl"}, {"c"}, "clip");
  AttrFloat(clip, "min", 0.0f);
  AttrFloat(clip, "max", 6.0f);
  AddNode(g, "Softmax", {"c"}, {"sm"}, "softmax");
  AttrFloat(AddNode(g, "Dropout", {"sm"}, {"d"}, "dropout"), "ratio", 0.1f);
  for (const char* name : {"scale", "bias", "mean", "var"}) {
    AddInitializer(g, name, Tensor::FromVector<float>({1, 1, 1, 1}, Shape{4}));
  }
  AddNode(g, "BatchNormalization", {"d", "scale", "bias", "mean", "var"},
          {"bn", "bn_mean", "bn_var", "bn_saved_mean", "bn_saved_var"}, "bn");
  onnx::NodeProto* split = AddNode(g, "Split", {"bn"}, {"a", "b"}, "split");
  AttrInt(split, "axis", 2);
  AttrInts(split, "split", {1, 3});
  onnx::NodeProto* reduce = AddNode(g, "ReduceSum", {"b"}, {"r"}, "reduce");
  AttrInts(reduce, "axes", {2});
  AttrInt(reduce, "keepdims", 1);
  AttrInts(AddNode(g, "Unsqueeze", {"r"}, {"u"}, "unsqueeze"), "axes", {0});
  AddOutputOfRank(g, "a", kF32, 3);
  AddOutputOfRank(g, "u", kF32, 4);
  return model;
}

TEST(OpsetImportTest, Opset9ModelBecomesCanonical) {
  auto graph = ImportOnnxModel(Opset9Model(), "");
  ASSERT_TRUE(graph.ok()) << graph.status();
  const ir::Graph& g = **graph;

  const ir::Node* squeeze = g.FindNode("squeeze");
  ASSERT_EQ(squeeze->num_inputs(), 2);
  EXPECT_EQ(ConstInput(squeeze, 1).ToInt64Vector(), (std::vector<int64_t>{1}));
  EXPECT_FALSE(squeeze->op_desc().HasAttr("axes"));
  EXPECT_EQ(squeeze->op_desc().GetAttr<int64_t>(ir::kAttrOpset), 9);

  const ir::Node* slice = g.FindNode("slice");
  ASSERT_EQ(slice->num_inputs(), 4);
  EXPECT_EQ(ConstInput(slice, 2).ToInt64Vector(), (std::vector<int64_t>{4}));
  EXPECT_EQ(slice->input(0).node, squeeze);

  const ir::Node* clip = g.FindNode("clip");
  ASSERT_EQ(clip->num_inputs(), 3);
  EXPECT_FLOAT_EQ(ConstInput(clip, 2).data<float>()[0], 6.0f);

  // Softmax over axis 1 of [2,4,4]: Flatten + Softmax + Reshape.
  const ir::Node* softmax = g.FindNode("softmax");
  EXPECT_EQ(softmax->input(0).node->type(), "Flatten");
  EXPECT_EQ(softmax->op_desc().GetAttr<int64_t>("axis"), 1);
  const ir::Node* reshape = g.FindNode("softmax/reshape");
  ASSERT_NE(reshape, nullptr);
  EXPECT_EQ(reshape->op_desc().output(0).name, "sm");
  EXPECT_EQ(ConstInput(reshape, 1).ToInt64Vector(), (std::vector<int64_t>{2, 4, 4}));

  const ir::Node* dropout = g.FindNode("dropout");
  EXPECT_EQ(dropout->input(0).node, reshape);
  EXPECT_FLOAT_EQ(ConstInput(dropout, 1).data<float>()[0], 0.1f);

  EXPECT_EQ(g.FindNode("bn")->num_outputs(), 1);
  EXPECT_FALSE(g.FindNode("bn")->op_desc().HasAttr("spatial"));
  EXPECT_EQ(ConstInput(g.FindNode("split"), 1).ToInt64Vector(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(ConstInput(g.FindNode("reduce"), 1).ToInt64Vector(), (std::vector<int64_t>{2}));
  EXPECT_EQ(ConstInput(g.FindNode("unsqueeze"), 1).ToInt64Vector(), (std::vector<int64_t>{0}));
  EXPECT_TRUE(g.TopologicalOrder().ok());
}

TEST(OpsetImportTest, Opset9ModelTypesAgreeWithOnnx) {
  onnx::ModelProto model = Opset9Model();
  auto graph = ImportOnnxModel(model, "");
  ASSERT_TRUE(graph.ok()) << graph.status();
  for (ir::Node* node : (*graph)->nodes()) {
    if (node->type() == ir::kData || node->type() == ir::kConst) continue;
    for (ir::IoDesc& out : node->mutable_op_desc().mutable_outputs()) out.type = UnknownValueType();
  }
  absl::Status status = ops::InferShapes(**graph);
  ASSERT_TRUE(status.ok()) << status;
  std::map<std::string, std::string> ged;
  for (const ir::Node* node : (*graph)->nodes()) {
    for (const ir::IoDesc& out : node->op_desc().outputs()) ged[out.name] = out.type.ToString();
  }
  onnx::shape_inference::InferShapes(model);
  for (const auto& vi : model.graph().value_info()) {
    if (vi.name().rfind("bn_", 0) == 0) continue;  // dropped training outputs
    EXPECT_EQ(ged[vi.name()], OnnxTypeToValueType(vi.type())->ToString()) << vi.name();
  }
  EXPECT_EQ(ged["u"], "f32[1,2,4,1]");
}

// A registry with the built-in ops plus stand-ins (any inputs, the listed
// attributes) for ops ged may not register yet, so that the importer's
// handling of their adapters can be tested on its own.
std::unique_ptr<ops::OpRegistry> RegistryWithStandIns(
    const std::map<std::string, std::vector<std::pair<std::string, Kind>>>& stand_ins) {
  auto registry = std::make_unique<ops::OpRegistry>();
  ops::RegisterBuiltinOps(*registry);
  for (const auto& [type, attrs] : stand_ins) {
    if (registry->Find(type) != nullptr) continue;
    ops::OpSchemaBuilder builder(type, 1);
    builder.VariadicInput("inputs", "", 0).VariadicOutput("outputs", "", 0);
    for (const auto& [name, kind] : attrs) builder.OptionalAttr(name, kind);
    EXPECT_TRUE(registry->Register(std::move(builder).Build()).ok());
  }
  return registry;
}

std::unique_ptr<ops::OpRegistry> ResizeFamilyRegistry() {
  const std::vector<std::pair<std::string, Kind>> resize_attrs = {
      {"mode", Kind::kString},         {"coordinate_transformation_mode", Kind::kString},
      {"nearest_mode", Kind::kString}, {"cubic_coeff_a", Kind::kFloat},
      {"exclude_outside", Kind::kInt}, {"extrapolation_value", Kind::kFloat}};
  return RegistryWithStandIns(
      {{"Pad", {{"mode", Kind::kString}}},
       {"TopK", {{"axis", Kind::kInt}, {"largest", Kind::kInt}, {"sorted", Kind::kInt}}},
       {"Resize", resize_attrs},
       {"ScatterElements", {{"axis", Kind::kInt}, {"reduction", Kind::kString}}},
       {"RoiAlign",
        {{"mode", Kind::kString},
         {"output_height", Kind::kInt},
         {"output_width", Kind::kInt},
         {"sampling_ratio", Kind::kInt},
         {"spatial_scale", Kind::kFloat},
         {"coordinate_transformation_mode", Kind::kString}}}});
}

TEST(OpsetImportTest, PadTopKUpsampleScatterAtOpset9) {
  onnx::ModelProto model = MakeModel(9);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {1, 1, 2, 2});
  AddInput(g, "idx", kI64, {1, 1, 2, 2});
  AddInitializer(g, "scales", Tensor::FromVector<float>({1, 1, 2, 2}, Shape{4}));
  onnx::NodeProto* pad = AddNode(g, "Pad", {"x"}, {"p"}, "pad");
  AttrInts(pad, "pads", {0, 0, 1, 1, 0, 0, 1, 1});
  AttrFloat(pad, "value", 2.0f);
  AttrInt(AddNode(g, "TopK", {"x"}, {"v", "i"}, "topk"), "k", 1);
  AttrString(AddNode(g, "Upsample", {"x", "scales"}, {"up"}, "upsample"), "mode", "nearest");
  AddNode(g, "Scatter", {"x", "idx", "x"}, {"sc"}, "scatter");
  AddOutputOfRank(g, "p", kF32, 4);
  AddOutputOfRank(g, "v", kF32, 4);
  AddOutputOfRank(g, "up", kF32, 4);
  AddOutputOfRank(g, "sc", kF32, 4);
  auto registry = ResizeFamilyRegistry();
  OnnxImportOptions options;
  options.registry = registry.get();
  auto graph = ImportOnnxModel(model, "", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const ir::Graph& gr = **graph;

  const ir::Node* p = gr.FindNode("pad");
  ASSERT_EQ(p->num_inputs(), 3);
  EXPECT_EQ(ConstInput(p, 1).NumElements(), 8);
  EXPECT_FLOAT_EQ(ConstInput(p, 2).data<float>()[0], 2.0f);
  EXPECT_EQ(ConstInput(gr.FindNode("topk"), 1).ToInt64Vector(), (std::vector<int64_t>{1}));

  const ir::Node* up = OnlyNodeOfType(gr, "Resize");
  EXPECT_EQ(up->name(), "upsample");
  ASSERT_EQ(up->num_inputs(), 3);
  EXPECT_EQ(up->input(1).node, nullptr);  // roi absent
  EXPECT_EQ(up->input(2).node, gr.FindNode("scales"));
  EXPECT_EQ(up->op_desc().GetAttr<std::string>("coordinate_transformation_mode"), "asymmetric");
  EXPECT_EQ(up->op_desc().GetAttr<std::string>("nearest_mode"), "floor");
  EXPECT_EQ(up->op_desc().output(0).type.ToString(), "f32[1,1,4,4]");

  EXPECT_EQ(gr.FindNode("scatter")->type(), "ScatterElements");
}

TEST(OpsetImportTest, Resize10AndRoiAlign10) {
  onnx::ModelProto model = MakeModel(10);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {1, 1, 4, 4});
  AddInput(g, "rois", kF32, {1, 4});
  AddInput(g, "batch", kI64, {1});
  AddInitializer(g, "scales", Tensor::FromVector<float>({1, 1, 2, 2}, Shape{4}));
  AttrString(AddNode(g, "Resize", {"x", "scales"}, {"r"}, "resize"), "mode", "linear");
  AddNode(g, "RoiAlign", {"x", "rois", "batch"}, {"ra"}, "roialign");
  AddOutputOfRank(g, "r", kF32, 4);
  AddOutputOfRank(g, "ra", kF32, 4);
  auto registry = ResizeFamilyRegistry();
  OnnxImportOptions options;
  options.registry = registry.get();
  auto graph = ImportOnnxModel(model, "", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const ir::Node* resize = (*graph)->FindNode("resize");
  ASSERT_EQ(resize->num_inputs(), 3);
  EXPECT_EQ(resize->op_desc().input(1).name, "");
  EXPECT_EQ(resize->op_desc().input(2).name, "scales");
  EXPECT_EQ(resize->op_desc().GetAttr<std::string>("mode"), "linear");
  EXPECT_EQ(resize->op_desc().GetAttr<int64_t>(ir::kAttrOpset), 10);
  EXPECT_EQ((*graph)
                ->FindNode("roialign")
                ->op_desc()
                .GetAttr<std::string>("coordinate_transformation_mode"),
            "output_half_pixel");
}

TEST(OpsetImportTest, SequenceAndOptionalTypes) {
  onnx::ModelProto model = MakeModel(15);
  onnx::GraphProto* g = model.mutable_graph();
  onnx::ValueInfoProto* seq = g->add_input();
  seq->set_name("seq");
  SetTensorType(seq->mutable_type()->mutable_sequence_type()->mutable_elem_type(), kF32, {-1, 3});
  onnx::ValueInfoProto* opt = g->add_input();
  opt->set_name("opt");
  SetTensorType(opt->mutable_type()->mutable_optional_type()->mutable_elem_type(), kI64, {2});
  AddNode(g, "SequenceLength", {"seq"}, {"len"}, "length");
  AddNode(g, "OptionalHasElement", {"opt"}, {"has"}, "has");
  AddOutput(g, "len", kI64, {});
  AddOutput(g, "has", kBool, {});
  auto registry = RegistryWithStandIns({{"SequenceLength", {}}, {"OptionalHasElement", {}}});
  OnnxImportOptions options;
  options.registry = registry.get();
  auto graph = ImportOnnxModel(model, "", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::vector<ir::Node*> inputs = (*graph)->InputNodes();
  ASSERT_EQ(inputs.size(), 2u);
  const ir::ValueType& s = inputs[0]->op_desc().output(0).type;
  EXPECT_EQ(s.kind(), ir::ValueType::Kind::kSequence);
  EXPECT_EQ(s.ToString(), "seq<f32[-1,3]>");
  EXPECT_EQ(inputs[1]->op_desc().output(0).type.ToString(), "opt<i64[2]>");
  EXPECT_EQ((*graph)->FindNode("length")->op_desc().input(0).type.ToString(), "seq<f32[-1,3]>");
}

TEST(OpsetImportTest, LoopBodyCapturesFollowItsFormalInputs) {
  // Loop(M, cond, v0) with a body reading the outer "w": body Data nodes are
  // [iter, cond_in, v_in, w], the Loop's inputs [M, cond, v0, w].
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "M", kI64, {});
  AddInput(g, "cond", kBool, {});
  AddInput(g, "v0", kF32, {2});
  AddInput(g, "w", kF32, {2});
  onnx::NodeProto* loop = AddNode(g, "Loop", {"M", "cond", "v0"}, {"v_final"}, "loop");
  onnx::GraphProto* body = AttrGraph(loop, "body");
  body->set_name("body");
  AddInput(body, "iter", kI64, {});
  AddInput(body, "cond_in", kBool, {});
  AddInput(body, "v_in", kF32, {2});
  AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
  AddNode(body, "Add", {"v_in", "w"}, {"v_out"});
  AddOutput(body, "cond_out", kBool, {});
  AddOutput(body, "v_out", kF32, {2});
  AddOutput(g, "v_final", kF32, {2});
  auto registry = RegistryWithStandIns({{"Loop", {{"body", Kind::kGraph}}}});
  OnnxImportOptions options;
  options.registry = registry.get();
  auto graph = ImportOnnxModel(model, "", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const ir::Node* node = (*graph)->FindNode("loop");
  ASSERT_EQ(node->num_inputs(), 4);
  EXPECT_EQ(node->op_desc().input(3).name, "w");
  EXPECT_THAT(node->op_desc().subgraph_names(), ElementsAre("loop_body"));
  const ir::Graph* sub = (*graph)->FindSubgraph("loop_body");
  ASSERT_NE(sub, nullptr);
  std::vector<ir::Node*> data = sub->InputNodes();
  ASSERT_EQ(data.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(data[i]->op_desc().GetAttr<int64_t>(ir::kAttrIndex), i);
  }
  EXPECT_EQ(data[3]->op_desc().output(0).name, node->op_desc().input(3).name);
  EXPECT_FALSE(data[2]->op_desc().HasAttr(kAttrOnnxCapture));
  EXPECT_EQ(data[3]->op_desc().GetAttr<bool>(kAttrOnnxCapture), true);
}

}  // namespace
}  // namespace ge::frontend

// ONNX import: a small conv net end to end, Constant forms, declared types,
// node naming, input defaults, subgraphs with captures, and the summary.
#include "compiler/frontend/onnx_importer.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "base/ir/op_types.h"
#include "compiler/frontend/onnx_external_data.h"
#include "compiler/frontend/onnx_inspect.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/onnx_builder.h"

namespace ge::frontend {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace ::ge::onnx_builder;  // NOLINT

// Conv(3->4, 3x3, pad 1) -> Relu -> MaxPool 2x2 -> Flatten -> Gemm(64->10).
onnx::ModelProto ConvNet() {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  onnx::ValueInfoProto* in = AddInput(g, "input", kF32, {1, 3, 8, 8});
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("N");
  AddInitializer(g, "W", *Tensor::Allocate(DataType::kFloat, Shape{4, 3, 3, 3}));
  AddInitializer(g, "B", Tensor::FromVector<float>({1, 2, 3, 4}, Shape{4}));
  AddInitializer(g, "W2", *Tensor::Allocate(DataType::kFloat, Shape{10, 64}));
  AddInitializer(g, "B2", *Tensor::Allocate(DataType::kFloat, Shape{10}));
  onnx::NodeProto* conv = AddNode(g, "Conv", {"input", "W", "B"}, {"c"}, "conv1");
  AttrInts(conv, "kernel_shape", {3, 3});
  AttrInts(conv, "pads", {1, 1, 1, 1});
  AddNode(g, "Relu", {"c"}, {"r"}, "relu1");
  onnx::NodeProto* pool = AddNode(g, "MaxPool", {"r"}, {"p"}, "pool1");
  AttrInts(pool, "kernel_shape", {2, 2});
  AttrInts(pool, "strides", {2, 2});
  AddNode(g, "Flatten", {"p"}, {"f"}, "flatten");
  onnx::NodeProto* gemm = AddNode(g, "Gemm", {"f", "W2", "B2"}, {"logits"}, "fc");
  AttrInt(gemm, "transB", 1);
  AddOutputOfRank(g, "logits", kF32, 2);
  return model;
}

std::vector<std::string> NodeNames(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const ir::Node* n : g.nodes()) names.push_back(n->name());
  return names;
}

TEST(OnnxImporterTest, SmallConvNet) {
  auto graph = ImportOnnxModel(ConvNet(), "");
  ASSERT_TRUE(graph.ok()) << graph.status();
  ir::Graph& g = **graph;
  EXPECT_EQ(g.name(), "g");
  EXPECT_EQ(g.num_nodes(), 11u);  // Data, 4 Const, 5 ops, NetOutput

  std::vector<ir::Node*> inputs = g.InputNodes();
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0]->name(), "input");
  EXPECT_EQ(inputs[0]->op_desc().GetAttrOr<int64_t>(ir::kAttrIndex, -1), 0);
  EXPECT_EQ(inputs[0]->op_desc().output(0).type.ToString(), "f32[-1,3,8,8]");

  ir::Node* conv = g.FindNode("conv1");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->type(), "Conv");
  ASSERT_EQ(conv->num_inputs(), 3);
  EXPECT_EQ(conv->op_desc().input(1).name, "W");
  EXPECT_EQ(conv->input(0).node, inputs[0]);
  EXPECT_EQ(conv->input(1).node->type(), ir::kConst);
  EXPECT_EQ(conv->input(1).node->name(), "W");
  EXPECT_EQ(conv->op_desc().output(0).name, "c");
  EXPECT_EQ(conv->op_desc().output(0).type.ToString(), "f32[-1,4,8,8]");  // ONNX inference
  EXPECT_EQ(conv->op_desc().GetAttr<std::vector<int64_t>>("pads"),
            (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(conv->op_desc().GetAttr<int64_t>(ir::kAttrOpset), 13);

  const Tensor* bias = g.FindNode("B")->op_desc().FindAttr(ir::kAttrValue)->get<Tensor>();
  ASSERT_NE(bias, nullptr);
  EXPECT_FLOAT_EQ(bias->data<float>()[3], 4.0f);

  ir::Node* out = g.OutputNode();
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(out->num_inputs(), 1);
  EXPECT_EQ(out->op_desc().input(0).name, "logits");
  EXPECT_EQ(out->op_desc().input(0).type.ToString(), "f32[-1,10]");
  EXPECT_EQ(out->input(0).node, g.FindNode("fc"));
  EXPECT_TRUE(g.TopologicalOrder().ok());
  EXPECT_EQ(g.attrs().at(std::string(kAttrOnnxIrVersion)), ir::AttrValue(int64_t{8}));
}

TEST(OnnxImporterTest, FileAndBytesEntryPoints) {
  TempDir dir;
  const std::string path = dir.Write("net.onnx", Serialize(ConvNet()));
  auto from_file = ImportOnnxFile(path);
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  auto from_bytes = ImportOnnxBytes(Serialize(ConvNet()), dir.path().string());
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status();
  EXPECT_EQ(NodeNames(**from_file), NodeNames(**from_bytes));
}

TEST(OnnxImporterTest, ParsedThroughReportsTheBytesTheImportReadsNoMore) {
  // The hook poisons what it is told the import will not read again: the
  // import must still succeed, and the last call covers every byte.
  std::string bytes = Serialize(ConvNet());
  std::vector<size_t> ends;
  OnnxImportOptions options;
  options.parsed_through = [&](size_t end) {
    ASSERT_LE(end, bytes.size());
    ASSERT_TRUE(ends.empty() || end > ends.back());
    ends.push_back(end);
    std::fill(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(end), '\xff');
  };
  auto graph = ImportOnnxBytes(bytes, "", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_FALSE(ends.empty());
  EXPECT_EQ(ends.back(), bytes.size());
  EXPECT_NE((*graph)->FindNode("conv1"), nullptr);
  ends.clear();
  options.parsed_through = [&](size_t end) { ends.push_back(end); };
  EXPECT_FALSE(ImportOnnxBytes("not an onnx model", "", options).ok());
  EXPECT_TRUE(ends.empty());
}

// y = Reshape(x + big, [-1]) with `big` an initializer of `floats` values
// i % 1000: large enough, the import frees its bytes as it converts it.
onnx::ModelProto BigWeightModel(int64_t floats) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {floats});
  onnx::TensorProto* big = g->add_initializer();
  big->set_name("big");
  big->set_data_type(onnx::TensorProto::FLOAT);
  big->add_dims(floats);
  std::string* raw = big->mutable_raw_data();
  raw->resize(static_cast<size_t>(floats) * 4);
  for (int64_t i = 0; i < floats; ++i) {
    const float v = static_cast<float>(i % 1000);
    std::memcpy(raw->data() + i * 4, &v, 4);
  }
  AddInitializer(g, "shape", Tensor::FromVector<int64_t>({-1}, Shape{1}));
  AddNode(g, "Add", {"x", "big"}, {"sum"}, "add");
  AddNode(g, "Reshape", {"sum", "shape"}, {"y"}, "reshape");
  AddOutputOfRank(g, "y", kF32, 1);
  return model;
}

void ExpectBigWeight(const ir::Graph& graph, int64_t floats) {
  const ir::Node* node = graph.FindNode("big");
  ASSERT_NE(node, nullptr);
  auto value = node->op_desc().GetAttr<Tensor>(ir::kAttrValue);
  ASSERT_TRUE(value.has_value());
  ASSERT_EQ(value->NumElements(), floats);
  for (int64_t i : {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{1000}, floats / 2 + 7, floats - 1}) {
    EXPECT_EQ(value->data<float>()[i], static_cast<float>(i % 1000)) << i;
  }
  EXPECT_EQ(graph.FindNode("reshape")->op_desc().output(0).type.shape(), Shape{floats});
}

TEST(OnnxImporterTest, LargeModelsReportParsingProgressAndKeepTheirWeights) {
  // 68 MiB of initializer: past the bound above which the import frees each
  // initializer's bytes once converted, and reported to the hook before the
  // end. Poisoning what the hook was told must not change the weights.
  constexpr int64_t kFloats = int64_t{17} << 20;
  std::string bytes = Serialize(BigWeightModel(kFloats));
  std::vector<size_t> ends;
  OnnxImportOptions options;
  options.parsed_through = [&](size_t end) {
    ends.push_back(end);
    std::fill(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(end), '\xff');
  };
  auto graph = ImportOnnxBytes(bytes, "", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_GE(ends.size(), 2u);
  EXPECT_LT(ends.front(), bytes.size());
  ExpectBigWeight(**graph, kFloats);
  // The same from a model the caller keeps: the import works on its copy.
  const onnx::ModelProto model = BigWeightModel(kFloats);
  auto copied = ImportOnnxModel(model, "");
  ASSERT_TRUE(copied.ok()) << copied.status();
  ExpectBigWeight(**copied, kFloats);
  EXPECT_EQ(model.graph().initializer(0).raw_data().size(), static_cast<size_t>(kFloats) * 4);
}

TEST(OnnxImporterTest, WithoutOnnxShapeInferenceOnlyDeclaredTypesAreSet) {
  OnnxImportOptions options;
  options.run_onnx_shape_inference = false;
  auto graph = ImportOnnxModel(ConvNet(), "", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  const ir::ValueType& c = (*graph)->FindNode("conv1")->op_desc().output(0).type;
  EXPECT_EQ(c.dtype(), DataType::kUndefined);
  EXPECT_TRUE(c.shape().unknown_rank());
}

TEST(OnnxImporterTest, ConstantFormsBecomeConst) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AttrTensor(AddNode(g, "Constant", {}, {"t"}, "c_tensor"), "value",
             FloatTensorProto("", {1, 2, 3, 4, 5, 6}, {2, 3}));
  AttrFloat(AddNode(g, "Constant", {}, {"f"}, "c_float"), "value_float", 2.5f);
  AttrFloats(AddNode(g, "Constant", {}, {"fs"}, "c_floats"), "value_floats", {1, 2});
  AttrInt(AddNode(g, "Constant", {}, {"i"}, "c_int"), "value_int", 7);
  AttrInts(AddNode(g, "Constant", {}, {"is"}, "c_ints"), "value_ints", {1, 2, 3});
  AttrString(AddNode(g, "Constant", {}, {"s"}, "c_string"), "value_string", "hi");
  auto* strings = NewAttr(AddNode(g, "Constant", {}, {"ss"}, "c_strings"), "value_strings",
                          onnx::AttributeProto::STRINGS);
  strings->add_strings("a");
  strings->add_strings("b");
  AddOutput(g, "t", kF32, {2, 3});
  AddOutput(g, "f", kF32, {});
  AddOutput(g, "fs", kF32, {2});
  AddOutput(g, "i", kI64, {});
  AddOutput(g, "is", kI64, {3});
  AddOutput(g, "s", onnx::TensorProto::STRING, {});
  AddOutput(g, "ss", onnx::TensorProto::STRING, {2});
  auto graph = ImportOnnxModel(model, "");
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto value = [&](const char* node) -> Tensor {
    const ir::Node* n = (*graph)->FindNode(node);
    EXPECT_NE(n, nullptr) << node;
    if (n == nullptr) return Tensor();
    EXPECT_EQ(n->type(), ir::kConst);
    return *n->op_desc().GetAttr<Tensor>(ir::kAttrValue);
  };
  EXPECT_EQ(value("c_tensor").shape(), (Shape{2, 3}));
  EXPECT_FLOAT_EQ(value("c_tensor").data<float>()[5], 6.f);
  EXPECT_TRUE(value("c_float").shape().is_scalar());
  EXPECT_FLOAT_EQ(value("c_float").data<float>()[0], 2.5f);
  EXPECT_EQ(value("c_floats").shape(), Shape{2});
  EXPECT_EQ(value("c_int").dtype(), DataType::kInt64);
  EXPECT_EQ(value("c_int").GetAsInt64(0), 7);
  EXPECT_EQ(value("c_ints").ToInt64Vector(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(value("c_string").data<std::string>()[0], "hi");
  EXPECT_EQ(value("c_strings").data<std::string>()[1], "b");
  EXPECT_EQ((*graph)->FindNode("c_ints")->op_desc().output(0).type.ToString(), "i64[3]");

  onnx::ModelProto sparse = MakeModel(13);
  auto* sv = NewAttr(AddNode(sparse.mutable_graph(), "Constant", {}, {"x"}, "c_sparse"),
                     "sparse_value", onnx::AttributeProto::SPARSE_TENSOR);
  sv->mutable_sparse_tensor()->add_dims(2);
  *sv->mutable_sparse_tensor()->mutable_values() = FloatTensorProto("v", {1}, {1});
  auto* idx = sv->mutable_sparse_tensor()->mutable_indices();
  idx->set_data_type(kI64);
  idx->add_dims(1);
  idx->add_int64_data(0);
  AddOutput(sparse.mutable_graph(), "x", kF32, {2});
  OnnxImportOptions no_checks;
  no_checks.run_checker = false;
  no_checks.run_onnx_shape_inference = false;
  auto rejected = ImportOnnxModel(sparse, "", no_checks);
  ASSERT_FALSE(rejected.ok());
  EXPECT_THAT(std::string(rejected.status().message()), HasSubstr("c_sparse"));
  EXPECT_THAT(std::string(rejected.status().message()), HasSubstr("sparse"));
}

TEST(OnnxImporterTest, DimParamsAndMissingShapes) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  onnx::ValueInfoProto* x = AddInput(g, "x", kF32, {-1, 5});
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  onnx::ValueInfoProto* y = g->add_input();
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(kF32);  // no shape
  onnx::ValueInfoProto* z = AddInput(g, "z", kF32, {-1, -1});     // dims without value or param
  (void)z;
  AddNode(g, "Relu", {"x"}, {"x1"});
  AddNode(g, "Relu", {"y"}, {"y1"});
  AddNode(g, "Relu", {"z"}, {"z1"});
  AddOutputOfRank(g, "x1", kF32, 2);
  g->add_output()->set_name("y1");
  g->mutable_output(1)->mutable_type()->mutable_tensor_type()->set_elem_type(kF32);
  AddOutputOfRank(g, "z1", kF32, 2);
  OnnxImportOptions options;
  options.run_checker = false;  // libonnx 1.12's checker insists on shapes
  auto graph = ImportOnnxModel(model, "", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::vector<ir::Node*> inputs = (*graph)->InputNodes();
  ASSERT_EQ(inputs.size(), 3u);
  EXPECT_EQ(inputs[0]->op_desc().output(0).type.ToString(), "f32[-1,5]");
  EXPECT_EQ(inputs[1]->op_desc().output(0).type.ToString(), "f32[?]");
  EXPECT_EQ(inputs[2]->op_desc().output(0).type.ToString(), "f32[-1,-1]");
  EXPECT_EQ(inputs[2]->op_desc().GetAttrOr<int64_t>(ir::kAttrIndex, -1), 2);
}

TEST(OnnxImporterTest, UnnamedAndDuplicateNodesGetGeneratedNames) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x", kF32, {2});
  AddNode(g, "Relu", {"x"}, {"a"}, "same");
  AddNode(g, "Relu", {"a"}, {"b"}, "same");  // duplicate
  AddNode(g, "Relu", {"b"}, {"c"});          // unnamed
  AddNode(g, "Relu", {"c"}, {"d"}, "x");     // the graph input's name
  AddNode(g, "Relu", {"d"}, {"e"}, "Relu_0");
  AddOutput(g, "e", kF32, {2});
  OnnxImportOptions options;
  options.run_checker = false;  // the checker rejects duplicate node names
  auto graph = ImportOnnxModel(model, "", options);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_THAT(NodeNames(**graph),
              ElementsAre("x", "same", "Relu_1", "Relu_2", "Relu_3", "Relu_0", "NetOutput"));
  // IoDescs keep the ONNX tensor names.
  EXPECT_EQ((*graph)->FindNode("Relu_1")->op_desc().input(0).name, "a");
}

TEST(OnnxImporterTest, InputDefaultsFollowTheIrVersion) {
  auto make = [](int64_t ir_version) {
    onnx::ModelProto model = MakeModel(9, ir_version);
    onnx::GraphProto* g = model.mutable_graph();
    AddInput(g, "x", kF32, {2});
    AddInput(g, "bias", kF32, {2});
    AddInitializer(g, "bias", Tensor::FromVector<float>({0.5f, 1.5f}, Shape{2}));
    AddNode(g, "Add", {"x", "bias"}, {"y"}, "add");
    AddOutput(g, "y", kF32, {2});
    return model;
  };
  auto v4 = ImportOnnxModel(make(4), "");
  ASSERT_TRUE(v4.ok()) << v4.status();
  std::vector<ir::Node*> inputs = (*v4)->InputNodes();
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[1]->name(), "bias");
  auto def = inputs[1]->op_desc().GetAttr<Tensor>(kAttrDefaultValue);
  ASSERT_TRUE(def.has_value());
  EXPECT_FLOAT_EQ(def->data<float>()[1], 1.5f);

  auto v3 = ImportOnnxModel(make(3), "");
  ASSERT_TRUE(v3.ok()) << v3.status();
  ASSERT_EQ((*v3)->InputNodes().size(), 1u);
  EXPECT_EQ((*v3)->FindNode("bias")->type(), ir::kConst);
}

// If(cond) { then: x + x } else { y * y } with x and y read from the main
// graph: both are captures, in first-use order.
onnx::ModelProto IfWithCaptures() {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "cond", kBool, {});
  AddInput(g, "x", kF32, {2});
  AddInput(g, "y", kF32, {2});
  onnx::NodeProto* node = AddNode(g, "If", {"cond"}, {"out"}, "if1");
  onnx::GraphProto* else_branch = AttrGraph(node, "else_branch");  // order differs on purpose
  else_branch->set_name("else");
  AddNode(else_branch, "Mul", {"y", "y"}, {"e"});
  AddOutput(else_branch, "e", kF32, {2});
  onnx::GraphProto* then_branch = AttrGraph(node, "then_branch");
  then_branch->set_name("then");
  AddNode(then_branch, "Add", {"x", "x"}, {"t"});
  AddOutput(then_branch, "t", kF32, {2});
  AddOutput(g, "out", kF32, {2});
  return model;
}

TEST(OnnxImporterTest, IfSubgraphsWithCaptures) {
  auto graph = ImportOnnxModel(IfWithCaptures(), "");
  ASSERT_TRUE(graph.ok()) << graph.status();
  ir::Graph& g = **graph;
  ir::Node* node = g.FindNode("if1");
  ASSERT_NE(node, nullptr);
  const ir::OpDesc& op = node->op_desc();
  // Inputs: cond, then the captures y (else_branch is first in the proto) and x.
  ASSERT_EQ(op.num_inputs(), 3);
  EXPECT_EQ(op.input(0).name, "cond");
  EXPECT_EQ(op.input(1).name, "y");
  EXPECT_EQ(op.input(2).name, "x");
  EXPECT_EQ(node->input(2).node->name(), "x");
  EXPECT_EQ(op.GetAttr<int64_t>(kAttrOnnxNumCaptures), 2);
  EXPECT_THAT(op.subgraph_names(), ElementsAre("if1_then_branch", "if1_else_branch"));
  EXPECT_EQ(op.GetAttr<ir::GraphRef>("then_branch")->name, "if1_then_branch");

  ir::Graph* then_graph = g.FindSubgraph("if1_then_branch");
  ASSERT_NE(then_graph, nullptr);
  EXPECT_EQ(then_graph->parent_node(), node);
  std::vector<ir::Node*> data = then_graph->InputNodes();
  ASSERT_EQ(data.size(), 2u);
  // Data index i <-> If input i + 1.
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(data[i]->op_desc().output(0).name, op.input(i + 1).name);
    EXPECT_EQ(data[i]->op_desc().GetAttr<bool>(kAttrOnnxCapture), true);
    EXPECT_EQ(data[i]->op_desc().output(0).type.ToString(), "f32[2]");
  }
  ir::Node* add = nullptr;
  for (ir::Node* n : then_graph->nodes()) {
    if (n->type() == "Add") add = n;
  }
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->input(0).node, data[1]);  // x
  EXPECT_EQ(add->input(1).node, data[1]);
  ASSERT_NE(then_graph->OutputNode(), nullptr);
  EXPECT_EQ(then_graph->OutputNode()->op_desc().input(0).name, "t");
}

TEST(OnnxImporterTest, NestedCapturesPropagateThroughTheMiddleGraph) {
  // outer If -> its then branch holds an inner If whose branch reads "x" of
  // the main graph: x is a capture of both Ifs.
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "cond", kBool, {});
  AddInput(g, "x", kF32, {2});
  onnx::NodeProto* outer = AddNode(g, "If", {"cond"}, {"out"}, "outer");
  onnx::GraphProto* then_branch = AttrGraph(outer, "then_branch");
  then_branch->set_name("outer_then");
  onnx::NodeProto* inner = AddNode(then_branch, "If", {"cond"}, {"inner_out"}, "inner");
  onnx::GraphProto* inner_then = AttrGraph(inner, "then_branch");
  inner_then->set_name("inner_then");
  AddNode(inner_then, "Relu", {"x"}, {"r"});
  AddOutput(inner_then, "r", kF32, {2});
  onnx::GraphProto* inner_else = AttrGraph(inner, "else_branch");
  inner_else->set_name("inner_else");
  AddNode(inner_else, "Neg", {"x"}, {"n"});
  AddOutput(inner_else, "n", kF32, {2});
  AddOutput(then_branch, "inner_out", kF32, {2});
  onnx::GraphProto* else_branch = AttrGraph(outer, "else_branch");
  else_branch->set_name("outer_else");
  AddNode(else_branch, "Identity", {"x"}, {"id"});
  AddOutput(else_branch, "id", kF32, {2});
  AddOutput(g, "out", kF32, {2});

  auto graph = ImportOnnxModel(model, "");
  ASSERT_TRUE(graph.ok()) << graph.status();
  ir::Graph& root = **graph;
  EXPECT_EQ(root.subgraphs().size(), 4u);
  const ir::OpDesc& outer_op = root.FindNode("outer")->op_desc();
  // cond is read by the inner If inside the then branch: a capture too.
  ASSERT_EQ(outer_op.num_inputs(), 3);
  EXPECT_EQ(outer_op.input(1).name, "cond");
  EXPECT_EQ(outer_op.input(2).name, "x");
  ir::Graph* middle = root.FindSubgraph("outer_then_branch");
  ASSERT_NE(middle, nullptr);
  ir::Node* inner_node = middle->FindNode("inner");
  ASSERT_NE(inner_node, nullptr);
  ASSERT_EQ(inner_node->num_inputs(), 2);
  EXPECT_EQ(inner_node->op_desc().input(1).name, "x");
  // In the middle graph, the inner If's capture comes from the middle graph's Data.
  EXPECT_EQ(inner_node->input(1).node->type(), ir::kData);
  EXPECT_EQ(inner_node->input(1).node->owner_graph(), middle);
  ir::Graph* innermost = root.FindSubgraph("inner_then_branch");
  ASSERT_NE(innermost, nullptr);
  EXPECT_EQ(innermost->parent_graph(), middle);
  EXPECT_EQ(innermost->InputNodes().size(), 1u);
}

TEST(OnnxImporterTest, SummaryOfAModel) {
  OnnxModelSummary s = InspectOnnxModel(ConvNet());
  EXPECT_EQ(s.ir_version, 8);
  EXPECT_EQ(s.producer_name, "ged-test");
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].type, "f32[N,3,8,8]");
  ASSERT_EQ(s.outputs.size(), 1u);
  EXPECT_EQ(s.outputs[0].name, "logits");
  EXPECT_EQ(s.num_nodes, 5);
  EXPECT_EQ(s.num_initializers, 4);
  EXPECT_EQ(s.initializer_bytes, (4 * 27 + 4 + 640 + 10) * 4);
  ASSERT_EQ(s.opset_imports.size(), 1u);
  EXPECT_EQ(s.opset_imports[0], (std::pair<std::string, int64_t>("ai.onnx", 13)));
  EXPECT_EQ(s.op_histogram.size(), 5u);
  EXPECT_THAT(s.ToString(), HasSubstr("Conv: 1"));

  OnnxModelSummary with_if = InspectOnnxModel(IfWithCaptures());
  EXPECT_EQ(with_if.num_nodes, 3);
  EXPECT_EQ(with_if.num_subgraphs, 2);

  TempDir dir;
  auto from_file = InspectOnnx(dir.Write("m.onnx", Serialize(ConvNet())));
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_EQ(from_file->num_nodes, 5);
  EXPECT_FALSE(InspectOnnx(dir.Write("bad.onnx", "not a model")).ok());
}

}  // namespace
}  // namespace ge::frontend

// ONNX Loop and Scan through the whole path: models built with onnx's
// protobuf API, imported (lowered to While by compiler/frontend/
// onnx_control_flow), compiled and run by a Session on the built-in
// engines.
#include <cmath>

#include "base/ir/op_types.h"
#include "compiler/frontend/onnx_importer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/onnx_builder.h"
#include "tests/unit/runtime/engines/control_flow/cf_test_util.h"

namespace ge::test {
namespace {

using onnx_builder::AddInitializer;
using onnx_builder::AddInput;
using onnx_builder::AddNode;
using onnx_builder::AddOutput;
using onnx_builder::AttrGraph;
using onnx_builder::AttrInt;
using onnx_builder::AttrInts;
using onnx_builder::kBool;
using onnx_builder::kF32;
using onnx_builder::kI64;
using onnx_builder::MakeModel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Message(const absl::Status& s) { return std::string(s.message()); }

std::vector<float> Floats(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

absl::StatusOr<std::unique_ptr<ir::Graph>> Import(const onnx::ModelProto& model) {
  return frontend::ImportOnnxModel(model, "");
}

absl::StatusOr<std::vector<Value>> ImportAndRun(const onnx::ModelProto& model, std::vector<Value> inputs) {
  GE_ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> graph, Import(model));
  return CompileAndRun(std::move(graph), std::move(inputs));
}

size_t CountOps(const ir::Graph& root, std::string_view type) {
  size_t n = 0;
  std::vector<const ir::Graph*> graphs = {&root};
  for (const ir::Graph* g : root.subgraphs()) graphs.push_back(g);
  for (const ir::Graph* g : graphs) g->ForEachNode([&](const ir::Node* node) { n += node->type() == type; });
  return n;
}

// Loop(M, cond, y, s) with a captured `w`: y += w, s += iteration number,
// and y is also a scan output.
onnx::ModelProto CountingLoop() {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "M", kI64, {});
  AddInput(g, "cond", kBool, {});
  AddInput(g, "y0", kF32, {2});
  AddInput(g, "s0", kI64, {});
  AddInput(g, "w", kF32, {2});
  onnx::NodeProto* loop = AddNode(g, "Loop", {"M", "cond", "y0", "s0"}, {"y", "s", "ys"}, "loop");
  onnx::GraphProto* body = AttrGraph(loop, "body");
  body->set_name("body");
  AddInput(body, "iter", kI64, {});
  AddInput(body, "cond_in", kBool, {});
  AddInput(body, "y_in", kF32, {2});
  AddInput(body, "s_in", kI64, {});
  AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
  AddNode(body, "Add", {"y_in", "w"}, {"y_out"});
  AddNode(body, "Add", {"s_in", "iter"}, {"s_out"});
  AddNode(body, "Identity", {"y_out"}, {"y_scan"});
  AddOutput(body, "cond_out", kBool, {});
  AddOutput(body, "y_out", kF32, {2});
  AddOutput(body, "s_out", kI64, {});
  AddOutput(body, "y_scan", kF32, {2});
  AddOutput(g, "y", kF32, {2});
  AddOutput(g, "s", kI64, {});
  AddOutput(g, "ys", kF32, {-1, 2});
  return model;
}

std::vector<Value> CountingInputs(int64_t trip_count, bool cond) {
  return {Tensor::Scalar(trip_count), Tensor::Scalar(cond), Tensor::FromVector<float>({0, 0}, Shape{2}),
          Tensor::Scalar(int64_t{0}), Tensor::FromVector<float>({1, 10}, Shape{2})};
}

TEST(OnnxLoop, LowersToAWhileOnTheControlFlowEngine) {
  auto graph = Import(CountingLoop());
  ASSERT_TRUE(graph.ok()) << graph.status();
  const ir::Node* loop = (*graph)->FindNode("loop");
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->type(), ir::kWhile);
  EXPECT_EQ(loop->op_desc().subgraph_names(), (std::vector<std::string>{"loop_cond", "loop_body"}));
  EXPECT_EQ(CountOps(**graph, "Loop"), 0u);
  EXPECT_EQ(CountOps(**graph, "LoopAccumulatorStack"), 1u);
  // [iter, cond, M, y, s, w, accumulator]
  EXPECT_EQ(loop->num_inputs(), 7);
  EXPECT_EQ(loop->op_desc().output(3).name, "y");

  std::unique_ptr<session::Session> session;
  auto out = CompileAndRun(std::move(*graph), CountingInputs(5, true), {}, nullptr, &session);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(5, 50));
  EXPECT_EQ((*out)[1].tensor().data<int64_t>()[0], 0 + 1 + 2 + 3 + 4);
  EXPECT_EQ((*out)[2].tensor().shape(), (Shape{5, 2}));
  EXPECT_THAT(Floats((*out)[2]), ElementsAre(1, 10, 2, 20, 3, 30, 4, 40, 5, 50));
  EXPECT_EQ(EngineOf(*session, "loop"), "control_flow");
  EXPECT_EQ(EngineOf(*session, "loop/stack"), "control_flow");

  // A false condition runs nothing: initial values, an empty scan output.
  auto none = session->RunGraph(0, CountingInputs(5, false));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_THAT(Floats((*none)[0]), ElementsAre(0, 0));
  EXPECT_EQ((*none)[2].tensor().shape(), (Shape{0, 2}));
  auto zero = session->RunGraph(0, CountingInputs(0, true));
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_EQ((*zero)[2].tensor().shape(), (Shape{0, 2}));
}

// No trip count: x doubles while the body's condition (x < 100) holds.
TEST(OnnxLoop, ConditionOnlyIsAWhileLoop) {
  onnx::ModelProto model = MakeModel(16);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "x0", kF32, {});
  AddInitializer(g, "go", Tensor::Scalar(true));
  AddInitializer(g, "limit", Tensor::Scalar(100.0f));
  onnx::NodeProto* loop = AddNode(g, "Loop", {"", "go", "x0"}, {"x", "xs"}, "loop");
  onnx::GraphProto* body = AttrGraph(loop, "body");
  body->set_name("body");
  AddInput(body, "iter", kI64, {});
  AddInput(body, "cond_in", kBool, {});
  AddInput(body, "x_in", kF32, {});
  AddInitializer(body, "two", Tensor::Scalar(2.0f));
  AddNode(body, "Mul", {"x_in", "two"}, {"x_out"});
  AddNode(body, "Less", {"x_out", "limit"}, {"cond_out"});
  AddNode(body, "Identity", {"x_out"}, {"x_scan"});
  AddOutput(body, "cond_out", kBool, {});
  AddOutput(body, "x_out", kF32, {});
  AddOutput(body, "x_scan", kF32, {});
  AddOutput(g, "x", kF32, {});
  AddOutput(g, "xs", kF32, {-1});
  auto out = ImportAndRun(model, {Tensor::Scalar(3.0f)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(192));
  EXPECT_THAT(Floats((*out)[1]), ElementsAre(6, 12, 24, 48, 96, 192));
}

// Trip count only: the body's condition is ignored (ONNX's for loop).
TEST(OnnxLoop, TripCountOnlyIgnoresTheBodysCondition) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "M", kI64, {});
  AddInput(g, "x0", kF32, {1});
  onnx::NodeProto* loop = AddNode(g, "Loop", {"M", "", "x0"}, {"x"}, "loop");
  onnx::GraphProto* body = AttrGraph(loop, "body");
  body->set_name("body");
  AddInput(body, "iter", kI64, {});
  AddInput(body, "cond_in", kBool, {});
  AddInput(body, "x_in", kF32, {1});
  AddInitializer(body, "stop", Tensor::Scalar(false));
  AddNode(body, "Identity", {"stop"}, {"cond_out"});
  AddNode(body, "Add", {"x_in", "x_in"}, {"x_out"});
  AddOutput(body, "cond_out", kBool, {});
  AddOutput(body, "x_out", kF32, {1});
  AddOutput(g, "x", kF32, {1});
  auto out = ImportAndRun(model, {Tensor::Scalar(int64_t{3}), Tensor::FromVector<float>({1}, Shape{1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(8));
}

// An outer Loop (3 iterations) whose body runs an inner Loop iter + 1
// times, adding the main graph's `step` (captured through both bodies).
TEST(OnnxLoop, NestedLoopsAndCapturesThroughTwoLevels) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "step", kF32, {});
  AddInitializer(g, "M", Tensor::Scalar(int64_t{3}));
  AddInitializer(g, "t", Tensor::Scalar(true));
  AddInitializer(g, "zero", Tensor::Scalar(0.0f));
  onnx::NodeProto* outer = AddNode(g, "Loop", {"M", "t", "zero"}, {"total"}, "outer");
  onnx::GraphProto* ob = AttrGraph(outer, "body");
  ob->set_name("outer_body");
  AddInput(ob, "i", kI64, {});
  AddInput(ob, "oc", kBool, {});
  AddInput(ob, "acc", kF32, {});
  AddInitializer(ob, "one", Tensor::Scalar(int64_t{1}));
  AddNode(ob, "Add", {"i", "one"}, {"inner_trips"});
  AddNode(ob, "Identity", {"oc"}, {"oc_out"});
  onnx::NodeProto* inner = AddNode(ob, "Loop", {"inner_trips", "", "acc"}, {"acc_out"}, "inner");
  onnx::GraphProto* ib = AttrGraph(inner, "body");
  ib->set_name("inner_body");
  AddInput(ib, "j", kI64, {});
  AddInput(ib, "ic", kBool, {});
  AddInput(ib, "a", kF32, {});
  AddNode(ib, "Identity", {"ic"}, {"ic_out"});
  AddNode(ib, "Add", {"a", "step"}, {"a_out"});
  AddOutput(ib, "ic_out", kBool, {});
  AddOutput(ib, "a_out", kF32, {});
  AddOutput(ob, "oc_out", kBool, {});
  AddOutput(ob, "acc_out", kF32, {});
  AddOutput(g, "total", kF32, {});
  auto graph = Import(model);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(CountOps(**graph, ir::kWhile), 2u);
  auto out = CompileAndRun(std::move(*graph), {Tensor::Scalar(0.5f)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(0.5f * (1 + 2 + 3)));
}

// Scan with two scan inputs (x1 forward along axis 0, x2 backward along
// axis 1), a running sum as state, and the sums as two scan outputs (the
// second stacked along axis 1, last iteration first).
// `columns` is x2's declared column count (-1: unknown).
onnx::ModelProto TwoInputScan(int64_t columns = 3) {
  onnx::ModelProto model = MakeModel(16);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "s0", kF32, {2});
  AddInput(g, "x1", kF32, {3, 2});
  AddInput(g, "x2", kF32, {2, columns});
  onnx::NodeProto* scan = AddNode(g, "Scan", {"s0", "x1", "x2"}, {"s", "sums", "sums_t"}, "scan");
  AttrInt(scan, "num_scan_inputs", 2);
  AttrInts(scan, "scan_input_axes", {0, 1});
  AttrInts(scan, "scan_input_directions", {0, 1});
  AttrInts(scan, "scan_output_axes", {0, 1});
  AttrInts(scan, "scan_output_directions", {0, 1});
  onnx::GraphProto* body = AttrGraph(scan, "body");
  body->set_name("body");
  AddInput(body, "s_in", kF32, {2});
  AddInput(body, "a", kF32, {2});
  AddInput(body, "b", kF32, {2});
  AddNode(body, "Add", {"s_in", "a"}, {"t"});
  AddNode(body, "Add", {"t", "b"}, {"s_out"});
  AddNode(body, "Identity", {"s_out"}, {"s_scan"});
  AddNode(body, "Identity", {"s_out"}, {"s_scan_t"});
  AddOutput(body, "s_out", kF32, {2});
  AddOutput(body, "s_scan", kF32, {2});
  AddOutput(body, "s_scan_t", kF32, {2});
  AddOutput(g, "s", kF32, {2});
  AddOutput(g, "sums", kF32, {3, 2});
  AddOutput(g, "sums_t", kF32, {2, columns});
  return model;
}

TEST(OnnxScan, ForwardAndReverseAlongAxes) {
  const std::vector<float> x1 = {1, 2, 3, 4, 5, 6};        // rows [1,2] [3,4] [5,6]
  const std::vector<float> x2 = {10, 20, 30, 40, 50, 60};  // columns [10,40] [20,50] [30,60]
  auto out = ImportAndRun(TwoInputScan(), {Tensor::FromVector<float>({0, 0}, Shape{2}),
                                           Tensor::FromVector<float>(x1, Shape{3, 2}),
                                           Tensor::FromVector<float>(x2, Shape{2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  // Iterations read x2's columns backwards: [30,60], [20,50], [10,40].
  // s: [31,62] -> [31+3+20, 62+4+50] = [54,116] -> [54+5+10, 116+6+40] = [69,162].
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(69, 162));
  EXPECT_EQ((*out)[1].tensor().shape(), (Shape{3, 2}));
  EXPECT_THAT(Floats((*out)[1]), ElementsAre(31, 62, 54, 116, 69, 162));
  // Stacked along axis 1, last iteration first.
  EXPECT_EQ((*out)[2].tensor().shape(), (Shape{2, 3}));
  EXPECT_THAT(Floats((*out)[2]), ElementsAre(69, 54, 31, 162, 116, 62));
}

TEST(OnnxScan, ScanInputsOfDifferentLengthsFailNamingTheNode) {
  auto out = ImportAndRun(TwoInputScan(/*columns=*/-1), {Tensor::FromVector<float>({0, 0}, Shape{2}),
                                                         Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{3, 2}),
                                                         Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2})});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(Message(out.status()), HasSubstr("node 'scan' (While): subgraph 'scan_body'"));
}

TEST(OnnxScan, LoweringCanBeSwitchedOff) {
  frontend::OnnxImportOptions options;
  options.lower_control_flow = false;
  auto kept = frontend::ImportOnnxModel(TwoInputScan(), "", options);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ((*kept)->FindNode("scan")->type(), "Scan");
  auto lowered = Import(TwoInputScan());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ((*lowered)->FindNode("scan")->type(), ir::kWhile);
  EXPECT_EQ(CountOps(**lowered, "Gather"), 3u);  // the length, and one per scan input
}

// Loop(M, acc0) whose body grows `acc` by Concat: piece k = [k, k] + w
// appended (or, with `prepend`, [k] and [10 + k] put before it, on axis 1);
// `read_acc` makes the body also read acc (its row count), which keeps
// the Concat.
onnx::ModelProto GrowingLoop(bool prepend, bool read_acc) {
  onnx::ModelProto model = MakeModel(13);
  onnx::GraphProto* g = model.mutable_graph();
  AddInput(g, "M", kI64, {});
  AddInput(g, "acc0", kF32, {-1, prepend ? 1 : 2});
  AddInitializer(g, "w", Tensor::FromVector<float>({0.5f, 100}, Shape{1, 2}));
  AddInitializer(g, "shape11", Tensor::FromVector<int64_t>({1, 1}, Shape{2}));
  AddInitializer(g, "ten", Tensor::FromVector<float>({10}, Shape{1, 1}));
  onnx::NodeProto* loop = AddNode(g, "Loop", {"M", "", "acc0"}, {"acc"}, "loop");
  onnx::GraphProto* body = AttrGraph(loop, "body");
  body->set_name("body");
  AddInput(body, "iter", kI64, {});
  AddInput(body, "cond_in", kBool, {});
  AddInput(body, "acc_in", kF32, {-1, prepend ? -1 : 2});
  AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
  onnx::NodeProto* cast = AddNode(body, "Cast", {"iter"}, {"k"});
  AttrInt(cast, "to", kF32);
  AddNode(body, "Reshape", {"k", "shape11"}, {"k11"});
  std::string last = "k11";
  if (read_acc) {
    AddNode(body, "Shape", {"acc_in"}, {"acc_shape"});
    onnx::NodeProto* rows = AddNode(body, "Gather", {"acc_shape", "zero"}, {"rows"});
    AttrInt(rows, "axis", 0);
    AddInitializer(body, "zero", Tensor::Scalar(int64_t{0}));
    onnx::NodeProto* rows_f = AddNode(body, "Cast", {"rows"}, {"rows_f"});
    AttrInt(rows_f, "to", kF32);
    AddNode(body, "Add", {"k11", "rows_f"}, {"k11_rows"});
    last = "k11_rows";
  }
  onnx::NodeProto* concat;
  if (prepend) {
    AddNode(body, "Add", {last, "ten"}, {"k_ten"});
    concat = AddNode(body, "Concat", {last, "k_ten", "acc_in"}, {"acc_out"}, "grow");
    AttrInt(concat, "axis", 1);
  } else {
    AddNode(body, "Add", {last, "w"}, {"piece"});
    concat = AddNode(body, "Concat", {"acc_in", "piece"}, {"acc_out"}, "grow");
    AttrInt(concat, "axis", 0);
  }
  AddOutput(body, "cond_out", kBool, {});
  AddOutput(body, "acc_out", kF32, {-1, prepend ? -1 : 2});
  AddOutput(g, "acc", kF32, {-1, prepend ? -1 : 2});
  return model;
}

TEST(OnnxLoop, ACarriedValueGrownByConcatIsKeptAsItsPieces) {
  auto graph = Import(GrowingLoop(/*prepend=*/false, /*read_acc=*/false));
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(CountOps(**graph, "Concat"), 0u);
  EXPECT_EQ(CountOps(**graph, "LoopAccumulatorConcat"), 1u);
  std::unique_ptr<session::Session> session;
  auto out =
      CompileAndRun(std::move(*graph), {Tensor::Scalar(int64_t{3}), Tensor::FromVector<float>({7, 8}, Shape{1, 2})}, {},
                    nullptr, &session);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().shape(), (Shape{4, 2}));
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(7, 8, 0.5, 100, 1.5, 101, 2.5, 102));
  // No iteration: the initial value; an empty initial value.
  auto zero = session->RunGraph(0, {Tensor::Scalar(int64_t{0}), Tensor::FromVector<float>({7, 8}, Shape{1, 2})});
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_THAT(Floats((*zero)[0]), ElementsAre(7, 8));
  auto empty = session->RunGraph(0, {Tensor::Scalar(int64_t{2}), Tensor::FromVector<float>({}, Shape{0, 2})});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[0].tensor().shape(), (Shape{2, 2}));
  EXPECT_THAT(Floats((*empty)[0]), ElementsAre(0.5, 100, 1.5, 101));
  // A piece that does not fit fails like the Concat would, naming the loop.
  auto wide = session->RunGraph(0, {Tensor::Scalar(int64_t{1}), Tensor::FromVector<float>({1, 2, 3}, Shape{1, 3})});
  EXPECT_FALSE(wide.ok());
}

TEST(OnnxLoop, ACarriedValueGrownByPrependingJoinsLastPiecesFirst) {
  auto graph = Import(GrowingLoop(/*prepend=*/true, /*read_acc=*/false));
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(CountOps(**graph, "Concat"), 0u);
  // k = 0: [0, 10, 9]; k = 1: [1, 11, 0, 10, 9]; k = 2: [2, 12, 1, 11, 0, 10, 9].
  auto out =
      CompileAndRun(std::move(*graph), {Tensor::Scalar(int64_t{3}), Tensor::FromVector<float>({9}, Shape{1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor().shape(), (Shape{1, 7}));
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(2, 12, 1, 11, 0, 10, 9));
}

TEST(OnnxLoop, ACarriedValueTheBodyAlsoReadsKeepsItsConcat) {
  auto graph = Import(GrowingLoop(/*prepend=*/false, /*read_acc=*/true));
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(CountOps(**graph, "Concat"), 1u);
  EXPECT_EQ(CountOps(**graph, "LoopAccumulatorConcat"), 0u);
  // Piece k = [k + rows, k + rows] + w, rows = 1, 2, 3.
  auto out =
      CompileAndRun(std::move(*graph), {Tensor::Scalar(int64_t{3}), Tensor::FromVector<float>({7, 8}, Shape{1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Floats((*out)[0]), ElementsAre(7, 8, 1.5, 101, 3.5, 103, 5.5, 105));
}

}  // namespace
}  // namespace ge::test

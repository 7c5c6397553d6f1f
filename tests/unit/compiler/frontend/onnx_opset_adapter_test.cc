// Every opset adapter: an old-form node in, canonical-form nodes out.
#include "compiler/frontend/onnx_opset_adapter.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/onnx_builder.h"

namespace ge::frontend {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace ::ge::onnx_builder;  // NOLINT

// The graph around the adapted node.
struct Surroundings {
  absl::flat_hash_map<std::string, onnx::TypeProto> types;
  absl::flat_hash_map<std::string, onnx::TensorProto> constants;
  absl::flat_hash_set<std::string> consumed;

  void Type(const std::string& name, int32_t elem, std::vector<int64_t> dims) {
    SetTensorType(&types[name], elem, dims);
  }
};

struct Result {
  absl::Status status;
  std::vector<onnx::NodeProto> nodes;
};

Result Adapt(const onnx::NodeProto& node, int op_version, const Surroundings& s = {},
             int64_t opset = 0) {
  const OpsetAdapter* adapter = BuiltinOpsetAdapters().Find(node.op_type(), op_version);
  if (adapter == nullptr) return {absl::NotFoundError("no adapter"), {}};
  AdapterLookup lookup;
  lookup.type_of = [&](const std::string& n) -> const onnx::TypeProto* {
    auto it = s.types.find(n);
    return it == s.types.end() ? nullptr : &it->second;
  };
  lookup.constant_of = [&](const std::string& n) -> const onnx::TensorProto* {
    auto it = s.constants.find(n);
    return it == s.constants.end() ? nullptr : &it->second;
  };
  lookup.is_consumed = [&](const std::string& n) { return s.consumed.contains(n); };
  int counter = 0;
  lookup.fresh_tensor_name = [&](std::string_view base) { return StrCat(base, "#", counter++); };
  OpsetAdapterContext ctx(node, opset == 0 ? op_version : opset, op_version, lookup);
  Result r;
  r.status = adapter->fn(ctx);
  r.nodes = ctx.TakeEmitted();
  return r;
}

onnx::NodeProto Node(const std::string& op, std::vector<std::string> in,
                     std::vector<std::string> out, const std::string& name = "n") {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(name);
  for (auto& i : in) n.add_input(i);
  for (auto& o : out) n.add_output(o);
  return n;
}

std::vector<std::string> Inputs(const onnx::NodeProto& n) {
  return std::vector<std::string>(n.input().begin(), n.input().end());
}

// The value of the Constant node producing `tensor` among `nodes`.
Tensor ConstantValue(const std::vector<onnx::NodeProto>& nodes, const std::string& tensor) {
  for (const auto& n : nodes) {
    if (n.op_type() == "Constant" && n.output(0) == tensor) {
      auto t = TensorFromProto(n.attribute(0).t());
      EXPECT_TRUE(t.ok()) << t.status();
      return t.ok() ? *t : Tensor();
    }
  }
  ADD_FAILURE() << "no Constant produces " << tensor;
  return Tensor();
}

const onnx::NodeProto& Last(const Result& r) { return r.nodes.back(); }

absl::Status NoOpAdapter(OpsetAdapterContext& ctx) {
  ctx.EmitCopy();
  return absl::OkStatus();
}

TEST(OpsetAdapterTest, SqueezeAxesAttributeBecomesInput) {
  onnx::NodeProto n = Node("Squeeze", {"x"}, {"y"});
  AttrInts(&n, "axes", {0, 2});
  Result r = Adapt(n, 11);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.nodes.size(), 2u);
  const onnx::NodeProto& sq = Last(r);
  EXPECT_EQ(sq.op_type(), "Squeeze");
  EXPECT_EQ(sq.name(), "n");
  EXPECT_EQ(sq.attribute_size(), 0);
  ASSERT_EQ(sq.input_size(), 2);
  EXPECT_EQ(sq.input(0), "x");
  EXPECT_EQ(r.nodes[0].name(), "n/axes");
  EXPECT_EQ(ConstantValue(r.nodes, sq.input(1)).ToInt64Vector(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(sq.output(0), "y");
}

TEST(OpsetAdapterTest, SqueezeWithoutOrEmptyAxesSqueezesAll) {
  onnx::NodeProto n = Node("Squeeze", {"x"}, {"y"});
  AttrInts(&n, "axes", {});
  Result r = Adapt(n, 1);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_THAT(Inputs(Last(r)), ElementsAre("x"));
  EXPECT_EQ(Last(r).attribute_size(), 0);
}

TEST(OpsetAdapterTest, UnsqueezeNeedsAxes) {
  onnx::NodeProto n = Node("Unsqueeze", {"x"}, {"y"});
  Result missing = Adapt(n, 11);
  ASSERT_FALSE(missing.status.ok());
  EXPECT_THAT(std::string(missing.status.message()), HasSubstr("axes"));
  AttrInts(&n, "axes", {-1});
  Result r = Adapt(n, 11);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(ConstantValue(r.nodes, Last(r).input(1)).ToInt64Vector(), (std::vector<int64_t>{-1}));
}

TEST(OpsetAdapterTest, ReduceSumAxesBecomeInputKeepdimsStays) {
  onnx::NodeProto n = Node("ReduceSum", {"x"}, {"y"});
  AttrInts(&n, "axes", {1});
  AttrInt(&n, "keepdims", 0);
  Result r = Adapt(n, 11);
  ASSERT_TRUE(r.status.ok());
  const onnx::NodeProto& rs = Last(r);
  ASSERT_EQ(rs.attribute_size(), 1);
  EXPECT_EQ(rs.attribute(0).name(), "keepdims");
  EXPECT_EQ(ConstantValue(r.nodes, rs.input(1)).ToInt64Vector(), (std::vector<int64_t>{1}));
  // Without axes: reduce everything, no input.
  Result all = Adapt(Node("ReduceSum", {"x"}, {"y"}), 1);
  ASSERT_TRUE(all.status.ok());
  EXPECT_THAT(Inputs(Last(all)), ElementsAre("x"));
  // ReduceSum-13 needs no adapter.
  EXPECT_EQ(BuiltinOpsetAdapters().Find("ReduceSum", 13), nullptr);
}

TEST(OpsetAdapterTest, SplitAttributeBecomesInput) {
  onnx::NodeProto n = Node("Split", {"x"}, {"a", "b"});
  AttrInt(&n, "axis", 1);
  AttrInts(&n, "split", {2, 3});
  Result r = Adapt(n, 2, {}, 8);
  ASSERT_TRUE(r.status.ok());
  const onnx::NodeProto& s = Last(r);
  EXPECT_EQ(s.attribute_size(), 1);
  EXPECT_EQ(ConstantValue(r.nodes, s.input(1)).ToInt64Vector(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(s.output_size(), 2);
}

TEST(OpsetAdapterTest, Slice1AttributesBecomeInputs) {
  onnx::NodeProto n = Node("Slice", {"x"}, {"y"});
  AttrInts(&n, "starts", {1});
  AttrInts(&n, "ends", {3});
  AttrInts(&n, "axes", {0});
  Result r = Adapt(n, 1, {}, 9);
  ASSERT_TRUE(r.status.ok()) << r.status;
  const onnx::NodeProto& s = Last(r);
  ASSERT_EQ(s.input_size(), 4);
  EXPECT_EQ(s.attribute_size(), 0);
  EXPECT_EQ(ConstantValue(r.nodes, s.input(1)).ToInt64Vector(), (std::vector<int64_t>{1}));
  EXPECT_EQ(ConstantValue(r.nodes, s.input(2)).ToInt64Vector(), (std::vector<int64_t>{3}));
  EXPECT_EQ(ConstantValue(r.nodes, s.input(3)).ToInt64Vector(), (std::vector<int64_t>{0}));
  onnx::NodeProto no_ends = Node("Slice", {"x"}, {"y"});
  AttrInts(&no_ends, "starts", {1});
  EXPECT_FALSE(Adapt(no_ends, 1).status.ok());
}

TEST(OpsetAdapterTest, Clip6MinMaxBecomeInputsOfTheDataType) {
  Surroundings s;
  s.Type("x", onnx::TensorProto::FLOAT16, {2});
  onnx::NodeProto n = Node("Clip", {"x"}, {"y"});
  AttrFloat(&n, "max", 6.0f);
  Result r = Adapt(n, 6, s, 7);
  ASSERT_TRUE(r.status.ok()) << r.status;
  const onnx::NodeProto& c = Last(r);
  ASSERT_EQ(c.input_size(), 3);
  EXPECT_EQ(c.input(1), "");  // no min
  Tensor max = ConstantValue(r.nodes, c.input(2));
  EXPECT_EQ(max.dtype(), DataType::kFloat16);
  EXPECT_TRUE(max.shape().is_scalar());
  EXPECT_FLOAT_EQ(max.GetAsDouble(0), 6.0);
  EXPECT_EQ(c.attribute_size(), 0);

  Result unknown = Adapt(n, 6);  // no type for x
  ASSERT_FALSE(unknown.status.ok());
  EXPECT_THAT(std::string(unknown.status.message()), HasSubstr("node 'n' (Clip-6"));
  EXPECT_THAT(std::string(unknown.status.message()), HasSubstr("unknown"));
}

TEST(OpsetAdapterTest, Pad2AttributesBecomeInputs) {
  Surroundings s;
  s.Type("x", kF32, {1, 2});
  onnx::NodeProto n = Node("Pad", {"x"}, {"y"});
  AttrInts(&n, "pads", {0, 1, 0, 1});
  AttrFloat(&n, "value", 1.5f);
  AttrString(&n, "mode", "constant");
  Result r = Adapt(n, 2, s, 10);
  ASSERT_TRUE(r.status.ok()) << r.status;
  const onnx::NodeProto& p = Last(r);
  ASSERT_EQ(p.input_size(), 3);
  EXPECT_EQ(ConstantValue(r.nodes, p.input(1)).ToInt64Vector(), (std::vector<int64_t>{0, 1, 0, 1}));
  EXPECT_FLOAT_EQ(ConstantValue(r.nodes, p.input(2)).GetAsDouble(0), 1.5);
  ASSERT_EQ(p.attribute_size(), 1);
  EXPECT_EQ(p.attribute(0).name(), "mode");

  onnx::NodeProto zero = Node("Pad", {"x"}, {"y"});
  AttrInts(&zero, "pads", {0, 0});
  AttrFloat(&zero, "value", 0.0f);
  Result z = Adapt(zero, 2);  // a zero fill needs no dtype
  ASSERT_TRUE(z.status.ok()) << z.status;
  EXPECT_EQ(Last(z).input_size(), 2);
}

TEST(OpsetAdapterTest, TopK1KBecomesInput) {
  onnx::NodeProto n = Node("TopK", {"x"}, {"v", "i"});
  AttrInt(&n, "k", 3);
  AttrInt(&n, "axis", -1);
  Result r = Adapt(n, 1, {}, 9);
  ASSERT_TRUE(r.status.ok());
  Tensor k = ConstantValue(r.nodes, Last(r).input(1));
  EXPECT_EQ(k.shape(), Shape{1});
  EXPECT_EQ(k.GetAsInt64(0), 3);
  EXPECT_EQ(Last(r).attribute_size(), 1);
}

TEST(OpsetAdapterTest, Dropout7RatioBecomesInputAndMaskIsCast) {
  Surroundings s;
  s.Type("x", kF32, {4});
  s.consumed.insert("mask");
  onnx::NodeProto n = Node("Dropout", {"x"}, {"y", "mask"});
  AttrFloat(&n, "ratio", 0.25f);
  Result r = Adapt(n, 7, s);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.nodes.size(), 3u);  // Constant, Dropout, Cast
  const onnx::NodeProto& d = r.nodes[1];
  EXPECT_EQ(d.op_type(), "Dropout");
  EXPECT_FLOAT_EQ(ConstantValue(r.nodes, d.input(1)).GetAsDouble(0), 0.25);
  EXPECT_EQ(d.output(0), "y");
  EXPECT_NE(d.output(1), "mask");
  const onnx::NodeProto& cast = r.nodes[2];
  EXPECT_EQ(cast.op_type(), "Cast");
  EXPECT_EQ(cast.input(0), d.output(1));
  EXPECT_EQ(cast.output(0), "mask");
  EXPECT_EQ(cast.attribute(0).i(), kF32);

  // An unread mask of Dropout-7 is dropped; Dropout-10's bool mask stays.
  Result unread = Adapt(Node("Dropout", {"x"}, {"y", "mask"}), 7);
  ASSERT_TRUE(unread.status.ok());
  EXPECT_EQ(Last(unread).output_size(), 1);
  Result v10 = Adapt(Node("Dropout", {"x"}, {"y", "mask"}), 10, s);
  ASSERT_TRUE(v10.status.ok());
  ASSERT_EQ(v10.nodes.size(), 1u);
  EXPECT_EQ(Last(v10).output(1), "mask");
}

TEST(OpsetAdapterTest, SoftmaxOnLastAxisStaysOneNode) {
  Surroundings s;
  s.Type("x", kF32, {2, 3, 4});
  onnx::NodeProto n = Node("Softmax", {"x"}, {"y"});
  AttrInt(&n, "axis", 2);
  Result r = Adapt(n, 11, s);
  ASSERT_TRUE(r.status.ok());
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(Last(r).attribute(0).i(), -1);
  // axis = -1 likewise.
  onnx::NodeProto neg = Node("LogSoftmax", {"x"}, {"y"});
  AttrInt(&neg, "axis", -1);
  Result rn = Adapt(neg, 1, s, 7);
  ASSERT_TRUE(rn.status.ok());
  EXPECT_EQ(rn.nodes.size(), 1u);
}

TEST(OpsetAdapterTest, SoftmaxCoercionBecomesFlattenSoftmaxReshape) {
  Surroundings s;
  s.Type("x", kF32, {-1, 3, 4});
  onnx::NodeProto n = Node("Softmax", {"x"}, {"y"});  // default axis 1: softmax over 3*4
  Result r = Adapt(n, 11, s);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.nodes.size(), 4u);
  const auto& flatten = r.nodes[0];
  const auto& shape = r.nodes[1];
  const auto& softmax = r.nodes[2];
  const auto& reshape = r.nodes[3];
  EXPECT_EQ(flatten.op_type(), "Flatten");
  EXPECT_EQ(flatten.input(0), "x");
  EXPECT_EQ(flatten.attribute(0).i(), 1);
  EXPECT_EQ(shape.op_type(), "Shape");
  EXPECT_EQ(softmax.op_type(), "Softmax");
  EXPECT_EQ(softmax.name(), "n");
  EXPECT_EQ(softmax.input(0), flatten.output(0));
  EXPECT_EQ(softmax.attribute(0).i(), 1);
  EXPECT_EQ(reshape.op_type(), "Reshape");
  EXPECT_THAT(Inputs(reshape), ElementsAre(softmax.output(0), shape.output(0)));
  EXPECT_EQ(reshape.output(0), "y");
  EXPECT_EQ(reshape.name(), "n/reshape");

  // Unknown rank: always the exact decomposition.
  onnx::NodeProto h = Node("Hardmax", {"x"}, {"y"});
  AttrInt(&h, "axis", -1);
  Result rh = Adapt(h, 11);
  ASSERT_TRUE(rh.status.ok());
  EXPECT_EQ(rh.nodes.size(), 4u);
  EXPECT_EQ(rh.nodes[0].attribute(0).i(), -1);

  onnx::NodeProto bad = Node("Softmax", {"x"}, {"y"});
  AttrInt(&bad, "axis", 3);
  EXPECT_FALSE(Adapt(bad, 11, s).status.ok());
}

TEST(OpsetAdapterTest, SoftmaxCoercionOfAStaticShapeReshapesToAConstant) {
  Surroundings s;
  s.Type("x", kF32, {2, 3, 4});
  onnx::NodeProto n = Node("LogSoftmax", {"x"}, {"y"});
  AttrInt(&n, "axis", 1);
  Result r = Adapt(n, 11, s);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.nodes.size(), 4u);  // Constant, Flatten, LogSoftmax, Reshape
  const onnx::NodeProto& reshape = Last(r);
  EXPECT_EQ(reshape.op_type(), "Reshape");
  EXPECT_EQ(ConstantValue(r.nodes, reshape.input(1)).ToInt64Vector(),
            (std::vector<int64_t>{2, 3, 4}));
}

TEST(OpsetAdapterTest, BatchNormalizationDropsSpatialAndTrainingOutputs) {
  onnx::NodeProto n = Node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y", "mean", "var"});
  AttrInt(&n, "spatial", 1);
  AttrFloat(&n, "epsilon", 1e-3f);
  Result r = Adapt(n, 7);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_EQ(Last(r).output_size(), 1);
  ASSERT_EQ(Last(r).attribute_size(), 1);
  EXPECT_EQ(Last(r).attribute(0).name(), "epsilon");

  Surroundings used;
  used.consumed.insert("mean");
  Result training = Adapt(n, 9, used);
  ASSERT_FALSE(training.status.ok());
  EXPECT_THAT(std::string(training.status.message()), HasSubstr("'mean'"));

  onnx::NodeProto per_activation = Node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"});
  AttrInt(&per_activation, "spatial", 0);
  EXPECT_FALSE(Adapt(per_activation, 7).status.ok());
}

TEST(OpsetAdapterTest, UpsampleBecomesResize) {
  onnx::NodeProto v7 = Node("Upsample", {"x"}, {"y"});
  AttrFloats(&v7, "scales", {1.f, 1.f, 2.f, 2.f});
  Result r = Adapt(v7, 7);
  ASSERT_TRUE(r.status.ok()) << r.status;
  const onnx::NodeProto& resize = Last(r);
  EXPECT_EQ(resize.op_type(), "Resize");
  ASSERT_EQ(resize.input_size(), 3);
  EXPECT_EQ(resize.input(1), "");
  Tensor scales = ConstantValue(r.nodes, resize.input(2));
  EXPECT_EQ(scales.dtype(), DataType::kFloat);
  EXPECT_EQ(scales.NumElements(), 4);
  EXPECT_EQ(FindAttribute(resize, "scales"), nullptr);
  EXPECT_EQ(FindAttribute(resize, "mode")->s(), "nearest");
  EXPECT_EQ(FindAttribute(resize, "coordinate_transformation_mode")->s(), "asymmetric");
  EXPECT_EQ(FindAttribute(resize, "nearest_mode")->s(), "floor");

  onnx::NodeProto v9 = Node("Upsample", {"x", "sc"}, {"y"});
  AttrString(&v9, "mode", "linear");
  Result r9 = Adapt(v9, 9);
  ASSERT_TRUE(r9.status.ok());
  EXPECT_THAT(Inputs(Last(r9)), ElementsAre("x", "", "sc"));
  EXPECT_EQ(FindAttribute(Last(r9), "mode")->s(), "linear");
  EXPECT_EQ(FindAttribute(Last(r9), "nearest_mode"), nullptr);

  onnx::NodeProto cubic = Node("Upsample", {"x", "sc"}, {"y"});
  AttrString(&cubic, "mode", "cubic");
  Result rc = Adapt(cubic, 9);
  ASSERT_FALSE(rc.status.ok());
  EXPECT_THAT(std::string(rc.status.message()), HasSubstr("cubic"));
}

TEST(OpsetAdapterTest, Resize10And11BecomeResize13) {
  Result r10 = Adapt(Node("Resize", {"x", "sc"}, {"y"}), 10);
  ASSERT_TRUE(r10.status.ok());
  EXPECT_THAT(Inputs(Last(r10)), ElementsAre("x", "", "sc"));
  EXPECT_EQ(FindAttribute(Last(r10), "coordinate_transformation_mode")->s(), "asymmetric");

  Surroundings s;
  s.constants["empty"] = FloatTensorProto("empty", {}, {0});
  Result r11 = Adapt(Node("Resize", {"x", "roi", "empty", "sizes"}, {"y"}), 11, s);
  ASSERT_TRUE(r11.status.ok());
  EXPECT_THAT(Inputs(Last(r11)), ElementsAre("x", "roi", "", "sizes"));

  onnx::NodeProto tf = Node("Resize", {"x", "roi", "sc"}, {"y"});
  AttrString(&tf, "coordinate_transformation_mode", "tf_half_pixel_for_nn");
  Result bad = Adapt(tf, 11);
  ASSERT_FALSE(bad.status.ok());
  EXPECT_THAT(std::string(bad.status.message()), HasSubstr("tf_half_pixel_for_nn"));
  EXPECT_EQ(BuiltinOpsetAdapters().Find("Resize", 13), nullptr);
}

TEST(OpsetAdapterTest, ScatterRoiAlignScan) {
  onnx::NodeProto scatter = Node("Scatter", {"d", "i", "u"}, {"y"});
  AttrInt(&scatter, "axis", 1);
  Result r = Adapt(scatter, 9);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(Last(r).op_type(), "ScatterElements");
  EXPECT_EQ(Last(r).attribute(0).name(), "axis");

  Result roi = Adapt(Node("RoiAlign", {"x", "rois", "idx"}, {"y"}), 10);
  ASSERT_TRUE(roi.status.ok());
  EXPECT_EQ(FindAttribute(Last(roi), "coordinate_transformation_mode")->s(), "output_half_pixel");
  EXPECT_EQ(BuiltinOpsetAdapters().Find("RoiAlign", 16), nullptr);

  Result scan = Adapt(Node("Scan", {"", "s"}, {"y"}), 8);
  ASSERT_FALSE(scan.status.ok());
  EXPECT_THAT(std::string(scan.status.message()), HasSubstr("opset 9"));
  EXPECT_EQ(BuiltinOpsetAdapters().Find("Scan", 9), nullptr);
}

TEST(OpsetAdapterTest, TableRejectsOverlapsAndCoversVersions) {
  OpsetAdapterTable table;
  ASSERT_TRUE(table.Register({"Foo", 1, 10, "Foo-11", &NoOpAdapter}).ok());
  EXPECT_FALSE(table.Register({"Foo", 10, 12, "Foo-13", &NoOpAdapter}).ok());
  EXPECT_TRUE(table.Register({"Foo", 11, 12, "Foo-13", &NoOpAdapter}).ok());
  EXPECT_NE(table.Find("Foo", 1), nullptr);
  EXPECT_EQ(table.Find("Foo", 13), nullptr);
  // Every adapter in the built-in table ends below its op's canonical version.
  for (const OpsetAdapter& a : BuiltinOpsetAdapters().all()) {
    EXPECT_LE(a.first_version, a.last_version) << a.op_type;
    EXPECT_LE(a.last_version, 17) << a.op_type;
  }
}

}  // namespace
}  // namespace ge::frontend

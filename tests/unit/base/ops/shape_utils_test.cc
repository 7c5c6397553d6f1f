// Shape arithmetic shared by inference and kernels: broadcasting with
// unknown dims, merging, axes, window geometry (pads for every auto_pad),
// matrix products, Slice bounds and Reshape targets.
#include "base/ops/shape_utils.h"

#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ge::ops {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(BroadcastTest, DimsWithUnknowns) {
  EXPECT_EQ(*BroadcastDim(5, 5), 5);
  EXPECT_EQ(*BroadcastDim(1, 5), 5);
  EXPECT_EQ(*BroadcastDim(5, 1), 5);
  EXPECT_EQ(*BroadcastDim(-1, 5), 5);  // the unknown must be 1 or 5
  EXPECT_EQ(*BroadcastDim(5, -1), 5);
  EXPECT_EQ(*BroadcastDim(-1, 1), -1);
  EXPECT_EQ(*BroadcastDim(-1, -1), -1);
  EXPECT_EQ(*BroadcastDim(0, 1), 0);
  EXPECT_EQ(*BroadcastDim(-1, 0), 0);
  EXPECT_FALSE(BroadcastDim(2, 3).ok());
  EXPECT_FALSE(BroadcastDim(0, 3).ok());
}

TEST(BroadcastTest, ManyShapes) {
  const Shape shapes[] = {Shape{2, 1, 4}, Shape{3, 1}, Shape{}, Shape{-1, 1, 1}};
  EXPECT_EQ(*BroadcastShapes(shapes), (Shape{2, 3, 4}));
  const Shape with_unknown_rank[] = {Shape{2, 3}, Shape::UnknownRank()};
  EXPECT_EQ(*BroadcastShapes(with_unknown_rank), Shape::UnknownRank());
  // Known shapes are still checked when another has unknown rank.
  const Shape bad[] = {Shape{2}, Shape::UnknownRank(), Shape{3}};
  auto r = BroadcastShapes(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(Message(r.status()), HasSubstr("shapes [2] [?] [3] do not broadcast"));
  EXPECT_EQ(*BroadcastShapes(Shape{-1, 4}, Shape{3, -1}), (Shape{3, 4}));
}

TEST(BroadcastTest, Unidirectional) {
  EXPECT_TRUE(CheckUnidirectionalBroadcast(Shape{3, 1}, Shape{2, 3, 4}).ok());
  EXPECT_TRUE(CheckUnidirectionalBroadcast(Shape{-1}, Shape{2, 3}).ok());
  EXPECT_TRUE(CheckUnidirectionalBroadcast(Shape::UnknownRank(), Shape{2}).ok());
  EXPECT_FALSE(CheckUnidirectionalBroadcast(Shape{2, 3}, Shape{3}).ok());
  EXPECT_FALSE(CheckUnidirectionalBroadcast(Shape{4}, Shape{2, 3}).ok());
}

TEST(MergeTest, RefineAndGeneralize) {
  EXPECT_EQ(*MergeShapes(Shape{-1, 3}, Shape{2, -1}), (Shape{2, 3}));
  EXPECT_EQ(*MergeShapes(Shape::UnknownRank(), Shape{2}), (Shape{2}));
  EXPECT_FALSE(MergeShapes(Shape{2}, Shape{3}).ok());
  EXPECT_FALSE(MergeShapes(Shape{2}, Shape{2, 1}).ok());
  EXPECT_EQ(GeneralizeShapes(Shape{2, 3}, Shape{2, 4}), (Shape{2, -1}));
  EXPECT_EQ(GeneralizeShapes(Shape{2, 3}, Shape{2}), Shape::UnknownRank());
  auto merged = MergeValueTypes(ir::ValueType(), ir::ValueType::Tensor(DataType::kFloat, Shape{2}));
  EXPECT_EQ(merged->ToString(), "f32[2]");
  auto nchw = MergeValueTypes(ir::ValueType(ir::TensorDesc(DataType::kFloat, Shape{1, 2, 3, 4}, ir::Format::kNCHW)),
                              ir::ValueType::Tensor(DataType::kFloat, Shape{-1, 2, 3, 4}));
  EXPECT_EQ(nchw->ToString(), "f32[1,2,3,4]@NCHW");
  EXPECT_FALSE(MergeValueTypes(ir::ValueType::Tensor(DataType::kFloat, Shape{2}),
                               ir::ValueType::Tensor(DataType::kInt64, Shape{2}))
                   .ok());
  auto seq = GeneralizeValueTypes(ir::ValueType::Sequence(ir::ValueType::Tensor(DataType::kFloat, Shape{2})),
                                  ir::ValueType::Sequence(ir::ValueType::Tensor(DataType::kFloat, Shape{3})));
  EXPECT_EQ(seq->ToString(), "seq<f32[-1]>");
}

// A loop-carried optional whose body returns what it holds stays optional.
TEST(ShapeUtilsTest, GeneralizingAnOptionalWithItsContentGivesTheOptional) {
  const auto seq2 = ir::ValueType::Sequence(ir::ValueType::Tensor(DataType::kFloat, Shape{2}));
  const auto opt_seq1 = ir::ValueType::Optional(ir::ValueType::Sequence(ir::ValueType::Tensor(DataType::kFloat, Shape{1})));
  auto a = GeneralizeValueTypes(opt_seq1, seq2);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->ToString(), "opt<seq<f32[-1]>>");
  auto b = GeneralizeValueTypes(seq2, opt_seq1);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->ToString(), "opt<seq<f32[-1]>>");
  EXPECT_FALSE(GeneralizeValueTypes(opt_seq1, ir::ValueType::Tensor(DataType::kFloat, Shape{1})).ok());
}

TEST(AxesTest, NormalizeNamesAxisAndRank) {
  EXPECT_EQ(*NormalizeAxis(-1, 3), 2);
  EXPECT_EQ(*NormalizeAxis(0, 3), 0);
  EXPECT_THAT(Message(NormalizeAxis(3, 3).status()),
              HasSubstr("axis 3 is out of range for rank 3 (allowed -3..2)"));
  EXPECT_THAT(Message(NormalizeAxis(0, 0).status()), HasSubstr("rank-0"));
  EXPECT_THAT(*NormalizeAxes(std::vector<int64_t>{-1, 0}, 2), ElementsAre(1, 0));
  EXPECT_THAT(Message(NormalizeAxes(std::vector<int64_t>{1, -1}, 2).status()), HasSubstr("repeat axis 1"));
  EXPECT_EQ(DimProduct(std::vector<int64_t>{2, 3}), 6);
  EXPECT_EQ(DimProduct(std::vector<int64_t>{2, -1}), -1);
  EXPECT_EQ(DimProduct(std::vector<int64_t>{0, -1}), 0);
  EXPECT_EQ(UnknownShape(2), (Shape{-1, -1}));
  EXPECT_EQ(UnknownShape(-1), Shape::UnknownRank());
}

TEST(WindowTest, PadsForEveryAutoPad) {
  // in 7, kernel 4, stride 2: SAME gives 4 outputs and a total pad of 3.
  auto upper = ComputeWindowDim(7, 4, 2, 1, 0, 0, AutoPad::kSameUpper, false);
  EXPECT_EQ(upper->output, 4);
  EXPECT_EQ(upper->pad_begin, 1);
  EXPECT_EQ(upper->pad_end, 2);
  auto lower = ComputeWindowDim(7, 4, 2, 1, 0, 0, AutoPad::kSameLower, false);
  EXPECT_EQ(lower->output, 4);
  EXPECT_EQ(lower->pad_begin, 2);
  EXPECT_EQ(lower->pad_end, 1);
  auto valid = ComputeWindowDim(7, 4, 2, 1, 5, 5, AutoPad::kValid, false);
  EXPECT_EQ(valid->output, 2);
  EXPECT_EQ(valid->pad_begin, 0);
  EXPECT_EQ(valid->pad_end, 0);
  auto notset = ComputeWindowDim(7, 4, 2, 1, 1, 0, AutoPad::kNotSet, false);
  EXPECT_EQ(notset->output, 3);
  EXPECT_EQ(notset->pad_begin, 1);
  // Dilation 2 makes the kernel span 7.
  EXPECT_EQ(ComputeWindowDim(7, 4, 1, 2, 0, 0, AutoPad::kNotSet, false)->output, 1);
  // SAME pads depend on the input: unknown with it, though the output size
  // is known from the input alone.
  auto unknown = ComputeWindowDim(-1, 3, 1, 1, 0, 0, AutoPad::kSameUpper, false);
  EXPECT_EQ(unknown->output, -1);
  EXPECT_EQ(unknown->pad_begin, -1);
  EXPECT_EQ(ComputeWindowDim(9, -1, 2, 1, 0, 0, AutoPad::kSameUpper, false)->output, 5);
  EXPECT_EQ(ComputeWindowDim(9, -1, 2, 1, 0, 0, AutoPad::kNotSet, false)->output, -1);
  EXPECT_FALSE(ComputeWindowDim(2, 4, 1, 1, 0, 0, AutoPad::kNotSet, false).ok());
}

TEST(WindowTest, CeilMode) {
  EXPECT_EQ(ComputeWindowDim(5, 2, 2, 1, 0, 0, AutoPad::kNotSet, false)->output, 2);
  EXPECT_EQ(ComputeWindowDim(5, 2, 2, 1, 0, 0, AutoPad::kNotSet, true)->output, 3);
  // The third window would start at 4, in the end pad: dropped.
  EXPECT_EQ(ComputeWindowDim(4, 2, 2, 1, 0, 1, AutoPad::kNotSet, true)->output, 2);
  // ceil_mode does not change VALID or SAME.
  EXPECT_EQ(ComputeWindowDim(5, 2, 2, 1, 0, 0, AutoPad::kValid, true)->output, 2);
  EXPECT_EQ(ComputeWindowDim(5, 2, 2, 1, 0, 0, AutoPad::kSameUpper, true)->output, 3);
}

TEST(WindowTest, ConvAndPoolGeometry) {
  WindowAttrs attrs;
  attrs.auto_pad = AutoPad::kSameUpper;
  attrs.strides = {2, 1};
  auto conv = ConvOutputShape(Shape{1, 3, 7, 5}, Shape{8, 3, 4, 3}, attrs);
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_EQ(conv->output, (Shape{1, 8, 4, 5}));
  EXPECT_THAT(conv->kernel, ElementsAre(4, 3));
  EXPECT_THAT(conv->pads_begin, ElementsAre(1, 1));
  EXPECT_THAT(conv->pads_end, ElementsAre(2, 1));
  EXPECT_THAT(conv->dilations, ElementsAre(1, 1));
  WindowAttrs pool;
  pool.kernel_shape = {3};
  pool.pads = {1, 1};
  auto p = PoolOutputShape(Shape{2, 4, 10}, pool);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->output, (Shape{2, 4, 10}));
  EXPECT_THAT(p->strides, ElementsAre(1));
  EXPECT_FALSE(PoolOutputShape(Shape{2, 4, 10}, WindowAttrs{}).ok());
}

TEST(WindowTest, AttrsFromOp) {
  ir::OpDesc op("c", "Conv");
  op.SetAttr("auto_pad", "SAME_LOWER");
  op.SetAttr("strides", std::vector<int64_t>{2, 2});
  op.SetAttr("group", 4);
  auto attrs = WindowAttrsFromOp(op);
  ASSERT_TRUE(attrs.ok());
  EXPECT_EQ(attrs->auto_pad, AutoPad::kSameLower);
  EXPECT_EQ(attrs->group, 4);
  EXPECT_THAT(attrs->strides, ElementsAre(2, 2));
  EXPECT_TRUE(attrs->pads.empty());
  op.SetAttr("auto_pad", "same");
  EXPECT_FALSE(WindowAttrsFromOp(op).ok());
}

TEST(MatrixTest, MatMulAndGemm) {
  EXPECT_EQ(*MatMulShape(Shape{3}, Shape{3}), Shape{});
  EXPECT_EQ(*MatMulShape(Shape{1, 2, 3}, Shape{4, 3, 5}), (Shape{4, 2, 5}));
  EXPECT_EQ(*MatMulShape(Shape{3}, Shape{2, 3, 5}), (Shape{2, 5}));
  EXPECT_FALSE(MatMulShape(Shape{2, 3}, Shape{2, 3}).ok());
  EXPECT_EQ(*GemmShape(Shape{3, 2}, Shape{4, 3}, true, true), (Shape{2, 4}));
  EXPECT_EQ(*GemmShape(Shape::UnknownRank(), Shape{3, 4}, false, false), (Shape{-1, 4}));
  EXPECT_FALSE(GemmShape(Shape{2, 3}, Shape{4, 5}, false, false).ok());
}

TEST(SliceTest, ResolvesBoundsWithOnnxClamping) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  auto b = ResolveSlice(Shape{10, 20, 30}, std::vector<int64_t>{-3, 100},
                        std::vector<int64_t>{kMax, -kMax}, std::vector<int64_t>{0, 2},
                        std::vector<int64_t>{1, -1});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->output, (Shape{3, 20, 30}));
  EXPECT_THAT(b->starts, ElementsAre(7, 0, 29));
  EXPECT_THAT(b->ends, ElementsAre(10, 20, -1));
  EXPECT_THAT(b->steps, ElementsAre(1, 1, -1));
  auto step3 = ResolveSlice(Shape{10}, std::vector<int64_t>{1}, std::vector<int64_t>{8}, {},
                            std::vector<int64_t>{3});
  EXPECT_EQ(step3->output, (Shape{3}));  // 1, 4, 7
  auto unknown = ResolveSlice(Shape{-1, 4}, std::vector<int64_t>{1, 1}, std::vector<int64_t>{3, 3}, {}, {});
  EXPECT_EQ(unknown->output, (Shape{-1, 2}));
  EXPECT_THAT(Message(ResolveSlice(Shape{4}, std::vector<int64_t>{0}, std::vector<int64_t>{1}, {},
                                   std::vector<int64_t>{0})
                          .status()),
              HasSubstr("step of axis 0 is 0"));
  EXPECT_FALSE(ResolveSlice(Shape::UnknownRank(), std::vector<int64_t>{0}, std::vector<int64_t>{1}, {}, {}).ok());
  // An empty dim with a negative step has nothing to clamp against.
  auto empty = ResolveSlice(Shape{0, 3}, std::vector<int64_t>{-1}, std::vector<int64_t>{-kMax}, {},
                            std::vector<int64_t>{-1});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->output, (Shape{0, 3}));
  // A huge step selects one element without overflowing.
  auto huge = ResolveSlice(Shape{5}, std::vector<int64_t>{0}, std::vector<int64_t>{5}, {},
                           std::vector<int64_t>{kMax});
  EXPECT_EQ(huge->output, (Shape{1}));
  auto huge_negative = ResolveSlice(Shape{5}, std::vector<int64_t>{4}, std::vector<int64_t>{-kMax}, {},
                                    std::vector<int64_t>{std::numeric_limits<int64_t>::min()});
  EXPECT_EQ(huge_negative->output, (Shape{1}));
}

TEST(HostileInputTest, OverflowsAreErrorsOrUnknown) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_FALSE(ResolveReshape(Shape{2}, std::vector<int64_t>{kMax, 4}, false).ok());
  EXPECT_EQ(DimProduct(std::vector<int64_t>{kMax, 4}), -1);
  EXPECT_FALSE(ComputeWindowDim(10, 3, 0, 1, 0, 0, AutoPad::kNotSet, false).ok());
  EXPECT_FALSE(ComputeWindowDim(10, 3, 1, kMax, 0, 0, AutoPad::kNotSet, false).ok());
  EXPECT_FALSE(ComputeWindowDim(10, 3, 1, 1, kMax, kMax, AutoPad::kNotSet, false).ok());
  EXPECT_FALSE(ComputeWindowDim(10, 0, 1, 1, 0, 0, AutoPad::kNotSet, false).ok());
}

TEST(ReshapeTest, ResolvesTargets) {
  EXPECT_EQ(*ResolveReshape(Shape{2, 3, 4}, std::vector<int64_t>{-1}, false), (Shape{24}));
  EXPECT_EQ(*ResolveReshape(Shape{2, 3, 4}, std::vector<int64_t>{0, -1}, false), (Shape{2, 12}));
  EXPECT_EQ(*ResolveReshape(Shape{-1, 3, 4}, std::vector<int64_t>{0, 0, -1}, false), (Shape{-1, 3, 4}));
  EXPECT_EQ(*ResolveReshape(Shape{-1, 3, 4}, std::vector<int64_t>{2, -1}, false), (Shape{2, -1}));
  EXPECT_EQ(*ResolveReshape(Shape{0, 4}, std::vector<int64_t>{0, 2, 2}, true), (Shape{0, 2, 2}));
  EXPECT_EQ(*ResolveReshape(Shape{0, 4}, std::vector<int64_t>{0, -1}, false), (Shape{0, 4}));
  EXPECT_FALSE(ResolveReshape(Shape{2, 3}, std::vector<int64_t>{4, -1}, false).ok());
  EXPECT_FALSE(ResolveReshape(Shape{2, 3}, std::vector<int64_t>{7}, false).ok());
  EXPECT_FALSE(ResolveReshape(Shape{2, 3}, std::vector<int64_t>{-2, 3}, false).ok());
}

}  // namespace
}  // namespace ge::ops

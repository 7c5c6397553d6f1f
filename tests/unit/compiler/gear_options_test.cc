// Gear options (compiler/gear_options.h): parsing, exclusivity, the 100-gear
// limit, and resolution against the graph's inputs, with every error the
// user can hit.
#include "compiler/gear_options.h"

#include "compiler/compile_options.h"
#include "gtest/gtest.h"

namespace ge::compiler {
namespace {

std::string Error(const absl::Status& s) { return std::string(s.message()); }

absl::StatusOr<ResolvedGears> Resolve(const OptionMap& options, const std::vector<GraphInput>& inputs) {
  absl::StatusOr<GearOptions> parsed = ParseGearOptions(options);
  if (!parsed.ok()) return parsed.status();
  return ResolveGears(*parsed, inputs);
}

const std::vector<GraphInput> kImage = {{"input", Shape({-1, 3, 224, 224})}};
const std::vector<GraphInput> kTokens = {{"input", Shape({-1, -1, 128})}};

TEST(GearOptionsTest, NoGearsByDefault) {
  auto parsed = ParseGearOptions({});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE(parsed->enabled());
  EXPECT_FALSE(parsed->hybrid);
}

TEST(GearOptionsTest, BatchGearsSetDimZero) {
  auto r = Resolve({{"ge.dynamicBatchSize", "1, 4,8"}}, kImage);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->shapes.size(), 3u);
  EXPECT_EQ(r->shapes[1][0], Shape({4, 3, 224, 224}));
  EXPECT_EQ(r->labels, (std::vector<std::string>{"1", "4", "8"}));
  EXPECT_EQ(r->max_shapes[0], Shape({8, 3, 224, 224}));
  EXPECT_EQ(r->user_shapes[0], Shape({-1, 3, 224, 224}));
}

TEST(GearOptionsTest, ImageSizeGearsSetTheLastTwoDims) {
  auto r = Resolve({{"ge.dynamicImageSize", "224,224;256,320"}}, {{"img", Shape({1, 3, -1, -1})}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shapes[1][0], Shape({1, 3, 256, 320}));
  EXPECT_EQ(r->max_shapes[0], Shape({1, 3, 256, 320}));
}

TEST(GearOptionsTest, DimsGearsInAtcFormAndLeadingDimsForm) {
  // One value per -1 of --input_shape.
  auto atc = Resolve({{"ge.inputShape", "input:1,-1,128"}, {"ge.dynamicDims", "32;64"}}, kTokens);
  ASSERT_TRUE(atc.ok()) << atc.status();
  EXPECT_EQ(atc->shapes[1][0], Shape({1, 64, 128}));
  // The input's leading dims through its last -1, fixed ones repeated.
  auto lead = Resolve({{"ge.inputShape", "input:1,-1,128"}, {"ge.dynamicDims", "1,32;1,64"}}, kTokens);
  ASSERT_TRUE(lead.ok()) << lead.status();
  EXPECT_EQ(lead->shapes[0][0], Shape({1, 32, 128}));
  EXPECT_EQ(lead->labels[1], "1,64");
  // Two inputs, one value per -1 in --input_shape order.
  auto two = Resolve({{"ge.inputShape", "mask:1,-1;ids:1,-1"}, {"ge.dynamicDims", "8,9;16,17"}},
                     {{"ids", Shape({1, -1})}, {"mask", Shape({1, -1})}});
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->shapes[0][1], Shape({1, 8}));  // mask first
  EXPECT_EQ(two->shapes[0][0], Shape({1, 9}));
}

TEST(GearOptionsTest, GearOptionsAreMutuallyExclusive) {
  auto r = ParseGearOptions({{"ge.dynamicBatchSize", "1,2"}, {"ge.dynamicDims", "1;2"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(Error(r.status()),
            "--dynamic_batch_size (ge.dynamicBatchSize) and --dynamic_dims (ge.dynamicDims) are mutually exclusive: "
            "give one of them");
  EXPECT_FALSE(ParseGearOptions({{"ge.dynamicImageSize", "1,2"}, {"ge.dynamicDims", "1;2"}}).ok());
}

TEST(GearOptionsTest, AtMostOneHundredGears) {
  std::string batch;
  for (int i = 1; i <= 101; ++i) batch += (i > 1 ? "," : "") + std::to_string(i);
  auto r = ParseGearOptions({{"ge.dynamicBatchSize", batch}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(Error(r.status()), "--dynamic_batch_size (ge.dynamicBatchSize) lists 101 gears; at most 100 are allowed");
  batch = batch.substr(0, batch.rfind(','));
  EXPECT_TRUE(ParseGearOptions({{"ge.dynamicBatchSize", batch}}).ok());
}

TEST(GearOptionsTest, BadGearValues) {
  EXPECT_EQ(Error(ParseGearOptions({{"ge.dynamicBatchSize", "1,0"}}).status()),
            "--dynamic_batch_size (ge.dynamicBatchSize): '0' is not an integer >= 1");
  EXPECT_EQ(Error(ParseGearOptions({{"ge.dynamicBatchSize", "4,4"}}).status()),
            "--dynamic_batch_size (ge.dynamicBatchSize) lists gear 4 twice (gears 0 and 1)");
  EXPECT_EQ(Error(ParseGearOptions({{"ge.dynamicImageSize", "224"}}).status()),
            "--dynamic_image_size (ge.dynamicImageSize) gear 0 (224) has 1 values; each gear is H,W");
  EXPECT_EQ(Error(ParseGearOptions({{"ge.compileHybridMode", "1"}}).status()),
            "ge.compileHybridMode=1 needs gears: give --dynamic_batch_size, --dynamic_image_size or --dynamic_dims");
  EXPECT_EQ(Error(ParseGearOptions({{"ge.inputShape", "1,2"}}).status()),
            "--input_shape (ge.inputShape): '1,2' is not NAME:D0,D1,...");
}

TEST(GearOptionsTest, GearThatDoesNotFitTheInputsRank) {
  auto dims = Resolve({{"ge.inputShape", "input:1,-1,128"}, {"ge.dynamicDims", "1,32,128,7"}}, kTokens);
  ASSERT_FALSE(dims.ok());
  EXPECT_EQ(Error(dims.status()),
            "gear 0 (1,32,128,7) of --dynamic_dims (ge.dynamicDims) has 4 values, more than the rank 3 of input "
            "'input' (shape [1,-1,128])");
  auto image = Resolve({{"ge.dynamicImageSize", "2,2"}}, {{"v", Shape({-1})}});
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(Error(image.status()),
            "gear 0 (2,2) of --dynamic_image_size (ge.dynamicImageSize) does not fit input 'v' of rank 1: H and W "
            "are its last two dims, so it needs rank 2 or more");
  auto count = Resolve({{"ge.dynamicDims", "1,2,3;4,5,6"}}, {{"a", Shape({-1, 4})}, {"b", Shape({-1, 4})}});
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(Error(count.status()),
            "gear 0 (1,2,3) of --dynamic_dims (ge.dynamicDims) has 3 values; the inputs have 2 unknown dims (-1), "
            "and each gear gives one value per unknown dim");
  auto shape_rank = Resolve({{"ge.inputShape", "input:1,-1"}, {"ge.dynamicDims", "1;2"}}, kTokens);
  ASSERT_FALSE(shape_rank.ok());
  EXPECT_EQ(Error(shape_rank.status()),
            "--input_shape (ge.inputShape) gives input 'input' the shape [1,-1] of rank 2, but the model's input has "
            "rank 3 ([-1,-1,128])");
}

TEST(GearOptionsTest, GearThatChangesAFixedDim) {
  auto dims = Resolve({{"ge.inputShape", "input:1,-1,128"}, {"ge.dynamicDims", "1,32;2,64"}}, kTokens);
  ASSERT_FALSE(dims.ok());
  EXPECT_EQ(Error(dims.status()),
            "gear 1 (2,64) of --dynamic_dims (ge.dynamicDims) sets dim 0 of input 'input' to 2, but that dim is "
            "fixed at 1 in --input_shape (shape [1,-1,128])");
  auto batch = Resolve({{"ge.inputShape", "input:1,3,224,224"}, {"ge.dynamicBatchSize", "1,4"}}, kImage);
  ASSERT_FALSE(batch.ok());
  EXPECT_EQ(Error(batch.status()),
            "gear 0 (1) of --dynamic_batch_size (ge.dynamicBatchSize) sets dim 0 of input 'input' to 1, but that "
            "dim is fixed at 1 in --input_shape (shape [1,3,224,224])");
  auto image = Resolve({{"ge.dynamicImageSize", "224,224;256,256"}}, {{"img", Shape({1, 3, 224, -1})}});
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(Error(image.status()),
            "gear 1 (256,256) of --dynamic_image_size (ge.dynamicImageSize) sets dim 2 of input 'img' to 256, but "
            "that dim is fixed at 224 in the model (shape [1,3,224,-1])");
}

TEST(GearOptionsTest, OtherResolutionErrors) {
  EXPECT_EQ(Error(Resolve({{"ge.inputShape", "x:1"}}, kImage).status()),
            "--input_shape (ge.inputShape) names input 'x', which the model does not have (its inputs: 'input')");
  EXPECT_EQ(Error(Resolve({{"ge.dynamicBatchSize", "1,2"}}, {{"input", Shape({-1, 3, -1})}}).status()),
            "input 'input' has shape [-1,3,-1] in the model; --dynamic_batch_size (ge.dynamicBatchSize) sets dim 0 "
            "only, so its other dims must be known");
  EXPECT_EQ(Error(Resolve({{"ge.dynamicBatchSize", "1,2"}}, {{"input", Shape::UnknownRank()}}).status()),
            "input 'input' has an unknown rank; give its shape with --input_shape");
  EXPECT_EQ(Error(Resolve({{"ge.inputShape", "input:2,-1,128"}, {"ge.dynamicDims", "4;2,4"}}, kTokens).status()),
            "gears 0 (4) and 1 (2,4) of --dynamic_dims (ge.dynamicDims) give the inputs the same shapes");
}

TEST(GearOptionsTest, CompileOptionsCarryTheGears) {
  auto options = CompileOptions::FromOptions({{"ge.dynamicBatchSize", "1,4"}, {"ge.compileHybridMode", "1"}});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->gears.mode, GearMode::kBatch);
  EXPECT_TRUE(options->gears.hybrid);
  // The option table checks the syntax first.
  auto bad = CompileOptions::FromOptions({{"ge.dynamicBatchSize", "1;x"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(Error(bad.status()).find("bad value '1;x' for option 'ge.dynamicBatchSize'"), std::string::npos);
}

}  // namespace
}  // namespace ge::compiler

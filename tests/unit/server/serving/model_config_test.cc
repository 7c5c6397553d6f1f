// config.pbtxt parsing and completion (server/serving/model_config.h): a
// good config, names Triton does not define (file and line), Triton fields
// ged ignores with a warning, those that change meaning and fail the model,
// and completion of inputs and outputs from the model's.
#include "server/serving/model_config.h"

#include "gtest/gtest.h"

namespace ge::server::serving {
namespace {

constexpr char kGood[] = R"pb(
  name: "mlp"
  platform: "onnxruntime_onnx"
  max_batch_size: 16 input
  [ {
    name: "x"
    data_type: TYPE_FP32
    dims: [ 4 ]
  }] output
  [ {
    name: "y"
    data_type: TYPE_FP32
    dims: [ 2 ]
  }]
  dynamic_batching {
    max_queue_delay_microseconds: 500
    preferred_batch_size: [ 4, 8 ]
    default_queue_policy { max_queue_size: 32 }
  } instance_group
  [ { count: 2 kind: KIND_CPU }]
  version_policy { latest { num_versions: 2 } }
)pb";

TEST(ModelConfigTest, ParsesTritonFieldNames) {
  absl::StatusOr<ParsedModelConfig> parsed = ParseModelConfig(kGood, "mlp/config.pbtxt");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const inference::ModelConfig& c = parsed->config;
  EXPECT_EQ(c.name(), "mlp");
  EXPECT_EQ(c.max_batch_size(), 16);
  ASSERT_EQ(c.input_size(), 1);
  EXPECT_EQ(c.input(0).data_type(), inference::TYPE_FP32);
  EXPECT_EQ(c.dynamic_batching().preferred_batch_size_size(), 2);
  EXPECT_EQ(c.dynamic_batching().max_queue_delay_microseconds(), 500u);
  EXPECT_EQ(c.dynamic_batching().default_queue_policy().max_queue_size(), 32u);
  EXPECT_EQ(c.instance_group(0).count(), 2);
  EXPECT_EQ(c.version_policy().latest().num_versions(), 2u);
  EXPECT_TRUE(parsed->warnings.empty());
  inference::ModelConfig config = c;
  EXPECT_TRUE(CheckModelConfig(config, "mlp", "mlp/config.pbtxt").ok());
  EXPECT_EQ(BatchGears(config), (std::vector<int64_t>{1, 4, 8, 16}));
}

TEST(ModelConfigTest, UnknownNameIsAnErrorWithFileAndLine) {
  absl::StatusOr<ParsedModelConfig> parsed =
      ParseModelConfig("name: \"m\"\nmax_batch_size: 4\nmax_batch_sise: 8\n", "repo/m/config.pbtxt");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("repo/m/config.pbtxt:3:"), std::string::npos) << parsed.status();
  EXPECT_NE(parsed.status().message().find("max_batch_sise"), std::string::npos) << parsed.status();
  // Nested too, and syntax errors.
  parsed = ParseModelConfig("input [ { name: \"x\"\n  dimz: [1] } ]\n", "c.pbtxt");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("c.pbtxt:2:"), std::string::npos) << parsed.status();
  parsed = ParseModelConfig("max_batch_size: \"x\"\n", "c.pbtxt");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("c.pbtxt:1:"), std::string::npos) << parsed.status();
}

TEST(ModelConfigTest, UnsupportedTritonFieldsWarnAndAreIgnored) {
  absl::StatusOr<ParsedModelConfig> parsed = ParseModelConfig(
      "name: \"m\"\noptimization { execution_accelerators { cpu_execution_accelerator: [ { name: \"openvino\" } ] } "
      "}\nmodel_warmup [ { name: \"w\" batch_size: 1 } ]\ndynamic_batching { preserve_ordering: true }\n",
      "m/config.pbtxt");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->warnings.size(), 3u);
  EXPECT_NE(parsed->warnings[0].find("m/config.pbtxt:2: ModelConfig.optimization"), std::string::npos)
      << parsed->warnings[0];
  EXPECT_NE(parsed->warnings[2].find("preserve_ordering"), std::string::npos);
}

TEST(ModelConfigTest, MeaningChangingFieldsFailTheModelNamingTheField) {
  for (const char* text : {"sequence_batching { max_sequence_idle_microseconds: 5 }",
                           "ensemble_scheduling { step [ { model_name: \"a\" model_version: -1 } ] }",
                           "model_transaction_policy { decoupled: true }"}) {
    absl::StatusOr<ParsedModelConfig> parsed = ParseModelConfig(text, "m/config.pbtxt");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kFailedPrecondition);
    const std::string field = std::string(text).substr(0, std::string(text).find(' '));
    EXPECT_NE(parsed.status().message().find(field), std::string::npos) << parsed.status();
  }
  absl::StatusOr<ParsedModelConfig> gpu = ParseModelConfig("instance_group [ { kind: KIND_GPU } ]", "g.pbtxt");
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  absl::Status checked = CheckModelConfig(gpu->config, "g", "g.pbtxt");
  EXPECT_EQ(checked.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(checked.message().find("KIND_GPU"), std::string::npos);
}

TEST(ModelConfigTest, CheckNamesThePlatformAndTheDirectory) {
  inference::ModelConfig c;
  c.set_name("other");
  EXPECT_EQ(CheckModelConfig(c, "m", "f").code(), absl::StatusCode::kInvalidArgument);
  c.set_name("");
  ASSERT_TRUE(CheckModelConfig(c, "m", "f").ok());
  EXPECT_EQ(c.name(), "m");
  EXPECT_EQ(c.platform(), "onnxruntime_onnx");
  c.set_platform("tensorrt_plan");
  EXPECT_EQ(CheckModelConfig(c, "m", "f").code(), absl::StatusCode::kFailedPrecondition);
  c.set_platform("onnxruntime_onnx");
  c.mutable_dynamic_batching()->add_preferred_batch_size(4);
  EXPECT_EQ(CheckModelConfig(c, "m", "f").code(), absl::StatusCode::kInvalidArgument);  // max_batch_size 0
  c.set_max_batch_size(2);
  EXPECT_EQ(CheckModelConfig(c, "m", "f").code(), absl::StatusCode::kInvalidArgument);  // 4 > 2
}

TEST(ModelConfigTest, CompletesFromTheModel) {
  const std::vector<ModelTensor> inputs = {{"x", DataType::kFloat, {-1, 4}}, {"k", DataType::kInt64, {-1}}};
  inference::ModelConfig c;
  c.set_max_batch_size(8);
  auto* x = c.add_input();
  x->set_name("x");
  ASSERT_TRUE(CompleteInputs(c, inputs).ok());
  ASSERT_EQ(c.input_size(), 2);
  EXPECT_EQ(c.input(0).data_type(), inference::TYPE_FP32);
  ASSERT_EQ(c.input(0).dims_size(), 1);
  EXPECT_EQ(c.input(0).dims(0), 4);
  EXPECT_EQ(c.input(1).name(), "k");
  EXPECT_EQ(c.input(1).dims_size(), 0);

  inference::ModelConfig unbatched;
  ASSERT_TRUE(CompleteInputs(unbatched, inputs).ok());
  EXPECT_EQ(unbatched.input(0).dims_size(), 2);
  EXPECT_EQ(unbatched.input(0).dims(0), -1);
}

TEST(ModelConfigTest, CompletionRefusesWhatContradictsTheModel) {
  inference::ModelConfig c;
  c.set_max_batch_size(4);
  absl::Status s = CompleteInputs(c, {{"x", DataType::kFloat, {1, 4}}});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("dynamic dim 0"), std::string::npos) << s;

  inference::ModelConfig typed;
  auto* in = typed.add_input();
  in->set_name("x");
  in->set_data_type(inference::TYPE_INT32);
  s = CompleteInputs(typed, {{"x", DataType::kFloat, {2}}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("TYPE_INT32"), std::string::npos) << s;

  inference::ModelConfig named;
  named.add_input()->set_name("nope");
  s = CompleteInputs(named, {{"x", DataType::kFloat, {2}}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'nope'"), std::string::npos) << s;

  inference::ModelConfig dims;
  auto* d = dims.add_input();
  d->set_name("x");
  d->add_dims(3);
  EXPECT_EQ(CompleteInputs(dims, {{"x", DataType::kFloat, {2}}}).code(), absl::StatusCode::kInvalidArgument);
  d->mutable_reshape()->add_shape(2);  // dims 3 -> reshape 2: element counts differ
  EXPECT_EQ(CompleteInputs(dims, {{"x", DataType::kFloat, {2}}}).code(), absl::StatusCode::kInvalidArgument);
}

TEST(ModelConfigTest, DatatypeNames) {
  EXPECT_EQ(KServeDatatype(DataType::kString), "BYTES");
  EXPECT_EQ(KServeDatatype(DataType::kBFloat16), "BF16");
  EXPECT_EQ(ParseKServeDatatype("FP16"), DataType::kFloat16);
  EXPECT_EQ(ParseKServeDatatype("fp32"), std::nullopt);
  EXPECT_EQ(FromConfigType(inference::TYPE_STRING), DataType::kString);
  EXPECT_EQ(ToConfigType(DataType::kUint16), inference::TYPE_UINT16);
}

}  // namespace
}  // namespace ge::server::serving

// ge::Value <-> ge.v1.Value: round trips for every kind, and the checks a
// remote peer's bad tensor must fail.
#include "proto/value_convert.h"

#include "gtest/gtest.h"

namespace ge::rpc {
namespace {

TEST(ValueConvertTest, TensorRoundTrip) {
  Tensor t = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  v1::Value proto;
  ASSERT_TRUE(ValueToProto(Value(t), &proto).ok());
  EXPECT_EQ(proto.tensor().dtype(), v1::DT_FLOAT);
  EXPECT_EQ(proto.tensor().raw_data().size(), 24u);
  auto back = ValueFromProto(proto, "x");
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->is_tensor());
  EXPECT_TRUE(TensorsEqual(back->tensor(), t));
}

TEST(ValueConvertTest, StringsSequencesAndNone) {
  Tensor s = Tensor::FromVector<std::string>({"a", "bc"}, Shape{2});
  v1::Value proto;
  ASSERT_TRUE(ValueToProto(Value(s), &proto).ok());
  EXPECT_EQ(proto.tensor().string_data_size(), 2);
  auto back = ValueFromProto(proto, "s");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(TensorsEqual(back->tensor(), s));

  Value seq = Value::Sequence({Tensor::Scalar<int64_t>(7)}, DataType::kInt64);
  ASSERT_TRUE(ValueToProto(seq, &proto).ok());
  back = ValueFromProto(proto, "seq");
  ASSERT_TRUE(back.ok() && back->is_sequence());
  EXPECT_EQ(back->element_dtype(), DataType::kInt64);
  EXPECT_EQ(back->sequence()[0].GetAsInt64(0), 7);

  ASSERT_TRUE(ValueToProto(Value(), &proto).ok());
  back = ValueFromProto(proto, "none");
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->is_none());
}

TEST(ValueConvertTest, BadTensorsNameTheValueAndTheProblem) {
  v1::Value proto;
  v1::Tensor* t = proto.mutable_tensor();
  t->set_dtype(v1::DT_FLOAT);
  t->add_dims(2);
  t->set_raw_data(std::string(7, '\0'));
  absl::Status s = ValueFromProto(proto, "input 0 (x)").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("input 0 (x)"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("needs 8 bytes, got 7"), absl::string_view::npos) << s;

  t->set_dims(0, -1);
  EXPECT_NE(ValueFromProto(proto, "x").status().message().find("negative dim"), absl::string_view::npos);
  t->set_dims(0, int64_t{1} << 40);
  t->add_dims(int64_t{1} << 40);
  EXPECT_EQ(ValueFromProto(proto, "x").status().code(), absl::StatusCode::kInvalidArgument);
  t->clear_dims();
  t->set_dtype(static_cast<v1::DataType>(99));
  EXPECT_NE(ValueFromProto(proto, "x").status().message().find("unknown dtype 99"), absl::string_view::npos);
  t->set_dtype(v1::DT_STRING);
  t->add_dims(3);
  t->clear_raw_data();
  t->add_string_data("a");
  EXPECT_NE(ValueFromProto(proto, "x").status().message().find("needs 3 strings, got 1"), absl::string_view::npos);
}

TEST(ValueConvertTest, SharedMemoryTensorsGoThroughTheResolver) {
  v1::Value proto;
  v1::Tensor* t = proto.mutable_tensor();
  t->set_dtype(v1::DT_INT32);
  t->add_dims(2);
  t->add_dims(2);
  t->mutable_shared_memory()->set_region("r");
  t->mutable_shared_memory()->set_offset(8);
  t->mutable_shared_memory()->set_byte_size(16);
  EXPECT_NE(ValueFromProto(proto, "x").status().message().find("not accepted here"), absl::string_view::npos);

  std::vector<int32_t> region = {0, 0, 1, 2, 3, 4};
  uint64_t asked = 0;
  SharedMemoryResolver resolve = [&](const v1::SharedMemoryRef& ref, uint64_t bytes,
                                     const std::string&) -> absl::StatusOr<std::shared_ptr<Buffer>> {
    asked = bytes;
    return Buffer::Wrap(reinterpret_cast<char*>(region.data()) + ref.offset(), bytes, [] {});
  };
  auto back = ValueFromProto(proto, "x", &resolve);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(asked, 16u);
  // No copy: the tensor reads the region.
  EXPECT_EQ(back->tensor().raw_data(), static_cast<void*>(&region[2]));
  EXPECT_EQ(back->tensor().data<int32_t>()[3], 4);

  t->set_raw_data("abcd");
  EXPECT_NE(ValueFromProto(proto, "x", &resolve).status().message().find("carries data in the message too"),
            absl::string_view::npos);
  t->clear_raw_data();
  t->set_dtype(v1::DT_STRING);
  EXPECT_NE(ValueFromProto(proto, "x", &resolve).status().message().find("string tensor cannot be in shared"),
            absl::string_view::npos);
}

}  // namespace
}  // namespace ge::rpc

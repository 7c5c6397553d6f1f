// SequenceMap on control_flow through a Session: sequence inputs give one
// element per run of the body, tensors and captures pass whole.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/runtime/engines/control_flow/cf_test_util.h"

namespace ge::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// m = SequenceMap(s, k, captured c): (s[i] + k) * c per element.
constexpr char kMapGraph[] = R"(graph main {
  s = Data() {index = 0} -> (seq<f32[-1]>)
  k = Data() {index = 1} -> (f32[1])
  c = Data() {index = 2} -> (f32[])
  m = SequenceMap(s, k, c) {_onnx_num_captures = 1} subgraphs(body_0)
  out = NetOutput(m)
}
graph body_0 parent(main, m) {
  a = Data() {index = 0} -> (f32[-1])
  b = Data() {index = 1} -> (f32[1])
  cap = Data() {index = 2} -> (f32[])
  y = Add(a, b)
  z = Mul(y, cap)
  out = NetOutput(z)
})";

std::vector<float> Floats(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements()); }

TEST(SequenceMap, RunsTheBodyPerElementWithTensorsAndCapturesWhole) {
  std::unique_ptr<session::Session> session;
  const Value seq = Value::Sequence({Tensor::FromVector<float>({1, 2}, Shape{2}), Tensor::FromVector<float>({3}, Shape{1})},
                                    DataType::kFloat);
  auto out = CompileAndRun(ParseOrDie(kMapGraph),
                           {seq, Tensor::FromVector<float>({1}, Shape{1}), Tensor::Scalar<float>(10)}, {}, nullptr,
                           &session);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE((*out)[0].is_sequence());
  ASSERT_EQ((*out)[0].sequence().size(), 2u);
  EXPECT_THAT(Floats((*out)[0].sequence()[0]), ElementsAre(20, 30));
  EXPECT_THAT(Floats((*out)[0].sequence()[1]), ElementsAre(40));
  EXPECT_EQ(EngineOf(*session, "m"), "control_flow");
  // An empty sequence maps to an empty sequence of the body's dtype.
  auto empty = session->RunGraph(0, {Value::Sequence({}, DataType::kFloat), Tensor::FromVector<float>({1}, Shape{1}),
                                     Tensor::Scalar<float>(10)});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE((*empty)[0].sequence().empty());
  EXPECT_EQ((*empty)[0].element_dtype(), DataType::kFloat);
}

TEST(SequenceMap, SequenceInputsMustHaveOneLength) {
  std::string text = kMapGraph;
  text.replace(text.find("(f32[1])"), 8, "(seq<f32[1]>)");
  const Value two = Value::Sequence({Tensor::FromVector<float>({1}, Shape{1}), Tensor::FromVector<float>({2}, Shape{1})},
                                    DataType::kFloat);
  const Value one = Value::Sequence({Tensor::FromVector<float>({1}, Shape{1})}, DataType::kFloat);
  auto out = CompileAndRun(text, {two, one, Tensor::Scalar<float>(1)});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("input 1 has 1 elements, input 0 has 2"));
}

}  // namespace
}  // namespace ge::test

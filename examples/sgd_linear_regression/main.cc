// sgd_linear_regression: trains y = 3x + 2 with session variables.
//
// One graph computes the mean squared error of w * x + b on a fixed batch
// and updates w and b in place with AssignSub (plain gradient descent). The
// graph runs 200 times in one session: the variables keep their values
// between runs, which is what this example shows. The last line printed is
// `final loss <value>`; the test built from this example requires it below
// 1e-4, and w and b close to 3 and 2.
#include <cmath>
#include <cstdio>
#include <vector>

#include "base/ir/text_format.h"
#include "runtime/engines/engine_registry.h"
#include "session/session.h"

namespace {

constexpr int kSamples = 64;
constexpr int kSteps = 200;

// lr * 2 / N folds the mean's gradient factor and the learning rate.
constexpr const char* kGraph = R"(graph sgd {
  x = Data() {index = 0} -> (f32[64,1])
  y = Data() {index = 1} -> (f32[64,1])
  w = Variable() {dtype = 1, shape = shape[1,1], value = tensor<f32[1,1]>[0.0]} -> (f32[1,1])
  b = Variable() {dtype = 1, shape = shape[1], value = tensor<f32[1]>[0.0]} -> (f32[1])
  xw = MatMul(x:0, w:0) -> (f32[64,1])
  pred = Add(xw:0, b:0) -> (f32[64,1])
  diff = Sub(pred:0, y:0) -> (f32[64,1])
  sq = Mul(diff:0, diff:0) -> (f32[64,1])
  loss = ReduceMean(sq:0) {keepdims = 0} -> (f32[])
  xt = Transpose(x:0) {perm = [1, 0]} -> (f32[1,64])
  gw_sum = MatMul(xt:0, diff:0) -> (f32[1,1])
  axes = Const() {value = tensor<i64[1]>[0]} -> (i64[1])
  gb_sum = ReduceSum(diff:0, axes:0) {keepdims = 0} -> (f32[1])
  scale = Const() {value = tensor<f32[]>[0.009375]} -> (f32[])
  gw = Mul(gw_sum:0, scale:0) -> (f32[1,1])
  gb = Mul(gb_sum:0, scale:0) -> (f32[1])
  w_new = AssignSub(w:0, gw:0) -> (f32[1,1])
  b_new = AssignSub(b:0, gb:0) -> (f32[1])
  out = NetOutput(loss:0, w_new:0, b_new:0)
})";

}  // namespace

int main() {
  auto engines = ge::engine::CreateEngineRegistry({}, {});
  if (!engines.ok()) {
    std::fprintf(stderr, "loading engines: %s\n", std::string(engines.status().message()).c_str());
    return 2;
  }
  auto graph = ge::ir::ParseGraph(kGraph);
  if (!graph.ok()) {
    std::fprintf(stderr, "parsing the graph: %s\n", std::string(graph.status().message()).c_str());
    return 2;
  }
  std::vector<float> xs(kSamples), ys(kSamples);
  for (int i = 0; i < kSamples; ++i) {
    xs[i] = -1.0f + 2.0f * static_cast<float>(i) / (kSamples - 1);
    ys[i] = 3.0f * xs[i] + 2.0f;
  }
  const ge::Tensor x = ge::Tensor::FromVector<float>(xs, ge::Shape{kSamples, 1});
  const ge::Tensor y = ge::Tensor::FromVector<float>(ys, ge::Shape{kSamples, 1});

  ge::session::Session session(**engines, {}, nullptr);
  if (absl::Status s = session.AddGraph(1, *std::move(graph)); !s.ok()) {
    std::fprintf(stderr, "adding the graph: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  float loss = 0;
  for (int step = 0; step < kSteps; ++step) {
    auto out = session.RunGraph(1, {ge::Value(x), ge::Value(y)});
    if (!out.ok()) {
      std::fprintf(stderr, "step %d: %s\n", step, std::string(out.status().message()).c_str());
      return 1;
    }
    loss = (*out)[0].tensor().data<float>()[0];
    if (step % 25 == 0) {
      std::printf("step %3d  loss %.6g  w %.5f  b %.5f\n", step, loss, (*out)[1].tensor().data<float>()[0],
                  (*out)[2].tensor().data<float>()[0]);
    }
  }
  auto w = session.GetVariable("w");
  auto b = session.GetVariable("b");
  if (!w.ok() || !b.ok()) {
    std::fprintf(stderr, "reading the variables: %s\n", std::string((w.ok() ? b.status() : w.status()).message()).c_str());
    return 1;
  }
  std::printf("w %.5f  b %.5f\n", w->data<float>()[0], b->data<float>()[0]);
  std::printf("final loss %.3g\n", loss);
  return std::isfinite(loss) ? 0 : 1;
}

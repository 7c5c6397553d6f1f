// Conformance cases of cpu_dense's recurrent kernels (RNN, GRU, LSTM)
// against host_cpu's reference: random steps, batch, input and hidden sizes
// (hidden sizes that do and do not fill the kernel's column panels), every
// direction, both layouts, optional bias, sequence_lens (zero-length rows
// included), initial states and peepholes, clip, non-default activations
// with their parameters, GRU's linear_before_reset either way, LSTM's
// input_forget, constant and computed weights, and the zoo's shapes.
#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"

namespace ge::engine::cpu_dense {
namespace {

struct RnnShape {
  int64_t seq, batch, input, hidden;
};

int64_t Gates(const std::string& type) { return type == "RNN" ? 1 : type == "GRU" ? 3 : 4; }
int64_t Activations(const std::string& type) { return type == "RNN" ? 1 : type == "GRU" ? 2 : 3; }

// One case of `type`; `full` draws every optional input and attribute,
// otherwise only the ones torch exports use (bias, initial_h / initial_c).
Case RnnCase(Rng& rng, const std::string& type, const RnnShape& s, bool full) {
  const int64_t dirs = full && rng.Bool() ? 2 : (rng.Int(0, 3) == 0 ? 2 : 1);
  const std::string direction = dirs == 2 ? "bidirectional" : (full && rng.Bool() ? "reverse" : "forward");
  const bool batch_major = full && rng.Int(0, 2) == 0;
  const int64_t g = Gates(type), h = s.hidden;
  const double scale = 1.0 / std::sqrt(static_cast<double>(h + s.input));
  ir::AttrMap attrs = {{"hidden_size", ir::AttrValue(h)}, {"direction", ir::AttrValue(direction)}};
  if (batch_major) attrs["layout"] = ir::AttrValue(int64_t{1});
  const Shape x = batch_major ? Shape{s.batch, s.seq, s.input} : Shape{s.seq, s.batch, s.input};
  const Shape state = batch_major ? Shape{s.batch, dirs, h} : Shape{dirs, s.batch, h};
  std::vector<Value> inputs = {rng.Random(DataType::kFloat, x, -2, 2),
                               rng.Random(DataType::kFloat, Shape{dirs, g * h, s.input}, -2 * scale, 2 * scale),
                               rng.Random(DataType::kFloat, Shape{dirs, g * h, h}, -2 * scale, 2 * scale)};
  const int max_inputs = type == "LSTM" ? 8 : 6;
  for (int port = 3; port < max_inputs; ++port) {
    const bool take = port == 3 || port == 5 || port == 6 ? rng.Int(0, 3) != 0 : full && rng.Bool();
    if (!take) {
      inputs.push_back(Value());
      continue;
    }
    if (port == 3) inputs.push_back(rng.Random(DataType::kFloat, Shape{dirs, 2 * g * h}, -0.5, 0.5));
    if (port == 4) {
      Tensor lens = Tensor::Allocate(DataType::kInt32, Shape{s.batch}).value();
      for (int64_t b = 0; b < s.batch; ++b) lens.data<int32_t>()[b] = static_cast<int32_t>(rng.Int(0, s.seq));
      inputs.push_back(lens);
    }
    if (port == 5 || port == 6) inputs.push_back(rng.Random(DataType::kFloat, state));
    if (port == 7) inputs.push_back(rng.Random(DataType::kFloat, Shape{dirs, 3 * h}, -0.5, 0.5));
  }
  while (!inputs.empty() && !inputs.back().is_tensor()) inputs.pop_back();
  if (full && rng.Int(0, 3) == 0) attrs["clip"] = ir::AttrValue(rng.Float(0.5f, 3.0f));
  if (type == "GRU") attrs["linear_before_reset"] = ir::AttrValue(int64_t{rng.Bool() ? 1 : 0});
  if (type == "LSTM" && full && rng.Int(0, 3) == 0) attrs["input_forget"] = ir::AttrValue(int64_t{1});
  if (full && rng.Int(0, 2) == 0) {
    const std::vector<std::string> bounded = {"Sigmoid", "Tanh", "HardSigmoid", "Softsign", "ScaledTanh"};
    const std::vector<std::string> any = {"Sigmoid", "Tanh",     "Relu",     "Affine",         "LeakyRelu",
                                          "Elu",     "Softsign", "Softplus", "ThresholdedRelu"};
    std::vector<std::string> names;
    std::vector<float> alphas, betas;
    for (int64_t i = 0; i < dirs * Activations(type); ++i) {
      // Gates (the first activation of GRU and LSTM) mix states: keep them in [0, 1].
      const bool gate = type != "RNN" && i % Activations(type) == 0;
      names.push_back(gate ? rng.Pick(bounded) : rng.Pick(any));
      alphas.push_back(rng.Float(0.1f, 0.9f));
      betas.push_back(rng.Float(0.1f, 0.9f));
    }
    attrs["activations"] = ir::AttrValue(names);
    attrs["activation_alpha"] = ir::AttrValue(alphas);
    attrs["activation_beta"] = ir::AttrValue(betas);
  }
  const int outputs = static_cast<int>(rng.Int(1, type == "LSTM" ? 3 : 2));
  Case c = MakeCase(type, std::move(inputs), std::move(attrs), std::nullopt, outputs);
  if (rng.Bool()) c.const_inputs = {1, 2, 3};
  return c;
}

std::vector<Case> RnnCases(Rng& rng, const std::string& type) {
  std::vector<Case> cases;
  for (int trial = 0; trial < 40; ++trial) {
    const RnnShape s{rng.Int(1, 6), rng.Int(1, 5), rng.Int(1, 9), rng.Pick<int64_t>({1, 3, 8, 16, 17, 33})};
    cases.push_back(RnnCase(rng, type, s, /*full=*/trial >= 8));
  }
  // The zoo's models (bench/zoo: a 2-layer LSTM, a bidirectional GRU), at batch 1 and 4.
  for (int64_t batch : {1, 4}) {
    cases.push_back(RnnCase(rng, type, RnnShape{24, batch, 64, type == "GRU" ? 96 : 128}, false));
  }
  return cases;
}

}  // namespace

void AddRnnCases(CaseTable& table) {
  for (const char* type : {"RNN", "GRU", "LSTM"}) {
    table[type] = [type](Rng& rng) { return RnnCases(rng, type); };
  }
}

}  // namespace ge::engine::cpu_dense

// RNN, GRU and LSTM on cpu_dense against host_cpu on a team of threads:
// directions on their own threads, large batches split by rows, small
// batches split by hidden units (rnn_kernel.cc), single steps with large
// weights, and the packed weights one storage shares between kernels.
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "base/thread_pool.h"
#include "runtime/engines/cpu_dense/shared_packings.h"
#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"

namespace ge::engine::cpu_dense {
namespace {

// RNN, GRU and LSTM with two threads: the directions of a bidirectional op
// run on their own threads, batches of eight rows or more split into
// blocks of rows (rnn_kernel.cc), a smaller batch of one direction runs on
// one thread, as do recurrent products below 2^20 multiply-adds. Forward, reverse and both, both layouts, sequence_lens
// with finished and empty rows, initial states, clip and peepholes, constant and computed weights, and one step.
TEST(CpuDenseThreads, RecurrentKernelsMatchTheReferenceOnTwoThreads) {
  Rng rng(11);
  test::RunOptions options;
  options.thread_pool = test::TestThreadPool();
  int trial = 0;
  for (const std::string type : {"RNN", "GRU", "LSTM"}) {
    const int64_t gates = type == "RNN" ? 1 : type == "GRU" ? 3 : 4;
    for (const auto& [seq, batch, hidden, dirs] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
             {5, 1, 64, 2},
             {4, 9, 48, 1},
             {1, 8, 32, 2},
             {6, 11, 33, 1},
             {3, 3, 16, 2},
             {2, 4, 40, 1},
             // Recurrent products past 2^20 multiply-adds, which do split over the threads.
             {16, 12, 100, 1},
             {20, 3, 100, 2},
             {3, 9, 256, 2}}) {
      ++trial;
      const bool batch_major = trial % 2 == 0, reverse = trial % 3 == 0;
      const std::string direction = dirs == 2 ? "bidirectional" : reverse ? "reverse" : "forward";
      const int64_t input = rng.Int(1, 20);
      const double scale = 1.0 / std::sqrt(static_cast<double>(hidden + input));
      ir::AttrMap attrs = {{"hidden_size", ir::AttrValue(hidden)}, {"direction", ir::AttrValue(direction)}};
      if (batch_major) attrs["layout"] = ir::AttrValue(int64_t{1});
      if (trial % 4 == 1) attrs["clip"] = ir::AttrValue(1.5f);
      if (type == "GRU") attrs["linear_before_reset"] = ir::AttrValue(int64_t{trial % 2});
      const Shape x = batch_major ? Shape{batch, seq, input} : Shape{seq, batch, input};
      const Shape state = batch_major ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
      Tensor lens = Tensor::Allocate(DataType::kInt32, Shape{batch}).value();
      for (int64_t b = 0; b < batch; ++b) lens.data<int32_t>()[b] = static_cast<int32_t>(rng.Int(0, seq));
      std::vector<Value> inputs = {
          rng.Random(DataType::kFloat, x, -2, 2),
          rng.Random(DataType::kFloat, Shape{dirs, gates * hidden, input}, -2 * scale, 2 * scale),
          rng.Random(DataType::kFloat, Shape{dirs, gates * hidden, hidden}, -2 * scale, 2 * scale),
          rng.Random(DataType::kFloat, Shape{dirs, 2 * gates * hidden}, -0.5, 0.5),
          trial % 2 == 1 ? Value(lens) : Value(),
          rng.Random(DataType::kFloat, state)};
      if (type == "LSTM") {
        inputs.push_back(rng.Random(DataType::kFloat, state));
        inputs.push_back(rng.Random(DataType::kFloat, Shape{dirs, 3 * hidden}, -0.5, 0.5));
      }
      const Case c = MakeCase(type, std::move(inputs), std::move(attrs), std::nullopt, type == "LSTM" ? 3 : 2);
      options.const_inputs = trial % 2 == 0 ? std::vector<int>{1, 2, 3} : std::vector<int>{};
      EXPECT_TRUE(test::MatchesReference(Dense(), Host(), c.op, c.inputs, c.tolerance, options))
          << type << " seq " << seq << " batch " << batch << " hidden " << hidden << " " << direction;
    }
  }
}

// One direction of fewer than eight rows runs its steps on one thread; its
// input projection stays there below 2^23 multiply-adds and splits over the
// team above (rnn_kernel.cc, kSerialStepsSplitWork): both sides, forward and
// reverse, with the two-thread pool.
TEST(CpuDenseThreads, RecurrentProjectionOfSerialStepsMatchesTheReference) {
  Rng rng(12);
  test::RunOptions options;
  options.thread_pool = test::TestThreadPool();
  for (const std::string type : {"GRU", "LSTM"}) {
    const int64_t gates = type == "GRU" ? 3 : 4;
    // 24 x 4 x 64 x (4 x 128) = 3.1M (lstm_2layer at batch 4) and 48 x 5 x 300 x (4 x 130) = 37M.
    for (const auto& [seq, batch, input, hidden] :
         std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{{24, 4, 64, 128}, {48, 5, 300, 130}}) {
      const std::string direction = batch == 4 ? "forward" : "reverse";
      const double scale = 1.0 / std::sqrt(static_cast<double>(hidden + input));
      ir::AttrMap attrs = {{"hidden_size", ir::AttrValue(hidden)}, {"direction", ir::AttrValue(direction)}};
      if (type == "GRU") attrs["linear_before_reset"] = ir::AttrValue(int64_t{1});
      const Case c = MakeCase(type,
                              {rng.Random(DataType::kFloat, Shape{seq, batch, input}, -2, 2),
                               rng.Random(DataType::kFloat, Shape{1, gates * hidden, input}, -2 * scale, 2 * scale),
                               rng.Random(DataType::kFloat, Shape{1, gates * hidden, hidden}, -2 * scale, 2 * scale),
                               rng.Random(DataType::kFloat, Shape{1, 2 * gates * hidden}, -0.5, 0.5)},
                              std::move(attrs), std::nullopt, 2);
      options.const_inputs = {1, 2, 3};
      EXPECT_TRUE(test::MatchesReference(Dense(), Host(), c.op, c.inputs, c.tolerance, options))
          << type << " seq " << seq << " batch " << batch << " input " << input << " hidden " << hidden;
    }
  }
}

// A smaller batch of one direction splits each step by blocks of units
// when the step is large enough (rnn_kernel.cc, RunUnitSteps): every cell
// type (GRU with linear_before_reset either way), batch 1 to 7, hidden
// sizes off the sixteen-unit groups (blocks of unequal size, a last group
// in part), forward, reverse and (four threads: two per direction)
// bidirectional, both layouts, sequence_lens shorter than the sequence
// (finished and empty rows), initial states given or absent, clip,
// peepholes and non-default activations (the unfused cells), at 1, 2, 3
// and 4 threads: each matches the reference. (The kernel's team is capped
// at the host's CPUs: on a 2-CPU host 3 and 4 run as 2, and bidirectional
// ops split by directions.)
TEST(CpuDenseThreads, RecurrentStepsSplitByUnitsMatchTheReference) {
  Rng rng(13);
  std::vector<std::unique_ptr<ThreadPool>> pools;
  for (int workers = 0; workers < 4; ++workers) {
    pools.push_back(std::make_unique<ThreadPool>(workers, "rnn-units-" + std::to_string(workers)));
  }
  int trial = 0;
  for (const std::string type : {"RNN", "GRU", "LSTM"}) {
    const int64_t gates = type == "RNN" ? 1 : type == "GRU" ? 3 : 4;
    // Past 2^16 multiply-adds a step and 256 gate columns at batch 1.
    const int64_t hidden = type == "RNN" ? 257 : type == "GRU" ? 150 : 130;
    for (int64_t batch = 1; batch <= 7; ++batch) {
      ++trial;
      const int64_t seq = 16 + trial % 3, input = rng.Int(1, 12);
      const int64_t dirs = trial % 4 == 3 ? 2 : 1;
      const bool batch_major = trial % 2 == 0, reverse = trial % 3 == 1;
      const std::string direction = dirs == 2 ? "bidirectional" : reverse ? "reverse" : "forward";
      const double scale = 1.0 / std::sqrt(static_cast<double>(hidden + input));
      ir::AttrMap attrs = {{"hidden_size", ir::AttrValue(hidden)}, {"direction", ir::AttrValue(direction)}};
      if (batch_major) attrs["layout"] = ir::AttrValue(int64_t{1});
      if (trial % 5 == 1) attrs["clip"] = ir::AttrValue(1.5f);
      if (type == "GRU") attrs["linear_before_reset"] = ir::AttrValue(int64_t{trial % 2});
      if (trial % 6 == 4) {  // the unfused cells
        const int64_t count = (type == "RNN" ? 1 : type == "GRU" ? 2 : 3) * dirs;
        std::vector<std::string> names(count, "Softsign");
        for (int64_t i = 0; i < count; ++i) {
          if (type != "RNN" && i % (count / dirs) == 0) names[i] = "HardSigmoid";
        }
        attrs["activations"] = ir::AttrValue(names);
      }
      const Shape x = batch_major ? Shape{batch, seq, input} : Shape{seq, batch, input};
      const Shape state = batch_major ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
      Tensor lens = Tensor::Allocate(DataType::kInt32, Shape{batch}).value();
      for (int64_t b = 0; b < batch; ++b) lens.data<int32_t>()[b] = static_cast<int32_t>(rng.Int(0, seq));
      lens.data<int32_t>()[0] = static_cast<int32_t>(seq);
      const bool with_lens = trial % 2 == 1, with_states = trial % 3 != 2;
      std::vector<Value> inputs = {
          rng.Random(DataType::kFloat, x, -2, 2),
          rng.Random(DataType::kFloat, Shape{dirs, gates * hidden, input}, -2 * scale, 2 * scale),
          rng.Random(DataType::kFloat, Shape{dirs, gates * hidden, hidden}, -2 * scale, 2 * scale),
          rng.Random(DataType::kFloat, Shape{dirs, 2 * gates * hidden}, -0.5, 0.5),
          with_lens ? Value(lens) : Value(),
          with_states ? Value(rng.Random(DataType::kFloat, state)) : Value()};
      if (type == "LSTM") {
        inputs.push_back(with_states ? Value(rng.Random(DataType::kFloat, state)) : Value());
        inputs.push_back(trial % 4 == 0 ? Value(rng.Random(DataType::kFloat, Shape{dirs, 3 * hidden}, -0.5, 0.5))
                                        : Value());
      }
      while (!inputs.back().is_tensor()) inputs.pop_back();
      const Case c = MakeCase(type, std::move(inputs), std::move(attrs), std::nullopt, type == "LSTM" ? 3 : 2);
      for (int threads = 1; threads <= 4; ++threads) {
        if (dirs == 1 && threads == 4) continue;
        test::RunOptions options;
        options.thread_pool = pools[threads - 1].get();
        options.const_inputs = threads % 2 == 0 ? std::vector<int>{1, 2, 3} : std::vector<int>{};
        EXPECT_TRUE(test::MatchesReference(Dense(), Host(), c.op, c.inputs, c.tolerance, options))
            << type << " batch " << batch << " seq " << seq << " hidden " << hidden << " " << direction << " threads "
            << threads << (with_lens ? " lens" : "") << (with_states ? " states" : "");
      }
    }
  }
}

// One step of one direction with W and R past 1 MB (a decoder's GRU step)
// splits by units too, whatever its few multiply-adds (rnn_kernel.cc,
// kParallelWeightBytes): GRU either way and LSTM, batch 1 to 3, hidden
// sizes off the groups, with and without initial states, at 1 and 2
// threads.
TEST(CpuDenseThreads, RecurrentSingleStepsWithLargeWeightsMatchTheReference) {
  Rng rng(14);
  ThreadPool one_worker(1, "rnn-step-1");
  int trial = 0;
  for (const std::string type : {"GRU", "LSTM"}) {
    const int64_t gates = type == "GRU" ? 3 : 4, hidden = type == "GRU" ? 203 : 170, input = 395;
    for (int64_t batch = 1; batch <= 3; ++batch) {
      ++trial;
      const double scale = 1.0 / std::sqrt(static_cast<double>(hidden + input));
      ir::AttrMap attrs = {{"hidden_size", ir::AttrValue(hidden)}};
      if (type == "GRU") attrs["linear_before_reset"] = ir::AttrValue(int64_t{trial % 2});
      std::vector<Value> inputs = {
          rng.Random(DataType::kFloat, Shape{1, batch, input}, -2, 2),
          rng.Random(DataType::kFloat, Shape{1, gates * hidden, input}, -2 * scale, 2 * scale),
          rng.Random(DataType::kFloat, Shape{1, gates * hidden, hidden}, -2 * scale, 2 * scale),
          rng.Random(DataType::kFloat, Shape{1, 2 * gates * hidden}, -0.5, 0.5)};
      if (trial % 2 == 1) {
        inputs.push_back(Value());
        inputs.push_back(rng.Random(DataType::kFloat, Shape{1, batch, hidden}));
      }
      const Case c = MakeCase(type, std::move(inputs), std::move(attrs), std::nullopt, 2);
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &one_worker}) {
        test::RunOptions options;
        options.thread_pool = pool;
        options.const_inputs = {1, 2, 3};
        EXPECT_TRUE(test::MatchesReference(Dense(), Host(), c.op, c.inputs, c.tolerance, options))
            << type << " batch " << batch << (pool ? " 2 threads" : " 1 thread");
      }
    }
  }
}

// Two recurrent nodes over the same constant W and R (an unrolled
// decoder's steps) share one packing of each (shared_packings.h): the
// second kernel's Prepare packs nothing while the first holds them, and
// both compute the reference's result.
TEST(CpuDenseThreads, RecurrentNodesOfOneStorageShareTheirPackedWeights) {
  Rng rng(15);
  const int64_t hidden = 40, input = 24;
  const Case c = MakeCase("GRU",
                          {rng.Random(DataType::kFloat, Shape{3, 2, input}, -2, 2),
                           rng.Random(DataType::kFloat, Shape{1, 3 * hidden, input}, -0.3, 0.3),
                           rng.Random(DataType::kFloat, Shape{1, 3 * hidden, hidden}, -0.3, 0.3),
                           rng.Random(DataType::kFloat, Shape{1, 6 * hidden}, -0.5, 0.5)},
                          {{"hidden_size", ir::AttrValue(hidden)}, {"linear_before_reset", ir::AttrValue(int64_t{0})}},
                          std::nullopt, 2);
  auto types = test::InferOutputTypes(c.op, c.inputs);
  ASSERT_TRUE(types.ok()) << types.status();
  ir::OpDesc typed = c.op;
  for (int i = 0; i < typed.num_outputs(); ++i) typed.mutable_output(i).type = (*types)[i];
  engine::PrepareContext prepare;
  prepare.op = &typed;
  for (const Value& v : c.inputs) prepare.input_types.push_back(test::TypeOf(v));
  prepare.output_types = *types;
  prepare.const_inputs = {nullptr, &c.inputs[1].tensor(), &c.inputs[2].tensor(), &c.inputs[3].tensor()};
  prepare.num_threads = 1;
  std::vector<std::unique_ptr<engine::Kernel>> kernels;
  std::vector<int64_t> made;
  for (int k = 0; k < 2; ++k) {
    auto kernel = Dense().kernel_factory().CreateKernel(typed);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    const int64_t before = SharedPackings::Made().load();
    ASSERT_TRUE((*kernel)->Prepare(prepare).ok());
    made.push_back(SharedPackings::Made().load() - before);
    kernels.push_back(*std::move(kernel));
  }
  EXPECT_EQ(made[0], 3);  // W, R's update and reset gates, R's candidate
  EXPECT_EQ(made[1], 0);
  EXPECT_TRUE(test::MatchesReference(Dense(), Host(), c.op, c.inputs, c.tolerance));
}

}  // namespace
}  // namespace ge::engine::cpu_dense

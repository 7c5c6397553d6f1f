// Fuzz target for a .gem from memory, as the daemon takes LoadModel's
// bytes: runtime::LoadGemFromBytes, then, for a model it accepts, a session
// that loads its executor (the StaticExecutor binds every task, so each
// engine reads its task's parameter blob and checks every reference; the
// DynamicExecutor creates every node's kernel) and runs it once on small
// inputs. Every byte is untrusted (docs/security.md, "hostile .gem").
//
// The built-in engines are loaded (from the build's plugin directory, as
// gectl and the daemon do) so that a seed compiled by `gectl compile`
// passes the host check and reaches the program and the engines; without
// them only models that name no engine get that far.
//
// Memory is bounded as a tenant's is: the session allocates from a device
// view with a 64 MiB quota and charges its host memory to a 64 MiB
// max_memory_bytes, so a file asking for a huge arena or output gets
// RESOURCE_EXHAUSTED rather than the machine's memory. Runs stop after one
// second (RunControl deadline).
//
// Properties: no input crashes the loader, the executors or a run (ASan,
// UBSan); a model the loader accepts has a graph that passes the IR
// verifier, and every weight of its program comes from a node of that
// graph; whatever a run does, the quotas hold nothing once the session is
// gone.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "base/ir/verifier.h"
#include "fuzz/fuzz_check.h"
#include "runtime/device/quota_device.h"
#include "runtime/engines/engine_registry.h"
#include "runtime/executor/run_control.h"
#include "runtime/model/gem.h"
#include "session/session.h"

namespace {

constexpr int64_t kQuotaBytes = int64_t{64} << 20;
constexpr int64_t kMaxInputBytes = int64_t{1} << 20;

const ge::engine::EngineRegistry& Engines() {
  static const ge::engine::EngineRegistry* const engines = [] {
    auto loaded = ge::engine::CreateEngineRegistry({}, {});
    if (loaded.ok()) return static_cast<const ge::engine::EngineRegistry*>(loaded->release());
    ge::fuzz::Note("CreateEngineRegistry", loaded.status());
    return static_cast<const ge::engine::EngineRegistry*>(new ge::engine::EngineRegistry());
  }();
  return *engines;
}

// A small input of `type`: unknown dims become 1; nullopt when it is not a
// tensor, has an unknown rank or would pass kMaxInputBytes.
std::optional<ge::Value> SmallInput(const ge::ir::ValueType& type) {
  if (!type.is_tensor() || type.shape().unknown_rank()) return std::nullopt;
  ge::Shape shape;
  for (int64_t d : type.shape().dims()) shape.push_back(d < 0 ? 1 : d);
  auto count = shape.NumElements();
  if (!count.ok()) return std::nullopt;
  const ge::DataType dtype = type.dtype() == ge::DataType::kUndefined ? ge::DataType::kFloat : type.dtype();
  auto bytes = ge::ByteSizeOf(dtype, *count);
  if (!bytes.ok() || static_cast<int64_t>(*bytes) > kMaxInputBytes) return std::nullopt;
  auto tensor = ge::Tensor::Allocate(dtype, shape);
  if (!tensor.ok()) return std::nullopt;
  if (dtype != ge::DataType::kString && dtype != ge::DataType::kBool) {
    // Small positive bytes: valid indices and sizes for most ops.
    std::memset(tensor->raw_data(), 1, *bytes);
  }
  return ge::Value(*std::move(tensor));
}

void LoadAndRun(ge::runtime::CompiledModel model) {
  ge::device::DeviceSpec spec;
  spec.num_threads = 1;
  ge::device::CpuDevice cpu(spec);
  auto memory = std::make_shared<ge::device::MemoryQuota>("fuzz tenant", kQuotaBytes, nullptr, "max_memory_bytes");
  auto device_quota = std::make_shared<ge::device::MemoryQuota>("fuzz tenant", kQuotaBytes, memory,
                                                                "max_device_memory_bytes", "device memory quota");
  {
    ge::device::QuotaDevice device(cpu, device_quota);
    {
      ge::session::Session session(Engines(), {}, nullptr, &device);
      session.set_memory_quota(memory);
      absl::Status added = session.AddCompiledModel(0, std::move(model));
      ge::fuzz::Note("AddCompiledModel", added);
      if (!added.ok()) return;
      absl::StatusOr<ge::session::GraphInfo> info = session.GetGraphInfo(0);
      if (!info.ok()) return;
      std::vector<ge::Value> inputs;
      for (const auto& io : info->inputs) {
        std::optional<ge::Value> v = SmallInput(io.type);
        if (!v) return;
        inputs.push_back(*std::move(v));
      }
      ge::runtime::RunControl control;
      control.set_deadline(ge::runtime::RunControl::Clock::now() + std::chrono::seconds(1));
      absl::StatusOr<std::vector<ge::Value>> out = session.RunGraph(0, std::move(inputs), &control);
      ge::fuzz::Note("RunGraph", out.status());
    }
  }
  if (memory->in_use_bytes() != 0) ge::fuzz::FuzzFail("a closed session holds no quota");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ge::fuzz::QuietLogs();
  (void)Engines();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<ge::runtime::CompiledModel> model = ge::runtime::LoadGemFromBytes(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz input", Engines());
  ge::fuzz::Note("LoadGemFromBytes", model.status());
  if (!model.ok()) return 0;
  if (model->graph == nullptr) ge::fuzz::FuzzFail("an accepted .gem has a graph");
  ge::fuzz::FuzzCheckOk(ge::ir::VerifyGraph(*model->graph), "an accepted .gem's graph verifies");
  if (model->partitioned != nullptr) {
    ge::fuzz::FuzzCheckOk(ge::ir::VerifyGraph(*model->partitioned), "an accepted .gem's partitioned graph verifies");
  }
  if (model->program) {
    for (const auto& weight : model->program->weights) {
      if (model->graph->FindNode(weight.node) == nullptr) {
        ge::fuzz::FuzzFail("every weight of an accepted program comes from a node of its graph", weight.node);
      }
    }
  }
  LoadAndRun(*std::move(model));
  return 0;
}

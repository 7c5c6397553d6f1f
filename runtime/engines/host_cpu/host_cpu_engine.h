// host_cpu: the reference engine (GE's host CPU engine, seeds/05).
//
// It has a kernel for every op ged computes, written for clarity and checked
// against hand-computed results, and it is the engine every faster engine is
// tested against (engine conformance). Its json (host_cpu.json, embedded
// at build time) makes it the reference engine (EngineAttributes::reference)
// at cost COST_10: the placer falls back to it when nothing cheaper supports
// a node, constant folding runs its kernels, and cpu_dense runs its kernels
// for shapes oneDNN cannot. CheckSupported accepts a node when a kernel exists for the op
// type, the node's dtypes are ones that kernel handles, and the kernel can
// be created from the node's attributes; otherwise the error says why.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/engines/api/engine.h"
#include "runtime/engines/host_cpu/kernel_registry.h"

namespace ge::engine {

inline constexpr std::string_view kHostCpuEngineName = "host_cpu";

namespace host_cpu {
// host_cpu.json, embedded at build time (ged_engine_attributes).
extern const char kAttributesJson[];
}  // namespace host_cpu

class HostCpuInfoStore final : public OpsKernelInfoStore {
 public:
  explicit HostCpuInfoStore(const host_cpu::KernelTable& table) : table_(table) {}
  absl::Status CheckSupported(const ir::Node& node) const override;
  // The OpDesc form of CheckSupported (for callers without a graph).
  absl::Status CheckSupportedOp(const ir::OpDesc& op) const;
  std::vector<std::string> SupportedOpTypes() const override { return table_.OpTypes(); }

 private:
  const host_cpu::KernelTable& table_;
};

class HostCpuKernelFactory final : public KernelFactory {
 public:
  explicit HostCpuKernelFactory(const host_cpu::KernelTable& table) : table_(table) {}
  // Unimplemented "host_cpu has no kernel for op type Foo" for unknown ops;
  // the kernel's own errors (naming the node) for bad attributes.
  absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(const ir::OpDesc& op) const override;

 private:
  const host_cpu::KernelTable& table_;
};

class HostCpuEngine final : public Engine {
 public:
  HostCpuEngine();
  ~HostCpuEngine() override;

  // Fails when the embedded json did not parse.
  absl::Status Initialize(const EngineOptions& options) override;
  const OpsKernelInfoStore& info_store() const override { return info_store_; }
  const KernelFactory& kernel_factory() const override { return factory_; }
  const host_cpu::KernelTable& kernel_table() const { return table_; }

 private:
  absl::Status attributes_error_;
  host_cpu::KernelTable table_;
  HostCpuInfoStore info_store_;
  HostCpuKernelFactory factory_;
};

}  // namespace ge::engine

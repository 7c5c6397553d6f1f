// KernelBuilder: an engine's compile-time half of a kernel (GE's
// OpsKernelBuilder: CalcOpRunningParam + GenerateTask).
//
// For a node whose input and output shapes are known at compile time, the
// builder computes the running parameters and workspace size once and
// returns a TaskDef: the kernel, the engine, and a versioned
// engine-private parameter blob that the StaticExecutor hands back at load
// (LoadKernel) so the engine can bind its kernel without re-deriving what
// it already computed. A TaskDef survives serialization (.gem): the blob is
// opaque bytes and `param_version` lets an engine refuse blobs it no
// longer understands.
//
// Besides `params`, a builder may keep an engine's prepared state — bytes
// too large for the blob, such as weights packed into a kernel's layout —
// in `prepared`: a .gem with external weights stores each buffer beside the
// Const values (64-byte aligned) and a load maps it back, so LoadKernel can
// adopt it instead of preparing it again. The buffers are as untrusted as
// the rest of a .gem: an engine checks that `params` describes them as it
// would prepare them here (layout, size, the build and ISA they are for)
// before using one, and prepares afresh otherwise. A .gem with inline
// weights carries none (LoadKernel then sees an empty `prepared`).
//
// The default builder has no private blob: BuildTask prepares a kernel to
// learn its workspace size, and LoadKernel creates the kernel from the
// node's op type and attributes (kept in the compiled graph) and prepares it
// once at load, never per run. Engines with richer parameters override
// both methods.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/status.h"
#include "runtime/engines/api/kernel.h"

namespace ge::engine {

// One task of a static subgraph, as an engine's builder made it.
struct TaskDef {
  std::string engine;          // the engine's name
  std::string kernel;          // the kernel (the op type for the default builder)
  uint32_t param_version = 0;  // format version of `params`; 0 for no blob
  std::string params;          // engine-private running parameters
  size_t workspace_bytes = 0;  // scratch the kernel needs per Compute
  // Prepared state in the engine's own format, described by `params`
  // (see above); read-only once built.
  std::vector<std::shared_ptr<Buffer>> prepared;
};

class KernelBuilder {
 public:
  virtual ~KernelBuilder() = default;

  // Compile time: `ctx` carries concrete input and output types (and the
  // constant inputs); fills a task for `engine_name`. Errors name the node.
  virtual absl::StatusOr<TaskDef> BuildTask(const KernelFactory& factory, std::string_view engine_name,
                                            PrepareContext& ctx) const {
    GE_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, factory.CreateKernel(*ctx.op));
    GE_RETURN_IF_ERROR(kernel->Prepare(ctx));
    TaskDef task;
    task.engine = std::string(engine_name);
    task.kernel = ctx.op->type();
    task.workspace_bytes = ctx.workspace_bytes;
    return task;
  }

  // Load time, once per task: a kernel ready to Compute with the types in
  // `ctx` (the same as at build time). FailedPrecondition when the task's
  // parameter blob is of a version this engine cannot read.
  virtual absl::StatusOr<std::unique_ptr<Kernel>> LoadKernel(const KernelFactory& factory, const TaskDef& task,
                                                             PrepareContext& ctx) const {
    if (task.param_version != 0) {
      return FailedPrecondition("node '", ctx.op->name(), "': task parameters of version ", task.param_version,
                                " for engine '", task.engine, "', which reads only version 0");
    }
    GE_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, factory.CreateKernel(*ctx.op));
    GE_RETURN_IF_ERROR(kernel->Prepare(ctx));
    return kernel;
  }

  // The builder of engines that do not provide their own.
  static const KernelBuilder& Default() {
    static const KernelBuilder* builder = new KernelBuilder();
    return *builder;
  }
};

}  // namespace ge::engine

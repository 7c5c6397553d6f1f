// PassPipeline: runs passes in order with verification and dumps.
#include "compiler/passes/pass_pipeline.h"

#include <algorithm>
#include <chrono>

#include "base/ir/verifier.h"
#include "base/logging.h"
#include "base/status.h"
#include "compiler/passes/compile_deadline.h"

namespace ge::compiler {

absl::StatusOr<bool> PassPipeline::Run(ir::Graph& root) {
  if (verify_) {
    GE_RETURN_IF_ERROR(Annotate(ir::VerifyGraph(root), StrCat(name_, ": input graph")));
  }
  bool changed = false;
  for (const auto& pass : passes_) {
    const std::string_view pass_name = pass->name();
    if (std::find(disabled_.begin(), disabled_.end(), pass_name) != disabled_.end()) {
      GE_LOG_DEBUG("compiler", "{}: pass {} disabled", name_, pass_name);
      continue;
    }
    GE_RETURN_IF_ERROR(CheckCompileDeadline(StrCat(name_, " before pass ", pass_name)));
    if (dumper_ != nullptr) GE_RETURN_IF_ERROR(dumper_->Before(root, pass_name));
    const auto start = std::chrono::steady_clock::now();
    GE_ASSIGN_OR_RETURN(bool pass_changed, pass->Run(root));
    GE_LOG_INFO("compiler", "{}: {}: {:.1f} ms", name_, pass_name,
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    changed = changed || pass_changed;
    if (verify_ && verify_each_pass_ && pass_changed) {
      absl::Status s = ir::VerifyGraph(root);
      if (!s.ok()) return Internal(name_, ": pass ", pass_name, " left an invalid graph: ", StdView(s.message()));
    }
    if (dumper_ != nullptr) GE_RETURN_IF_ERROR(dumper_->After(root, pass_name));
  }
  return changed;
}

}  // namespace ge::compiler

// PassPipeline: runs passes in order with timing, verification and dumps,
// and switches them off by name.
#include "compiler/passes/pass_pipeline.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_join.h"
#include "base/ir/verifier.h"
#include "base/logging.h"
#include "base/status.h"
#include "compiler/passes/compile_deadline.h"

namespace ge::compiler {

void PassPipeline::AddSubPass(std::string name, std::string parent, std::string description) {
  PassTraits traits;
  traits.description = std::move(description);
  entries_.push_back(Entry{nullptr, std::move(traits), std::move(name), std::move(parent)});
}

const PassPipeline::Entry* PassPipeline::Find(std::string_view name) const {
  for (const Entry& e : entries_) {
    if (NameOf(e) == name) return &e;
  }
  return nullptr;
}

std::string PassPipeline::KnownNames() const {
  std::vector<std::string> names;
  for (const Entry& e : entries_) {
    if (!e.traits.required) names.emplace_back(NameOf(e));
  }
  return absl::StrJoin(names, ", ");
}

absl::Status PassPipeline::DisablePasses(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const Entry* e = Find(name);
    if (e == nullptr) {
      return InvalidArgument("unknown pass '", name,
                             "' in ge.disable_passes (passes that can be disabled: ", KnownNames(), ")");
    }
    if (e->traits.required) {
      return InvalidArgument("pass '", name, "' in ge.disable_passes is required and cannot be disabled");
    }
  }
  disabled_ = names;
  return absl::OkStatus();
}

bool PassPipeline::IsDisabled(std::string_view name) const {
  if (std::find(disabled_.begin(), disabled_.end(), name) != disabled_.end()) return true;
  if (!run_only_) return false;
  // With RunOnly, a sub-pass runs when it or its parent is named.
  const Entry* e = Find(name);
  const bool named = std::find(only_.begin(), only_.end(), name) != only_.end();
  if (e != nullptr && e->pass == nullptr) {
    return !named && std::find(only_.begin(), only_.end(), e->parent) == only_.end();
  }
  return !named;
}

absl::Status PassPipeline::RunOnly(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (Find(name) == nullptr) {
      std::vector<std::string> all;
      for (const Entry& e : entries_) all.emplace_back(NameOf(e));
      return InvalidArgument("unknown pass '", name, "' (passes: ", absl::StrJoin(all, ", "), ")");
    }
  }
  only_ = names;
  run_only_ = true;
  return absl::OkStatus();
}

std::vector<PassListing> PassPipeline::List() const {
  std::vector<PassListing> out;
  for (const Entry& e : entries_) {
    out.push_back({std::string(NameOf(e)), e.traits.required, e.traits.description, e.parent});
  }
  return out;
}

absl::StatusOr<bool> PassPipeline::Run(ir::Graph& root) {
  if (verify_) {
    GE_RETURN_IF_ERROR(Annotate(ir::VerifyGraph(root), StrCat(name_, ": input graph")));
  }
  bool changed = false;
  for (const Entry& entry : entries_) {
    if (entry.pass == nullptr) continue;  // run by its parent
    const std::string_view pass_name = entry.pass->name();
    // A pass some of whose sub-passes are named runs (for them) under RunOnly.
    bool wanted = !IsDisabled(pass_name);
    if (!wanted && run_only_ && std::find(disabled_.begin(), disabled_.end(), pass_name) == disabled_.end()) {
      for (const Entry& sub : entries_) {
        if (sub.pass == nullptr && sub.parent == pass_name && !IsDisabled(sub.name)) wanted = true;
      }
    }
    if (!wanted) {
      GE_LOG_DEBUG("compiler", "{}: pass {} disabled", name_, pass_name);
      continue;
    }
    if (entry.traits.condition && !entry.traits.condition()) continue;
    GE_RETURN_IF_ERROR(CheckCompileDeadline(StrCat(name_, " before pass ", pass_name)));
    if (dumper_ != nullptr) GE_RETURN_IF_ERROR(dumper_->Before(root, pass_name));
    const auto start = std::chrono::steady_clock::now();
    // Errors name the node; the compile pipeline's own steps also the step.
    GE_ASSIGN_OR_RETURN(const bool pass_changed, entry.pass->Run(root));
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

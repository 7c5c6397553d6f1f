// KernelTable: the one kernel table mechanism of the engine SDK.
//
// An engine keeps its kernels in a KernelTable<Def>, where Def is the
// engine's own kernel definition: a struct with at least `std::string
// op_type` and a `create` factory, plus whatever the engine's support check
// needs (host_cpu: per-port dtype sets; cpu_dense: the main dtype set and a
// check that sees the oneDNN context; cpu_vector: a check). The table owns
// the definitions keyed by op type, refuses a second registration of a type
// or a definition without a type or factory (a programmer error: the
// process aborts naming the op type), answers Find and the
// sorted OpTypes that SupportedOpTypes reports. CheckPortDtypes is the
// shared per-port dtype check with the message every engine's placement
// report uses. Each kernel family registers through an explicit function
// (RegisterXxxKernels(table)) called in a fixed order by the engine.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "base/ir/op_desc.h"
#include "base/status.h"
#include "base/strings.h"
#include "runtime/engines/sdk/dtype_set.h"

namespace ge::engine::sdk {

template <typename Def>
class KernelTable {
 public:
  // Adds a kernel; an incomplete definition or a second one for the same op
  // type is a programmer error.
  void Add(Def def) {
    GE_CHECK_MSG(!def.op_type.empty() && static_cast<bool>(def.create),
                 StrCat("incomplete kernel definition for op type '", def.op_type, "'").c_str());
    std::string type = def.op_type;
    const bool inserted = defs_.emplace(type, std::move(def)).second;
    GE_CHECK_MSG(inserted, StrCat("kernel for op type '", type, "' registered twice").c_str());
  }
  // The kernel of `op_type`, or null.
  const Def* Find(std::string_view op_type) const {
    auto it = defs_.find(op_type);
    return it == defs_.end() ? nullptr : &it->second;
  }
  // Registered op types, sorted.
  std::vector<std::string> OpTypes() const {
    std::vector<std::string> out;
    out.reserve(defs_.size());
    for (const auto& [type, def] : defs_) out.push_back(type);
    std::sort(out.begin(), out.end());
    return out;
  }
  size_t size() const { return defs_.size(); }

 private:
  StringMap<Def> defs_;
};

// OK when every typed port of `op` has a dtype its set admits: `inputs` and
// `outputs` give the allowed dtypes by position, the last entry applying to
// every later position (variadic ports); an empty list admits anything;
// untyped or absent ports pass. Else InvalidArgument "<Op> on <engine> does
// not support dtype <d> (input <i> of node '<name>'; supported: ...)".
absl::Status CheckPortDtypes(const ir::OpDesc& op, const std::vector<DataTypeSet>& inputs,
                             const std::vector<DataTypeSet>& outputs, std::string_view engine_name);

}  // namespace ge::engine::sdk

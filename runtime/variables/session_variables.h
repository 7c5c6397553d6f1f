// SessionVariables: a session's VariableStore (runtime/engines/api/
// variable_store.h) over its VarManager and the process's FileConstant
// cache. Kernels see variables only through it.
//
// A Variable op is resolved by key (name_format_dtype, the name taken from
// `_ref_var_src_var_name` for a VarRef and through the batch name map):
// a variable the session does not have yet is registered from the op's
// description and init value, then allocated on first access. FileConstant
// weights are shared process-wide; the store keeps a reference to each one
// its graphs used, so they stay loaded while the session lives.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "runtime/engines/api/variable_store.h"
#include "runtime/variables/file_constant.h"
#include "runtime/variables/var_manager.h"

namespace ge::variables {

// A variable's description and init value from its node (Variable or VarRef).
absl::StatusOr<VarInfo> VarInfoFromOp(const ir::OpDesc& op);

class SessionVariables final : public engine::VariableStore {
 public:
  SessionVariables(std::shared_ptr<VarManager> manager, FileConstantCache* cache, ValueBins bins);

  absl::StatusOr<Tensor> GetVariable(const ir::OpDesc& op) override;
  absl::StatusOr<Tensor> GetVariableByName(std::string_view name) override;
  absl::StatusOr<Tensor> GetFileConstant(const ir::OpDesc& op) override;
  void MarkInitialized(std::string_view name) override;
  bool IsInitialized(std::string_view name) override;

  VarManager& manager() { return *manager_; }

 private:
  std::shared_ptr<VarManager> manager_;
  FileConstantCache* cache_;
  ValueBins bins_;
  std::mutex mu_;
  std::vector<Tensor> held_;  // FileConstant weights this session uses
};

}  // namespace ge::variables

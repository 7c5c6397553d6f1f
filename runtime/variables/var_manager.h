// VarManager: the variables of one session (GE's VarManager, seeds/03).
//
// A variable is memory that outlives a run: a Variable node's value
// (training parameters, counters), a constant placed in variable memory, or
// a FileConstant's weight read from an external file. Each is identified
// by its key `name_format_dtype` (VarKey) and lives at a logical address
// above kVarMemoryLogicBase. Logical addresses are what compiled models
// record; only the VarManager that owns them turns one into memory
// (GetVarMemoryAddr), so a model never depends on the session it was
// compiled in.
//
// Layout:
//   VarManagerPool  session id -> VarManager
//   VarManager      VarResource (address table, current descriptions,
//                   conversion paths, ready state, batch name map) and one
//                   MemResource per memory type (the logical space handed
//                   out), allocating through the device HAL.
//
// AssignVarMem reuses memory before it reserves more, in this order:
//   1. format match: `name` exists with the same description;
//   2. constant de-duplication: a kConstant whose bytes equal another
//      constant's of the same size;
//   3. FileConstant de-duplication: the same file path and offset;
//   4. size-compatible: `name` exists with another description whose
//      reserved bytes hold the new one.
// Physical memory is taken on first access (GetVarMemoryAddr) and cached;
// a variable's `_init_value` (VarInfo::init_value) is copied in then. With
// external memory set (SetExternalVarMemory), addresses are base + offset
// in the caller's block and nothing is allocated.
//
// Thread-safe: every method takes the manager's lock.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/device/device.h"
#include "runtime/variables/var_resource.h"
#include "runtime/variables/var_types.h"

namespace ge::variables {

// The logical space of one memory type: a bump allocator with a limit.
class MemResource {
 public:
  explicit MemResource(uint64_t limit_bytes = 0) : limit_(limit_bytes) {}
  // Reserves `bytes` (aligned); ResourceExhausted past the limit.
  absl::StatusOr<uint64_t> AssignOffset(uint64_t bytes, std::string_view for_name);
  // Restores a reservation read back from a serialized manager.
  void Restore(uint64_t used) { used_ = std::max(used_, used); }
  uint64_t used() const { return used_; }
  uint64_t limit() const { return limit_; }

 private:
  uint64_t limit_;  // 0: unlimited
  uint64_t used_ = 0;
};

// A serializable snapshot of a manager (GE's VarManagerInfo).
struct VarManagerInfo {
  uint32_t version = 1;
  uint64_t session_id = 0;
  std::vector<VarInfo> vars;  // by logical address
  std::map<MemType, uint64_t> mem_used;
  std::map<std::string, std::string> batch_names;  // batch name -> variable name
};

class VarManager {
 public:
  // `device` (may be null for compile-time managers, which only assign
  // logical addresses) must outlive the manager. `limit_bytes` caps the
  // logical space of each memory type (0: unlimited).
  VarManager(uint64_t session_id, device::Device* device, int device_id = 0, uint64_t limit_bytes = 0);
  ~VarManager();
  VarManager(const VarManager&) = delete;
  VarManager& operator=(const VarManager&) = delete;

  uint64_t session_id() const { return session_id_; }

  // Assigns `info` a logical address (see the reuse order above); returns
  // it and sets info.logic_addr / info.size. Errors name the variable.
  absl::StatusOr<uint64_t> AssignVarMem(VarInfo& info);
  // Registers a variable a loaded model recorded (its own logical address
  // is model-local): reuses the session's by key, else assigns one. A
  // variable (kVariable) is declared once per session: a model that
  // declares `name` with another dtype or shape than the first declaration
  // (both compared as declared, before any conversion path) is
  // InvalidArgument naming both.
  absl::StatusOr<uint64_t> RestoreVarMem(const VarInfo& model_info);
  // Loads every variable of a model's snapshot (RestoreVarMem each).
  absl::Status Restore(const VarManagerInfo& info);

  bool IsVarExist(std::string_view name) const;
  bool IsVarExist(std::string_view name, const VarDesc& desc) const;
  // The logical address of `name` with `desc`; NotFound naming the key,
  // InvalidArgument when `desc` needs more bytes than the memory there.
  absl::StatusOr<uint64_t> GetVarAddr(std::string_view name, const VarDesc& desc) const;
  absl::StatusOr<VarDesc> GetCurVarDesc(std::string_view name) const;
  absl::Status RenewCurVarDesc(std::string_view name, const VarDesc& desc);
  absl::Status SetTransRoad(std::string_view name, std::vector<TransNode> road);
  std::vector<TransNode> GetTransRoad(std::string_view name) const;

  // Gears: every batch branch's name for a variable maps to one variable.
  void SetBatchVariablesKeyName(std::string batch_name, std::string var_name);
  std::string ResolveName(std::string_view name) const;

  // Memory of the variable at `logic_addr`: external base + offset, else
  // allocated from the device on first access (init value copied in) and
  // cached. InvalidArgument for an address no variable holds.
  absl::StatusOr<void*> GetVarMemoryAddr(uint64_t logic_addr);
  // Takes variable memory from the caller: [base, base + bytes) must cover
  // every logical offset, now and later. Only before any allocation.
  absl::Status SetExternalVarMemory(void* base, uint64_t bytes);

  // The variable `name` as a tensor over its memory (allocated on first
  // access). NotFound naming the variable when it was never registered.
  absl::StatusOr<Tensor> GetVarTensor(std::string_view name);
  // Copies `value` into variable `name`; InvalidArgument when the dtype or
  // shape differ from its current description.
  absl::Status WriteVar(std::string_view name, const Tensor& value);
  // Whether `name` holds a value: an init value, a write, or an Assign.
  bool IsInitialized(std::string_view name) const;
  void MarkInitialized(std::string_view name);
  std::vector<std::string> VarNames() const;  // kVariable only, sorted

  // Ready state per device: a variable's value is in place on `device_id`.
  void SetVarIsReady(std::string_view key, int device_id);
  bool IsVarReady(std::string_view key, int device_id) const;
  // Loading de-duplication: true when a variable at the same logical address
  // as `name`'s was already loaded on `device_id` (skip the copy); else marks
  // it loaded and returns false.
  absl::StatusOr<bool> CheckAndSetVarLoaded(std::string_view name, const VarDesc& desc, int device_id);

  // Snapshot and restore (the .gem's VarManagerInfo).
  VarManagerInfo ToSerial() const;
  static absl::StatusOr<std::unique_ptr<VarManager>> FromSerial(const VarManagerInfo& info, device::Device* device,
                                                                int device_id = 0);

  // Returns every allocation to the device.
  absl::Status FreeVarMemory();
  uint64_t allocated_bytes() const;

 private:
  using Entry = VarResource::Entry;
  struct Block {
    void* ptr = nullptr;
    uint64_t size = 0;
  };

  absl::StatusOr<void*> AllocateLocked(const Entry& entry);

  const uint64_t session_id_;
  device::Device* device_;
  const int device_id_;
  mutable std::mutex mu_;
  VarResource resource_;
  std::map<std::string, VarDesc, std::less<>> declared_;  // variable name -> first declaration
  std::map<MemType, MemResource> mem_;
  uint64_t limit_bytes_;
  std::map<uint64_t, Block> blocks_;  // logic addr -> device memory
  void* external_base_ = nullptr;
  uint64_t external_bytes_ = 0;
};

// Session id -> VarManager. One per process in practice (Global()), but
// tests make their own.
class VarManagerPool {
 public:
  static VarManagerPool& Global();

  // The session's manager, created on first use with `device`.
  std::shared_ptr<VarManager> GetOrCreate(uint64_t session_id, device::Device* device, uint64_t limit_bytes = 0);
  std::shared_ptr<VarManager> Get(uint64_t session_id) const;
  // Frees the session's variable memory and forgets it.
  absl::Status Destroy(uint64_t session_id);
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<VarManager>> managers_;
};

}  // namespace ge::variables

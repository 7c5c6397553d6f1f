// VarManager, MemResource and VarManagerPool: logical address assignment
// with GE's four reuse strategies, first-access allocation through the
// device HAL, and the session -> manager pool.
#include "runtime/variables/var_manager.h"

#include <algorithm>
#include <cstring>

#include "base/logging.h"
#include "base/status.h"
#include "base/strings.h"

namespace ge::variables {
namespace {

uint64_t AlignUp(uint64_t bytes) { return (bytes + kVarAlignment - 1) / kVarAlignment * kVarAlignment; }

}  // namespace

absl::StatusOr<uint64_t> MemResource::AssignOffset(uint64_t bytes, std::string_view for_name) {
  const uint64_t aligned = AlignUp(std::max<uint64_t>(bytes, 1));
  if (limit_ != 0 && used_ + aligned > limit_) {
    return ResourceExhausted("variable '", for_name, "' needs ", aligned, " bytes but only ", limit_ - used_,
                             " of the ", limit_, "-byte variable memory are free");
  }
  const uint64_t offset = used_;
  used_ += aligned;
  return offset;
}

VarManager::VarManager(uint64_t session_id, device::Device* device, int device_id, uint64_t limit_bytes)
    : session_id_(session_id), device_(device), device_id_(device_id), limit_bytes_(limit_bytes) {}

VarManager::~VarManager() {
  absl::Status freed = FreeVarMemory();
  if (!freed.ok()) GE_LOG_ERROR("vars", "session {}: {}", session_id_, freed.message());
}

absl::StatusOr<uint64_t> VarManager::AssignVarMem(VarInfo& info) {
  if (info.name.empty()) return InvalidArgument("a variable needs a name");
  absl::StatusOr<uint64_t> size = info.desc.ByteSize();
  if (!size.ok()) return Annotate(size.status(), StrCat("variable '", info.name, "'"));
  const uint64_t bytes = *size;
  std::lock_guard<std::mutex> lock(mu_);
  // 1-3: the same key, a constant with the same bytes, the same file range.
  if (const Entry* same = resource_.FindReusable(info)) {
    info.logic_addr = same->info.logic_addr;
    info.size = same->info.size;
    resource_.Add(info, same->initialized, /*make_current=*/false);
    return info.logic_addr;
  }
  // 4. size-compatible: the name's current memory holds the new description.
  if (const Entry* current = resource_.FindByName(info.name); current != nullptr && bytes <= current->info.size) {
    info.logic_addr = current->info.logic_addr;
    info.size = current->info.size;
    resource_.Add(info, current->initialized, /*make_current=*/true);
    return info.logic_addr;
  }
  auto mem = mem_.try_emplace(info.mem_type, limit_bytes_).first;
  GE_ASSIGN_OR_RETURN(const uint64_t offset, mem->second.AssignOffset(bytes, info.name));
  info.logic_addr = kVarMemoryLogicBase + offset;
  info.size = AlignUp(std::max<uint64_t>(bytes, 1));
  resource_.Add(info, info.init_value.defined(), /*make_current=*/true);
  return info.logic_addr;
}

absl::StatusOr<uint64_t> VarManager::RestoreVarMem(const VarInfo& model_info) {
  VarInfo info = model_info;
  info.logic_addr = 0;
  info.size = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (info.kind == VarKind::kVariable) {
      // As declared: a conversion path's first input is the declared form.
      const VarDesc& declared = info.trans_road.empty() ? info.desc : info.trans_road.front().input;
      auto [it, first] = declared_.try_emplace(info.name, declared);
      if (!first && (it->second.dtype != declared.dtype || it->second.shape != declared.shape)) {
        return InvalidArgument("variable '", info.name, "' is declared as ", DataTypeName(declared.dtype),
                               declared.shape.ToString(), ", but this session already declared it as ",
                               DataTypeName(it->second.dtype), it->second.shape.ToString());
      }
    }
    if (const Entry* e = resource_.FindByKey(VarKey(info.name, info.desc))) return e->info.logic_addr;
  }
  return AssignVarMem(info);
}

absl::Status VarManager::Restore(const VarManagerInfo& info) {
  for (const auto& [batch, name] : info.batch_names) SetBatchVariablesKeyName(batch, name);
  for (const VarInfo& var : info.vars) {
    GE_RETURN_IF_ERROR(RestoreVarMem(var).status());
    if (!var.trans_road.empty()) GE_RETURN_IF_ERROR(SetTransRoad(var.name, var.trans_road));
  }
  return absl::OkStatus();
}

bool VarManager::IsVarExist(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_.FindByName(name) != nullptr;
}

bool VarManager::IsVarExist(std::string_view name, const VarDesc& desc) const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_.FindByKey(VarKey(name, desc)) != nullptr;
}

absl::StatusOr<uint64_t> VarManager::GetVarAddr(std::string_view name, const VarDesc& desc) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = VarKey(name, desc);
  const Entry* e = resource_.FindByKey(key);
  if (e == nullptr) return NotFound("variable '", key, "' is not registered in session ", session_id_);
  // The key holds no shape: a description larger than the memory behind
  // the key must never be laid over it.
  if (absl::StatusOr<uint64_t> bytes = desc.ByteSize(); bytes.ok() && *bytes > e->info.size) {
    return InvalidArgument("variable '", name, "' is read as ", desc.ToString(), " (", *bytes,
                           " bytes), but it was declared as ", e->info.desc.ToString(), " (", e->info.size, " bytes)");
  }
  return e->info.logic_addr;
}

absl::StatusOr<VarDesc> VarManager::GetCurVarDesc(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Entry* e = resource_.FindByName(name);
  if (e == nullptr) return NotFound("variable '", name, "' is not registered in session ", session_id_);
  return e->info.desc;
}

absl::Status VarManager::RenewCurVarDesc(std::string_view name, const VarDesc& desc) {
  std::lock_guard<std::mutex> lock(mu_);
  const Entry* e = resource_.FindByName(name);
  if (e == nullptr) return NotFound("variable '", name, "' is not registered in session ", session_id_);
  GE_ASSIGN_OR_RETURN(const uint64_t bytes, desc.ByteSize());
  if (bytes > e->info.size) {
    return InvalidArgument("variable '", name, "': ", desc.ToString(), " needs ", bytes, " bytes, its memory holds ",
                           e->info.size);
  }
  VarInfo renewed = e->info;
  renewed.desc = desc;
  resource_.Add(renewed, e->initialized, /*make_current=*/true);
  resource_.SetCurrentKey(name, VarKey(name, desc));
  return absl::OkStatus();
}

absl::Status VarManager::SetTransRoad(std::string_view name, std::vector<TransNode> road) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry* e = resource_.FindByName(name);
  if (e == nullptr) return NotFound("variable '", name, "' is not registered in session ", session_id_);
  e->info.trans_road = std::move(road);
  return absl::OkStatus();
}

std::vector<TransNode> VarManager::GetTransRoad(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Entry* e = resource_.FindByName(name);
  return e == nullptr ? std::vector<TransNode>{} : e->info.trans_road;
}

void VarManager::SetBatchVariablesKeyName(std::string batch_name, std::string var_name) {
  std::lock_guard<std::mutex> lock(mu_);
  resource_.SetBatchName(std::move(batch_name), std::move(var_name));
}

std::string VarManager::ResolveName(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_.ResolveName(name);
}

absl::Status VarManager::SetExternalVarMemory(void* base, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!blocks_.empty()) {
    return FailedPrecondition("session ", session_id_, " already allocated variable memory; external memory must come first");
  }
  if (base == nullptr) return InvalidArgument("external variable memory is null");
  external_base_ = base;
  external_bytes_ = bytes;
  return absl::OkStatus();
}

// Memory for `entry`: the external block, else one device allocation per
// logical address, zeroed, with the init value copied in.
absl::StatusOr<void*> VarManager::AllocateLocked(const Entry& entry) {
  const uint64_t addr = entry.info.logic_addr;
  if (auto it = blocks_.find(addr); it != blocks_.end()) return it->second.ptr;
  const uint64_t offset = addr - kVarMemoryLogicBase;
  void* ptr = nullptr;
  if (external_base_ != nullptr) {
    if (offset + entry.info.size > external_bytes_) {
      return ResourceExhausted("variable '", entry.info.name, "' at offset ", offset, " (", entry.info.size,
                               " bytes) lies outside the ", external_bytes_, "-byte external variable memory");
    }
    ptr = static_cast<char*>(external_base_) + offset;
  } else {
    if (device_ == nullptr) {
      return FailedPrecondition("variable '", entry.info.name, "': this VarManager has no device (compile time)");
    }
    absl::StatusOr<void*> block = device_->Malloc(entry.info.size);
    if (!block.ok()) return Annotate(block.status(), StrCat("variable '", entry.info.name, "'"));
    ptr = *block;
    std::memset(ptr, 0, entry.info.size);
  }
  const Tensor& init = entry.info.init_value;
  if (init.defined() && entry.info.kind != VarKind::kFileConstant) {
    if (init.SizeInBytes() > entry.info.size) {
      return InvalidArgument("variable '", entry.info.name, "': init value of ", init.SizeInBytes(),
                             " bytes exceeds its ", entry.info.size, " bytes");
    }
    std::memcpy(ptr, init.raw_data(), init.SizeInBytes());
  }
  blocks_[addr] = Block{ptr, entry.info.size};
  return ptr;
}

absl::StatusOr<void*> VarManager::GetVarMemoryAddr(uint64_t logic_addr) {
  std::lock_guard<std::mutex> lock(mu_);
  const Entry* e = resource_.FindByAddress(logic_addr);
  if (e == nullptr) {
    return InvalidArgument("logical address ", logic_addr, " belongs to no variable of session ", session_id_);
  }
  GE_ASSIGN_OR_RETURN(void* base, AllocateLocked(*e));
  return static_cast<char*>(base) + (logic_addr - e->info.logic_addr);
}

absl::StatusOr<Tensor> VarManager::GetVarTensor(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  const Entry* e = resource_.FindByName(resource_.ResolveName(name));
  if (e == nullptr) return NotFound("variable '", name, "' does not exist in session ", session_id_);
  GE_ASSIGN_OR_RETURN(void* ptr, AllocateLocked(*e));
  const VarDesc& d = e->info.desc;
  return Tensor(d.dtype, d.shape, Buffer::Wrap(ptr, e->info.size, [] {}));
}

absl::Status VarManager::WriteVar(std::string_view name, const Tensor& value) {
  std::lock_guard<std::mutex> lock(mu_);
  const Entry* e = resource_.FindByName(resource_.ResolveName(name));
  if (e == nullptr) return NotFound("variable '", name, "' does not exist in session ", session_id_);
  const VarDesc& d = e->info.desc;
  if (value.dtype() != d.dtype || value.shape() != d.shape) {
    return InvalidArgument("variable '", name, "' is ", d.ToString(), ", the value is ", DataTypeName(value.dtype()),
                           value.shape().ToString());
  }
  GE_ASSIGN_OR_RETURN(void* ptr, AllocateLocked(*e));
  std::memcpy(ptr, value.raw_data(), value.SizeInBytes());
  resource_.SetInitialized(e->info.logic_addr, true);
  return absl::OkStatus();
}

bool VarManager::IsInitialized(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Entry* e = resource_.FindByName(name);
  return e != nullptr && e->initialized;
}

void VarManager::MarkInitialized(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (const Entry* e = resource_.FindByName(name)) resource_.SetInitialized(e->info.logic_addr, true);
}

std::vector<std::string> VarManager::VarNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_.VariableNames();
}

void VarManager::SetVarIsReady(std::string_view key, int device_id) {
  std::lock_guard<std::mutex> lock(mu_);
  resource_.SetReady(key, device_id);
}

bool VarManager::IsVarReady(std::string_view key, int device_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_.IsReady(key, device_id);
}

absl::StatusOr<bool> VarManager::CheckAndSetVarLoaded(std::string_view name, const VarDesc& desc, int device_id) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = VarKey(name, desc);
  const Entry* e = resource_.FindByKey(key);
  if (e == nullptr) return NotFound("variable '", key, "' is not registered in session ", session_id_);
  return !resource_.MarkLoaded(e->info.logic_addr, device_id);
}

absl::Status VarManager::FreeVarMemory() {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status status;
  if (external_base_ == nullptr && device_ != nullptr) {
    for (const auto& [addr, block] : blocks_) status.Update(device_->FreeMemory(block.ptr));
  }
  blocks_.clear();
  resource_.ResetInitialized();
  resource_.ClearDeviceState();
  return status;
}

uint64_t VarManager::allocated_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t total = 0;
  for (const auto& [addr, block] : blocks_) total += block.size;
  return total;
}

VarManagerInfo VarManager::ToSerial() const {
  std::lock_guard<std::mutex> lock(mu_);
  VarManagerInfo info;
  info.session_id = session_id_;
  for (const Entry* e : resource_.Entries()) info.vars.push_back(e->info);
  std::stable_sort(info.vars.begin(), info.vars.end(),
                   [](const VarInfo& a, const VarInfo& b) { return a.logic_addr < b.logic_addr; });
  for (const auto& [type, mem] : mem_) info.mem_used[type] = mem.used();
  for (const auto& [batch, name] : resource_.batch_names()) info.batch_names[batch] = name;
  return info;
}

// Rebuilds the tables as they were, logical addresses included (an offline
// manager), unlike Restore, which maps a model's variables into a session.
absl::StatusOr<std::unique_ptr<VarManager>> VarManager::FromSerial(const VarManagerInfo& info, device::Device* device,
                                                                   int device_id) {
  auto vm = std::make_unique<VarManager>(info.session_id, device, device_id);
  for (const VarInfo& var : info.vars) {
    if (var.logic_addr < kVarMemoryLogicBase || var.size == 0) {
      return InvalidArgument("variable '", var.name, "' has logical address ", var.logic_addr, " and size ", var.size,
                             "; expected an address above ", kVarMemoryLogicBase);
    }
    vm->resource_.Add(var, var.init_value.defined(), /*make_current=*/true);
  }
  for (const auto& [type, used] : info.mem_used) vm->mem_.try_emplace(type, 0).first->second.Restore(used);
  for (const auto& [batch, name] : info.batch_names) vm->resource_.SetBatchName(batch, name);
  return vm;
}

VarManagerPool& VarManagerPool::Global() {
  static VarManagerPool* pool = new VarManagerPool();
  return *pool;
}

std::shared_ptr<VarManager> VarManagerPool::GetOrCreate(uint64_t session_id, device::Device* device,
                                                        uint64_t limit_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = managers_[session_id];
  if (!slot) slot = std::make_shared<VarManager>(session_id, device, 0, limit_bytes);
  return slot;
}

std::shared_ptr<VarManager> VarManagerPool::Get(uint64_t session_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = managers_.find(session_id);
  return it == managers_.end() ? nullptr : it->second;
}

absl::Status VarManagerPool::Destroy(uint64_t session_id) {
  std::shared_ptr<VarManager> vm;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = managers_.find(session_id);
    if (it == managers_.end()) return NotFound("session ", session_id, " has no VarManager");
    vm = std::move(it->second);
    managers_.erase(it);
  }
  return vm->FreeVarMemory();
}

size_t VarManagerPool::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return managers_.size();
}

}  // namespace ge::variables

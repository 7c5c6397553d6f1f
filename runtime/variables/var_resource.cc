// VarResource: the address table and the state kept per key, name, file
// and device.
#include "runtime/variables/var_resource.h"

#include <cstring>

namespace ge::variables {
namespace {

bool SameBytes(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.dtype() != b.dtype() || a.SizeInBytes() != b.SizeInBytes()) return false;
  return std::memcmp(a.raw_data(), b.raw_data(), a.SizeInBytes()) == 0;
}

}  // namespace

const VarResource::Entry* VarResource::FindByKey(std::string_view key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

const VarResource::Entry* VarResource::FindByName(std::string_view name) const {
  auto key = current_.find(name);
  return key == current_.end() ? nullptr : FindByKey(key->second);
}

VarResource::Entry* VarResource::FindByName(std::string_view name) {
  return const_cast<Entry*>(static_cast<const VarResource*>(this)->FindByName(name));
}

const VarResource::Entry* VarResource::FindByAddress(uint64_t logic_addr) const {
  for (const auto& [key, e] : entries_) {
    if (logic_addr >= e.info.logic_addr && logic_addr < e.info.logic_addr + e.info.size) return &e;
  }
  return nullptr;
}

const VarResource::Entry* VarResource::FindReusable(const VarInfo& info) const {
  if (const Entry* same = FindByKey(VarKey(info.name, info.desc))) return same;
  if (info.kind == VarKind::kConstant && info.init_value.defined()) {
    for (const auto& [key, e] : entries_) {
      if (e.info.kind == VarKind::kConstant && SameBytes(e.info.init_value, info.init_value)) return &e;
    }
  }
  if (info.kind == VarKind::kFileConstant) {
    auto it = file_constants_.find({info.file.path, info.file.offset});
    if (it != file_constants_.end()) return FindByAddress(it->second);
  }
  return nullptr;
}

void VarResource::Add(const VarInfo& info, bool initialized, bool make_current) {
  std::string key = VarKey(info.name, info.desc);
  if (info.kind == VarKind::kFileConstant) {
    file_constants_.try_emplace({info.file.path, info.file.offset}, info.logic_addr);
  }
  entries_.try_emplace(key, Entry{info, initialized});
  if (make_current || !current_.contains(info.name)) current_[info.name] = std::move(key);
}

void VarResource::SetCurrentKey(std::string_view name, std::string key) { current_[std::string(name)] = std::move(key); }

void VarResource::SetInitialized(uint64_t logic_addr, bool initialized) {
  for (auto& [key, e] : entries_) {
    if (e.info.logic_addr == logic_addr) e.initialized = initialized;
  }
}

void VarResource::ResetInitialized() {
  for (auto& [key, e] : entries_) e.initialized = e.info.init_value.defined();
}

std::string VarResource::ResolveName(std::string_view name) const {
  auto it = batch_names_.find(name);
  return it == batch_names_.end() ? std::string(name) : it->second;
}

void VarResource::ClearDeviceState() {
  ready_.clear();
  loaded_.clear();
}

std::vector<const VarResource::Entry*> VarResource::Entries() const {
  std::vector<const Entry*> out;
  for (const auto& [key, e] : entries_) out.push_back(&e);
  return out;
}

std::vector<std::string> VarResource::VariableNames() const {
  std::vector<std::string> names;
  for (const auto& [name, key] : current_) {
    const Entry* e = FindByKey(key);
    if (e != nullptr && e->info.kind == VarKind::kVariable) names.push_back(name);
  }
  return names;
}

}  // namespace ge::variables

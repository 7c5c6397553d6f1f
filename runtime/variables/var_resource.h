// VarResource: the tables of one VarManager (GE's VarResource). The address
// table maps each key (`name_format_dtype`) to its variable record; every
// name has one current key (its current description); FileConstants are
// indexed by (file, offset); the ready and loaded sets are per device; the
// batch name map sends every gear's name to one variable. Several keys may
// share a logical address (the reuse strategies); state that belongs to the
// memory — initialized or not — is kept for every alias at once.
//
// Not thread-safe: VarManager holds its lock around every call.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/variables/var_types.h"

namespace ge::variables {

class VarResource {
 public:
  struct Entry {
    VarInfo info;
    bool initialized = false;
  };

  const Entry* FindByKey(std::string_view key) const;
  // The entry of `name`'s current description.
  const Entry* FindByName(std::string_view name) const;
  Entry* FindByName(std::string_view name);
  // The entry whose memory holds `logic_addr`.
  const Entry* FindByAddress(uint64_t logic_addr) const;
  // Strategies 1-3 of VarManager::AssignVarMem: the same key, a constant
  // with the same bytes, a FileConstant with the same file and offset.
  const Entry* FindReusable(const VarInfo& info) const;

  // Records `info` (its logical address already set) under its key; with
  // `make_current`, its description becomes the name's current one.
  void Add(const VarInfo& info, bool initialized, bool make_current);
  void SetCurrentKey(std::string_view name, std::string key);
  // Marks every key sharing `logic_addr` initialized (or not: after a free).
  void SetInitialized(uint64_t logic_addr, bool initialized);
  void ResetInitialized();  // back to "has an init value"

  std::string ResolveName(std::string_view name) const;
  void SetBatchName(std::string batch_name, std::string var_name) { batch_names_[std::move(batch_name)] = std::move(var_name); }
  const std::map<std::string, std::string, std::less<>>& batch_names() const { return batch_names_; }

  void SetReady(std::string_view key, int device_id) { ready_.emplace(device_id, std::string(key)); }
  bool IsReady(std::string_view key, int device_id) const { return ready_.contains({device_id, std::string(key)}); }
  // False when `logic_addr` was already loaded on `device_id`; marks it.
  bool MarkLoaded(uint64_t logic_addr, int device_id) { return loaded_.emplace(device_id, logic_addr).second; }
  void ClearDeviceState();

  std::vector<const Entry*> Entries() const;  // by key
  std::vector<std::string> VariableNames() const;  // kVariable, sorted

 private:
  std::map<std::string, Entry, std::less<>> entries_;        // key -> record
  std::map<std::string, std::string, std::less<>> current_;  // name -> current key
  std::map<std::pair<std::string, int64_t>, uint64_t> file_constants_;  // (path, offset) -> logic addr
  std::set<std::pair<int, std::string>> ready_;
  std::set<std::pair<int, uint64_t>> loaded_;
  std::map<std::string, std::string, std::less<>> batch_names_;
};

}  // namespace ge::variables

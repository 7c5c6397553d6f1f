// MemoryQuota: allocation accounting — how many bytes an owner (a tenant,
// the daemon) holds against its limit, in a chain of quotas.
//
// Every allocator a session uses charges one: its device view
// (QuotaDevice: static arenas, variables), its caching allocator
// (CachingAllocatorOptions::quota: dynamic outputs, intermediates,
// workspaces, ExecuteOp's outputs), so one tenant's calls together cannot
// hold more than the tenant's `max_memory_bytes`, and all tenants together
// not more than the daemon's `memory_budget_bytes` (docs/security.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"

namespace ge::device {

// The bytes one owner may hold across every allocator that charges it.
//
// Quotas form a chain: a quota with a parent charges the parent too (a
// tenant's device-memory quota -> the tenant's memory quota -> the daemon's
// memory budget), so a reservation succeeds only when every quota of the
// chain has room, and a release returns the bytes to all of them. `key`
// names the limit in refusals as the operator configured it
// ("max_memory_bytes of tenant alice", "memory_budget_bytes"), so a
// RESOURCE_EXHAUSTED says which setting was reached. Thread-safe; a
// reservation refused anywhere in the chain takes nothing.
class MemoryQuota {
 public:
  // `limit_bytes` 0: no limit (the quota only counts). `what` describes the
  // limit in messages ("device memory quota", "memory budget").
  MemoryQuota(std::string owner, int64_t limit_bytes, std::shared_ptr<MemoryQuota> parent = nullptr,
              std::string key = "", std::string what = "memory quota")
      : owner_(std::move(owner)),
        limit_bytes_(limit_bytes),
        parent_(std::move(parent)),
        key_(std::move(key)),
        what_(std::move(what)) {}

  const std::string& owner() const { return owner_; }
  const std::string& key() const { return key_; }
  int64_t limit_bytes() const { return limit_bytes_; }
  int64_t in_use_bytes() const { return in_use_.load(std::memory_order_relaxed); }
  int64_t peak_bytes() const { return peak_.load(std::memory_order_relaxed); }
  int64_t failed_reservations() const { return failed_.load(std::memory_order_relaxed); }
  const std::shared_ptr<MemoryQuota>& parent() const { return parent_; }

  // Takes `bytes` from this quota and every ancestor. ResourceExhausted
  // naming the owner, what was asked and the quota of the chain that is
  // short (its owner, key, limit and what it holds); nothing is taken then.
  // `asked` (when >= 0) is the size the caller asked for, shown in the
  // message instead of `bytes` (an allocator's rounded charge).
  absl::Status Reserve(int64_t bytes, int64_t asked = -1);
  // Reserve without the message: false (and nothing taken) past a limit.
  bool TryReserve(int64_t bytes);
  // Returns `bytes` to this quota and every ancestor.
  void Release(int64_t bytes);

 private:
  // This quota alone: false (nothing taken) past its limit.
  bool ReserveHere(int64_t bytes);
  void ReleaseHere(int64_t bytes);
  // "it holds 10 of its 100-byte memory quota (max_memory_bytes of tenant
  // alice)", with the owner's name instead of "it" for an ancestor.
  std::string DescribeShortage(int64_t held, bool self) const;

  const std::string owner_;
  const int64_t limit_bytes_;
  const std::shared_ptr<MemoryQuota> parent_;
  const std::string key_;
  const std::string what_;
  std::atomic<int64_t> in_use_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> failed_{0};
};

// What bounds this process's memory; 0 where there is no such bound.
struct HostMemoryLimits {
  int64_t physical_bytes = 0;   // RAM (sysconf)
  int64_t cgroup_bytes = 0;     // cgroup v2 memory.max, else v1 memory.limit_in_bytes
  int64_t rlimit_as_bytes = 0;  // RLIMIT_AS
};
HostMemoryLimits ReadHostMemoryLimits();
// The daemon's default memory_budget_bytes: 80% of the smallest bound
// (0 when none is known: no budget).
int64_t DefaultMemoryBudgetBytes(const HostMemoryLimits& limits);

}  // namespace ge::device

// Status helpers shared by every module.
//
// ged reports errors as absl::Status / absl::StatusOr<T> across every module
// boundary; exceptions never escape a module. The Debian abseil (20220623) has
// no status macros, so they are defined here once.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/strings.h"

#define GE_STATUS_CONCAT_INNER_(a, b) a##b
#define GE_STATUS_CONCAT_(a, b) GE_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define GE_RETURN_IF_ERROR(expr)                         \
  do {                                                   \
    ::absl::Status ge_status_ = (expr);                  \
    if (!ge_status_.ok()) return ge_status_;             \
  } while (0)

// `GE_ASSIGN_OR_RETURN(auto x, MakeX());` unwraps an absl::StatusOr or returns
// its error from the enclosing function.
#define GE_ASSIGN_OR_RETURN(lhs, rexpr) \
  GE_ASSIGN_OR_RETURN_IMPL_(GE_STATUS_CONCAT_(ge_statusor_, __LINE__), lhs, rexpr)
#define GE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                              \
  if (!tmp.ok()) return std::move(tmp).status();   \
  lhs = std::move(tmp).value()

// Programmer errors only, never anything a user can cause: prints and aborts.
#define GE_CHECK(cond)                                                       \
  do {                                                                       \
    if (!(cond)) ::ge::internal::CheckFailed(__FILE__, __LINE__, #cond, ""); \
  } while (0)
#define GE_CHECK_MSG(cond, msg)                                                 \
  do {                                                                          \
    if (!(cond)) ::ge::internal::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)

namespace ge {
namespace internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const char* msg);
}  // namespace internal

// Prefixes a status message with context ("node conv1: ..."), keeping the code.
absl::Status Annotate(const absl::Status& status, std::string_view context);

// Shorthands for the codes that ged uses most, each taking StrCat pieces.
template <typename... Args>
absl::Status InvalidArgument(const Args&... args) {
  return absl::InvalidArgumentError(::ge::StrCat(args...));
}
template <typename... Args>
absl::Status Internal(const Args&... args) {
  return absl::InternalError(::ge::StrCat(args...));
}
template <typename... Args>
absl::Status NotFound(const Args&... args) {
  return absl::NotFoundError(::ge::StrCat(args...));
}
template <typename... Args>
absl::Status Unimplemented(const Args&... args) {
  return absl::UnimplementedError(::ge::StrCat(args...));
}
template <typename... Args>
absl::Status FailedPrecondition(const Args&... args) {
  return absl::FailedPreconditionError(::ge::StrCat(args...));
}
template <typename... Args>
absl::Status AlreadyExists(const Args&... args) {
  return absl::AlreadyExistsError(::ge::StrCat(args...));
}
template <typename... Args>
absl::Status ResourceExhausted(const Args&... args) {
  return absl::ResourceExhaustedError(::ge::StrCat(args...));
}

}  // namespace ge

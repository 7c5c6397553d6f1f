// String helpers bridging std::string_view and Debian's abseil.
//
// Debian's abseil 20220623 is built with ABSL_OPTION_USE_STD_STRING_VIEW=0:
// absl::string_view is its own class and absl::StrCat / StrSplit / flat_hash
// lookups do not accept std::string_view. ged's APIs use std::string_view;
// these helpers convert at the call.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace ge {

inline absl::string_view AbslView(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view StdView(absl::string_view s) { return std::string_view(s.data(), s.size()); }

namespace strings_internal {
inline absl::string_view Piece(std::string_view s) { return AbslView(s); }
template <typename T, typename = std::enable_if_t<std::is_enum_v<T>>>
auto Piece(T v) {
  return static_cast<std::underlying_type_t<T>>(v);
}
template <typename T, typename = std::enable_if_t<!std::is_enum_v<T> &&
                                                  !std::is_convertible_v<const T&, std::string_view>>>
const T& Piece(const T& v) {
  return v;
}
}  // namespace strings_internal

// absl::StrCat that also takes std::string_view and enums (as integers).
template <typename... Args>
std::string StrCat(const Args&... args) {
  return absl::StrCat(strings_internal::Piece(args)...);
}
template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  absl::StrAppend(out, strings_internal::Piece(args)...);
}

// Transparent hashing so that maps keyed by std::string accept
// std::string_view lookups.
struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return absl::Hash<absl::string_view>()(AbslView(s)); }
};
struct StringViewEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};
template <typename V>
using StringMap = absl::flat_hash_map<std::string, V, StringViewHash, StringViewEq>;
using StringSet = absl::flat_hash_set<std::string, StringViewHash, StringViewEq>;

}  // namespace ge

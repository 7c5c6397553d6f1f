// AttrValue comparison and kind names.
#include "base/ir/attr_value.h"

#include <array>
#include <type_traits>

namespace ge::ir {

std::string_view AttrKindName(AttrValue::Kind kind) {
  static constexpr std::array<std::string_view, 14> kNames = {
      "int", "float", "string", "bool", "tensor", "graph", "shape",
      "ints", "floats", "strings", "bools", "tensors", "graphs", "shapes"};
  return kNames[static_cast<size_t>(kind)];
}

bool operator==(const AttrValue& a, const AttrValue& b) {
  if (a.kind() != b.kind()) return false;
  if (const Tensor* t = a.get<Tensor>()) return TensorsEqual(*t, *b.get<Tensor>());
  if (const auto* ts = a.get<std::vector<Tensor>>()) {
    const auto& other = *b.get<std::vector<Tensor>>();
    if (ts->size() != other.size()) return false;
    for (size_t i = 0; i < ts->size(); ++i) {
      if (!TensorsEqual((*ts)[i], other[i])) return false;
    }
    return true;
  }
  return std::visit(
      [&](const auto& va) {
        using T = std::decay_t<decltype(va)>;
        if constexpr (std::is_same_v<T, Tensor> || std::is_same_v<T, std::vector<Tensor>>) {
          return false;  // handled above
        } else {
          return va == *b.get<T>();
        }
      },
      a.variant());
}

}  // namespace ge::ir

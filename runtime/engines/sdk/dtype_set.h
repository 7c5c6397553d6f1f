// DataTypeSet: a set of DataTypes as a bit mask, the form every engine's
// kernel table uses for "the dtypes this kernel handles" (engine SDK).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "base/dtype.h"

namespace ge::engine::sdk {

class DataTypeSet {
 public:
  constexpr DataTypeSet() = default;
  constexpr DataTypeSet(std::initializer_list<DataType> dtypes) {
    for (DataType d : dtypes) bits_ |= Bit(d);
  }
  // The set admitting every dtype (no constraint).
  static constexpr DataTypeSet Any() {
    DataTypeSet s;
    s.bits_ = ~uint32_t{0};
    return s;
  }
  constexpr bool Contains(DataType d) const { return (bits_ & Bit(d)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DataTypeSet operator|(DataTypeSet other) const {
    DataTypeSet s;
    s.bits_ = bits_ | other.bits_;
    return s;
  }
  constexpr bool operator==(const DataTypeSet& other) const = default;
  // "f32, f64, i32" (for messages).
  std::string ToString() const;

 private:
  static constexpr uint32_t Bit(DataType d) { return uint32_t{1} << static_cast<int>(d); }
  uint32_t bits_ = 0;
};

}  // namespace ge::engine::sdk

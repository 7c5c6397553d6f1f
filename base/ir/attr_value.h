// Typed node and graph attributes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "base/shape.h"
#include "base/tensor.h"

namespace ge::ir {

// A reference to a subgraph by name; the root graph owns every subgraph.
struct GraphRef {
  std::string name;
  friend bool operator==(const GraphRef& a, const GraphRef& b) { return a.name == b.name; }
};

class AttrValue {
 public:
  // The order matches the variant's alternatives.
  enum class Kind : uint8_t {
    kInt, kFloat, kString, kBool, kTensor, kGraph, kShape,
    kInts, kFloats, kStrings, kBools, kTensors, kGraphs, kShapes,
  };
  using Variant =
      std::variant<int64_t, float, std::string, bool, Tensor, GraphRef, Shape,
                   std::vector<int64_t>, std::vector<float>, std::vector<std::string>,
                   std::vector<bool>, std::vector<Tensor>, std::vector<GraphRef>,
                   std::vector<Shape>>;

  AttrValue() : value_(int64_t{0}) {}
  AttrValue(int64_t v) : value_(v) {}                      // NOLINT
  AttrValue(int v) : value_(int64_t{v}) {}                 // NOLINT
  AttrValue(float v) : value_(v) {}                        // NOLINT
  AttrValue(std::string v) : value_(std::move(v)) {}       // NOLINT
  AttrValue(const char* v) : value_(std::string(v)) {}     // NOLINT
  AttrValue(bool v) : value_(v) {}                         // NOLINT
  AttrValue(Tensor v) : value_(std::move(v)) {}            // NOLINT
  AttrValue(GraphRef v) : value_(std::move(v)) {}          // NOLINT
  AttrValue(Shape v) : value_(std::move(v)) {}             // NOLINT
  AttrValue(std::vector<int64_t> v) : value_(std::move(v)) {}      // NOLINT
  AttrValue(std::vector<float> v) : value_(std::move(v)) {}        // NOLINT
  AttrValue(std::vector<std::string> v) : value_(std::move(v)) {}  // NOLINT
  AttrValue(std::vector<bool> v) : value_(std::move(v)) {}         // NOLINT
  AttrValue(std::vector<Tensor> v) : value_(std::move(v)) {}       // NOLINT
  AttrValue(std::vector<GraphRef> v) : value_(std::move(v)) {}     // NOLINT
  AttrValue(std::vector<Shape> v) : value_(std::move(v)) {}        // NOLINT

  Kind kind() const { return static_cast<Kind>(value_.index()); }
  const Variant& variant() const { return value_; }
  Variant& mutable_variant() { return value_; }
  // The value when it holds a T, else nullptr.
  template <typename T>
  const T* get() const {
    return std::get_if<T>(&value_);
  }

  friend bool operator==(const AttrValue& a, const AttrValue& b);
  friend bool operator!=(const AttrValue& a, const AttrValue& b) { return !(a == b); }

 private:
  Variant value_;
};

std::string_view AttrKindName(AttrValue::Kind kind);

// Sorted by name, so that printing and hashing are deterministic.
using AttrMap = std::map<std::string, AttrValue, std::less<>>;

}  // namespace ge::ir

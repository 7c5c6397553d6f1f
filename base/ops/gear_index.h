// GearIndex: the shape-index node of a multi-batch graph (seeds/01 §5.5,
// GE's GetDynamicDims + MapIndex in one op). Its inputs are the root
// graph's inputs; its output, an i32 scalar, is the Case branch of the gear
// whose shapes equal the inputs' shapes exactly (atc semantics: no padding
// to a larger gear). With a fallback branch (hybrid mode) inputs that fit
// no gear select it; without one they are an error listing the gears.
//
// The gear table travels as attributes of the node, so a saved model
// selects its branches without the options it was compiled with:
//   gear_shapes     shapes, [gear * num_inputs + input]
//   gear_labels     strings, each gear as the user spelled it ("4", "1,32")
//   gear_option     string, the flag that made the gears (for messages)
//   fallback_branch int, -1 for none
// The session reads the same table to report which path a run takes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/ir/op_desc.h"
#include "base/shape.h"

namespace ge::ops {

inline constexpr std::string_view kGearIndex = "GearIndex";

struct GearTable {
  int num_inputs = 0;
  std::vector<std::vector<Shape>> gears;  // [gear][input]
  std::vector<std::string> labels;        // one per gear
  std::string option;                     // "--dynamic_batch_size" etc.
  int64_t fallback_branch = -1;

  // Reads a GearIndex node's attributes; InvalidArgument naming the node
  // when they are missing or inconsistent.
  static absl::StatusOr<GearTable> FromOpDesc(const ir::OpDesc& op);
  void ToOpDesc(ir::OpDesc& op) const;

  // The gear whose shapes equal `shapes` (one per input); else the fallback
  // branch when there is one; else InvalidArgument naming the input shapes
  // and listing every gear.
  absl::StatusOr<int64_t> Select(const std::vector<Shape>& shapes) const;
  // "1, 4, 8" (labels joined).
  std::string GearList() const;
};

}  // namespace ge::ops

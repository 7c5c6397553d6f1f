// Gears: atc's dynamic batch / image size / dims options (seeds/01 §2.1).
//
//   ge.dynamicBatchSize  (--dynamic_batch_size)  "1,4,8"           dim 0
//   ge.dynamicImageSize  (--dynamic_image_size)  "224,224;256,256" H,W: the last two dims
//   ge.dynamicDims       (--dynamic_dims)        "1,32;1,64"       the unknown dims
//   ge.inputShape        (--input_shape)         "input:1,-1,128;mask:1,-1"
//   ge.compileHybridMode                          1: inputs that fit no gear run the dynamic graph
//
// The three gear options are mutually exclusive; at most 100 gears. An
// input's shape is its --input_shape entry, else the model's. Each gear
// gives every input a full static shape:
//   * batch: dim 0 of every input whose dim 0 is -1 (its other dims must be known);
//   * image size: the last two dims (H, W) of every input with an unknown dim
//     there; a dim fixed there must equal the gear's value;
//   * dims: one value per -1 dim, inputs in --input_shape order (atc's form);
//     or, with one dynamic input, the input's leading dims through its last
//     -1 (fixed ones repeated, so "1,32" for "input:1,-1,128").
// ParseGearOptions checks what the options alone decide; ResolveGears
// checks the gears against the graph's inputs (rank, fixed dims).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/options.h"
#include "base/shape.h"

namespace ge::compiler {

inline constexpr int kMaxGears = 100;

enum class GearMode : uint8_t { kNone, kBatch, kImageSize, kDims };

struct InputShapeOption {
  std::string name;
  Shape shape;  // -1 for dynamic dims
};

struct GearOptions {
  GearMode mode = GearMode::kNone;
  std::vector<std::vector<int64_t>> gears;  // the values of each gear, as given
  std::vector<InputShapeOption> input_shapes;  // ge.inputShape, in order
  bool hybrid = false;                         // ge.compileHybridMode

  bool enabled() const { return mode != GearMode::kNone; }
  // "--dynamic_batch_size (ge.dynamicBatchSize)" and so on.
  std::string OptionName() const;
};

absl::StatusOr<GearOptions> ParseGearOptions(const OptionMap& options);

// A graph input as the compiler sees it (Data index order).
struct GraphInput {
  std::string name;
  Shape shape;
};

struct ResolvedGears {
  std::vector<Shape> user_shapes;          // by input: --input_shape, else the model's
  std::vector<std::vector<Shape>> shapes;  // [gear][input], all static
  std::vector<std::string> labels;         // [gear]
  std::vector<Shape> max_shapes;           // by input: the largest dims over the gears
};

// InvalidArgument naming the option, the gear and the input when a gear
// does not fit. Without gears (input shapes only) `shapes` is empty.
absl::StatusOr<ResolvedGears> ResolveGears(const GearOptions& options, const std::vector<GraphInput>& inputs);

}  // namespace ge::compiler

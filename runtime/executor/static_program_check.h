// CheckStaticProgram: what the StaticExecutor verifies of a program before
// it binds a single address — every value reference checked against the real
// type and size of what it points to, so that a program read from an
// untrusted .gem (LoadModel's bytes, a shared cache tier) cannot make a
// kernel read or write outside a buffer.
//
// A program is self-describing (static_program.h): each task keeps its
// node's OpDesc and a ValueRef per input and output. Checked here:
//   * sizes: the arena, every input, output and workspace at most
//     kMaxStaticBytes; every type a fixed-size tensor of known shape;
//   * weights: defined tensors of a fixed-size dtype; a kWeight reference
//     has the weight's exact dtype and shape;
//   * graph inputs: a kInput reference has the input's exact type;
//   * variables: a kVariable reference has the dtype and shape the node
//     declares (the executor then checks the session's tensor against it);
//   * the arena: a kArena reference lies inside it, aligned to
//     kStaticAlignment; one naming a dedicated graph output is exactly that
//     output's buffer (type and offset), since a user buffer takes its place;
//   * tasks: as many references as the OpDesc has inputs and outputs, each
//     of the dtype and shape the OpDesc declares (where it declares one),
//     outputs in the arena; a task without a parameter blob version
//     (param_version 0) carries no blob;
//   * graph outputs: one reference each, of the output's exact type.
// Errors are InvalidArgument naming the task's node (or the table) and the
// reference; nothing is allocated.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "runtime/model/static_program.h"

namespace ge::runtime {

// The largest arena, value or workspace a static program may ask for.
inline constexpr int64_t kMaxStaticBytes = int64_t{1} << 46;

absl::Status CheckStaticProgram(const StaticProgram& program);

// Whether `type` can live on the static path: a tensor of fully known shape
// and a fixed-size dtype, of at most kMaxStaticBytes.
absl::Status CheckStaticType(const ir::ValueType& type);

}  // namespace ge::runtime

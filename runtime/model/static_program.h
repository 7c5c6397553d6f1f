// StaticProgram: what the StaticExecutor loads — the compiled form of one
// known-shape graph (GE's GeModel task list + memory plan).
//
// Every value a task reads or writes is a ValueRef: an offset in the one
// planned arena, a weight (by index into `weights`), a graph input (by
// index), or nothing (an absent optional input). Types are fully known
// tensor types. Tasks are in execution order; running them in that order
// over the bound addresses computes the graph. The program holds no graph:
// each task keeps its own OpDesc (op type and attributes, what the default
// kernel builder re-creates the kernel from), so the host-side graph can be
// dropped once a program is built or loaded. The compiler makes programs
// (compiler/build/task_builder.h); runtime/model/gem.h serializes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/ir/op_desc.h"
#include "base/ir/types.h"
#include "base/tensor.h"
#include "runtime/engines/api/kernel_builder.h"

namespace ge::runtime {

// Arena offsets and zero-copy user buffers are aligned to this.
inline constexpr int64_t kStaticAlignment = 64;
// Constant weights of at most this many bytes are packed at load into one
// block, each aligned to kPackedWeightAlignment (StaticExecutor).
inline constexpr int64_t kPackedWeightBytes = 64;
inline constexpr int64_t kPackedWeightAlignment = 16;

struct ValueRef {
  enum class Kind : uint8_t { kNone, kArena, kWeight, kInput, kVariable };
  Kind kind = Kind::kNone;
  int64_t offset = 0;  // kArena: byte offset in the arena
  int index = -1;      // kWeight: index into StaticProgram::weights; kInput: graph input;
                       // kVariable: index into StaticProgram::variables
  // kArena: the graph output this value is, when its buffer holds nothing
  // else (StaticProgram::output_dedicated); -1 otherwise.
  int output = -1;
  ir::ValueType type;  // a fully known tensor type (unset for kNone)
};

struct StaticTask {
  engine::TaskDef def;
  ir::OpDesc op;  // name, type, attributes, typed inputs and outputs
  std::vector<ValueRef> inputs;
  std::vector<ValueRef> outputs;
};

struct StaticWeight {
  std::string node;  // the Const node it came from
  Tensor value;
};

// A Variable or FileConstant: its memory belongs to the session (or the
// process's weight cache), not to the program, and is bound at load through
// ExecutorOptions::variables.
struct StaticVariable {
  std::string node;
  ir::OpDesc op;
};

struct StaticIo {
  std::string name;
  ir::ValueType type;
};

struct StaticProgram {
  std::string graph_name;
  std::vector<StaticTask> tasks;  // execution order
  std::vector<StaticWeight> weights;
  std::vector<StaticVariable> variables;
  std::vector<StaticIo> inputs;   // by Data index
  std::vector<StaticIo> outputs;  // NetOutput order
  std::vector<ValueRef> output_values;  // where each output is read from
  // Outputs whose arena buffer holds no other value: a user's output buffer
  // can take its place (zero copy).
  std::vector<bool> output_dedicated;
  // The memory plan.
  int64_t arena_bytes = 0;
  int64_t lower_bound_bytes = 0;
  int64_t no_reuse_bytes = 0;
};

}  // namespace ge::runtime

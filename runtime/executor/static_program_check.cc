// CheckStaticProgram: every reference of a static program against what it
// points to (see the header).
#include "runtime/executor/static_program_check.h"

#include <string>

#include "base/status.h"

namespace ge::runtime {
namespace {

const char* KindName(ValueRef::Kind kind) {
  switch (kind) {
    case ValueRef::Kind::kNone: return "none";
    case ValueRef::Kind::kArena: return "arena";
    case ValueRef::Kind::kWeight: return "weight";
    case ValueRef::Kind::kInput: return "input";
    case ValueRef::Kind::kVariable: return "variable";
  }
  return "unknown";
}

// "an arena reference (index -1, offset 64, type f32[2,3])"
std::string Describe(const ValueRef& ref) {
  const bool vowel = ref.kind == ValueRef::Kind::kArena || ref.kind == ValueRef::Kind::kInput;
  return StrCat(vowel ? "an " : "a ", KindName(ref.kind), " reference (index ", ref.index, ", offset ", ref.offset,
                ", type ", ref.kind == ValueRef::Kind::kNone ? std::string("none") : ref.type.ToString(), ")");
}

bool SameTensorType(const ir::ValueType& a, const ir::ValueType& b) {
  return a.is_tensor() && b.is_tensor() && a.dtype() == b.dtype() && a.shape() == b.shape();
}

absl::StatusOr<int64_t> BytesOfType(const ir::ValueType& type) {
  GE_ASSIGN_OR_RETURN(int64_t count, type.shape().NumElements());
  GE_ASSIGN_OR_RETURN(size_t bytes, ByteSizeOf(type.dtype(), count));
  if (bytes > static_cast<size_t>(kMaxStaticBytes)) {
    return InvalidArgument("type ", type.ToString(), " takes ", bytes, " bytes, more than the static path's ",
                           kMaxStaticBytes);
  }
  return static_cast<int64_t>(bytes);
}

class Checker {
 public:
  explicit Checker(const StaticProgram& p) : p_(p) {}

  absl::Status Run() {
    if (p_.arena_bytes < 0 || p_.arena_bytes > kMaxStaticBytes) {
      return InvalidArgument("static program of '", p_.graph_name, "': arena of ", p_.arena_bytes, " bytes (at most ",
                             kMaxStaticBytes, ")");
    }
    for (size_t i = 0; i < p_.inputs.size(); ++i) {
      GE_RETURN_IF_ERROR(
          Annotate(CheckStaticType(p_.inputs[i].type), StrCat("graph input ", i, " '", p_.inputs[i].name, "'")));
    }
    for (size_t i = 0; i < p_.outputs.size(); ++i) {
      GE_RETURN_IF_ERROR(
          Annotate(CheckStaticType(p_.outputs[i].type), StrCat("graph output ", i, " '", p_.outputs[i].name, "'")));
    }
    for (const StaticWeight& w : p_.weights) {
      if (!w.value.defined()) return InvalidArgument("weight '", w.node, "' has no value");
      GE_RETURN_IF_ERROR(Annotate(CheckStaticType(ir::ValueType::Tensor(w.value.dtype(), w.value.shape())),
                                  StrCat("weight '", w.node, "'")));
    }
    for (const StaticVariable& v : p_.variables) {
      if (v.op.num_outputs() != 1) return InvalidArgument("variable '", v.node, "' does not have one output");
      GE_RETURN_IF_ERROR(Annotate(CheckStaticType(v.op.output(0).type), StrCat("variable '", v.node, "'")));
    }
    for (const StaticTask& task : p_.tasks) GE_RETURN_IF_ERROR(CheckTask(task));
    if (p_.output_values.size() != p_.outputs.size() || p_.output_dedicated.size() != p_.outputs.size()) {
      return InvalidArgument("static program of '", p_.graph_name, "' has ", p_.outputs.size(), " outputs but ",
                             p_.output_values.size(), " output values and ", p_.output_dedicated.size(),
                             " dedicated flags");
    }
    for (size_t o = 0; o < p_.outputs.size(); ++o) {
      const ValueRef& ref = p_.output_values[o];
      const std::string where = StrCat("graph output ", o, " '", p_.outputs[o].name, "'");
      if (ref.kind == ValueRef::Kind::kNone) return InvalidArgument(where, " is read from nowhere");
      GE_RETURN_IF_ERROR(Annotate(CheckRef(ref), where));
      if (!SameTensorType(ref.type, p_.outputs[o].type)) {
        return InvalidArgument(where, " is ", p_.outputs[o].type.ToString(), " but is read from ", Describe(ref));
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status CheckTask(const StaticTask& task) {
    const std::string where = StrCat("task of node '", task.op.name(), "' (", task.op.type(), ")");
    if (task.inputs.size() != static_cast<size_t>(task.op.num_inputs()) ||
        task.outputs.size() != static_cast<size_t>(task.op.num_outputs())) {
      return InvalidArgument(where, " has ", task.inputs.size(), " input and ", task.outputs.size(),
                             " output references; its node has ", task.op.num_inputs(), " inputs and ",
                             task.op.num_outputs(), " outputs");
    }
    if (task.def.workspace_bytes > static_cast<size_t>(kMaxStaticBytes)) {
      return InvalidArgument(where, " asks for a workspace of ", task.def.workspace_bytes, " bytes (at most ",
                             kMaxStaticBytes, ")");
    }
    if (task.def.param_version == 0 && !task.def.params.empty()) {
      return InvalidArgument(where, " carries a ", task.def.params.size(),
                             "-byte parameter blob without a blob version (version 0 has no blob)");
    }
    for (size_t i = 0; i < task.inputs.size(); ++i) {
      const ValueRef& ref = task.inputs[i];
      if (ref.kind == ValueRef::Kind::kNone) continue;
      const std::string in = StrCat(where, " input ", i);
      GE_RETURN_IF_ERROR(Annotate(CheckRef(ref), in));
      GE_RETURN_IF_ERROR(MatchesDeclared(ref, task.op.input(static_cast<int>(i)).type, in));
    }
    for (size_t o = 0; o < task.outputs.size(); ++o) {
      const ValueRef& ref = task.outputs[o];
      const std::string out = StrCat(where, " output ", o);
      if (ref.kind != ValueRef::Kind::kArena) return InvalidArgument(out, " writes outside the arena: ", Describe(ref));
      GE_RETURN_IF_ERROR(Annotate(CheckRef(ref), out));
      GE_RETURN_IF_ERROR(MatchesDeclared(ref, task.op.output(static_cast<int>(o)).type, out));
    }
    return absl::OkStatus();
  }

  // The reference agrees with the type the node declares for that slot:
  // the same dtype where it declares one, the same shape where it is known.
  static absl::Status MatchesDeclared(const ValueRef& ref, const ir::ValueType& declared, const std::string& where) {
    if (!declared.is_tensor()) {
      return InvalidArgument(where, ": the node declares ", declared.ToString(), " but the program has ",
                             Describe(ref));
    }
    const bool dtype_ok = declared.dtype() == DataType::kUndefined || declared.dtype() == ref.type.dtype();
    const bool shape_ok = !declared.shape().IsFullyKnown() || declared.shape() == ref.type.shape();
    if (!dtype_ok || !shape_ok) {
      return InvalidArgument(where, ": the node declares ", declared.ToString(), " but the program has ",
                             Describe(ref));
    }
    return absl::OkStatus();
  }

  absl::Status CheckRef(const ValueRef& ref) const {
    if (ref.kind == ValueRef::Kind::kNone) return absl::OkStatus();
    GE_RETURN_IF_ERROR(Annotate(CheckStaticType(ref.type), Describe(ref)));
    switch (ref.kind) {
      case ValueRef::Kind::kNone: return absl::OkStatus();
      case ValueRef::Kind::kWeight: {
        if (ref.index < 0 || static_cast<size_t>(ref.index) >= p_.weights.size()) break;
        const Tensor& w = p_.weights[ref.index].value;
        if (w.dtype() != ref.type.dtype() || w.shape() != ref.type.shape()) {
          return InvalidArgument(Describe(ref), " does not match weight '", p_.weights[ref.index].node, "', which is ",
                                 DataTypeName(w.dtype()), w.shape().ToString());
        }
        return absl::OkStatus();
      }
      case ValueRef::Kind::kInput: {
        if (ref.index < 0 || static_cast<size_t>(ref.index) >= p_.inputs.size()) break;
        const StaticIo& io = p_.inputs[ref.index];
        if (!SameTensorType(ref.type, io.type)) {
          return InvalidArgument(Describe(ref), " does not match graph input '", io.name, "', which is ",
                                 io.type.ToString());
        }
        return absl::OkStatus();
      }
      case ValueRef::Kind::kVariable: {
        if (ref.index < 0 || static_cast<size_t>(ref.index) >= p_.variables.size()) break;
        const StaticVariable& v = p_.variables[ref.index];
        if (!SameTensorType(ref.type, v.op.output(0).type)) {
          return InvalidArgument(Describe(ref), " does not match variable '", v.node, "', which is ",
                                 v.op.output(0).type.ToString());
        }
        return absl::OkStatus();
      }
      case ValueRef::Kind::kArena: {
        GE_ASSIGN_OR_RETURN(int64_t bytes, BytesOfType(ref.type));
        if (ref.offset < 0 || ref.offset > p_.arena_bytes || bytes > p_.arena_bytes - ref.offset) {
          return InvalidArgument(Describe(ref), " of ", bytes, " bytes lies outside the ", p_.arena_bytes,
                                 "-byte arena");
        }
        if (ref.offset % kStaticAlignment != 0) {
          return InvalidArgument(Describe(ref), " is not aligned to ", kStaticAlignment, " bytes");
        }
        if (ref.output < -1 || ref.output >= static_cast<int>(p_.outputs.size())) {
          return InvalidArgument(Describe(ref), " names graph output ", ref.output, " of ", p_.outputs.size());
        }
        if (ref.output >= 0 && static_cast<size_t>(ref.output) < p_.output_dedicated.size() &&
            p_.output_dedicated[ref.output]) {
          // The user's output buffer may take this value's place.
          const ValueRef* out =
              static_cast<size_t>(ref.output) < p_.output_values.size() ? &p_.output_values[ref.output] : nullptr;
          if (out == nullptr || out->kind != ValueRef::Kind::kArena || out->offset != ref.offset ||
              !SameTensorType(ref.type, p_.outputs[ref.output].type)) {
            return InvalidArgument(Describe(ref), " is not the buffer of dedicated graph output ", ref.output, " (",
                                   p_.outputs[ref.output].type.ToString(), ")");
          }
        }
        return absl::OkStatus();
      }
    }
    return InvalidArgument(Describe(ref), " points outside the program (", p_.weights.size(), " weights, ",
                           p_.inputs.size(), " inputs, ", p_.variables.size(), " variables)");
  }

  const StaticProgram& p_;
};

}  // namespace

absl::Status CheckStaticType(const ir::ValueType& type) {
  if (!type.is_tensor() || !type.shape().IsFullyKnown() || type.dtype() == DataType::kUndefined ||
      type.dtype() == DataType::kString || !IsValidDataType(static_cast<int32_t>(type.dtype())) ||
      DataTypeSize(type.dtype()) == 0) {
    return InvalidArgument("type ", type.ToString(),
                           " cannot live on the static path (a fixed-size tensor of known shape)");
  }
  return BytesOfType(type).status();
}

absl::Status CheckStaticProgram(const StaticProgram& program) { return Checker(program).Run(); }

}  // namespace ge::runtime

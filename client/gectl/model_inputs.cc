// Input preparation and output naming for gectl run and bench.
#include "client/gectl/model_inputs.h"

#include <filesystem>
#include <iostream>
#include <random>
#include <set>

#include "absl/strings/str_join.h"
#include "base/io/npy.h"
#include "base/status.h"

namespace ge::gectl {
namespace {

absl::StatusOr<std::pair<std::string, std::string>> SplitAssignment(const std::string& flag, std::string_view what) {
  size_t eq = flag.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size()) {
    return InvalidArgument("bad ", what, " '", flag, "': expected NAME=VALUE");
  }
  return std::make_pair(flag.substr(0, eq), flag.substr(eq + 1));
}

std::string InputNames(const session::GraphInfo& info) {
  std::vector<std::string> names;
  for (const auto& io : info.inputs) names.push_back(io.name);
  return absl::StrJoin(names, ", ");
}

// 53 random bits as a double in [0, 1); independent of the standard
// library's distribution implementations, so values are stable everywhere.
double UnitDouble(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

template <typename T>
void FillInts(Tensor& t, std::mt19937_64& rng) {
  for (int64_t i = 0; i < t.NumElements(); ++i) t.data<T>()[i] = static_cast<T>(rng() % 10);
}

}  // namespace

absl::Status ParseInputFlag(const std::string& flag, InputSpec& spec) {
  GE_ASSIGN_OR_RETURN(auto kv, SplitAssignment(flag, "--input"));
  spec.files[kv.first] = kv.second;
  return absl::OkStatus();
}

absl::Status ParseShapeFlag(const std::string& flag, InputSpec& spec) {
  GE_ASSIGN_OR_RETURN(auto kv, SplitAssignment(flag, "--shape"));
  auto shape = Shape::Parse("[" + kv.second + "]");
  if (!shape.ok() || !shape->IsFullyKnown()) {
    return InvalidArgument("bad --shape '", flag, "': expected NAME=D0,D1,... with dims >= 0");
  }
  spec.shapes[kv.first] = *shape;
  return absl::OkStatus();
}

absl::StatusOr<Tensor> RandomTensor(DataType dtype, const Shape& shape, uint64_t seed) {
  GE_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  std::mt19937_64 rng(seed);
  const int64_t n = t.NumElements();
  switch (dtype) {
    case DataType::kFloat:
      for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(UnitDouble(rng) * 2 - 1);
      break;
    case DataType::kDouble:
      for (int64_t i = 0; i < n; ++i) t.data<double>()[i] = UnitDouble(rng) * 2 - 1;
      break;
    case DataType::kFloat16:
      for (int64_t i = 0; i < n; ++i) t.data<Float16>()[i] = Float16(static_cast<float>(UnitDouble(rng) * 2 - 1));
      break;
    case DataType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) t.data<BFloat16>()[i] = BFloat16(static_cast<float>(UnitDouble(rng) * 2 - 1));
      break;
    case DataType::kInt8: FillInts<int8_t>(t, rng); break;
    case DataType::kInt16: FillInts<int16_t>(t, rng); break;
    case DataType::kInt32: FillInts<int32_t>(t, rng); break;
    case DataType::kInt64: FillInts<int64_t>(t, rng); break;
    case DataType::kUint8: FillInts<uint8_t>(t, rng); break;
    case DataType::kUint16: FillInts<uint16_t>(t, rng); break;
    case DataType::kUint32: FillInts<uint32_t>(t, rng); break;
    case DataType::kUint64: FillInts<uint64_t>(t, rng); break;
    case DataType::kBool:
      for (int64_t i = 0; i < n; ++i) t.data<bool>()[i] = (rng() & 1) != 0;
      break;
    case DataType::kString:
      for (int64_t i = 0; i < n; ++i) t.data<std::string>()[i] = StrCat("s", i);
      break;
    default:
      return InvalidArgument("cannot make random values of type ", DataTypeName(dtype));
  }
  return t;
}

absl::StatusOr<std::vector<Value>> MakeInputs(const session::GraphInfo& info, const InputSpec& spec) {
  std::set<std::string> known;
  for (const auto& io : info.inputs) known.insert(io.name);
  for (const auto& [name, path] : spec.files) {
    if (!known.contains(name)) return InvalidArgument("--input names '", name, "', but the model's inputs are: ", InputNames(info));
  }
  for (const auto& [name, shape] : spec.shapes) {
    if (!known.contains(name)) return InvalidArgument("--shape names '", name, "', but the model's inputs are: ", InputNames(info));
  }
  std::vector<Value> inputs;
  for (size_t i = 0; i < info.inputs.size(); ++i) {
    const session::GraphIo& io = info.inputs[i];
    if (!io.type.is_tensor()) return InvalidArgument("input '", io.name, "' is a ", io.type.ToString(), "; gectl feeds tensors only");
    if (auto it = spec.files.find(io.name); it != spec.files.end()) {
      GE_ASSIGN_OR_RETURN(Tensor t, io::ReadNpyFile(it->second));
      inputs.emplace_back(std::move(t));
      continue;
    }
    Shape shape = io.type.shape();
    if (auto it = spec.shapes.find(io.name); it != spec.shapes.end()) {
      const Shape& given = it->second;
      if (!shape.unknown_rank() && given.rank() != shape.rank()) {
        return InvalidArgument("--shape ", io.name, "=", given.ToString(), " has rank ", given.rank(), ", the input has rank ", shape.rank());
      }
      for (size_t d = 0; !shape.unknown_rank() && d < shape.dims().size(); ++d) {
        if (shape.dim(d) >= 0 && shape.dim(d) != given.dim(d)) {
          return InvalidArgument("--shape ", io.name, "=", given.ToString(), " contradicts the input's fixed shape ", shape.ToString());
        }
      }
      shape = given;
    } else if (shape.unknown_rank()) {
      return InvalidArgument("input '", io.name, "' has unknown rank: give its shape with --shape ", io.name, "=D0,D1,...");
    } else {
      for (size_t d = 0; d < shape.dims().size(); ++d) {
        if (shape.dim(d) < 0) shape.set_dim(d, 1);
      }
    }
    GE_ASSIGN_OR_RETURN(Tensor t, RandomTensor(io.type.dtype(), shape, spec.seed + i));
    inputs.emplace_back(std::move(t));
  }
  return inputs;
}

std::vector<std::string> OutputFileNames(const std::vector<std::string>& output_names) {
  std::vector<std::string> out;
  std::set<std::string> used;
  for (const std::string& name : output_names) {
    std::string base = name.empty() ? "output" : name;
    for (char& c : base) {
      if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
    }
    if (base == "." || base == "..") base = std::string(base.size(), '_');
    std::string candidate = base;
    for (int k = 1; used.contains(candidate); ++k) candidate = StrCat(base, "_", k);
    used.insert(candidate);
    out.push_back(candidate);
  }
  return out;
}

absl::Status SaveOutputs(const std::string& dir, const std::vector<std::string>& names,
                         const std::vector<Value>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return InvalidArgument("cannot create output directory ", dir, ": ", ec.message());
  std::vector<std::string> files = OutputFileNames(names);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].is_tensor()) {
      return InvalidArgument("output '", names[i], "' is not a tensor and cannot be saved as .npy");
    }
    GE_RETURN_IF_ERROR(io::WriteNpyFile((std::filesystem::path(dir) / (files[i] + ".npy")).string(),
                                        outputs[i].tensor()));
  }
  return absl::OkStatus();
}

void PrintOutputSummary(const std::string& name, const Value& value) {
  if (value.is_tensor()) {
    std::cout << name << ": " << value.tensor().DebugString(8) << "\n";
  } else if (value.is_sequence()) {
    std::cout << name << ": sequence of " << value.sequence().size() << " tensor(s)\n";
    for (size_t i = 0; i < value.sequence().size(); ++i) {
      std::cout << "  [" << i << "] " << value.sequence()[i].DebugString(8) << "\n";
    }
  } else {
    std::cout << name << ": none\n";
  }
}

}  // namespace ge::gectl

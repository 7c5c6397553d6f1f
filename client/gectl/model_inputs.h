// Building a run's inputs from --input NAME=FILE.npy, --shape NAME=DIMS and
// seeded random values; naming, saving and summarizing a run's outputs (the
// same for local and --remote runs).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/value.h"
#include "session/session.h"

namespace ge::gectl {

struct InputSpec {
  std::map<std::string, std::string> files;   // input name -> .npy path
  std::map<std::string, Shape> shapes;        // input name -> concrete shape
  uint64_t seed = 0;
};

// Parses "NAME=FILE" and "NAME=D0,D1,..." flags (the name may itself hold
// '='; the last '=' separates).
absl::Status ParseInputFlag(const std::string& flag, InputSpec& spec);
absl::Status ParseShapeFlag(const std::string& flag, InputSpec& spec);

// One value per graph input: from its .npy file (checked against the
// input's type), else random with unknown dims from --shape or 1. Names in
// `spec` that match no input are errors listing the inputs.
absl::StatusOr<std::vector<Value>> MakeInputs(const session::GraphInfo& info, const InputSpec& spec);

// Random values: floats uniform in [-1, 1), integers uniform in [0, 10),
// bools fair, strings "s<i>"; deterministic for a seed.
absl::StatusOr<Tensor> RandomTensor(DataType dtype, const Shape& shape, uint64_t seed);

// File names for outputs: characters other than letters, digits, '.', '_'
// and '-' become '_'; collisions get _1, _2, ... appended.
std::vector<std::string> OutputFileNames(const std::vector<std::string>& output_names);

// Writes output i as DIR/<OutputFileNames(names)[i]>.npy, creating DIR.
// InvalidArgument for an output that is not a tensor.
absl::Status SaveOutputs(const std::string& dir, const std::vector<std::string>& names,
                         const std::vector<Value>& outputs);
// Prints "<name>: <dtype[shape]> {first values}" (sequences element by element).
void PrintOutputSummary(const std::string& name, const Value& value);

}  // namespace ge::gectl

// Building a run's inputs from --input NAME=FILE.npy, --shape NAME=DIMS and
// seeded random values, and naming output files.
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

}  // namespace ge::gectl

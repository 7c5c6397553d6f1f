// Randomized cases for cpu_vector's kernels (engine conformance): one
// generator per op type makes a case of a given dtype, or nothing when the
// op has no such dtype; the test keeps the cases cpu_vector accepts.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "tests/unit/runtime/engines/cpu_dense/conformance_util.h"

namespace ge::engine::conformance {

using cpu_dense::Case;
using cpu_dense::Rng;

using VectorCaseGenerator = std::function<std::optional<Case>(Rng& rng, DataType dtype)>;
using VectorCaseTable = std::map<std::string, VectorCaseGenerator>;

// Element-wise, reduction and data-movement generators.
void AddElementwiseCases(VectorCaseTable& table);
void AddReduceAndMovementCases(VectorCaseTable& table);
// `_FusedElementwise` (its case carries a host_cpu reference).
void AddFusedElementwiseCases(VectorCaseTable& table);

// A random shape of rank [min_rank, max_rank] with dims in [1, max_dim];
// with probability 1/8 one dim is 0 (when `allow_empty`).
Shape RandomShape(Rng& rng, int min_rank, int max_rank, int64_t max_dim, bool allow_empty = true);
// `out` with some dims set to 1 and some leading dims dropped (numpy
// broadcasting back to `out`).
Shape BroadcastFrom(Rng& rng, const Shape& out);
// Values for `dtype`: [lo, hi] for floats, a wider integer range for ints.
Tensor Values(Rng& rng, DataType dtype, const Shape& shape, double lo = -2.0, double hi = 2.0);

}  // namespace ge::engine::conformance

// The channel blocks of cpu_dense's activation layouts, for kernels that
// index a laid-out [N, C, spatial...] tensor themselves (Resize, Pad).
#pragma once

#include <algorithm>
#include <cstdint>

#include "base/ir/types.h"

namespace ge::engine::cpu_dense {

inline bool IsChannelsLast(ir::Format format) { return format == ir::Format::kNHWC || format == ir::Format::kNDHWC; }

// The channels of one contiguous block of a tensor of `channels` channels
// in `format`: 16 or 8 in nChw16c / nChw8c, all of them channels-last (an
// NHWC tensor is [N, 1, spatial..., C]: one block of C lanes per
// position), 1 in plain layouts. A kernel that walks blocked tensors as
// [N, C / block, spatial..., block] walks channels-last ones alike.
inline int64_t LayoutChannelBlock(ir::Format format, int64_t channels) {
  switch (format) {
    case ir::Format::kNChw16c: return 16;
    case ir::Format::kNChw8c: return 8;
    case ir::Format::kNHWC:
    case ir::Format::kNDHWC: return std::max<int64_t>(channels, 1);
    default: return 1;
  }
}

}  // namespace ge::engine::cpu_dense

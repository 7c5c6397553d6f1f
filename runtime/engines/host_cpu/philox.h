// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11): a counter-based generator. Block(counter, key) is a pure
// function, so element i of a random op's output draws from counter
// (i, run) under the node's key wherever it is computed: on any thread, in
// any split of a parallel loop, in the static or the dynamic executor.
// Written from the paper's description (multipliers and Weyl constants are
// the paper's).
#pragma once

#include <array>
#include <cstdint>

namespace ge::engine::host_cpu {

struct Philox4x32 {
  using Block = std::array<uint32_t, 4>;
  using Key = std::array<uint32_t, 2>;

  static Block Generate(Block counter, Key key) {
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        key[0] += 0x9E3779B9u;
        key[1] += 0xBB67AE85u;
      }
      const uint64_t p0 = uint64_t{0xD2511F53u} * counter[0];
      const uint64_t p1 = uint64_t{0xCD9E8D57u} * counter[2];
      const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
      const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
      counter = {hi1 ^ counter[1] ^ key[0], lo1, hi0 ^ counter[3] ^ key[1], lo0};
    }
    return counter;
  }

  // The block of element `index` in run `run`.
  static Block At(uint64_t index, uint64_t run, Key key) {
    return Generate({static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), static_cast<uint32_t>(run),
                     static_cast<uint32_t>(run >> 32)},
                    key);
  }
};

// A uniform double in [0, 1) from two 32-bit words (53 bits).
inline double UniformDouble(uint32_t a, uint32_t b) {
  const uint64_t bits = ((uint64_t{a} << 32) | b) >> 11;
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);
}

// SplitMix64's finalizer: mixes a 64-bit value into a well-spread one.
inline uint64_t Mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace ge::engine::host_cpu

// What the tests of cpu_dense's own convolutions share (small_conv_test,
// narrow_conv_test): a convolution's spec and geometry, plain and 8-channel
// blocked indexing, and the reference convolution with GEMM steps in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "runtime/engines/cpu_dense/gemm_loops.h"
#include "runtime/engines/cpu_dense/small_conv.h"
#include "runtime/engines/cpu_dense/window2d.h"

namespace ge::engine::cpu_dense::testing {

struct ConvSpec {
  int64_t n, ic, ih, iw, oc, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

inline Window2d GeometryOf(const ConvSpec& s) {
  return WithOutputSize(Window2d{.batch = s.n,
                                 .in_channels = s.ic,
                                 .in_h = s.ih,
                                 .in_w = s.iw,
                                 .out_channels = s.oc,
                                 .kernel_h = s.kh,
                                 .kernel_w = s.kw,
                                 .stride_h = s.sh,
                                 .stride_w = s.sw,
                                 .dilation_h = s.dh,
                                 .dilation_w = s.dw,
                                 .pad_top = s.pt,
                                 .pad_left = s.pl,
                                 .pad_bottom = s.pb,
                                 .pad_right = s.pr});
}

// Index of (n, c, y, x) in a plain [N, C, H, W] tensor.
inline size_t Plain(int64_t n, int64_t c, int64_t y, int64_t x, int64_t channels, int64_t h, int64_t w) {
  return static_cast<size_t>(((n * channels + c) * h + y) * w + x);
}

// Index of (n, c, y, x) in a [N, C, H, W] tensor blocked by 8 channels.
inline size_t Blocked(int64_t n, int64_t c, int64_t y, int64_t x, int64_t channels, int64_t h, int64_t w) {
  return static_cast<size_t>((((n * (channels / 8) + c / 8) * h + y) * w + x) * 8 + c % 8);
}

// steps(bias + conv(x, w)) in double; x and the result blocked by 8
// channels (`blocked`) or plain. Steps: 0 the add (`add`, in the result's
// layout), 1 leaky ReLU, 2 clip, 3 logistic, 4 tanh, 9 linear.
inline std::vector<float> ReferenceConv(const Window2d& g, const std::vector<float>& x, const std::vector<float>& w,
                                        const float* bias, const std::vector<float>* add,
                                        const std::vector<GemmStep>& steps, bool blocked) {
  auto index = blocked ? Blocked : Plain;
  std::vector<float> y(static_cast<size_t>(g.batch * g.out_channels * g.out_h * g.out_w));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t o = 0; o < g.out_channels; ++o) {
      for (int64_t oy = 0; oy < g.out_h; ++oy) {
        for (int64_t ox = 0; ox < g.out_w; ++ox) {
          double acc = bias != nullptr ? bias[o] : 0.0;
          for (int64_t c = 0; c < g.in_channels; ++c) {
            for (int64_t i = 0; i < g.kernel_h; ++i) {
              for (int64_t j = 0; j < g.kernel_w; ++j) {
                const int64_t iy = oy * g.stride_h - g.pad_top + i * g.dilation_h;
                const int64_t ix = ox * g.stride_w - g.pad_left + j * g.dilation_w;
                if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
                acc += static_cast<double>(x[index(n, c, iy, ix, g.in_channels, g.in_h, g.in_w)]) *
                       w[static_cast<size_t>(((o * g.in_channels + c) * g.kernel_h + i) * g.kernel_w + j)];
              }
            }
          }
          const size_t at = index(n, o, oy, ox, g.out_channels, g.out_h, g.out_w);
          for (const GemmStep& s : steps) {
            switch (s.kind) {
              case 0: acc += (*add)[at]; break;
              case 1: acc = std::max(acc, 0.0) + s.alpha * std::min(acc, 0.0); break;
              case 2: acc = std::min<double>(std::max<double>(acc, s.alpha), s.beta); break;
              case 3: acc = 1.0 / (1.0 + std::exp(-acc)); break;
              case 4: acc = std::tanh(acc); break;
              case 9: acc = s.alpha * acc + s.beta; break;
              default: break;
            }
          }
          y[at] = static_cast<float>(acc);
        }
      }
    }
  }
  return y;
}

inline std::vector<float> RandomFloats(size_t n, std::mt19937& gen) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(gen);
  return v;
}

}  // namespace ge::engine::cpu_dense::testing

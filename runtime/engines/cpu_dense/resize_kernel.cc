// Resize on cpu_dense: nearest and linear interpolation of f32 tensors of
// rank 1 to 5, with every ONNX coordinate transformation mode but
// tf_crop_and_resize (host_cpu runs that, and cubic), in plain layouts and
// in the channel-blocked layouts of the layout pass (nChw8c / nChw16c) and
// channels-last (NHWC / NDHWC: one block of all C channels per position,
// as the layout pass leaves after a convolution oneDNN runs channels-last).
//
// Interpolation is separable: for each dim and each output index a plan
// keeps at most two taps (source index and weight), computed in double
// with host_cpu's formulas (a nearest pick is one tap of weight 1, so
// nearest copies values exactly). The scales or sizes are read on every run
// (they are tiny value inputs); the taps are recomputed only when they
// change. The work is split by output rows (all dims but the last; in a
// blocked layout a row holds one channel block): each row sums at most 16
// source rows (two taps in each of the four outer dims) weighted by their
// products into one row of the input's width, then reads that row at the
// last dim's taps (a plain row; a blocked row gathers each source row at
// the taps). With the batch and
// channel dims unscaled, a blocked row computes a whole channel block per
// position (contiguous lanes the compiler vectorizes; any width
// channels-last).
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/engines/cpu_dense/channel_block.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"
#include "runtime/engines/sdk/resize_coordinates.h"

namespace ge::engine::cpu_dense {
namespace {

constexpr int kRank = 5;  // shapes are padded to [N, C, D, H, W]

// One output index's taps along a dim: value = w0 * x[i0] (+ w1 * x[i1]).
struct Taps {
  int64_t i0 = 0, i1 = 0;
  float w0 = 1, w1 = 0;
  int n = 1;
};

bool IsBlocked(ir::Format f) { return f == ir::Format::kNChw8c || f == ir::Format::kNChw16c; }

bool KnownLayout(ir::Format f) {
  return f == ir::Format::kND || f == ir::Format::kNCHW || f == ir::Format::kNCDHW || IsBlocked(f) || IsChannelsLast(f);
}

// `s` padded to rank 5: [N, C, 1.., spatial] for rank >= 3, [1.., s] below.
std::array<int64_t, kRank> Padded(const Shape& s) {
  std::array<int64_t, kRank> p{1, 1, 1, 1, 1};
  const int64_t r = s.rank();
  if (r >= 3) {
    p[0] = s.dim(0);
    p[1] = s.dim(1);
    for (int64_t i = 2; i < r; ++i) p[kRank - r + i] = s.dim(i);
  } else {
    for (int64_t i = 0; i < r; ++i) p[kRank - r + i] = s.dim(i);
  }
  return p;
}

class ResizeKernel final : public DenseKernel {
 public:
  ResizeKernel(const ir::OpDesc& op, const DenseContext& ctx)
      : DenseKernel(op, ctx),
        transform_(sdk::StringAttr(op, "coordinate_transformation_mode", "half_pixel")),
        mode_(sdk::StringAttr(op, "mode", "nearest")),
        nearest_mode_(sdk::StringAttr(op, "nearest_mode", "round_prefer_floor")),
        in_format_(op.num_inputs() > 0 ? op.input(0).type.tensor().format : ir::Format::kND),
        out_format_(op.num_outputs() > 0 ? op.output(0).type.tensor().format : ir::Format::kND) {}

 private:
  struct ResizePlan final : Plan {
    std::vector<double> key;  // the scales / sizes the taps are for
    Shape out;
    std::array<std::vector<Taps>, kRank> taps;  // per padded dim
  };

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    const Shape& x = r.shape(0);
    if (x.rank() < 1 || x.rank() > kRank) return NodeUnimplemented(op(), "rank ", x.rank(), " is not 1 to 5");
    if (in_format_ != out_format_ || !KnownLayout(in_format_)) {
      return NodeError(op(), "layouts ", ir::FormatName(in_format_), " -> ", ir::FormatName(out_format_));
    }
    const bool spatial_layout = IsBlocked(in_format_) || IsChannelsLast(in_format_);
    if (spatial_layout && (x.rank() < 3 || x.dim(1) % LayoutChannelBlock(in_format_, x.dim(1)) != 0)) {
      return NodeError(op(), "input ", x.ToString(), " does not fill ", ir::FormatName(in_format_), " blocks");
    }
    return std::unique_ptr<Plan>(new ResizePlan());
  }

  // The output shape and the per-dim scales of this run's value inputs.
  absl::Status OutputOf(ExecuteContext& ctx, const Shape& xs, Shape* out, std::vector<double>* scales,
                        std::vector<double>* key) const {
    const int64_t rank = xs.rank();
    const Tensor* scales_in = ctx.has_input(2) && ctx.input(2).NumElements() > 0 ? &ctx.input(2) : nullptr;
    const Tensor* sizes_in = ctx.has_input(3) && ctx.input(3).NumElements() > 0 ? &ctx.input(3) : nullptr;
    if ((scales_in == nullptr) == (sizes_in == nullptr)) {
      return NodeError(op(), "exactly one of scales and sizes must be given (non-empty)");
    }
    const Tensor* given = scales_in != nullptr ? scales_in : sizes_in;
    if (given->NumElements() != rank) return NodeError(op(), "scales or sizes need ", rank, " values");
    *out = xs;
    scales->assign(static_cast<size_t>(rank), 1.0);
    key->assign(1, scales_in != nullptr ? 0.0 : 1.0);
    for (int64_t d = 0; d < rank; ++d) {
      if (sizes_in != nullptr) {
        const int64_t size = sizes_in->GetAsInt64(d);
        if (size < 0) return NodeError(op(), "sizes[", d, "] is negative");
        out->set_dim(d, size);
        (*scales)[d] = xs.dim(d) == 0 ? 1.0 : static_cast<double>(size) / static_cast<double>(xs.dim(d));
        key->push_back(static_cast<double>(size));
      } else {
        const double s = scales_in->GetAsDouble(d);
        if (!(s > 0)) return NodeError(op(), "scales[", d, "] must be positive, got ", s);
        (*scales)[d] = s;
        out->set_dim(d, static_cast<int64_t>(std::floor(static_cast<double>(xs.dim(d)) * s)));
        key->push_back(s);
      }
    }
    return absl::OkStatus();
  }

  double SourceCoordinate(int64_t o, int64_t in, double scale) const {
    return sdk::ResizeSourceCoordinate(transform_, o, in, scale);
  }

  Taps TapsOf(int64_t o, int64_t in, double scale) const {
    const double src = SourceCoordinate(o, in, scale);
    const int64_t right = static_cast<int64_t>(std::ceil(src));
    const double ratio = src - static_cast<double>(right - 1);  // in (0, 1]
    const auto clamp = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
    Taps t;
    if (mode_ == "nearest") {
      bool take_right;
      if (ratio == 1.0 || nearest_mode_ == "ceil") {
        take_right = true;
      } else if (nearest_mode_ == "round_prefer_ceil") {
        take_right = ratio >= 0.5;
      } else if (nearest_mode_ == "floor") {
        take_right = false;
      } else {  // round_prefer_floor
        take_right = ratio > 0.5;
      }
      t.i0 = t.i1 = clamp(take_right ? right : right - 1);
      return t;
    }
    t.i0 = clamp(right - 1);
    t.i1 = clamp(right);
    t.w0 = static_cast<float>(1 - ratio);
    t.w1 = static_cast<float>(ratio);
    if (t.i0 == t.i1 || t.w1 == 0) {  // one source: its value, exactly
      t.w0 = 1;
      t.w1 = 0;
    } else if (t.w0 == 0) {
      t.i0 = t.i1;
      t.w0 = 1;
      t.w1 = 0;
    } else {
      t.n = 2;
    }
    return t;
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& /*scratch*/) override {
    auto& plan = static_cast<ResizePlan&>(base_plan);
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    Shape out;
    std::vector<double> scales, key;
    GE_RETURN_IF_ERROR(OutputOf(ctx, xs, &out, &scales, &key));
    const int64_t block = xs.rank() >= 3 ? LayoutChannelBlock(in_format_, xs.dim(1)) : 1;
    // Channels-last, input and output are one block of C lanes each.
    if ((block > 1 && out.dim(1) % block != 0) || (IsChannelsLast(in_format_) && out.dim(1) != xs.dim(1))) {
      return NodeError(op(), "output ", out.ToString(), " does not fill ", ir::FormatName(out_format_), " blocks");
    }
    if (x.NumElements() == 0 || out.NumElementsUnchecked() == 0) {
      if (out.NumElementsUnchecked() != 0)
        return NodeError(op(), "an empty input cannot be resized to ", out.ToString());
      return ctx.Output(0, out).status();
    }
    if (key != plan.key || out != plan.out) {
      const std::array<int64_t, kRank> pin = Padded(xs), pout = Padded(out);
      const int64_t rank = xs.rank();
      for (int d = 0; d < kRank; ++d) {
        // Which of the input's dims padded dim d is (-1: a padding dim).
        const int64_t src_dim = rank >= 3 ? (d < 2 ? d : (d >= kRank - (rank - 2) ? d - (kRank - rank) : -1))
                                          : (d >= kRank - rank ? d - (kRank - rank) : -1);
        plan.taps[d].resize(static_cast<size_t>(pout[d]));
        for (int64_t o = 0; o < pout[d]; ++o) {
          plan.taps[d][o] = src_dim < 0 ? Taps{o, o, 1, 0, 1} : TapsOf(o, pin[d], scales[src_dim]);
        }
      }
      plan.key = key;
      plan.out = out;
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    Compute(plan, Padded(xs), Padded(out), block, x.data<float>(), y.data<float>());
    return absl::OkStatus();
  }

  // Element offset of (n, c, d, h, w) in a tensor of padded dims `p`.
  static int64_t Offset(const std::array<int64_t, kRank>& p, int64_t block, int64_t n, int64_t c, int64_t d, int64_t h,
                        int64_t w) {
    const int64_t spatial = ((d * p[3]) + h) * p[4] + w;
    if (block == 1) return ((n * p[1] + c) * p[2] * p[3] * p[4]) + spatial;
    const int64_t blocks = p[1] / block;
    return ((n * blocks + c / block) * p[2] * p[3] * p[4] + spatial) * block + c % block;
  }

  // Whether the output's index o of dim d reads index o of the input alone.
  static bool Identity(const std::vector<Taps>& taps, int64_t in) {
    if (static_cast<int64_t>(taps.size()) != in) return false;
    for (size_t o = 0; o < taps.size(); ++o) {
      if (taps[o].n != 1 || taps[o].i0 != static_cast<int64_t>(o)) return false;
    }
    return true;
  }

  // One output row of a blocked tensor whose channels map to themselves:
  // B channel lanes per position.
  template <int B>
  static void BlockRow(const float* const* rows, const float* weights, int nrows, const std::vector<Taps>& tw,
                       float* dst) {
    const int64_t ow = static_cast<int64_t>(tw.size());
    const bool copy = nrows == 1 && weights[0] == 1;
    for (int64_t o = 0; o < ow; ++o) {
      const Taps& t = tw[o];
      float* out = dst + o * B;
      if (copy && t.n == 1) {  // nearest (or an exact source): the value itself
        const float* a = rows[0] + t.i0 * B;
        for (int l = 0; l < B; ++l) out[l] = a[l];
        continue;
      }
      float acc[B] = {};
      for (int k = 0; k < nrows; ++k) {
        const float* a = rows[k] + t.i0 * B;
        const float* b = rows[k] + t.i1 * B;
        const float wa = weights[k] * t.w0, wb = weights[k] * t.w1;
        if (t.n == 1) {
          for (int l = 0; l < B; ++l) acc[l] += wa * a[l];
        } else {
          for (int l = 0; l < B; ++l) acc[l] += wa * a[l] + wb * b[l];
        }
      }
      for (int l = 0; l < B; ++l) out[l] = acc[l];
    }
  }

  // BlockRow for a block width known only at run time (channels-last: all
  // C channels), summed in BlockRow's order.
  static void WideBlockRow(const float* const* rows, const float* weights, int nrows, const std::vector<Taps>& tw,
                           int64_t block, float* dst) {
    const int64_t ow = static_cast<int64_t>(tw.size());
    const bool copy = nrows == 1 && weights[0] == 1;
    for (int64_t o = 0; o < ow; ++o) {
      const Taps& t = tw[o];
      float* out = dst + o * block;
      if (copy && t.n == 1) {
        std::copy(rows[0] + t.i0 * block, rows[0] + (t.i0 + 1) * block, out);
        continue;
      }
      std::fill(out, out + block, 0.0f);
      for (int k = 0; k < nrows; ++k) {
        const float* a = rows[k] + t.i0 * block;
        const float* b = rows[k] + t.i1 * block;
        const float wa = weights[k] * t.w0, wb = weights[k] * t.w1;
        if (t.n == 1) {
          for (int64_t l = 0; l < block; ++l) out[l] += wa * a[l];
        } else {
          for (int64_t l = 0; l < block; ++l) out[l] += wa * a[l] + wb * b[l];
        }
      }
    }
  }

  // Widest input row blended on the stack (wider ones take the per-tap loop).
  static constexpr int64_t kMaxBlendWidth = 2048;

  static void Compute(const ResizePlan& plan, const std::array<int64_t, kRank>& pin,
                      const std::array<int64_t, kRank>& pout, int64_t block, const float* src, float* dst) {
    const auto& taps = plan.taps;
    // A blocked row covers a channel block when channels map to themselves.
    const bool vector_rows = block > 1 && Identity(taps[1], pin[1]);
    const int64_t cstep = vector_rows ? block : 1;
    const int64_t channels = pout[1] / cstep;
    const int64_t rows = pout[0] * channels * pout[2] * pout[3];
    const int64_t ow = pout[4];
    const int64_t wstride = block;  // distance of neighbouring w elements
#pragma omp parallel for schedule(static) if (rows * ow * cstep >= 4096)
    for (int64_t row = 0; row < rows; ++row) {
      int64_t rest = row;
      const int64_t oh = rest % pout[3];
      rest /= pout[3];
      const int64_t od = rest % pout[2];
      rest /= pout[2];
      const int64_t oc = (rest % channels) * cstep;
      const int64_t on = rest / channels;
      // The source rows (outer taps' products) of this output row.
      std::array<const float*, 16> srows;
      std::array<float, 16> weights;
      int nrows = 0;
      const Taps& tn = taps[0][on];
      const Taps& tc = taps[1][oc];
      const Taps& td = taps[2][od];
      const Taps& th = taps[3][oh];
      for (int a = 0; a < tn.n; ++a) {
        for (int b = 0; b < tc.n; ++b) {
          for (int c = 0; c < td.n; ++c) {
            for (int e = 0; e < th.n; ++e) {
              const float w = (a ? tn.w1 : tn.w0) * (b ? tc.w1 : tc.w0) * (c ? td.w1 : td.w0) * (e ? th.w1 : th.w0);
              srows[nrows] = src + Offset(pin, block, a ? tn.i1 : tn.i0, b ? tc.i1 : tc.i0, c ? td.i1 : td.i0,
                                          e ? th.i1 : th.i0, 0);
              weights[nrows++] = w;
            }
          }
        }
      }
      float* out_row = dst + Offset(pout, block, on, oc, od, oh, 0);
      if (vector_rows && block == 8) {
        BlockRow<8>(srows.data(), weights.data(), nrows, taps[4], out_row);
      } else if (vector_rows && block == 16) {
        BlockRow<16>(srows.data(), weights.data(), nrows, taps[4], out_row);
      } else if (vector_rows) {
        WideBlockRow(srows.data(), weights.data(), nrows, taps[4], block, out_row);
      } else if (!(nrows == 1 && weights[0] == 1) && pin[4] <= kMaxBlendWidth) {
        // Separable: the source rows blended once into one row of the
        // input's width, then two taps per output (a segmentation head's
        // 16x upsampling read 2 rows x 2 taps per output before).
        std::array<float, kMaxBlendWidth> blend;
        const int64_t iw = pin[4];
        for (int64_t i = 0; i < iw; ++i) blend[i] = weights[0] * srows[0][i * wstride];
        for (int k = 1; k < nrows; ++k) {
          for (int64_t i = 0; i < iw; ++i) blend[i] += weights[k] * srows[k][i * wstride];
        }
        const std::vector<Taps>& tw = taps[4];
        for (int64_t o = 0; o < ow; ++o) {
          const Taps& t = tw[o];
          out_row[o * wstride] = t.n == 2 ? t.w0 * blend[t.i0] + t.w1 * blend[t.i1] : t.w0 * blend[t.i0];
        }
      } else {
        const std::vector<Taps>& tw = taps[4];
        for (int64_t o = 0; o < ow; ++o) {
          const Taps& t = tw[o];
          float acc = 0;
          if (nrows == 1 && weights[0] == 1 && t.n == 1) {
            acc = srows[0][t.i0 * wstride];
          } else {
            for (int k = 0; k < nrows; ++k) {
              acc += weights[k] * t.w0 * srows[k][t.i0 * wstride];
              if (t.n == 2) acc += weights[k] * t.w1 * srows[k][t.i1 * wstride];
            }
          }
          out_row[o * wstride] = acc;
        }
      }
    }
  }

  std::string transform_, mode_, nearest_mode_;
  ir::Format in_format_, out_format_;
};

absl::Status CheckResize(const ir::OpDesc& op, const DenseContext& /*ctx*/) {
  if (InputDtype(op, 0) != DataType::kUndefined && InputDtype(op, 0) != DataType::kFloat) {
    return Unsupported(op, "dtype ", DataTypeName(InputDtype(op, 0)), " (f32 only)");
  }
  const std::string mode = sdk::StringAttr(op, "mode", "nearest");
  if (mode != "nearest" && mode != "linear") return Unsupported(op, "mode '", mode, "' (nearest and linear only)");
  const std::string transform = sdk::StringAttr(op, "coordinate_transformation_mode", "half_pixel");
  bool known = false;
  for (const char* m : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"}) {
    known = known || transform == m;
  }
  if (!known) return Unsupported(op, "coordinate_transformation_mode '", transform, "'");
  const std::string nearest = sdk::StringAttr(op, "nearest_mode", "round_prefer_floor");
  if (mode == "nearest" && nearest != "round_prefer_floor" && nearest != "round_prefer_ceil" && nearest != "floor" &&
      nearest != "ceil") {
    return Unsupported(op, "nearest_mode '", nearest, "'");
  }
  for (const char* attr : {"antialias", "axes", "keep_aspect_ratio_policy"}) {
    if (op.FindAttr(attr) != nullptr) return Unsupported(op, "attribute '", attr, "'");
  }
  const Shape x = InputShape(op, 0);
  if (x.rank() >= 0 && (x.rank() < 1 || x.rank() > kRank)) return Unsupported(op, "rank ", x.rank(), " (1 to 5)");
  if (InputDtype(op, 2) != DataType::kUndefined && InputDtype(op, 2) != DataType::kFloat) {
    return Unsupported(op, "scales of dtype ", DataTypeName(InputDtype(op, 2)));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterResizeKernels(DenseKernelTable& table) {
  table.Add({"Resize",
             {DataType::kFloat},
             CheckResize,
             [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ResizeKernel(op, ctx));
             }});
}

}  // namespace ge::engine::cpu_dense

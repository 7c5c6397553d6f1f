// Pad on cpu_dense: constant, reflect and edge modes for f32 tensors of any
// rank, in plain layouts and in the channel-blocked layouts of the layout
// pass (nChw8c / nChw16c) and channels-last (NHWC / NDHWC), when the
// channels are not padded.
//
// The pads (and the constant value) are read on every run: they are tiny
// value inputs, constants in every exported model, computed in some (Swin's
// window padding). A blocked tensor is padded as the plain tensor
// [N, C / B, spatial...] of B-float elements: a channel block moves as one
// (channels-last, B = C: the tensor [N, 1, spatial...] of C-float elements).
// Each output row (all dims but the last) maps to one source row (reflect
// and edge fold the index back into the input, reflect periodically past
// the input's size as host_cpu does; constant mode fills a row
// whose index falls outside) and copies its middle in one memcpy, its
// edges element by element. Rows split across the OpenMP team.
//
// A style-transfer network pads every convolution by reflection: on
// host_cpu's generic kernel, one element at a time between two layout
// conversions, its 16 Pads took a third of a batch-1 run.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/engines/cpu_dense/channel_block.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

enum class PadMode { kConstant, kReflect, kEdge };

// The source index of output index `o` along a dim of `n` elements padded
// by `begin` in front; -1 when it reads the constant.
int64_t SourceIndex(int64_t o, int64_t n, int64_t begin, PadMode mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return std::clamp<int64_t>(i, 0, n - 1);
    case PadMode::kReflect:
      if (n == 1) return 0;
      // Reflection about the first and last elements, period 2 (n - 1).
      i %= 2 * (n - 1);
      if (i < 0) i += 2 * (n - 1);
      return i < n ? i : 2 * (n - 1) - i;
  }
  return -1;
}

class PadKernel final : public DenseKernel {
 public:
  PadKernel(const ir::OpDesc& op, const DenseContext& ctx)
      : DenseKernel(op, ctx), format_(op.num_inputs() > 0 ? op.input(0).type.tensor().format : ir::Format::kND) {
    const std::string mode = sdk::StringAttr(op, "mode", "constant");
    mode_ = mode == "reflect" ? PadMode::kReflect : mode == "edge" ? PadMode::kEdge : PadMode::kConstant;
  }

 private:
  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    if (r.dtype(0) != DataType::kFloat) return NodeUnimplemented(op(), "dtype ", DataTypeName(r.dtype(0)));
    const int64_t rank = r.shape(0).rank();
    const bool spatial_layout = LayoutChannelBlock(format_, 2) > 1;  // blocked or channels-last
    if (spatial_layout && (rank < 3 || r.shape(0).dim(1) % LayoutChannelBlock(format_, r.shape(0).dim(1)) != 0)) {
      return NodeError(op(), "input ", r.shape(0).ToString(), " does not fill ", ir::FormatName(format_), " blocks");
    }
    return std::make_unique<Plan>();
  }

  absl::Status Run(Plan& /*plan*/, ExecuteContext& ctx, Scratch& /*scratch*/) override {
    const Tensor& x = ctx.input(0);
    const Shape& xs = x.shape();
    const int64_t rank = xs.rank();
    if (!ctx.has_input(1)) return NodeError(op(), "pads are missing");
    const std::vector<int64_t> pads = ctx.input(1).ToInt64Vector();
    if (static_cast<int64_t>(pads.size()) != 2 * rank) {
      return NodeError(op(), "pads has ", pads.size(), " values for an input of rank ", rank);
    }
    float value = 0;
    if (ctx.has_input(2) && ctx.input(2).defined() && ctx.input(2).NumElements() > 0) {
      value = static_cast<float>(ctx.input(2).GetAsDouble(0));
    }
    Shape out = xs;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t size = xs.dim(d) + pads[d] + pads[rank + d];
      if (size < 0) return NodeError(op(), "pads ", pads[d], ", ", pads[rank + d], " remove more than dim ", d);
      if (mode_ != PadMode::kConstant && xs.dim(d) == 0 && size > 0) {
        return NodeError(op(), "cannot pad an empty dim ", d, " in reflect or edge mode");
      }
      out.set_dim(d, size);
    }
    const int64_t block = rank >= 3 ? LayoutChannelBlock(format_, xs.dim(1)) : 1;
    if ((block > 1 || IsChannelsLast(format_)) && (pads[1] != 0 || pads[rank + 1] != 0)) {
      return NodeError(op(), "pads the channels of a ", ir::FormatName(format_), " tensor");
    }
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    if (out.NumElementsUnchecked() == 0) return absl::OkStatus();
    // The padded tensor's dims in elements of `block` floats.
    std::vector<int64_t> in_dims(xs.dims().begin(), xs.dims().end());
    std::vector<int64_t> out_dims(out.dims().begin(), out.dims().end());
    if (block > 1) {
      in_dims[1] /= block;
      out_dims[1] /= block;
    }
    if (rank == 0) {
      std::memcpy(y.raw_data(), x.raw_data(), sizeof(float));
      return absl::OkStatus();
    }
    Copy(in_dims, out_dims, pads, block, value, x.data<float>(), y.data<float>());
    return absl::OkStatus();
  }

  void Copy(const std::vector<int64_t>& in, const std::vector<int64_t>& out, const std::vector<int64_t>& pads,
            int64_t block, float value, const float* src, float* dst) const {
    const auto rank = static_cast<int64_t>(in.size());
    const int64_t last = rank - 1;
    int64_t rows = 1;
    for (int64_t d = 0; d < last; ++d) rows *= out[d];
    const int64_t ow = out[last], iw = in[last], begin = pads[last];
    // The last dim's source indices, and the run of it that copies in one go.
    std::vector<int64_t> cols(static_cast<size_t>(ow));
    for (int64_t o = 0; o < ow; ++o) cols[o] = iw > 0 ? SourceIndex(o, iw, begin, mode_) : -1;
    const int64_t first = std::clamp<int64_t>(begin, 0, ow);
    const int64_t skip = std::max<int64_t>(-begin, 0);  // a negative begin crops the source row
    const int64_t span = std::clamp<int64_t>(std::min(iw - skip, ow - first), 0, ow);
    const PadMode mode = mode_;
#pragma omp parallel for schedule(static) if (rows * ow * block >= 16384)
    for (int64_t row = 0; row < rows; ++row) {
      // The source row: each outer dim's index mapped back.
      int64_t rest = row, src_row = 0, stride = 1;
      bool constant_row = false;
      for (int64_t d = last - 1; d >= 0; --d) {
        const int64_t o = rest % out[d];
        rest /= out[d];
        const int64_t i = in[d] > 0 ? SourceIndex(o, in[d], pads[d], mode) : -1;
        if (i < 0) {
          constant_row = true;
          break;
        }
        src_row += i * stride;
        stride *= in[d];
      }
      float* y = dst + row * ow * block;
      if (constant_row) {
        std::fill(y, y + ow * block, value);
        continue;
      }
      const float* x = src + src_row * iw * block;
      for (int64_t o = 0; o < ow; ++o) {
        if (o == first && span > 0) {
          std::memcpy(y + o * block, x + skip * block, static_cast<size_t>(span * block) * sizeof(float));
          o += span - 1;
          continue;
        }
        const int64_t i = cols[o];
        if (i < 0) {
          std::fill(y + o * block, y + (o + 1) * block, value);
        } else {
          std::copy(x + i * block, x + (i + 1) * block, y + o * block);
        }
      }
    }
  }

  ir::Format format_;
  PadMode mode_;
};

absl::Status CheckPad(const ir::OpDesc& op, const DenseContext& /*ctx*/) {
  const std::string mode = sdk::StringAttr(op, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") return Unsupported(op, "mode '", mode, "'");
  if (op.num_inputs() > 3 && op.input(3).type.dtype() != DataType::kUndefined) {
    return Unsupported(op, "an axes input");
  }
  if (op.num_inputs() < 2) return Unsupported(op, "no pads input");
  const DataType pads = InputDtype(op, 1);
  if (pads != DataType::kUndefined && pads != DataType::kInt64)
    return Unsupported(op, "pads of dtype ", DataTypeName(pads));
  const DataType value = InputDtype(op, 2);
  if (value != DataType::kUndefined && value != DataType::kFloat) {
    return Unsupported(op, "a constant value of dtype ", DataTypeName(value));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterPadKernels(DenseKernelTable& table) {
  table.Add({"Pad",
             {DataType::kFloat},
             CheckPad,
             [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new PadKernel(op, ctx));
             }});
}

}  // namespace ge::engine::cpu_dense

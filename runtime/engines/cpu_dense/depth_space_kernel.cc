// DepthToSpace (DCR and CRD) and SpaceToDepth on cpu_dense: f32 rank-4
// tensors in the plain layout.
//
// Both are a fixed permutation of [N, C, H, W]: a super-resolution head's
// PixelShuffle (ESPCN's 9 channels at 96x96 into one at 288x288) and the
// space-to-depth stems of detectors. On host_cpu's generic kernel each
// element went through a typed copy call (7 % of an ESPCN run). Here one
// output row of DepthToSpace interleaves `blocksize` source rows (one per
// column offset j), and one output row of SpaceToDepth picks every
// blocksize-th element of a source row; rows split across the OpenMP team.
#include <string>

#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

class DepthSpaceKernel final : public DenseKernel {
 public:
  DepthSpaceKernel(const ir::OpDesc& op, const DenseContext& ctx, bool to_space)
      : DenseKernel(op, ctx),
        to_space_(to_space),
        block_(sdk::IntAttr(op, "blocksize", 0)),
        crd_(sdk::StringAttr(op, "mode", "DCR") == "CRD") {}

 private:
  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    if (r.dtype(0) != DataType::kFloat) return NodeUnimplemented(op(), "dtype ", DataTypeName(r.dtype(0)));
    GE_RETURN_IF_ERROR(OutputShape(r.shape(0)).status());
    return std::make_unique<Plan>();
  }

  absl::StatusOr<Shape> OutputShape(const Shape& x) const {
    if (x.rank() != 4) return NodeError(op(), "input ", x.ToString(), " is not of rank 4");
    if (block_ < 1) return NodeError(op(), "blocksize ", block_, " must be positive");
    const int64_t b = block_;
    if (to_space_) {
      if (x.dim(1) % (b * b) != 0) return NodeError(op(), "channels ", x.dim(1), " are not a multiple of ", b * b);
      return Shape{x.dim(0), x.dim(1) / (b * b), x.dim(2) * b, x.dim(3) * b};
    }
    if (x.dim(2) % b != 0 || x.dim(3) % b != 0) {
      return NodeError(op(), "input ", x.ToString(), " is not divisible by blocksize ", b);
    }
    return Shape{x.dim(0), x.dim(1) * b * b, x.dim(2) / b, x.dim(3) / b};
  }

  absl::Status Run(Plan& /*plan*/, ExecuteContext& ctx, Scratch& /*scratch*/) override {
    const Tensor& x = ctx.input(0);
    GE_ASSIGN_OR_RETURN(Shape out, OutputShape(x.shape()));
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    if (out.NumElementsUnchecked() == 0) return absl::OkStatus();
    const float* src = x.data<float>();
    float* dst = y.data<float>();
    const int64_t b = block_;
    if (to_space_) {
      // Output rows (n, c, h * b + i), each of W * b elements.
      const int64_t n = out.dim(0), c = out.dim(1), oh = out.dim(2), ow = out.dim(3), ic = x.shape().dim(1);
      const int64_t h = x.shape().dim(2), w = x.shape().dim(3), rows = n * c * oh;
      const bool crd = crd_;
#pragma omp parallel for schedule(static) if (rows * ow >= 16384)
      for (int64_t row = 0; row < rows; ++row) {
        const int64_t image = row / (c * oh), ch = row / oh % c, yy = row % oh, hh = yy / b, i = yy % b;
        float* to = dst + row * ow;
        for (int64_t j = 0; j < b; ++j) {
          const int64_t from_channel = crd ? (ch * b + i) * b + j : (i * b + j) * c + ch;
          const float* from = src + ((image * ic + from_channel) * h + hh) * w;
          for (int64_t xx = 0; xx < w; ++xx) to[xx * b + j] = from[xx];
        }
      }
      return absl::OkStatus();
    }
    // SpaceToDepth: output rows (n, (i * b + j) * C + c, h), each of W / b.
    const int64_t n = out.dim(0), oc = out.dim(1), oh = out.dim(2), ow = out.dim(3);
    const int64_t c = x.shape().dim(1), w = x.shape().dim(3), h = x.shape().dim(2), rows = n * oc * oh;
#pragma omp parallel for schedule(static) if (rows * ow >= 16384)
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t image = row / (oc * oh), och = row / oh % oc, hh = row % oh;
      const int64_t offset = och / c, ch = och % c, i = offset / b, j = offset % b;
      const float* from = src + ((image * c + ch) * h + hh * b + i) * w + j;
      float* to = dst + row * ow;
      for (int64_t xx = 0; xx < ow; ++xx) to[xx] = from[xx * b];
    }
    return absl::OkStatus();
  }

  bool to_space_;
  int64_t block_;
  bool crd_;
};

absl::Status CheckDepthSpace(const ir::OpDesc& op, const DenseContext& /*ctx*/) {
  if (sdk::IntAttr(op, "blocksize", 0) < 1) return Unsupported(op, "no positive blocksize");
  const std::string mode = sdk::StringAttr(op, "mode", "DCR");
  if (op.type() == "DepthToSpace" && mode != "DCR" && mode != "CRD") return Unsupported(op, "mode '", mode, "'");
  const Shape x = InputShape(op, 0);
  if (x.rank() >= 0 && x.rank() != 4) return Unsupported(op, "input rank ", x.rank(), " (4 only)");
  for (int i = 0; i < op.num_outputs(); ++i) {
    if (op.output(i).type.is_tensor() && op.output(i).type.tensor().format != ir::Format::kND &&
        op.output(i).type.tensor().format != ir::Format::kNCHW) {
      return Unsupported(op, "a non-plain layout");
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterDepthSpaceKernels(DenseKernelTable& table) {
  for (const char* type : {"DepthToSpace", "SpaceToDepth"}) {
    const bool to_space = std::string(type) == "DepthToSpace";
    table.Add({type,
               {DataType::kFloat},
               CheckDepthSpace,
               [to_space](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
                 return std::unique_ptr<Kernel>(new DepthSpaceKernel(op, ctx, to_space));
               }});
  }
}

}  // namespace ge::engine::cpu_dense

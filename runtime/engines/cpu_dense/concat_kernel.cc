// Concat on oneDNN: float or int8 tensors of one rank joined along any
// axis, each input and the output in the layout its port names (int8:
// plain or channels-last, the layouts int8 activations take). The layout pass gives
// a channel Concat of blocked activations (SqueezeNet's fire modules,
// DenseNet's feature maps, UNet's skip connections) the blocked layout
// when every input fills whole blocks, so the convolutions around it keep
// their layout instead of converting to plain and back.
//
// When every input and the output are plain, or all share one channel-blocked
// layout and the join is along the channels, each input is a run of
// contiguous bytes per index of the dims before the axis (the batch, for a
// channel join), so the kernel copies those runs itself, split over the
// team (memcpy per run). oneDNN 2.6's `simple` concat was 16 % of
// DenseNet-121's primitive time at 1 thread (ONEDNN_VERBOSE: 29 of 180 ms;
// each of its 58 layers joins all earlier feature maps). A channel join of
// channels-last ports (AVX-512 hosts) is a run per input and position: the
// kernel copies those rows too, a position block per thread (oneDNN's
// `simple` concat took 0.37 ms at 1 thread and 1.3 at 2 for UNet's
// 32 + 16 channels at 128x128, docs/perf.md "Channels-last concat").
// Other layouts take oneDNN's concat.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "runtime/engines/cpu_dense/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"

namespace ge::engine::cpu_dense {
namespace {

class ConcatKernel final : public DenseKernel {
 public:
  ConcatKernel(const ir::OpDesc& op, const DenseContext& ctx, int64_t axis) : DenseKernel(op, ctx), axis_(axis) {}

 private:
  // Every input's elements (an absent one has none).
  int64_t MemoryBoundElements(const PlanRequest& r) const override {
    int64_t n = 0;
    for (int i = 0; i < static_cast<int>(r.input_types.size()); ++i) {
      if (r.has_input(i)) n += r.shape(i).NumElementsUnchecked();
    }
    return n;
  }

  // One contiguous run: `bytes` from input `input` (an index into
  // ConcatPlan::inputs) at `src`, to the output at `dst`.
  struct Piece {
    int input;
    size_t src, dst, bytes;
  };
  struct ConcatPlan final : Plan {
    dnnl::concat concat;
    std::vector<int> inputs;  // the non-empty inputs, in order
    std::vector<dnnl::memory::desc> src_mds;
    dnnl::memory::desc dst_md, scratchpad_md;
    std::vector<Piece> pieces;  // non-empty: copy these runs instead of `concat`
    size_t copy_bytes = 0;
    // Channels-last ports joined along the channels: `rows` positions, the
    // output's row of `row_bytes` holding input k's row of
    // row_copies[k].bytes at row_copies[k].offset.
    struct RowCopy {
      size_t bytes, offset;
    };
    std::vector<RowCopy> row_copies;  // non-empty: copy rows instead of `concat`
    int64_t rows = 0;
    size_t row_bytes = 0;
  };

  // Runs of at most this many bytes, so that a team splits even a join of
  // two inputs evenly.
  static constexpr size_t kPieceBytes = size_t{32} << 10;
  // Below this many bytes in all, the copy stays on the calling thread.
  static constexpr size_t kParallelBytes = size_t{96} << 10;

  static bool IsPlainFormat(ir::Format f) {
    return f == ir::Format::kND || f == ir::Format::kNCHW || f == ir::Format::kNCDHW;
  }
  static int64_t ChannelBlock(ir::Format f) {
    return f == ir::Format::kNChw16c ? 16 : f == ir::Format::kNChw8c ? 8 : 0;
  }

  // The byte runs of the join when every port's layout makes one (above);
  // false otherwise (oneDNN's concat runs).
  bool PlanCopy(const PlanRequest& r, const Shape& out, int64_t axis, ConcatPlan& plan) const {
    const ir::Format fo = op().output(0).type.tensor().format;
    const bool plain = IsPlainFormat(fo);
    const int64_t block = ChannelBlock(fo);
    if (!plain && (block == 0 || axis != 1 || out.dim(1) % block != 0)) return false;
    for (int i : plan.inputs) {
      const ir::Format fi = op().input(i).type.tensor().format;
      if (plain ? !IsPlainFormat(fi) : (fi != fo || r.shape(i).dim(1) % block != 0)) return false;
    }
    const size_t elem = DataTypeSize(r.dtype(0));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out.dim(d);
    for (int64_t d = axis + 1; d < out.rank(); ++d) inner *= out.dim(d);
    const size_t out_run = static_cast<size_t>(out.dim(axis) * inner) * elem;
    size_t offset = 0;  // of input k's run within the output's run
    for (size_t k = 0; k < plan.inputs.size(); ++k) {
      const size_t run = static_cast<size_t>(r.shape(plan.inputs[k]).dim(axis) * inner) * elem;
      for (int64_t o = 0; o < outer; ++o) {
        for (size_t at = 0; at < run; at += kPieceBytes) {
          plan.pieces.push_back({static_cast<int>(k), static_cast<size_t>(o) * run + at,
                                 static_cast<size_t>(o) * out_run + offset + at, std::min(kPieceBytes, run - at)});
        }
      }
      offset += run;
    }
    plan.copy_bytes = static_cast<size_t>(outer) * out_run;
    return !plan.pieces.empty();
  }

  // The rows of a channels-last channel join (ConcatPlan::row_copies).
  bool PlanRows(const PlanRequest& r, const Shape& out, int64_t axis, ConcatPlan& plan) const {
    if (op().output(0).type.tensor().format != ir::Format::kNHWC || axis != 1 || out.rank() != 4) return false;
    for (int i : plan.inputs) {
      if (op().input(i).type.tensor().format != ir::Format::kNHWC) return false;
    }
    const size_t elem = DataTypeSize(r.dtype(0));
    plan.rows = out.dim(0) * out.dim(2) * out.dim(3);
    plan.row_bytes = static_cast<size_t>(out.dim(1)) * elem;
    size_t offset = 0;
    for (int i : plan.inputs) {
      const size_t bytes = static_cast<size_t>(r.shape(i).dim(1)) * elem;
      plan.row_copies.push_back({bytes, offset});
      offset += bytes;
    }
    plan.copy_bytes = static_cast<size_t>(plan.rows) * plan.row_bytes;
    return plan.rows > 0;
  }

  // Rows [begin, end) of every input into the output.
  static void CopyRows(const ConcatPlan& plan, const std::vector<const char*>& src, char* dst, int64_t begin,
                       int64_t end) {
    for (size_t k = 0; k < plan.row_copies.size(); ++k) {
      const size_t bytes = plan.row_copies[k].bytes;
      const char* from = src[k] + static_cast<size_t>(begin) * bytes;
      char* to = dst + static_cast<size_t>(begin) * plan.row_bytes + plan.row_copies[k].offset;
      for (int64_t row = begin; row < end; ++row, from += bytes, to += plan.row_bytes) {
        // 64-byte moves the compiler keeps inline, then the rest.
        size_t at = 0;
        for (; at + 64 <= bytes; at += 64) std::memcpy(to + at, from + at, 64);
        if (at < bytes) std::memcpy(to + at, from + at, bytes - at);
      }
    }
  }

  static void CopyAllRows(const ConcatPlan& plan, const std::vector<const char*>& src, char* dst) {
    const int team = omp_in_parallel() != 0 ? 1 : omp_get_max_threads();
    if (team <= 1 || plan.copy_bytes < kParallelBytes) {
      CopyRows(plan, src, dst, 0, plan.rows);
      return;
    }
#pragma omp parallel num_threads(team)
    {
      const int64_t i = omp_get_thread_num(), nt = omp_get_num_threads();
      CopyRows(plan, src, dst, plan.rows * i / nt, plan.rows * (i + 1) / nt);
    }
  }

  static void Copy(const ConcatPlan& plan, const std::vector<const char*>& src, char* dst) {
    const auto n = static_cast<int64_t>(plan.pieces.size());
    const int team = omp_in_parallel() != 0 ? 1 : omp_get_max_threads();
    auto copy = [&](int64_t p) {
      const Piece& piece = plan.pieces[p];
      std::memcpy(dst + piece.dst, src[piece.input] + piece.src, piece.bytes);
    };
    if (team <= 1 || n < 2 || plan.copy_bytes < kParallelBytes) {
      for (int64_t p = 0; p < n; ++p) copy(p);
      return;
    }
#pragma omp parallel for num_threads(static_cast <int>(std::min <int64_t>(team, n))) schedule(static)
    for (int64_t p = 0; p < n; ++p) copy(p);
  }

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    const int n = static_cast<int>(r.input_types.size());
    if (n < 1 || !r.has_input(0)) return NodeError(op(), "no inputs");
    const Shape& first = r.shape(0);
    const int64_t rank = first.rank();
    if (rank < 1 || rank > DNNL_MAX_NDIMS) return NodeUnimplemented(op(), "rank ", rank);
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) return NodeError(op(), "axis ", axis_, " is out of range for rank ", rank);
    Shape out = first;
    out.set_dim(axis, 0);
    auto plan = std::make_unique<ConcatPlan>();
    for (int i = 0; i < n; ++i) {
      if (!r.has_input(i) || r.dtype(i) != r.dtype(0)) return NodeError(op(), "inputs of different dtypes");
      const Shape& s = r.shape(i);
      if (s.rank() != rank) return NodeError(op(), "inputs of different ranks");
      for (int64_t d = 0; d < rank; ++d) {
        if (d != axis && s.dim(d) != first.dim(d)) {
          return NodeError(op(), "input ", i, " ", s.ToString(), " differs from ", first.ToString(), " off the axis");
        }
      }
      out.set_dim(axis, out.dim(axis) + s.dim(axis));
      if (s.dim(axis) == 0) continue;
      GE_ASSIGN_OR_RETURN(dnnl::memory::desc md, FormatDesc(s, r.dtype(i), op().input(i).type.tensor().format));
      plan->inputs.push_back(i);
      plan->src_mds.push_back(md);
    }
    GE_ASSIGN_OR_RETURN(plan->dst_md, FormatDesc(out, r.dtype(0), op().output(0).type.tensor().format));
    if (plan->inputs.empty()) return NodeUnimplemented(op(), "every input is empty");
    if (PlanCopy(r, out, axis, *plan) || PlanRows(r, out, axis, *plan)) return plan;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::concat::primitive_desc pd(plan->dst_md, static_cast<int>(axis), plan->src_mds, eng(), attr);
    plan->scratchpad_md = pd.scratchpad_desc();
    plan->concat = dnnl::concat(pd);
    plan->workspace_bytes = Scratch::Padded(plan->scratchpad_md.get_size()) + Scratch::kAlign;
    return plan;
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch& scratch) override {
    auto& plan = static_cast<ConcatPlan&>(base_plan);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    if (!plan.pieces.empty() || !plan.row_copies.empty()) {
      std::vector<const char*> src;
      src.reserve(plan.inputs.size());
      for (int i : plan.inputs) src.push_back(static_cast<const char*>(ctx.input(i).raw_data()));
      if (plan.row_copies.empty()) {
        Copy(plan, src, static_cast<char*>(y.raw_data()));
      } else {
        CopyAllRows(plan, src, static_cast<char*>(y.raw_data()));
      }
      return absl::OkStatus();
    }
    dnnl::stream stream(eng());
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_DST, WrapTensor(plan.dst_md, eng(), y)},
        {DNNL_ARG_SCRATCHPAD, dnnl::memory(plan.scratchpad_md, eng(), scratch.Take(plan.scratchpad_md.get_size()))}};
    for (size_t k = 0; k < plan.inputs.size(); ++k) {
      args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(k)] = WrapTensor(plan.src_mds[k], eng(), ctx.input(plan.inputs[k]));
    }
    plan.concat.execute(stream, args);
    stream.wait();
    return absl::OkStatus();
  }

  int64_t axis_;
};

absl::Status CheckConcat(const ir::OpDesc& op, const DenseContext& ctx) {
  if (op.num_inputs() < 1) return Unsupported(op, "no inputs");
  if (!op.HasAttr("axis")) return Unsupported(op, "attribute axis is required");
  for (int i = 1; i < op.num_inputs(); ++i) {
    const DataType d = InputDtype(op, i);
    if (d != DataType::kUint8 && d != DataType::kInt8) GE_RETURN_IF_ERROR(CheckFloatInput(op, i, ctx));
    if (InputDtype(op, i) != DataType::kUndefined && InputDtype(op, i) != InputDtype(op, 0)) {
      return Unsupported(op, "inputs of different dtypes");
    }
  }
  for (int i = 0; i < op.num_inputs(); ++i) {
    const Shape s = InputShape(op, i);
    if (s.rank() == 0 || s.rank() > DNNL_MAX_NDIMS) return Unsupported(op, "input rank ", s.rank());
    // Empty inputs are skipped; a Concat of nothing but empty tensors is
    // left to another engine.
    if (s.IsFullyKnown() && s.NumElementsUnchecked() == 0 && op.num_inputs() == 1) {
      return Unsupported(op, "an empty input");
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterConcatKernels(DenseKernelTable& table) {
  table.Add({"Concat",
             {DataType::kFloat, DataType::kBFloat16, DataType::kUint8, DataType::kInt8},
             CheckConcat,
             [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new ConcatKernel(op, ctx, sdk::IntAttr(op, "axis", 0)));
             }});
}

}  // namespace ge::engine::cpu_dense

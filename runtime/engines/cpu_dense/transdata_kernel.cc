// TransData on oneDNN: converts a tensor between layouts (ND / NCHW,
// channels-last, channel-blocked) with a reorder primitive. The layout
// pass inserts it where cpu_dense's blocked activations meet nodes that
// read plain tensors; the logical shape never changes.
#include "base/ir/op_types.h"
#include "runtime/engines/cpu_dense/kernel_registry.h"

namespace ge::engine::cpu_dense {
namespace {

absl::StatusOr<ir::Format> FormatAttr(const ir::OpDesc& op, std::string_view name) {
  const std::string text = op.GetAttrOr<std::string>(name, "");
  std::optional<ir::Format> f = ir::ParseFormat(text);
  if (!f) return NodeError(op, name, " '", text, "' is not a format");
  return *f;
}

class TransDataKernel final : public DenseKernel {
 public:
  TransDataKernel(const ir::OpDesc& op, const DenseContext& ctx, ir::Format src, ir::Format dst)
      : DenseKernel(op, ctx), src_(src), dst_(dst) {}

 private:
  int64_t MemoryBoundElements(const PlanRequest& r) const override { return r.shape(0).NumElementsUnchecked(); }

  struct ReorderPlan final : Plan {
    dnnl::reorder reorder;
    dnnl::memory::desc src_md, dst_md;
  };

  absl::StatusOr<std::unique_ptr<Plan>> Build(const PlanRequest& r) override {
    auto plan = std::make_unique<ReorderPlan>();
    GE_ASSIGN_OR_RETURN(plan->src_md, FormatDesc(r.shape(0), r.dtype(0), src_));
    GE_ASSIGN_OR_RETURN(plan->dst_md, FormatDesc(r.shape(0), r.dtype(0), dst_));
    if (plan->src_md.get_size() != plan->dst_md.get_size()) {
      return NodeError(op(), "layouts ", ir::FormatName(src_), " and ", ir::FormatName(dst_), " of ",
                       r.shape(0).ToString(), " differ in size (channels not a multiple of the block)");
    }
    plan->reorder = MakeReorder(eng(), plan->src_md, plan->dst_md);
    return plan;
  }

  absl::Status Run(Plan& base_plan, ExecuteContext& ctx, Scratch&) override {
    auto& plan = static_cast<ReorderPlan&>(base_plan);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    dnnl::stream stream(eng());
    dnnl::memory src = WrapTensor(plan.src_md, eng(), ctx.input(0));
    dnnl::memory dst = WrapTensor(plan.dst_md, eng(), y);
    plan.reorder.execute(stream, src, dst);
    stream.wait();
    return absl::OkStatus();
  }

  ir::Format src_, dst_;
};

// The channel block of a format (1 for unblocked ones).
int64_t ChannelBlock(ir::Format f) {
  return f == ir::Format::kNChw16c ? 16 : f == ir::Format::kNChw8c ? 8 : 1;
}

absl::Status CheckTransData(const ir::OpDesc& op, const DenseContext&) {
  auto src = FormatAttr(op, "src_format");
  auto dst = FormatAttr(op, "dst_format");
  if (!src.ok()) return Unsupported(op, src.status().message());
  if (!dst.ok()) return Unsupported(op, dst.status().message());
  const Shape x = InputShape(op, 0);
  if (!OnlyBatchUnknown(x)) return Unsupported(op, "the shape is not known");
  for (ir::Format f : {*src, *dst}) {
    if (!FormatDesc(LayoutProbeShape(x), DataType::kFloat, f).ok()) {
      return Unsupported(op, "format ", ir::FormatName(f), " at rank ", x.rank());
    }
    if (x.rank() >= 2 && x.dim(1) % ChannelBlock(f) != 0) {
      return Unsupported(op, "channels ", x.dim(1), " are not a multiple of ", ChannelBlock(f));
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterLayoutKernels(DenseKernelTable& table) {
  table.Add({std::string(ir::kTransData),
             {DataType::kFloat, DataType::kBFloat16, DataType::kUint8, DataType::kInt8},
             CheckTransData,
             [](const ir::OpDesc& op, const DenseContext& ctx) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               GE_ASSIGN_OR_RETURN(ir::Format src, FormatAttr(op, "src_format"));
               GE_ASSIGN_OR_RETURN(ir::Format dst, FormatAttr(op, "dst_format"));
               return std::unique_ptr<Kernel>(new TransDataKernel(op, ctx, src, dst));
             }});
}

}  // namespace ge::engine::cpu_dense

// `_FusedElementwise`: the schema, the program decoder with its register
// allocation, and the block-wise kernel.
#include "runtime/engines/cpu_vector/fused_elementwise.h"

#include <algorithm>
#include <string>

#include "absl/container/inlined_vector.h"
#include "base/ops/shape_utils.h"
#include "base/status.h"
#include "runtime/engines/cpu_vector/elementwise_ops.h"
#include "runtime/engines/sdk/broadcast.h"

namespace ge::engine::cpu_vector {
namespace {

using Kind = ir::AttrValue::Kind;

absl::Status InferFused(ops::InferenceContext& ctx) {
  std::vector<Shape> shapes;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input ", i, " is missing");
    shapes.push_back(ctx.input_tensor(i).shape);
  }
  auto y = ops::BroadcastShapes(shapes);
  if (!y.ok()) return ctx.Error("the inputs do not broadcast: ", y.status().message());
  ctx.set_output(0, ctx.input_tensor(0).dtype, *std::move(y));
  return absl::OkStatus();
}

template <typename T>
const std::vector<T>* ListAttr(const ir::OpDesc& op, std::string_view name) {
  const ir::AttrValue* v = op.FindAttr(name);
  return v == nullptr ? nullptr : v->get<std::vector<T>>();
}

// Where an input is read from for a block: in place (stride 1), one element
// (stride 0), or gathered through its broadcast plan into a register.
enum class InputKind : uint8_t { kFull, kScalar, kGather };

struct InputPlan {
  InputKind kind = InputKind::kFull;
  int32_t reg = -1;  // kGather: its register
  sdk::BroadcastPlan plan;
};

// dst[0, len) = src at Y's elements [begin, begin + len) through `plan`
// (collapsed Y dims, the input's element strides along them).
void Gather(const sdk::BroadcastPlan& plan, const float* src, int64_t begin, int64_t len, float* dst) {
  const std::vector<int64_t>& dims = plan.dims;
  const std::vector<int64_t>& strides = plan.strides[0];
  const size_t rank = dims.size();
  absl::InlinedVector<int64_t, 8> index(rank, 0);
  int64_t rest = begin, offset = 0;
  for (size_t d = rank; d-- > 0;) {
    index[d] = rest % dims[d];
    rest /= dims[d];
    offset += index[d] * strides[d];
  }
  const int64_t inner = dims[rank - 1], inner_stride = strides[rank - 1];
  int64_t i = 0;
  while (i < len) {
    const int64_t run = std::min(len - i, inner - index[rank - 1]);
    if (inner_stride == 1) {
      std::copy(src + offset, src + offset + run, dst + i);
    } else if (inner_stride == 0) {
      std::fill(dst + i, dst + i + run, src[offset]);
    } else {
      for (int64_t j = 0; j < run; ++j) dst[i + j] = src[offset + j * inner_stride];
    }
    i += run;
    offset += run * inner_stride;
    index[rank - 1] += run;
    // Carry into the outer dims.
    for (size_t d = rank - 1; d > 0 && index[d] == dims[d]; --d) {
      offset -= dims[d] * strides[d];
      index[d] = 0;
      ++index[d - 1];
      offset += strides[d - 1];
    }
  }
}

class FusedElementwiseKernel final : public Kernel {
 public:
  FusedElementwiseKernel(const ir::OpDesc& op, FusedProgram program) : program_(std::move(program)), op_(op) { Bind(); }

  absl::Status Prepare(PrepareContext& ctx) override {
    prepared_ = false;
    if (ctx.input_types.size() != static_cast<size_t>(program_.num_inputs) || ctx.output_types.empty()) {
      return absl::OkStatus();
    }
    std::vector<Shape> shapes;
    for (const ir::ValueType& t : ctx.input_types) {
      if (!t.is_tensor() || !t.shape().IsFullyKnown()) return absl::OkStatus();
      shapes.push_back(t.shape());
    }
    const ir::ValueType& y = ctx.output_types[0];
    if (!y.is_tensor() || !y.shape().IsFullyKnown()) return absl::OkStatus();
    GE_RETURN_IF_ERROR(Plan(shapes, y.shape()));
    prepared_ = true;
    return absl::OkStatus();
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const int n_in = program_.num_inputs;
    if (ctx.num_inputs() != n_in) return NodeError(op_, "expected ", n_in, " inputs, got ", ctx.num_inputs());
    if (Kernels().name != isa_name_) Bind();
    Tensor holder;
    Tensor* planned = ctx.planned_output(0);
    GE_ASSIGN_OR_RETURN(Tensor * y, OutputOf(ctx, 0, holder));
    // The static plan fixed every shape Prepare saw; elsewhere check them.
    if (!prepared_ || planned == nullptr) {
      for (int i = 0; i < n_in; ++i) {
        if (ctx.input(i).dtype() != DataType::kFloat) {
          return NodeError(op_, "input ", i, " has dtype ", DataTypeName(ctx.input(i).dtype()), ", expected float32");
        }
      }
      bool same = prepared_ && y->shape() == y_shape_;
      for (int i = 0; same && i < n_in; ++i) same = ctx.input(i).shape() == in_shapes_[i];
      if (!same) {
        std::vector<Shape> shapes;
        for (int i = 0; i < n_in; ++i) shapes.push_back(ctx.input(i).shape());
        GE_RETURN_IF_ERROR(Plan(shapes, y->shape()));
        prepared_ = true;
      }
    }
    const int64_t n = elements_;
    if (n == 0) return absl::OkStatus();
    bases_.resize(n_in);
    for (int i = 0; i < n_in; ++i) bases_[i] = static_cast<const float*>(ctx.input(i).raw_data());
    float* out = static_cast<float*>(y->raw_data());
    const float* const* bases = bases_.data();
    auto run = [&](int64_t begin, int64_t end) { RunRange(bases, out, begin, end); };
    const int threads = ctx.num_threads();
    if (threads <= 1 || n * program_.cost < kParallelWork || n < 2 * kMinChunk) {
      run(0, n);
    } else {
      // Chunks of whole blocks, at least kParallelWork element operations.
      int64_t grain = std::max<int64_t>(kMinChunk, kParallelWork / std::max<int64_t>(1, program_.cost));
      grain = (grain + kMinChunk - 1) / kMinChunk * kMinChunk;
      sdk::OmpParallelFor(threads, n, grain, run);
    }
    return absl::OkStatus();
  }

 private:
  // Elements per thread at least: a parallel region costs microseconds
  // (more when the other threads are descheduled), a long program over a
  // few dozen elements less than that.
  static constexpr int64_t kMinChunk = 2048;

  void Bind() {
    const IsaKernels& k = Kernels();
    isa_name_ = k.name;
    fns_.clear();
    for (const FusedInstr& in : program_.code) {
      fns_.push_back(in.binary ? reinterpret_cast<void*>(k.binary[int(in.bin)][int(VDt::kF32)])
                               : reinterpret_cast<void*>(k.unary[int(in.unary)][int(VDt::kF32)]));
    }
    BuildHot();
  }

  // Classifies the inputs against Y's shape and gives gathered inputs
  // registers after the program's own.
  absl::Status Plan(const std::vector<Shape>& shapes, const Shape& y) {
    GE_ASSIGN_OR_RETURN(Shape broadcast, ops::BroadcastShapes(shapes));
    if (broadcast != y) {
      return NodeError(op_, "output shape ", y.ToString(), " is not the inputs' broadcast ", broadcast.ToString());
    }
    elements_ = y.NumElementsUnchecked();
    y_shape_ = y;
    in_shapes_ = shapes;
    plans_.assign(shapes.size(), InputPlan{});
    registers_ = program_.num_registers;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const int64_t count = shapes[i].NumElementsUnchecked();
      InputPlan& p = plans_[i];
      if (count == elements_) {
        p.kind = InputKind::kFull;
      } else if (count == 1) {
        p.kind = InputKind::kScalar;
      } else {
        p.kind = InputKind::kGather;
        p.reg = registers_++;
        p.plan = sdk::MakeBroadcastPlan(y.span(), {shapes[i].span()});
      }
    }
    BuildHot();
    return absl::OkStatus();
  }

  // The hot form of the program: loop, parameters and operand slots (the
  // registers first, then the inputs) in 32 bytes per instruction.
  void BuildHot() {
    hot_.clear();
    for (size_t k = 0; k < program_.code.size(); ++k) {
      const FusedInstr& in = program_.code[k];
      auto slot = [&](int32_t x) { return x >= 0 ? x : registers_ + (-1 - x); };
      hot_.push_back({fns_[k], &in.params, slot(in.a), in.binary ? slot(in.b) : 0, in.dst, in.binary});
    }
  }

  // The program over Y's elements [begin, end), block by block.
  void RunRange(const float* const* bases, float* out, int64_t begin, int64_t end) const {
    thread_local std::vector<float> scratch;
    thread_local std::vector<const float*> src;
    thread_local std::vector<int64_t> stride;
    const int n_in = program_.num_inputs;
    const size_t need = static_cast<size_t>(std::max(1, registers_)) * kFusedBlock;
    if (scratch.size() < need) scratch.resize(need);
    const size_t slots = static_cast<size_t>(registers_ + n_in);
    if (src.size() < slots) {
      src.resize(slots);
      stride.resize(slots);
    }
    // Plain pointers: the loops below call through function pointers, after
    // which the thread_locals' addresses would be looked up again.
    float* regs = scratch.data();
    const float** srcs = src.data();
    int64_t* strides = stride.data();
    for (int r = 0; r < registers_; ++r) {
      srcs[r] = regs + r * kFusedBlock;
      strides[r] = 1;
    }
    const float** in_src = srcs + registers_;
    int64_t* in_stride = strides + registers_;
    for (int64_t b0 = begin; b0 < end; b0 += kFusedBlock) {
      const int64_t len = std::min<int64_t>(kFusedBlock, end - b0);
      for (int i = 0; i < n_in; ++i) {
        const InputPlan& p = plans_[i];
        switch (p.kind) {
          case InputKind::kFull:
            in_src[i] = bases[i] + b0;
            in_stride[i] = 1;
            break;
          case InputKind::kScalar:
            in_src[i] = bases[i];
            in_stride[i] = 0;
            break;
          case InputKind::kGather:
            Gather(p.plan, bases[i], b0, len, regs + p.reg * kFusedBlock);
            in_src[i] = regs + p.reg * kFusedBlock;
            in_stride[i] = 1;
            break;
        }
      }
      for (const HotInstr& h : hot_) {
        float* dst = h.dst < 0 ? out + b0 : regs + h.dst * kFusedBlock;
        const float* pa = srcs[h.a];
        const int64_t sa = strides[h.a];
        if (h.binary) {
          reinterpret_cast<BinaryFn>(h.fn)(pa, sa, srcs[h.b], strides[h.b], dst, len);
        } else if (sa != 0) {
          reinterpret_cast<UnaryFn>(h.fn)(pa, dst, len, *h.params);
        } else {
          // A one-element operand: the op once, then its value repeated.
          float v = 0.0f;
          reinterpret_cast<UnaryFn>(h.fn)(pa, &v, 1, *h.params);
          std::fill(dst, dst + len, v);
        }
      }
    }
  }

  struct HotInstr {
    void* fn;
    const UnaryParams* params;
    int32_t a, b, dst;
    bool binary;
  };

  FusedProgram program_;
  std::vector<void*> fns_;  // per instruction, from the ISA table in use
  std::vector<HotInstr> hot_;
  std::vector<const float*> bases_;  // the inputs' data, per Compute
  const char* isa_name_ = nullptr;
  bool prepared_ = false;
  int64_t elements_ = 0;
  int registers_ = 0;
  std::vector<InputPlan> plans_;
  Shape y_shape_;
  std::vector<Shape> in_shapes_;
  ir::OpDesc op_;  // for errors only
};

}  // namespace

absl::StatusOr<FusedProgram> DecodeFusedProgram(const ir::OpDesc& op) {
  const auto* names = ListAttr<std::string>(op, kAttrFusedOps);
  const auto* args = ListAttr<int64_t>(op, kAttrFusedArgs);
  const auto* alphas = ListAttr<float>(op, kAttrFusedAlphas);
  const auto* betas = ListAttr<float>(op, kAttrFusedBetas);
  if (names == nullptr || names->empty() || args == nullptr) {
    return NodeError(op, "attributes ops (strings) and args (ints) are required");
  }
  const size_t count = names->size();
  if (args->size() != 2 * count) return NodeError(op, "args has ", args->size(), " entries for ", count, " ops");
  if ((alphas != nullptr && alphas->size() != count) || (betas != nullptr && betas->size() != count)) {
    return NodeError(op, "alphas and betas need one entry per op");
  }
  FusedProgram p;
  p.num_inputs = op.num_inputs();
  if (p.num_inputs < 1) return NodeError(op, "it has no inputs");
  const int64_t values = p.num_inputs + static_cast<int64_t>(count);
  // Last use of each value, by instruction.
  std::vector<int64_t> last_use(values, -1);
  for (size_t k = 0; k < count; ++k) {
    FusedInstr in;
    const std::string& name = (*names)[k];
    const int64_t a = (*args)[2 * k], b = (*args)[2 * k + 1];
    const int64_t self = p.num_inputs + static_cast<int64_t>(k);
    if (const UnaryOpInfo* u = FindUnaryOp(name)) {
      if (b != -1) return NodeError(op, "op ", k, " (", name, ") is unary but has a second argument");
      in.unary = u->op;
      in.cost = u->cost;
      in.params.alpha = alphas != nullptr ? (*alphas)[k] : 0.0f;
      in.params.beta = betas != nullptr ? (*betas)[k] : 0.0f;
    } else if (const BinaryOpInfo* bi = FindBinaryOp(name)) {
      if (b < 0 || b >= self) return NodeError(op, "op ", k, " (", name, ") reads value ", b, ", not an earlier one");
      in.binary = true;
      in.bin = bi->op;
      in.cost = bi->cost;
    } else {
      return NodeError(op, "op ", k, " (", name, ") is not a fusable element-wise op");
    }
    if (a < 0 || a >= self) return NodeError(op, "op ", k, " (", name, ") reads value ", a, ", not an earlier one");
    const UnaryFn ufn = in.binary ? nullptr : Kernels().unary[int(in.unary)][int(VDt::kF32)];
    const BinaryFn bfn = in.binary ? Kernels().binary[int(in.bin)][int(VDt::kF32)] : nullptr;
    if (ufn == nullptr && bfn == nullptr) return NodeError(op, "op ", k, " (", name, ") has no float32 loop");
    in.a = static_cast<int32_t>(a);
    in.b = static_cast<int32_t>(b);
    last_use[a] = static_cast<int64_t>(k);
    if (in.binary) last_use[b] = static_cast<int64_t>(k);
    p.cost += in.cost;
    p.code.push_back(in);
  }
  // Registers by liveness: an instruction's destination differs from its
  // operands' registers (the ISA loops take restrict pointers); operands
  // free theirs after their last use.
  std::vector<int32_t> reg_of(values, -1);
  std::vector<int32_t> free_regs;
  for (size_t k = 0; k < count; ++k) {
    FusedInstr& in = p.code[k];
    const int64_t self = p.num_inputs + static_cast<int64_t>(k);
    auto encode = [&](int32_t v) { return v < p.num_inputs ? -1 - v : reg_of[v]; };
    const int32_t va = in.a, vb = in.b;
    in.a = encode(va);
    if (in.binary) in.b = encode(vb);
    if (k + 1 == count) {
      in.dst = -1;
    } else {
      if (last_use[self] < 0) return NodeError(op, "op ", k, "'s value is never used");
      if (free_regs.empty()) {
        reg_of[self] = p.num_registers++;
      } else {
        reg_of[self] = free_regs.back();
        free_regs.pop_back();
      }
      in.dst = reg_of[self];
    }
    for (int32_t v : {va, in.binary ? vb : va}) {
      if (v >= p.num_inputs && last_use[v] == static_cast<int64_t>(k) && reg_of[v] >= 0) {
        free_regs.push_back(reg_of[v]);
        reg_of[v] = -1;
      }
    }
  }
  return p;
}

absl::Status RegisterFusedElementwiseOp(ops::OpRegistry& registry) {
  if (registry.Find(kFusedElementwiseOp) != nullptr) return absl::OkStatus();
  ops::OpSchemaBuilder b{std::string(kFusedElementwiseOp), 1};
  b.Doc("cpu_vector: a program of float element-wise ops over the inputs' broadcast, block by block.")
      .VariadicInput("X", "T", 1)
      .Output("Y", "T")
      .TypeConstraint("T", {DataType::kFloat})
      .RequiredAttr(std::string(kAttrFusedOps), Kind::kStrings)
      .RequiredAttr(std::string(kAttrFusedArgs), Kind::kInts)
      .OptionalAttr(std::string(kAttrFusedAlphas), Kind::kFloats)
      .OptionalAttr(std::string(kAttrFusedBetas), Kind::kFloats)
      .Infer(InferFused);
  return registry.Register(std::move(b).Build());
}

void RegisterFusedElementwiseKernel(VectorKernelTable& table) {
  table.Add({std::string(kFusedElementwiseOp),
             [](const ir::OpDesc& op) -> absl::Status {
               for (int i = 0; i < op.num_inputs(); ++i) {
                 GE_RETURN_IF_ERROR(CheckInputDtype(op, i, sdk::DataTypeSet{DataType::kFloat}));
               }
               return DecodeFusedProgram(op).status();
             },
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               GE_ASSIGN_OR_RETURN(FusedProgram program, DecodeFusedProgram(op));
               return std::unique_ptr<Kernel>(new FusedElementwiseKernel(op, std::move(program)));
             }});
}

}  // namespace ge::engine::cpu_vector

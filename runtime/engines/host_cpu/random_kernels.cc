// The random ops: RandomNormal, RandomUniform, RandomNormalLike,
// RandomUniformLike, Bernoulli and Multinomial.
//
// Each kernel owns a Philox4x32-10 key and a run counter. The key mixes the
// node's seed (its `seed` attribute; else `_ge_seed`, which RandomSeedPass
// stamps from the session option ge.exec.seed; else a value drawn from
// std::random_device when the kernel is created, i.e. once per loaded
// graph) with the node's identity (`_ge_random_key`, stamped by the same
// pass from the node's name before partitioning renames anything; else a
// hash of the name). Each Compute takes the next run number, and output
// element i draws the block at counter (i, run): the values depend on
// nothing else, so every executor, thread count and split of the parallel
// loop gives the same tensor, and each run (each loop iteration of a
// subgraph) gets fresh values.
//
// From a block (four 32-bit words): uniforms take 53 bits in [0, 1);
// normals use Box-Muller on two uniforms, in double (scalar libm calls);
// Bernoulli gives 1 when the uniform is below the probability; Multinomial
// inverts the cumulative distribution of softmax(row) by binary search.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include "base/ops/size_limits.h"
#include "runtime/engines/host_cpu/kernel_registry.h"
#include "runtime/engines/sdk/kernel_util.h"
#include "runtime/engines/host_cpu/philox.h"

namespace ge::engine::host_cpu {
namespace {

using RandomFloats = TypeList<float, double, Float16>;

// FNV-1a over the node's name: the identity when no _ge_random_key is set.
uint64_t NameHash(const std::string& name) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

// A double value as T (f16 through f32, as the Cast kernel rounds).
template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return static_cast<T>(static_cast<float>(v));
  }
}

class RandomKernelBase : public Kernel {
 protected:
  explicit RandomKernelBase(const ir::OpDesc& op) : op_(op) {
    uint64_t seed;
    if (auto s = op.GetAttr<float>("seed")) {
      const double d = static_cast<double>(*s);
      std::memcpy(&seed, &d, sizeof(seed));
    } else if (auto s2 = op.GetAttr<int64_t>("_ge_seed")) {
      seed = static_cast<uint64_t>(*s2);
    } else {
      std::random_device device;
      seed = (uint64_t{device()} << 32) ^ device();
    }
    const uint64_t node = op.GetAttr<int64_t>("_ge_random_key")
                              ? static_cast<uint64_t>(*op.GetAttr<int64_t>("_ge_random_key"))
                              : NameHash(op.name());
    const uint64_t key = Mix64(seed ^ Mix64(node));
    key_ = {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
  }

  // The run number of this Compute (0, 1, 2, ... per kernel).
  uint64_t NextRun() { return run_.fetch_add(1, std::memory_order_relaxed); }

  Philox4x32::Block At(int64_t index, uint64_t run) const {
    return Philox4x32::At(static_cast<uint64_t>(index), run, key_);
  }

  // Runs fn(i) for every element in parallel; the values do not depend on
  // the split.
  template <typename Fn>
  void ForEach(ExecuteContext& ctx, int64_t n, Fn fn) const {
    ParallelFor(ctx.num_threads(), n, 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) fn(i);
    });
  }

  ir::OpDesc op_;

 private:
  Philox4x32::Key key_;
  std::atomic<uint64_t> run_{0};
};

// RandomNormal / RandomUniform and their *Like forms.
class DistributionKernel final : public RandomKernelBase {
 public:
  enum class Kind { kNormal, kUniform };

  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op, Kind kind, bool like) {
    if (!like) {
      const std::vector<int64_t> shape = IntsAttr(op, "shape");
      GE_RETURN_IF_ERROR(ops::CheckGeneratedSize(StrCat("node '", op.name(), "' (", op.type(), "): shape"), shape));
    }
    auto k = std::unique_ptr<DistributionKernel>(new DistributionKernel(op, kind));
    if (kind == Kind::kNormal) {
      k->a_ = FloatAttr(op, "mean", 0.0f);
      k->b_ = FloatAttr(op, "scale", 1.0f);
    } else {
      k->a_ = FloatAttr(op, "low", 0.0f);
      k->b_ = FloatAttr(op, "high", 1.0f);
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    const uint64_t run = NextRun();
    const int64_t n = y.NumElements();
    const double a = a_, b = b_;
    return DispatchType<RandomFloats>(y.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.data<T>();
      if (kind_ == Kind::kNormal) {
        ForEach(ctx, n, [&](int64_t i) {
          const Philox4x32::Block r = At(i, run);
          const double u1 = 1.0 - UniformDouble(r[0], r[1]);  // (0, 1]
          const double u2 = UniformDouble(r[2], r[3]);
          const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
          py[i] = FromDouble<T>(a + b * z);
        });
      } else {
        ForEach(ctx, n, [&](int64_t i) {
          const Philox4x32::Block r = At(i, run);
          py[i] = FromDouble<T>(a + (b - a) * UniformDouble(r[0], r[1]));
        });
      }
      return absl::OkStatus();
    });
  }

 private:
  DistributionKernel(const ir::OpDesc& op, Kind kind) : RandomKernelBase(op), kind_(kind) {}

  Kind kind_;
  double a_ = 0, b_ = 1;
};

class BernoulliKernel final : public RandomKernelBase {
 public:
  explicit BernoulliKernel(const ir::OpDesc& op) : RandomKernelBase(op) {}

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& p = ctx.input(0);
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0));
    GE_RETURN_IF_ERROR(CheckSameSize(op_, p, y));
    GE_ASSIGN_OR_RETURN(Tensor pd, ConvertTensor(p, DataType::kDouble));
    const double* pp = pd.data<double>();
    const uint64_t run = NextRun();
    const int64_t n = y.NumElements();
    return DispatchType<NumericAndBoolTypes>(y.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.data<T>();
      ForEach(ctx, n, [&](int64_t i) {
        const Philox4x32::Block r = At(i, run);
        const bool one = UniformDouble(r[0], r[1]) < pp[i];
        if constexpr (std::is_same_v<T, bool>) {
          py[i] = one;
        } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
          py[i] = T(one ? 1.0f : 0.0f);
        } else {
          py[i] = static_cast<T>(one ? 1 : 0);
        }
      });
      return absl::OkStatus();
    });
  }
};

class MultinomialKernel final : public RandomKernelBase {
 public:
  static absl::StatusOr<std::unique_ptr<Kernel>> Create(const ir::OpDesc& op) {
    const int64_t samples = IntAttr(op, "sample_size", 1);
    if (samples < 1) return NodeError(op, "sample_size must be positive, got ", samples);
    GE_RETURN_IF_ERROR(ops::CheckGeneratedSize(StrCat("node '", op.name(), "' (Multinomial): sample_size"), {samples}));
    return std::unique_ptr<Kernel>(new MultinomialKernel(op, samples));
  }

  absl::Status Compute(ExecuteContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.shape().rank() != 2) return NodeError(op_, "input must be [batch, class_size], got ", x.shape().ToString());
    const int64_t batch = x.shape().dim(0), classes = x.shape().dim(1);
    const Shape out{batch, samples_};
    GE_RETURN_IF_ERROR(ops::CheckGeneratedSize(StrCat("node '", op_.name(), "' (Multinomial): output"), out.span()));
    if (classes < 1 && batch > 0) return NodeError(op_, "class_size must be positive");
    GE_ASSIGN_OR_RETURN(Tensor y, ctx.Output(0, out));
    GE_ASSIGN_OR_RETURN(Tensor xd, ConvertTensor(x, DataType::kDouble));
    const double* px = xd.data<double>();
    // Per row: the cumulative sums of exp(x - max).
    std::vector<double> cdf(static_cast<size_t>(batch * classes));
    for (int64_t b = 0; b < batch; ++b) {
      const double* row = px + b * classes;
      double* c = cdf.data() + b * classes;
      const double top = *std::max_element(row, row + classes);
      double total = 0;
      for (int64_t k = 0; k < classes; ++k) {
        total += std::isfinite(top) ? std::exp(row[k] - top) : 0.0;
        c[k] = total;
      }
      if (!(total > 0) || !std::isfinite(total)) {
        return NodeError(op_, "row ", b, " of the input has no finite probability mass");
      }
    }
    const uint64_t run = NextRun();
    const int64_t samples = samples_;
    return DispatchType<IndexTypes>(y.dtype(), op_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.data<T>();
      ForEach(ctx, batch * samples, [&](int64_t i) {
        const double* c = cdf.data() + (i / samples) * classes;
        const Philox4x32::Block r = At(i, run);
        const double target = UniformDouble(r[0], r[1]) * c[classes - 1];
        const int64_t k = std::upper_bound(c, c + classes, target) - c;
        py[i] = static_cast<T>(std::min(k, classes - 1));
      });
      return absl::OkStatus();
    });
  }

 private:
  MultinomialKernel(const ir::OpDesc& op, int64_t samples) : RandomKernelBase(op), samples_(samples) {}

  int64_t samples_;
};

}  // namespace

void RegisterRandomKernels(KernelTable& table) {
  using Kind = DistributionKernel::Kind;
  const DataTypeSet floats = SetOf(RandomFloats{});
  const DataTypeSet any = SetOf(AllTypes{});
  table.Add({"RandomNormal",
             [](const ir::OpDesc& op) { return DistributionKernel::Create(op, Kind::kNormal, false); },
             {},
             {floats}});
  table.Add({"RandomUniform",
             [](const ir::OpDesc& op) { return DistributionKernel::Create(op, Kind::kUniform, false); },
             {},
             {floats}});
  table.Add({"RandomNormalLike",
             [](const ir::OpDesc& op) { return DistributionKernel::Create(op, Kind::kNormal, true); },
             {any},
             {floats}});
  table.Add({"RandomUniformLike",
             [](const ir::OpDesc& op) { return DistributionKernel::Create(op, Kind::kUniform, true); },
             {any},
             {floats}});
  table.Add({"Bernoulli",
             [](const ir::OpDesc& op) -> absl::StatusOr<std::unique_ptr<Kernel>> {
               return std::unique_ptr<Kernel>(new BernoulliKernel(op));
             },
             {floats},
             {SetOf(NumericAndBoolTypes{})}});
  table.Add({"Multinomial", &MultinomialKernel::Create, {floats}, {SetOf(IndexTypes{})}});
}

}  // namespace ge::engine::host_cpu

// oneDNN glue: type and layout mapping, the OpenMP thread budget, scratch
// chunks and exception translation.
#include "runtime/engines/cpu_dense/dnnl_util.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/engines/sdk/cpu_features.h"

namespace ge::engine::cpu_dense {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

dnnl::memory::data_type ToDnnlType(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat: return dt::f32;
    case DataType::kBFloat16: return dt::bf16;
    case DataType::kFloat16: return dt::f16;
    case DataType::kInt8: return dt::s8;
    case DataType::kUint8: return dt::u8;
    case DataType::kInt32: return dt::s32;
    default: return dt::undef;
  }
}

dnnl::memory::dims ToDnnlDims(const Shape& shape) {
  if (shape.is_scalar()) return {1};
  return dnnl::memory::dims(shape.dims().begin(), shape.dims().end());
}

dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, dnnl::memory::data_type type) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
  return dnnl::memory::desc(dims, type, strides);
}

dnnl::memory::desc PlainDesc(const Shape& shape, DataType dtype) {
  return PlainDesc(ToDnnlDims(shape), ToDnnlType(dtype));
}

namespace {

// The format tag of a channels-last or channel-blocked layout by rank.
tag SpatialTag(ir::Format format, int64_t rank) {
  switch (format) {
    case ir::Format::kNHWC:
    case ir::Format::kNDHWC:
      return rank == 3 ? tag::nwc : rank == 4 ? tag::nhwc : rank == 5 ? tag::ndhwc : tag::undef;
    case ir::Format::kNChw8c:
      return rank == 3 ? tag::nCw8c : rank == 4 ? tag::nChw8c : rank == 5 ? tag::nCdhw8c : tag::undef;
    case ir::Format::kNChw16c:
      return rank == 3 ? tag::nCw16c : rank == 4 ? tag::nChw16c : rank == 5 ? tag::nCdhw16c
                                                                          : tag::undef;
    default: return tag::undef;
  }
}

}  // namespace

bool SlowDnnlImpl(const dnnl::primitive_desc_base& pd) {
  const std::string impl = pd.impl_info_str();
  return impl.find("gemm") != std::string::npos || impl.rfind("ref", 0) == 0;
}

absl::StatusOr<dnnl::memory::desc> FormatDesc(const Shape& shape, DataType dtype,
                                              ir::Format format) {
  if (format == ir::Format::kND || format == ir::Format::kNCHW || format == ir::Format::kNCDHW) {
    return PlainDesc(shape, dtype);
  }
  const tag t = SpatialTag(format, shape.rank());
  if (t == tag::undef) {
    return InvalidArgument("cpu_dense cannot read format ", ir::FormatName(format), " at rank ",
                           shape.rank());
  }
  return dnnl::memory::desc(ToDnnlDims(shape), ToDnnlType(dtype), t);
}

bool OnlyBatchUnknown(const Shape& s) {
  if (s.unknown_rank() || s.rank() < 1) return false;
  for (int64_t i = 1; i < s.rank(); ++i) {
    if (s.dim(i) < 0) return false;
  }
  return true;
}

Shape LayoutProbeShape(const Shape& s) {
  Shape probe = s;
  if (probe.rank() >= 1 && probe.dim(0) < 0) probe.set_dim(0, 1);
  return probe;
}

void SetDnnlThreads(int num_threads) {
  const int n = std::clamp(num_threads, 1, DnnlMaxProcessors());
  if (omp_get_max_threads() != n) omp_set_num_threads(n);
}

// Asked once: libgomp reads the affinity mask (a system call) on every
// omp_get_num_procs, and SetDnnlThreads runs before every kernel call (a
// loop body's small products pay it per iteration).
int DnnlMaxProcessors() {
  static const int processors = std::max(1, omp_get_num_procs());
  return processors;
}

bool OwnLoopsSupported() { return sdk::HostVectorIsa() != sdk::VectorIsa::kBase; }

bool OwnPathOnByDefault(const char* switch_name) {
  const char* env = std::getenv(switch_name);
  return OwnLoopsSupported() && !(env != nullptr && std::strcmp(env, "onednn") == 0);
}

SerialScope::SerialScope(bool serial) {
  if (serial && omp_get_max_threads() != 1) {
    restore_ = omp_get_max_threads();
    omp_set_num_threads(1);
  }
}

SerialScope::~SerialScope() {
  if (restore_ > 0) omp_set_num_threads(restore_);
}

Scratch::Scratch(void* base, size_t size) {
  const auto addr = reinterpret_cast<uintptr_t>(base);
  const uintptr_t aligned = (addr + kAlign - 1) / kAlign * kAlign;
  base_ = reinterpret_cast<char*>(aligned);
  size_ = size >= aligned - addr ? size - (aligned - addr) : 0;
}

void* Scratch::Take(size_t bytes) {
  const size_t offset = used_;
  used_ += Padded(bytes);
  if (base_ == nullptr) return nullptr;
  GE_CHECK_MSG(used_ <= size_, "cpu_dense scratch overflow");
  return base_ + offset;
}

absl::Status DnnlErrorStatus(const ir::OpDesc& op, std::string_view what, const dnnl::error& e) {
  // oneDNN reports combinations it does not implement either as
  // unimplemented or, for some (bf16 round, an identity reduction), as
  // invalid arguments; at primitive creation both mean "not here".
  if (e.status == dnnl_unimplemented || (e.status == dnnl_invalid_arguments && what == kCreation)) {
    return absl::UnimplementedError(StrCat("node '", op.name(), "' (", op.type(), "): oneDNN has no ",
                                           what, " for this case (", e.what(), ")"));
  }
  return absl::InternalError(StrCat("node '", op.name(), "' (", op.type(), "): oneDNN ", what,
                                    " failed: ", e.what(), " (status ", static_cast<int>(e.status),
                                    ")"));
}

}  // namespace ge::engine::cpu_dense

// PreparedWeights: recording packed weights at compile time, checking and
// adopting them at load (see prepared_weights.h).
#include "runtime/engines/cpu_dense/prepared_weights.h"

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "base/status.h"
#include "base/strings.h"

namespace ge::engine::cpu_dense {
namespace {

constexpr std::string_view kMagic = "cpu_dense prepared 1";
constexpr std::string_view kTarget = "target ";
constexpr std::string_view kBuffer = "buffer ";

thread_local PreparedWeights* current = nullptr;

void AppendDims(std::string& out, std::string_view name, const dnnl_dims_t& dims, int n) {
  StrAppend(&out, " ", name, "=");
  for (int i = 0; i < n; ++i) StrAppend(&out, i ? "," : "", dims[i]);
}

}  // namespace

std::string LayoutKey(const dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.ndims <= 0 || d.ndims > DNNL_MAX_NDIMS) return "";
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  if (b.inner_nblks < 0 || b.inner_nblks > DNNL_MAX_NDIMS) return "";
  std::string out = StrCat("dt=", static_cast<int>(d.data_type), " n=", d.ndims);
  AppendDims(out, "dims", d.dims, d.ndims);
  AppendDims(out, "padded", d.padded_dims, d.ndims);
  AppendDims(out, "poff", d.padded_offsets, d.ndims);
  StrAppend(&out, " off0=", d.offset0);
  AppendDims(out, "strides", b.strides, d.ndims);
  AppendDims(out, "blks", b.inner_blks, b.inner_nblks);
  AppendDims(out, "idxs", b.inner_idxs, b.inner_nblks);
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &d.extra.scale_adjust, sizeof(scale_bits));
  StrAppend(&out, " extra=", d.extra.flags, ",", d.extra.compensation_mask, ",", scale_bits, ",",
            d.extra.asymm_compensation_mask);
  return out;
}

std::string PackingTarget() {
  const dnnl_version_t* v = dnnl_version();
  return StrCat("dnnl ", v->major, ".", v->minor, ".", v->patch, " ", v->hash, " isa ",
                static_cast<unsigned>(dnnl::get_effective_cpu_isa()));
}

std::atomic<int64_t>& PreparedAdoptions() {
  static std::atomic<int64_t> count{0};
  return count;
}

std::atomic<int64_t>& PreparedMismatches() {
  static std::atomic<int64_t> count{0};
  return count;
}

PreparedWeights* PreparedWeights::Current() { return current; }

PreparedWeights::Scope::Scope(PreparedWeights* set) : previous_(current) { current = set; }
PreparedWeights::Scope::~Scope() { current = previous_; }

void PreparedWeights::Record(const dnnl::memory::desc& packed, const dnnl::memory& memory,
                             std::shared_ptr<Buffer> owner) {
  if (adopting_) return;
  std::string layout = LayoutKey(packed);
  void* data = memory.get_data_handle();
  if (layout.empty() || data == nullptr) return;
  // The buffer keeps the packed memory alive (no copy).
  Item item{std::move(layout), packed.get_size(), Buffer::Wrap(data, packed.get_size(), [memory, owner] {})};
  items_.push_back(std::move(item));
}

std::string PreparedWeights::Params() const {
  std::string out = StrCat(kMagic, "\n", kTarget, PackingTarget(), "\n");
  for (const Item& item : items_) StrAppend(&out, kBuffer, item.size, " ", item.layout, "\n");
  return out;
}

std::vector<std::shared_ptr<Buffer>> PreparedWeights::Buffers() const {
  std::vector<std::shared_ptr<Buffer>> out;
  for (const Item& item : items_) out.push_back(item.bytes);
  return out;
}

absl::StatusOr<PreparedWeights> PreparedWeights::ForLoad(std::string_view params,
                                                         std::vector<std::shared_ptr<Buffer>> buffers) {
  PreparedWeights set;
  set.adopting_ = true;
  std::vector<std::string_view> lines;
  for (absl::string_view piece : absl::StrSplit(AbslView(params), '\n', absl::SkipEmpty())) {
    lines.push_back(StdView(piece));
  }
  if (lines.size() < 2 || lines[0] != kMagic || lines[1].substr(0, kTarget.size()) != kTarget) {
    return InvalidArgument("the prepared-state description is malformed");
  }
  set.usable_ = lines[1].substr(kTarget.size()) == PackingTarget();
  for (size_t i = 2; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const size_t space = line.find(' ', kBuffer.size());
    Item item;
    if (line.substr(0, kBuffer.size()) != kBuffer || space == std::string_view::npos ||
        !absl::SimpleAtoi(AbslView(line.substr(kBuffer.size(), space - kBuffer.size())), &item.size)) {
      return InvalidArgument("the prepared-state description has a malformed line");
    }
    item.layout = std::string(line.substr(space + 1));
    set.items_.push_back(std::move(item));
  }
  // A .gem with inline weights keeps no buffers: nothing to adopt.
  if (buffers.empty()) {
    set.items_.clear();
    return set;
  }
  if (buffers.size() != set.items_.size()) {
    return InvalidArgument("the task has ", buffers.size(), " prepared buffers; its description lists ",
                           set.items_.size());
  }
  for (size_t i = 0; i < buffers.size(); ++i) set.items_[i].bytes = std::move(buffers[i]);
  return set;
}

std::shared_ptr<Buffer> PreparedWeights::Take(const dnnl::memory::desc& packed) {
  if (!adopting_ || next_ >= items_.size()) return nullptr;
  Item& item = items_[next_++];
  std::shared_ptr<Buffer> bytes = std::move(item.bytes);
  const size_t size = packed.get_size();
  if (!usable_ || bytes == nullptr || bytes->size() != size || item.size != size || item.layout != LayoutKey(packed) ||
      item.layout.empty()) {
    PreparedMismatches().fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  PreparedAdoptions().fetch_add(1, std::memory_order_relaxed);
  return bytes;
}

}  // namespace ge::engine::cpu_dense

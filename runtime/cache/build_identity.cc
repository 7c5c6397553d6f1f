// CompilerBuildIdentity: build-ID notes of the loaded ged libraries, read
// from their program headers with dl_iterate_phdr.
#include "runtime/cache/build_identity.h"

#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace ge::cache {
namespace {

// Libraries whose code decides what a compiled model holds. Engine plugins
// (any library under a ".../ged/engines/" directory) are added to these.
constexpr std::string_view kCompileLibraries[] = {
    "libge_base.so",     "libge_ops.so",       "libge_compiler.so",   "libge_partition.so",
    "libge_model.so",    "libge_engines.so",   "libge_engine_api.so", "libge_variables.so",
    "libge_cpu_dense.so", "libge_host_cpu_kernels.so",
};

bool IsCompileLibrary(std::string_view path) {
  if (path.find("/ged/engines/") != std::string_view::npos) return true;
  const size_t slash = path.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return std::find(std::begin(kCompileLibraries), std::end(kCompileLibraries), base) != std::end(kCompileLibraries);
}

std::string Hex(const unsigned char* bytes, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 15]);
  }
  return out;
}

// The NT_GNU_BUILD_ID note of a loaded object, or "".
std::string BuildIdOf(const dl_phdr_info& info) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info.dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof note);
      const unsigned char* name = p + sizeof note;
      const unsigned char* desc = name + ((note.n_namesz + 3) & ~3u);
      if (desc + note.n_descsz > end) break;
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        return Hex(desc, note.n_descsz);
      }
      p = desc + ((note.n_descsz + 3) & ~3u);
    }
  }
  return "";
}

int Collect(dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::vector<std::pair<std::string, std::string>>*>(data);
  const std::string_view path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (path.empty() || !IsCompileLibrary(path)) return 0;
  std::string id = BuildIdOf(*info);
  if (id.empty()) {
    struct stat st {};
    if (stat(info->dlpi_name, &st) == 0) id = absl::StrCat("size:", st.st_size, ",mtime:", st.st_mtime);
  }
  const size_t slash = path.rfind('/');
  out->emplace_back(std::string(slash == std::string_view::npos ? path : path.substr(slash + 1)), std::move(id));
  return 0;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> CompilerBuildIdentity() {
  // Walked on every call (a few microseconds): engine plugins load after the
  // process starts.
  std::vector<std::pair<std::string, std::string>> identity;
  dl_iterate_phdr(Collect, &identity);
  std::sort(identity.begin(), identity.end());
  return identity;
}

}  // namespace ge::cache

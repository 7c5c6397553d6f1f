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

// Libraries that read a model's source bytes and check them (direct keys).
constexpr std::string_view kIngestionLibraries[] = {"libge_frontend.so", "libge_session.so", "libge_proto.so"};

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool IsCompileLibrary(std::string_view path) {
  if (path.find("/ged/engines/") != std::string_view::npos) return true;
  const std::string_view base = BaseName(path);
  return std::find(std::begin(kCompileLibraries), std::end(kCompileLibraries), base) != std::end(kCompileLibraries);
}

bool IsIngestionLibrary(std::string_view path) {
  const std::string_view base = BaseName(path);
  return std::find(std::begin(kIngestionLibraries), std::end(kIngestionLibraries), base) !=
         std::end(kIngestionLibraries);
}

struct Collection {
  bool (*wanted)(std::string_view path);
  std::vector<std::pair<std::string, std::string>> identity;
};

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
  auto* collection = static_cast<Collection*>(data);
  auto* out = &collection->identity;
  const std::string_view path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (path.empty() || !collection->wanted(path)) return 0;
  std::string id = BuildIdOf(*info);
  if (id.empty()) {
    struct stat st {};
    if (stat(info->dlpi_name, &st) == 0) id = absl::StrCat("size:", st.st_size, ",mtime:", st.st_mtime);
  }
  out->emplace_back(std::string(BaseName(path)), std::move(id));
  return 0;
}

std::vector<std::pair<std::string, std::string>> IdentityOf(bool (*wanted)(std::string_view path)) {
  // Walked on every call (a few microseconds): engine plugins load after the
  // process starts.
  Collection collection{wanted, {}};
  dl_iterate_phdr(Collect, &collection);
  std::sort(collection.identity.begin(), collection.identity.end());
  return std::move(collection.identity);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> CompilerBuildIdentity() { return IdentityOf(IsCompileLibrary); }

std::vector<std::pair<std::string, std::string>> IngestionBuildIdentity() { return IdentityOf(IsIngestionLibrary); }

}  // namespace ge::cache

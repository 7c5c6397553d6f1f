// The build identity of the code that compiles models: the GNU build IDs of
// ged's compiler, runtime and engine libraries loaded in this process.
//
// The compiled-model cache keys entries by it, so an entry written by one
// build of ged is never loaded by another build whose compiler or kernels
// differ, even when both carry the same version string (a developer's
// rebuild, a patched package). Processes that load the same libraries (gectl
// and ged from one installation) get the same identity and share entries.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ge::cache {

// (library file name, build ID in hex), sorted by name: every loaded library
// among ged's compile-relevant shared libraries and engine plugins. A library
// without a build-ID note contributes its file size and modification time.
std::vector<std::pair<std::string, std::string>> CompilerBuildIdentity();

// The same for the libraries that turn a model's bytes into a graph and
// check it (the front ends, the ingestion path): part of direct keys only
// (cache_key.h), since a content key hashes their result.
std::vector<std::pair<std::string, std::string>> IngestionBuildIdentity();

}  // namespace ge::cache

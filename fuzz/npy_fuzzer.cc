// Fuzz target for the .npy reader (io::ParseNpy), which reads the input
// files of `gectl run` and, later, tensors sent to the daemon.
//
// Properties: no input crashes the reader; a tensor it accepts serializes
// and reads back equal (numbers bit for bit; strings, which the writer
// stores as UTF-32, reach a fixed point after one more round).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/io/npy.h"
#include "base/tensor.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ge::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ge::fuzz::FuzzCheckOk;
  using ge::fuzz::FuzzFail;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ge::Tensor> tensor = ge::io::ParseNpy(bytes, "fuzz.npy");
  ge::fuzz::Note("ParseNpy", tensor.status());
  if (!tensor.ok()) return 0;

  absl::StatusOr<std::string> written = ge::io::SerializeNpy(*tensor);
  FuzzCheckOk(written.status(), "a parsed tensor serializes");
  absl::StatusOr<ge::Tensor> back = ge::io::ParseNpy(*written, "written.npy");
  FuzzCheckOk(back.status(), "a serialized tensor parses");
  if (tensor->dtype() != ge::DataType::kString) {
    if (!ge::TensorsEqual(*tensor, *back)) FuzzFail("Parse(Serialize(t)) equals t", tensor->DebugString());
    return 0;
  }
  absl::StatusOr<std::string> again = ge::io::SerializeNpy(*back);
  FuzzCheckOk(again.status(), "a string tensor serializes twice");
  if (*again != *written) FuzzFail("string tensors reach a fixed point", back->DebugString());
  return 0;
}

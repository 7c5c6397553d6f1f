// Fuzz target for RunGraph request decoding: the serialized
// ge.v1.RunGraphRequest the daemon receives, its values decoded as
// ExecuteRun does (rpc::ValueFromProto) and checked against a graph's
// declared inputs (session::CheckInputs).
//
// Properties: no request crashes the decoder or the check; a value that
// decodes encodes back to a proto that decodes to an equal value.
#include <cstddef>
#include <cstdint>

#include "proto/value_convert.h"
#include "fuzz/fuzz_check.h"
#include "ge/v1/service.pb.h"
#include "session/session.h"

namespace {

// Equal as encoded bytes (Value has no map fields, so encoding is
// deterministic; NaNs compare by their bits).
bool ValuesEqual(const ge::Value& a, const ge::Value& b) {
  ge::v1::Value pa, pb;
  if (!ge::rpc::ValueToProto(a, &pa).ok() || !ge::rpc::ValueToProto(b, &pb).ok()) return false;
  return pa.SerializeAsString() == pb.SerializeAsString();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ge::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ge::v1::RunGraphRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  // The graph of the seeds: x f32[-1,3], y i64[2].
  ge::session::GraphInfo info;
  info.inputs.push_back({"x", ge::ir::ValueType::Tensor(ge::DataType::kFloat, ge::Shape{-1, 3})});
  info.inputs.push_back({"y", ge::ir::ValueType::Tensor(ge::DataType::kInt64, ge::Shape{2})});
  std::vector<ge::Value> values;
  for (int i = 0; i < request.inputs_size(); ++i) {
    absl::StatusOr<ge::Value> v = ge::rpc::ValueFromProto(request.inputs(i), "input");
    ge::fuzz::Note("ValueFromProto", v.status());
    if (!v.ok()) return 0;
    ge::v1::Value again;
    ge::fuzz::FuzzCheckOk(ge::rpc::ValueToProto(*v, &again), "a decoded value encodes");
    absl::StatusOr<ge::Value> reread = ge::rpc::ValueFromProto(again, "input");
    ge::fuzz::FuzzCheckOk(reread.status(), "an encoded value decodes");
    if (!ValuesEqual(*v, *reread)) ge::fuzz::FuzzFail("a value survives encode and decode");
    values.push_back(*std::move(v));
  }
  ge::fuzz::Note("CheckInputs", ge::session::CheckInputs(info, values));
  return 0;
}

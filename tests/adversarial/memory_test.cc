// Attack class "memory" (docs/security.md): alice (max_memory_bytes 16 MiB)
// asks for more — an ExecuteOp output, a run's intermediate, a variable —
// and carol (no tenant limit) for more than the daemon's
// memory_budget_bytes (512 MiB). Each is RESOURCE_EXHAUSTED naming the key;
// the daemon, bob, and alice's small calls go on.
#include "tests/adversarial/adversarial_harness.h"

namespace ge::adversarial {
namespace {

using grpc::StatusCode;

class MemoryTest : public AdversarialTest {};

TEST_F(MemoryTest, ExecuteOpOutputAboveTheTenantsMaxMemoryBytes) {
  if (!NeedsContractConfig("tenants[].max_memory_bytes")) return;
  v1::ExecuteOpRequest r;
  r.set_op_type("ConstantOfShape");
  *r.add_inputs() = Int64Value({2 * kAliceMaxMemoryBytes / 4}, {1});  // f32: twice the quota
  v1::ExecuteOpResponse out;
  const grpc::Status s = h().alice().ExecuteOp(r, &out);
  Scan(s, out, "ExecuteOp ConstantOfShape");
  EXPECT_TRUE(Refused(s, StatusCode::RESOURCE_EXHAUSTED, {"max_memory_bytes"}));
  // A small call of alice's still runs.
  *r.mutable_inputs(0) = Int64Value({16}, {1});
  const grpc::Status small = h().alice().ExecuteOp(r, &out);
  Scan(small, out, "ExecuteOp ConstantOfShape (small)");
  EXPECT_TRUE(small.ok()) << small.error_message();
}

TEST_F(MemoryTest, RunIntermediateAboveTheTenantsMaxMemoryBytes) {
  if (!NeedsContractConfig("tenants[].max_memory_bytes")) return;
  // x f32[1] expanded to [2048,4096] (32 MiB), summed to one value.
  const std::string session =
      SessionWithGraph(h().alice(), ParseGraphDef("graph wide {\n"
                                                  "  x = Data() {index = 0} -> (f32[1])\n"
                                                  "  shape = Data() {index = 1} -> (i64[2])\n"
                                                  "  e = Expand(x:0, shape:0) -> (f32[-1,-1])\n"
                                                  "  s = ReduceSum(e:0) {keepdims = 0} -> (f32[])\n"
                                                  "  out = NetOutput(s:0)\n}\n"));
  ASSERT_FALSE(session.empty());
  v1::RunGraphRequest run;
  run.set_session_id(session);
  run.set_graph_id(1);
  *run.add_inputs() = FloatValue({1}, {1});
  *run.add_inputs() = Int64Value({2048, 4096}, {2});
  v1::RunGraphResponse out;
  const grpc::Status s = h().alice().RunGraph(run, &out);
  Scan(s, out, "RunGraph");
  EXPECT_TRUE(Refused(s, StatusCode::RESOURCE_EXHAUSTED, {"max_memory_bytes"}));
}

TEST_F(MemoryTest, VariableAboveTheTenantsMaxMemoryBytes) {
  if (!NeedsContractConfig("tenants[].max_memory_bytes")) return;
  const std::string session = SessionWithGraph(
      h().alice(), ParseGraphDef("graph big_var {\n"
                                 "  v = Variable() {dtype = 1, shape = shape[4096,2048]} -> (f32[4096,2048])\n"
                                 "  y = Identity(v:0) -> (f32[4096,2048])\n"
                                 "  out = NetOutput(y:0)\n}\n"));
  ASSERT_FALSE(session.empty());
  v1::CompileGraphResponse compiled;
  grpc::Status s = h().alice().CompileGraph(session, 1, &compiled);
  Scan(s, compiled, "CompileGraph");
  if (s.ok()) {
    v1::RunGraphRequest run;
    run.set_session_id(session);
    run.set_graph_id(1);
    v1::RunGraphResponse out;
    s = h().alice().RunGraph(run, &out);
    Scan(s, out, "RunGraph");
  }
  EXPECT_TRUE(Refused(s, StatusCode::RESOURCE_EXHAUSTED, {"max_memory_bytes"}));
}

TEST_F(MemoryTest, OneTenantAboveTheDaemonsMemoryBudget) {
  if (!NeedsContractConfig("memory_budget_bytes")) return;
  // carol has no tenant limit; 1.5 x the daemon's budget in one output.
  v1::ExecuteOpRequest r;
  r.set_op_type("ConstantOfShape");
  *r.add_inputs() = Int64Value({kMemoryBudgetBytes / 4 * 3 / 2}, {1});
  v1::ExecuteOpResponse out;
  const grpc::Status s = h().carol().ExecuteOp(r, &out);
  Scan(s, out, "ExecuteOp ConstantOfShape");
  EXPECT_TRUE(Refused(s, StatusCode::RESOURCE_EXHAUSTED, {"memory_budget_bytes"}));
}

}  // namespace
}  // namespace ge::adversarial

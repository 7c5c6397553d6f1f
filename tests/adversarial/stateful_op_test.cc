// Attack class "stateful op via ExecuteOp" (docs/security.md): ExecuteOp
// compiles one op in a daemon-owned session whose compiled form is cached
// and shared, so an op that keeps state there — Variable, Assign,
// AssignAdd, AssignSub, a random op — would carry one caller's state into
// another's call. Each is INVALID_ARGUMENT naming the op; a stateless op
// still runs (the control).
#include "tests/adversarial/adversarial_harness.h"

namespace ge::adversarial {
namespace {

using grpc::StatusCode;

class StatefulOpTest : public AdversarialTest {
 protected:
  grpc::Status Execute(const v1::ExecuteOpRequest& r, v1::ExecuteOpResponse* out) {
    grpc::Status s = h().alice().ExecuteOp(r, out);
    Scan(s, *out, "ExecuteOp " + r.op_type());
    return s;
  }
  v1::ExecuteOpRequest Op(const std::string& type, int inputs) {
    v1::ExecuteOpRequest r;
    r.set_op_type(type);
    for (int i = 0; i < inputs; ++i) *r.add_inputs() = FloatValue({1.5f, -2.5f}, {2});
    return r;
  }
};

TEST_F(StatefulOpTest, AStatelessOpRuns) {
  v1::ExecuteOpResponse out;
  const grpc::Status s = Execute(Op("Add", 2), &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(out.outputs_size(), 1);
  const std::vector<float> sum = {3.0f, -5.0f};
  EXPECT_EQ(out.outputs(0).tensor().raw_data(), std::string(reinterpret_cast<const char*>(sum.data()), 8));
}

TEST_F(StatefulOpTest, Variable) {
  v1::ExecuteOpRequest r = Op("Variable", 0);
  (*r.mutable_attrs())["dtype"].set_i(v1::DT_FLOAT);
  (*r.mutable_attrs())["shape"].mutable_shape()->add_dims(2);
  v1::ExecuteOpResponse out;
  EXPECT_TRUE(Refused(Execute(r, &out), StatusCode::INVALID_ARGUMENT, {"Variable"}));
}

TEST_F(StatefulOpTest, Assign) {
  v1::ExecuteOpResponse out;
  EXPECT_TRUE(Refused(Execute(Op("Assign", 2), &out), StatusCode::INVALID_ARGUMENT, {"Assign"}));
}

TEST_F(StatefulOpTest, AssignAddKeepsNoStateAcrossCalls) {
  // Accepted, two calls would see each other's sum in the shared session.
  v1::ExecuteOpResponse first, second;
  EXPECT_TRUE(Refused(Execute(Op("AssignAdd", 2), &first), StatusCode::INVALID_ARGUMENT, {"AssignAdd"}));
  EXPECT_TRUE(Refused(Execute(Op("AssignAdd", 2), &second), StatusCode::INVALID_ARGUMENT, {"AssignAdd"}));
}

TEST_F(StatefulOpTest, AssignSub) {
  v1::ExecuteOpResponse out;
  EXPECT_TRUE(Refused(Execute(Op("AssignSub", 2), &out), StatusCode::INVALID_ARGUMENT, {"AssignSub"}));
}

TEST_F(StatefulOpTest, RandomNormal) {
  v1::ExecuteOpRequest r = Op("RandomNormal", 0);
  (*r.mutable_attrs())["shape"].mutable_ints()->add_values(4);
  v1::ExecuteOpResponse out;
  const grpc::Status s = Execute(r, &out);
  // INVALID_ARGUMENT once a random op is registered; until then the op is
  // unknown (NOT_FOUND naming it) — either way it does not run.
  if (s.error_code() == StatusCode::NOT_FOUND) {
    EXPECT_TRUE(Refused(s, StatusCode::NOT_FOUND, {"unknown op type 'RandomNormal'"}));
  } else {
    EXPECT_TRUE(Refused(s, StatusCode::INVALID_ARGUMENT, {"RandomNormal"}));
  }
}

}  // namespace
}  // namespace ge::adversarial

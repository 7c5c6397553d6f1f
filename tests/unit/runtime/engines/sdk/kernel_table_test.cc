// The engine SDK's kernel table: lookup, sorted op types, refusal of a
// second or incomplete registration, DataTypeSet, and the shared per-port
// dtype check with its message.
#include "runtime/engines/sdk/kernel_table.h"

#include <functional>
#include <memory>

#include "gtest/gtest.h"
#include "runtime/engines/api/kernel.h"

namespace ge::engine::sdk {
namespace {

// An engine's own definition: the table needs only op_type and create.
struct TestDef {
  std::string op_type;
  std::function<absl::StatusOr<std::unique_ptr<Kernel>>(const ir::OpDesc&)> create;
  int payload = 0;
};

absl::StatusOr<std::unique_ptr<Kernel>> NoKernel(const ir::OpDesc&) { return absl::UnimplementedError("none"); }

TEST(KernelTableTest, FindsWhatWasAddedAndListsTypesSorted) {
  KernelTable<TestDef> table;
  table.Add({"Relu", NoKernel, 1});
  table.Add({"Add", NoKernel, 2});
  table.Add({"Mul", NoKernel, 3});
  ASSERT_NE(table.Find("Add"), nullptr);
  EXPECT_EQ(table.Find("Add")->payload, 2);
  EXPECT_EQ(table.Find("Relu")->payload, 1);
  EXPECT_EQ(table.Find("Sub"), nullptr);
  EXPECT_EQ(table.Find(""), nullptr);
  EXPECT_EQ(table.OpTypes(), (std::vector<std::string>{"Add", "Mul", "Relu"}));
  EXPECT_EQ(table.size(), 3u);
}

TEST(KernelTableDeathTest, RefusesASecondRegistrationOfAType) {
  KernelTable<TestDef> table;
  table.Add({"Relu", NoKernel});
  EXPECT_DEATH(table.Add({"Relu", NoKernel}), "kernel for op type 'Relu' registered twice");
}

TEST(KernelTableDeathTest, RefusesAnIncompleteDefinition) {
  KernelTable<TestDef> table;
  EXPECT_DEATH(table.Add({"Relu", nullptr}), "incomplete kernel definition for op type 'Relu'");
  EXPECT_DEATH(table.Add({"", NoKernel}), "incomplete kernel definition");
}

TEST(DataTypeSetTest, ContainsUnionAnyAndMessage) {
  constexpr DataTypeSet floats{DataType::kFloat, DataType::kDouble};
  constexpr DataTypeSet ints{DataType::kInt32};
  static_assert(floats.Contains(DataType::kFloat) && !floats.Contains(DataType::kInt32));
  EXPECT_TRUE((floats | ints).Contains(DataType::kInt32));
  EXPECT_TRUE(DataTypeSet{}.empty());
  EXPECT_TRUE(DataTypeSet::Any().Contains(DataType::kBool));
  EXPECT_EQ(floats.ToString(), StrCat(DataTypeName(DataType::kFloat), ", ", DataTypeName(DataType::kDouble)));
}

ir::OpDesc TypedOp(std::vector<DataType> inputs, std::vector<DataType> outputs) {
  ir::OpDesc op("n1", "Foo");
  for (DataType d : inputs) op.AddInput({"", ir::ValueType::Tensor(d, Shape{2})});
  for (DataType d : outputs) op.AddOutput({"", ir::ValueType::Tensor(d, Shape{2})});
  return op;
}

TEST(CheckPortDtypesTest, LastEntryCoversVariadicPortsAndUntypedPortsPass) {
  const DataTypeSet f{DataType::kFloat};
  const DataTypeSet i{DataType::kInt64};
  // Inputs: f32, then i64 for every later port.
  EXPECT_TRUE(CheckPortDtypes(TypedOp({DataType::kFloat, DataType::kInt64, DataType::kInt64}, {DataType::kFloat}),
                              {f, i}, {f}, "eng")
                  .ok());
  EXPECT_TRUE(CheckPortDtypes(TypedOp({DataType::kFloat, DataType::kUndefined}, {}), {f, i}, {}, "eng").ok());
  EXPECT_TRUE(CheckPortDtypes(TypedOp({DataType::kBool}, {DataType::kBool}), {}, {}, "eng").ok());  // no constraint
  absl::Status s = CheckPortDtypes(TypedOp({DataType::kFloat, DataType::kInt64, DataType::kFloat}, {DataType::kFloat}),
                                   {f, i}, {f}, "eng");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()), StrCat("Foo on eng does not support dtype ", DataTypeName(DataType::kFloat),
                                             " (input 2 of node 'n1'; supported: ", i.ToString(), ")"));
  s = CheckPortDtypes(TypedOp({DataType::kFloat}, {DataType::kInt64}), {f}, {f}, "eng");
  EXPECT_NE(std::string(s.message()).find("(output 0 of node 'n1'"), std::string::npos) << s;
}

}  // namespace
}  // namespace ge::engine::sdk

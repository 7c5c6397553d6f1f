// EinsumLowering: the attention Einsums of a diffusion UNet in text form, every
// group shape (batch, M, N, K present or absent, operands swapped, batch dims
// of 1) computing what host_cpu's Einsum computes, and the Einsums that stay.
#include "runtime/engines/cpu_dense/einsum_lowering.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/ir/op_types.h"
#include "runtime/engines/host_cpu/host_cpu_engine.h"
#include "tests/testing/kernel_test_util.h"
#include "tests/unit/runtime/engines/cpu_dense/pass_test_util.h"

namespace ge::engine::cpu_dense {
namespace {

const HostCpuEngine& Host() {
  static const HostCpuEngine* host = new HostCpuEngine();
  return *host;
}

std::string TypeText(const Shape& shape, const std::string& dtype = "f32") {
  std::string text = dtype + "[";
  for (int64_t d = 0; d < shape.rank(); ++d) text += (d ? "," : "") + std::to_string(shape.dim(d));
  return text + "]";
}

// A graph of one Einsum on two Data inputs of these types.
std::string EinsumGraph(const std::string& equation, const std::string& a, const std::string& b,
                        const std::string& out) {
  return "graph main {\n  a = Data() {index = 0} -> (" + a + ")\n  b = Data() {index = 1} -> (" + b +
         ")\n  e = Einsum(a, b) {equation = \"" + equation + "\"} -> (" + out + ")\n  out = NetOutput(e)\n}\n";
}

// Runs `graph` node by node on host_cpu (Data nodes read `inputs` by index);
// the NetOutput's first input.
absl::StatusOr<Tensor> Interpret(const ir::Graph& graph, const std::vector<Tensor>& inputs) {
  GE_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, graph.TopologicalOrder());
  std::map<std::pair<const ir::Node*, int>, Value> values;
  for (const ir::Node* node : order) {
    const ir::OpDesc& op = node->op_desc();
    if (node->type() == ir::kData) {
      values[{node, 0}] = Value(inputs[op.GetAttrOr<int64_t>("index", 0)]);
      continue;
    }
    if (node->type() == ir::kConst) {
      values[{node, 0}] = Value(*op.GetAttr<Tensor>(ir::kAttrValue));
      continue;
    }
    std::vector<Value> args;
    for (int i = 0; i < node->num_inputs(); ++i) args.push_back(values.at({node->input(i).node, node->input(i).index}));
    if (node->type() == ir::kNetOutput) return args[0].tensor();
    test::RunOptions options;
    for (const ir::IoDesc& o : op.outputs()) options.output_types.push_back(o.type);
    GE_ASSIGN_OR_RETURN(std::vector<Value> outs, test::RunKernel(Host(), op, args, options));
    for (size_t i = 0; i < outs.size(); ++i) values[{node, static_cast<int>(i)}] = outs[i];
  }
  return absl::InternalError("no NetOutput");
}

int Count(const ir::Graph& graph, const std::string& type) {
  int count = 0;
  graph.ForEachNode([&](const ir::Node* n) { count += n->type() == type ? 1 : 0; });
  return count;
}

// The pixel attention of a diffusion UNet: q [b,h,d,i] against k [b,h,d,j]
// needs q transposed; the product is already in the output's order. (New
// nodes print after the NetOutput: the print follows insertion order.)
TEST(EinsumLoweringTest, AttentionScoresBecomeOneTransposeAndAMatMul) {
  auto g = Parse(EinsumGraph("bhdi,bhdj->bhij", "f32[-1,4,32,64]", "f32[-1,4,32,64]", "f32[-1,4,64,64]"));
  auto changed = LowerEinsums(*g, AnyNode);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(ir::PrintGraph(*g), Canonical(R"(graph main {
    a = Data() {index = 0} -> (f32[-1,4,32,64])
    b = Data() {index = 1} -> (f32[-1,4,32,64])
    out = NetOutput(e)
    e_Transpose = Transpose(a) {perm = [0, 1, 3, 2]} -> (f32[-1,4,64,32])
    e = MatMul(e_Transpose, b) -> (f32[-1,4,64,64])
  })"));
}

// Every group present or absent, operands swapped or not, batch labels out
// of the output's front: the lowered graph computes host_cpu's Einsum.
TEST(EinsumLoweringTest, LoweredProductsComputeTheEinsum) {
  struct Case {
    std::string equation;
    Shape a, b;
  };
  const std::vector<Case> cases = {
      {"bhdi,bhdj->bhij", {2, 3, 8, 5}, {2, 3, 8, 6}},  // K leads: the left operand transposes
      {"bhij,bhdj->bhdi", {2, 3, 5, 6}, {2, 3, 4, 6}},  // output N before M: operands swap
      {"bij,bjk->bik", {3, 4, 5}, {3, 5, 6}},
      {"ij,jk->ki", {4, 5}, {5, 6}},
      {"bqhd,bkhd->bhqk", {2, 5, 3, 4}, {2, 7, 3, 4}},
      {"bhqk,bkhd->bqhd", {2, 3, 5, 7}, {2, 7, 3, 4}},  // batch labels apart in the output
      {"i,i->", {7}, {7}},                              // only K
      {"i,j->ij", {3}, {4}},                            // no K: an outer product
      {"bi,bi->b", {3, 5}, {3, 5}},
      {"ij,j->i", {4, 5}, {5}},       // no N
      {"j,jk->k", {5}, {5, 6}},       // no M
      {"ij,ij->ij", {3, 4}, {3, 4}},  // only batch labels: a product per element
      {"ij,ij->ji", {3, 4}, {3, 4}},
      {"nc,nc->n", {6, 16}, {6, 16}},
  };
  for (const Case& c : cases) {
    const Tensor a = test::RandomTensor(DataType::kFloat, c.a, 1);
    const Tensor b = test::RandomTensor(DataType::kFloat, c.b, 2);
    auto expected = test::RunOp1(Host(), "Einsum", {a, b}, {{"equation", ir::AttrValue(c.equation)}});
    ASSERT_TRUE(expected.ok()) << c.equation << ": " << expected.status();
    auto g = Parse(EinsumGraph(c.equation, TypeText(c.a), TypeText(c.b), TypeText(expected->shape())));
    auto changed = LowerEinsums(*g, AnyNode);
    ASSERT_TRUE(changed.ok()) << c.equation << ": " << changed.status();
    EXPECT_TRUE(*changed) << c.equation;
    EXPECT_EQ(Count(*g, "Einsum"), 0) << c.equation;
    EXPECT_EQ(Count(*g, "MatMul"), 1) << c.equation;
    EXPECT_NE(g->FindNode("e"), nullptr) << c.equation << ": the last node keeps the Einsum's name";
    auto lowered = Interpret(*g, {a, b});
    ASSERT_TRUE(lowered.ok()) << c.equation << ": " << lowered.status() << "\n" << ir::PrintGraph(*g);
    EXPECT_TRUE(test::TensorNear(*lowered, *expected, {1e-5, 1e-5})) << c.equation << "\n" << ir::PrintGraph(*g);
  }
}

TEST(EinsumLoweringTest, OtherEinsumsStayForHostCpu) {
  const std::vector<std::vector<std::string>> cases = {
      {"ii,ij->j", "f32[4,4]", "f32[4,5]", "f32[5]"},                    // a diagonal
      {"...ij,...jk->...ik", "f32[2,4,5]", "f32[2,5,6]", "f32[2,4,6]"},  // an ellipsis
      {"ijk,jkl->il", "f32[2,3,4]", "f32[3,4,5]", "f32[2,5]"},           // two contracted labels
      {"abc,cd->abd", "f32[2,3,4]", "f32[4,5]", "f32[2,3,5]"},           // two M labels
      {"ij,jk->i", "f32[4,5]", "f32[5,6]", "f32[4]"},                    // k summed out of b alone
      {"ij,jk->ik", "i32[4,5]", "i32[5,6]", "i32[4,6]"},                 // not float32
      {"ij,jk->ik", "f32[4,5]", "f32[3,6]", "f32[4,6]"},                 // contracted sizes differ
      {"bij,bjk->bik", "f32[1,4,5]", "f32[3,5,6]", "f32[3,4,6]"},        // batch sizes differ
  };
  for (const auto& c : cases) {
    const std::string text = EinsumGraph(c[0], c[1], c[2], c[3]);
    auto g = Parse(text);
    auto changed = LowerEinsums(*g, AnyNode);
    ASSERT_TRUE(changed.ok()) << c[0] << ": " << changed.status();
    EXPECT_FALSE(*changed) << c[0];
    EXPECT_EQ(ir::PrintGraph(*g), Canonical(text)) << c[0];
  }
  // Nor an Einsum the filter keeps from cpu_dense.
  auto g = Parse(EinsumGraph("ij,jk->ik", "f32[4,5]", "f32[5,6]", "f32[4,6]"));
  auto changed = LowerEinsums(*g, [](const ir::Node&) { return false; });
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace ge::engine::cpu_dense

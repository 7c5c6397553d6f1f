// SubgraphProperty defaults, ContainOpProperty and the backend registry.
#include "compiler/partition/subgraph_property.h"

#include "absl/strings/str_join.h"
#include "base/status.h"

namespace ge::partition {

absl::Status SubgraphProperty::CreateSubgraphNode(ir::Graph&, ir::Node&, ir::Graph&, int) const {
  return absl::OkStatus();
}

ContainOpProperty::ContainOpProperty(std::string name, std::vector<std::string> op_types) : name_(std::move(name)) {
  for (std::string& t : op_types) op_types_.insert(std::move(t));
}

const SubgraphBackendRegistry& SubgraphBackendRegistry::Builtin() {
  static const SubgraphBackendRegistry* registry = [] {
    auto* r = new SubgraphBackendRegistry();
    RegisterBuiltinSubgraphBackends(*r);
    return r;
  }();
  return *registry;
}

absl::Status SubgraphBackendRegistry::Register(std::string name, SubgraphBackend properties) {
  if (properties.empty()) return InvalidArgument("subgraph backend '", name, "' has no properties");
  if (backends_.contains(name)) return AlreadyExists("subgraph backend '", name, "' is already registered");
  backends_.emplace(std::move(name), std::move(properties));
  return absl::OkStatus();
}

const SubgraphBackend* SubgraphBackendRegistry::Find(std::string_view name) const {
  auto it = backends_.find(name);
  return it == backends_.end() ? nullptr : &it->second;
}

std::vector<std::string> SubgraphBackendRegistry::Names() const {
  std::vector<std::string> out;
  for (const auto& [name, backend] : backends_) out.push_back(name);
  return out;
}

void RegisterBuiltinSubgraphBackends(SubgraphBackendRegistry& registry) {
  SubgraphBackend elementwise = {std::make_shared<ContainOpProperty>(
      "elementwise",
      std::vector<std::string>{"Abs",  "Add",  "Ceil",  "Clip",       "Cos",  "Div",     "Elu",  "Erf",
                               "Exp",  "Floor", "HardSigmoid", "LeakyRelu", "Log", "Max",  "Min",  "Mul",
                               "Neg",  "Pow",  "Reciprocal", "Relu", "Round", "Selu",  "Sigmoid", "Sign",
                               "Sin",  "Softplus", "Sqrt", "Sub", "Tan", "Tanh"})};
  GE_CHECK(registry.Register("elementwise", std::move(elementwise)).ok());
}

}  // namespace ge::partition

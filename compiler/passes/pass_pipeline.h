// PassPipeline: an ordered list of named passes with timing, verification,
// dumping and switching passes off by name (STYLE.md, after XLA's
// HloPassPipeline). The compiler driver (compiler/build/compile_pipeline.h)
// builds one pipeline for the whole compilation; every rewrite is one of
// its passes.
//
// Each pass is registered with:
//   * required: the compilation is wrong or impossible without it
//     (placement, flattening, memory planning, ...); DisablePasses refuses
//     to switch it off;
//   * a condition, evaluated when the pass is reached: a pass whose
//     condition is false is skipped (the variable passes on a graph without
//     variables, the subgraph backends when none is asked for);
//   * a description for listings (gectl opt --list-passes).
// Some rewrites run inside a pass and can be switched off on their own (an
// engine's optimizer inside the engine partition): they are registered as
// sub-passes of that pass, listed under it and named in DisablePasses like
// any pass; the pass asks IsDisabled before running them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/passes/graph_dumper.h"
#include "compiler/passes/graph_pass.h"

namespace ge::compiler {

// A pass made of a name and a function (the driver's steps that wrap a
// partitioner, the placer or the task builder).
class FunctionPass final : public GraphPass {
 public:
  using Fn = std::function<absl::StatusOr<bool>(ir::Graph&)>;
  FunctionPass(std::string name, Fn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(ir::Graph& root) override { return fn_(root); }

 private:
  std::string name_;
  Fn fn_;
};

struct PassTraits {
  bool required = false;
  // Empty: always runs.
  std::function<bool()> condition;
  std::string description;
};

// One line of a listing.
struct PassListing {
  std::string name;
  bool required = false;
  std::string description;
  std::string parent;  // for a sub-pass: the pass that runs it
};

class PassPipeline {
 public:
  explicit PassPipeline(std::string name) : name_(std::move(name)) {}

  template <typename T, typename... Args>
  T& AddPass(Args&&... args) {
    return AddPassWithTraits<T>(PassTraits{}, std::forward<Args>(args)...);
  }
  template <typename T, typename... Args>
  T& AddPassWithTraits(PassTraits traits, Args&&... args) {
    auto pass = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *pass;
    entries_.push_back(Entry{std::move(pass), std::move(traits), "", ""});
    return ref;
  }
  // A rewrite that `parent` (a pass added before) runs and asks about with
  // IsDisabled; never required.
  void AddSubPass(std::string name, std::string parent, std::string description);

  // Passes and sub-passes with these names are skipped. An unknown name or
  // a required pass is InvalidArgument naming it (and listing the known
  // names); nothing is disabled then.
  absl::Status DisablePasses(const std::vector<std::string>& names);
  bool IsDisabled(std::string_view name) const;
  // Runs only the passes named here, in pipeline order (gectl opt); an
  // unknown name is InvalidArgument. Conditions still apply.
  absl::Status RunOnly(const std::vector<std::string>& names);

  // Verify the graph before the first pass (on by default: the input may
  // come from a user).
  void set_verify(bool verify) { verify_ = verify; }
  // Also verify after every pass that changed the graph, naming the pass
  // that broke it (with set_verify only; CompileOptions::verify_each_step).
  // Off by default: on a million-node graph each verification costs about a
  // second, and whoever consumes the pipeline's result verifies it once.
  void set_verify_each_pass(bool verify) { verify_each_pass_ = verify; }
  void set_dumper(GraphDumper* dumper) { dumper_ = dumper; }

  // Every pass and sub-pass in order.
  std::vector<PassListing> List() const;

  // Runs every enabled pass in order; returns whether any changed the graph.
  absl::StatusOr<bool> Run(ir::Graph& root);

 private:
  struct Entry {
    std::unique_ptr<GraphPass> pass;  // null for a sub-pass
    PassTraits traits;
    std::string name;  // a sub-pass's name
    std::string parent;
  };
  std::string_view NameOf(const Entry& e) const { return e.pass ? e.pass->name() : std::string_view(e.name); }
  const Entry* Find(std::string_view name) const;
  std::string KnownNames() const;

  std::string name_;
  std::vector<Entry> entries_;
  std::vector<std::string> disabled_;
  std::vector<std::string> only_;  // empty: all
  bool run_only_ = false;
  bool verify_ = true;
  bool verify_each_pass_ = false;
  GraphDumper* dumper_ = nullptr;
};

}  // namespace ge::compiler

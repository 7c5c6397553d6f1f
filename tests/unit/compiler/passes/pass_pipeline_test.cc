// PassPipeline: order, conditions, switching passes off by name (unknown
// and required names refused), sub-passes and RunOnly.
#include "compiler/passes/pass_pipeline.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ge::compiler {
namespace {

// Records the passes that ran, in order.
struct Trace {
  std::vector<std::string> ran;
  FunctionPass::Fn Record(const std::string& name) {
    return [this, name](ir::Graph&) -> absl::StatusOr<bool> {
      ran.push_back(name);
      return false;
    };
  }
};

class PassPipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pipeline_.set_verify(false);  // the graphs here are empty
    pipeline_.AddPassWithTraits<FunctionPass>(PassTraits{true, {}, "first"}, "A", trace_.Record("A"));
    pipeline_.AddPassWithTraits<FunctionPass>(PassTraits{false, {}, "optional"}, "B", trace_.Record("B"));
    pipeline_.AddPassWithTraits<FunctionPass>(PassTraits{false, [this] { return c_enabled_; }, "conditional"}, "C",
                                              [this](ir::Graph&) -> absl::StatusOr<bool> {
                                                trace_.ran.push_back("C");
                                                if (!pipeline_.IsDisabled("C.sub")) trace_.ran.push_back("C.sub");
                                                return false;
                                              });
    pipeline_.AddSubPass("C.sub", "C", "runs inside C");
  }
  std::vector<std::string> Run() {
    ir::Graph g("g");
    absl::StatusOr<bool> changed = pipeline_.Run(g);
    EXPECT_TRUE(changed.ok()) << changed.status();
    return trace_.ran;
  }

  Trace trace_;
  bool c_enabled_ = true;
  PassPipeline pipeline_{"test"};
};

TEST_F(PassPipelineTest, RunsEveryPassInOrder) { EXPECT_EQ(Run(), (std::vector<std::string>{"A", "B", "C", "C.sub"})); }

TEST_F(PassPipelineTest, ConditionsSkipPasses) {
  c_enabled_ = false;
  EXPECT_EQ(Run(), (std::vector<std::string>{"A", "B"}));
}

TEST_F(PassPipelineTest, DisabledPassesAndSubPassesDoNotRun) {
  ASSERT_TRUE(pipeline_.DisablePasses({"B", "C.sub"}).ok());
  EXPECT_TRUE(pipeline_.IsDisabled("B"));
  EXPECT_FALSE(pipeline_.IsDisabled("A"));
  EXPECT_EQ(Run(), (std::vector<std::string>{"A", "C"}));
}

TEST_F(PassPipelineTest, UnknownAndRequiredNamesAreRefusedByName) {
  absl::Status unknown = pipeline_.DisablePasses({"B", "Nope"});
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("'Nope'"), std::string_view::npos) << unknown;
  absl::Status required = pipeline_.DisablePasses({"A"});
  EXPECT_EQ(required.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(required.message().find("'A'"), std::string_view::npos) << required;
  EXPECT_NE(required.message().find("required"), std::string_view::npos) << required;
  // Nothing was disabled by the refused lists.
  EXPECT_EQ(Run(), (std::vector<std::string>{"A", "B", "C", "C.sub"}));
}

TEST_F(PassPipelineTest, ListsPassesAndSubPasses) {
  const std::vector<PassListing> list = pipeline_.List();
  ASSERT_EQ(list.size(), 4u);
  EXPECT_EQ(list[0].name, "A");
  EXPECT_TRUE(list[0].required);
  EXPECT_FALSE(list[1].required);
  EXPECT_EQ(list[3].name, "C.sub");
  EXPECT_EQ(list[3].parent, "C");
}

TEST_F(PassPipelineTest, RunOnlyRunsTheNamedPassesInPipelineOrder) {
  ASSERT_TRUE(pipeline_.RunOnly({"C", "A"}).ok());
  EXPECT_EQ(Run(), (std::vector<std::string>{"A", "C", "C.sub"}));
}

TEST_F(PassPipelineTest, RunOnlyASubPassRunsItsParentWithIt) {
  ASSERT_TRUE(pipeline_.RunOnly({"C.sub"}).ok());
  EXPECT_EQ(Run(), (std::vector<std::string>{"C", "C.sub"}));
}

TEST_F(PassPipelineTest, RunOnlyRefusesUnknownNames) {
  absl::Status s = pipeline_.RunOnly({"Z"});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'Z'"), std::string_view::npos) << s;
}

TEST_F(PassPipelineTest, ErrorsStopThePipeline) {
  PassPipeline pipeline("test");
  pipeline.set_verify(false);
  pipeline.AddPass<FunctionPass>(
      "Fails", [](ir::Graph&) -> absl::StatusOr<bool> { return absl::InvalidArgumentError("node x: broken"); });
  pipeline.AddPass<FunctionPass>("After", trace_.Record("After"));
  ir::Graph g("g");
  EXPECT_EQ(pipeline.Run(g).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(trace_.ran.empty());
}

}  // namespace
}  // namespace ge::compiler

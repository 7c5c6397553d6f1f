// An engine's json (api/attributes.h): every key, the defaults, the errors
// (unknown and retired keys, out-of-range values, another engine's name),
// and the embedded form built-in engines parse in their constructors.
#include "runtime/engines/api/attributes.h"

#include "gtest/gtest.h"

namespace ge::engine {
namespace {

TEST(EngineAttributesTest, ParsesEveryKey) {
  auto a = ParseEngineAttributes(R"({"name": "e", "compute_cost": 4, "atomic": true, "composite_engine": "c",
                                    "independent": true, "reference": true, "version": "3.1",
                                    "cost": {"ops": {"*": [10, 0.5]}, "boundary": [1, 2]}})",
                                 "e.json", "e");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->name, "e");
  EXPECT_EQ(a->compute_cost, 4);
  EXPECT_TRUE(a->atomic);
  EXPECT_EQ(a->composite_engine, "c");
  EXPECT_TRUE(a->independent_stream);
  EXPECT_TRUE(a->reference);
  EXPECT_EQ(a->version, "3.1");
  EXPECT_EQ(a->cost.Find("Relu")->call_ns, 10);
  EXPECT_EQ(a->cost.boundary.element_ns, 2);
}

TEST(EngineAttributesTest, DefaultsAndTheNameFromThePlugin) {
  auto a = ParseEngineAttributes("{}", "e.json", "e");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->name, "e");
  EXPECT_EQ(a->compute_cost, 10);
  EXPECT_TRUE(a->atomic);
  EXPECT_FALSE(a->independent_stream);
  EXPECT_FALSE(a->reference);
  EXPECT_TRUE(a->cost.empty());
}

TEST(EngineAttributesTest, ErrorsNameTheSourceAndTheProblem) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"attach": true})", "e.json: unknown key 'attach'"},
      {R"({"reference": "maybe"})", "e.json: "},
      {R"({"compute_cost": -1})", "compute_cost -1 is outside 0..10"},
      {R"({"name": "f"})", "names engine 'f' but the plugin provides 'e'"},
      {R"("text")", "expected a JSON object"},
      {"{", "e.json: "},
  };
  for (const auto& [text, expected] : cases) {
    auto a = ParseEngineAttributes(text, "e.json", "e");
    ASSERT_FALSE(a.ok()) << text;
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(std::string(a.status().message()).find(expected), std::string::npos) << a.status();
  }
}

TEST(EngineAttributesTest, EmbeddedJsonKeepsTheNameAndReportsItsError) {
  EmbeddedAttributes good = ParseEmbeddedAttributes(R"({"compute_cost": 2, "reference": true})", "e");
  EXPECT_TRUE(good.error.ok()) << good.error;
  EXPECT_EQ(good.attributes.compute_cost, 2);
  EXPECT_TRUE(good.attributes.reference);
  EmbeddedAttributes bad = ParseEmbeddedAttributes(R"({"skip_assign_stream": true})", "e");
  EXPECT_FALSE(bad.error.ok());
  EXPECT_NE(std::string(bad.error.message()).find("e.json (embedded): unknown key 'skip_assign_stream'"),
            std::string::npos)
      << bad.error;
  EXPECT_EQ(bad.attributes.name, "e");
  EXPECT_FALSE(ParseEmbeddedAttributes(nullptr, "e").error.ok());
}

}  // namespace
}  // namespace ge::engine

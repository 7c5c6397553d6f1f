// EnginesTest: a googletest fixture whose suite loads the built-in engine
// plugins once (as gectl and the daemon do, from the build's plugin
// directory) and unloads them after its last test. Suites that compile or
// run graphs derive from it and use `engines_`.
#pragma once

#include <gtest/gtest.h>

#include "runtime/engines/engine_registry.h"

namespace ge::testing {

class EnginesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto registry = engine::CreateEngineRegistry({}, {});
    ASSERT_TRUE(registry.ok()) << registry.status();
    engines_ = registry->release();
  }
  static void TearDownTestSuite() {
    delete engines_;
    engines_ = nullptr;
  }

  inline static engine::EngineRegistry* engines_ = nullptr;
};

}  // namespace ge::testing

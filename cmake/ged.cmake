# Helpers shared by every module's CMakeLists.

# ged_library(NAME SOURCES... DEPS ...): one shared library per module. Modules
# are shared so that engine plugins and executables see one copy of each
# registry (the op registry, loggers) instead of one per static link.
function(ged_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} SHARED ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

# ged_engine_plugin(NAME SOURCES... DEPS ...): an engine plugin (a module
# with one entry point, runtime/engines/api/plugin.h) in the built-in engine
# directory. Built-in engines embed their json (ged_engine_attributes).
function(ged_engine_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ge_engine_api ${ARG_DEPS})
  set_target_properties(${name} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${GED_ENGINE_DIR}
    PREFIX "lib")
endfunction()

# ged_engine_attributes(TARGET CONF file.json NAMESPACE ns): embeds an
# engine's json, the one source of its attributes, into TARGET as
# `const char ns::kAttributesJson[]` (the engine's constructor parses it and
# its plugin entry hands it to the loader). Editing the json re-runs CMake.
function(ged_engine_attributes target)
  cmake_parse_arguments(ARG "" "CONF;NAMESPACE" "" ${ARGN})
  set(conf ${CMAKE_CURRENT_SOURCE_DIR}/${ARG_CONF})
  file(READ ${conf} json)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${conf})
  get_filename_component(stem ${ARG_CONF} NAME_WE)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${stem}_attributes.cc)
  file(CONFIGURE OUTPUT ${out} CONTENT
"// Generated from ${ARG_CONF} by ged_engine_attributes (cmake/ged.cmake).
namespace ${ARG_NAMESPACE} {
extern const char kAttributesJson[];
const char kAttributesJson[] = R\"ged_json(${json})ged_json\";
}  // namespace ${ARG_NAMESPACE}
" @ONLY)
  target_sources(${target} PRIVATE ${out})
endfunction()

# ged_sanitizer_env(OUT): the environment a test needs in a sanitizer tree
# (GED_SANITIZE or GED_TSAN): options and the suppression files in
# scripts/sanitizers/ (docs/reliability.md says why each entry is there).
# use_tls=0: GCC 12's LeakSanitizer misreads glibc 2.36's dynamic TLS vector
# once a dlopen'ed plugin has TLS and crashes in its tracer ("Tracer caught
# signal 11", a bogus "DTLS" range); with it, LSan does not scan TLS, and the
# per-thread buffers glibc keeps there are suppressed in lsan.supp.
function(ged_sanitizer_env out)
  set(supp ${PROJECT_SOURCE_DIR}/scripts/sanitizers)
  set(env "")
  if(GED_SANITIZE OR GED_FUZZ)
    list(APPEND env
      "ASAN_OPTIONS=detect_leaks=1:strict_init_order=1:detect_stack_use_after_return=1:check_initialization_order=1"
      "LSAN_OPTIONS=suppressions=${supp}/lsan.supp:print_suppressions=0:use_tls=0"
      "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:suppressions=${supp}/ubsan.supp")
  endif()
  if(GED_TSAN)
    # OpenMP teams of one: Debian's libgomp is not instrumented, so TSan
    # cannot see its barriers and reports every kernel loop's hand-over
    # between a team's threads; ged's own threads (executors, sessions,
    # gRPC, the compute budget) stay as many as ever.
    list(APPEND env "TSAN_OPTIONS=suppressions=${supp}/tsan.supp:second_deadlock_stack=1:history_size=4"
      "OMP_THREAD_LIMIT=1")
  endif()
  set(${out} "${env}" PARENT_SCOPE)
endfunction()

# ged_test(NAME SOURCES... DEPS ... [LABELS ...]): a googletest binary run by ctest.
# Every test is also labelled by the folder under tests/ it lives in (`unit`,
# `integration`, `reliability`). scripts/test.sh runs the unit, integration
# and reliability tests again in an ASan+UBSan tree, except those labelled
# `heavy` (model exports) or `conformance`; scripts/sanitize.sh tsan runs the
# ones labelled `concurrency`.
# Tests see XDG_CACHE_HOME under the build tree, so gectl and ged never
# touch the user's compiled-model cache (~/.cache/ged).
function(ged_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  ged_sanitizer_env(sanitizer_env)
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT "GED_SOURCE_DIR=${PROJECT_SOURCE_DIR};GED_BINARY_DIR=${CMAKE_BINARY_DIR};XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/test-cache;${sanitizer_env}")
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR}/tests ${CMAKE_CURRENT_SOURCE_DIR})
  if(NOT rel MATCHES "^\\.\\.")
    string(REGEX REPLACE "/.*" "" folder "${rel}")
    list(APPEND ARG_LABELS ${folder})
  endif()
  if(ARG_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
endfunction()

# The fuzz targets, shared by fuzz/CMakeLists.txt (libFuzzer binaries,
# GED_FUZZ) and tests/reliability (regression replays in every tree): for
# each NAME, fuzz/NAME_fuzzer.cc, seeds in fuzz/corpus/NAME/, past findings in
# fuzz/regressions/NAME/, and the ged library its entry function needs.
set(GED_FUZZ_TARGETS npy text_format graphdef onnx_import gem run_request)
set(GED_FUZZ_DEPS_npy ge_base)
set(GED_FUZZ_DEPS_text_format ge_base)
set(GED_FUZZ_DEPS_graphdef ge_base)
set(GED_FUZZ_DEPS_onnx_import ge_frontend)
set(GED_FUZZ_DEPS_gem ge_model)
set(GED_FUZZ_DEPS_run_request ge_value_proto ge_session)

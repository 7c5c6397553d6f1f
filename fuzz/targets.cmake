# The fuzz targets, shared by fuzz/CMakeLists.txt (libFuzzer binaries,
# GED_FUZZ) and tests/reliability (regression replays in every tree): for
# each NAME, fuzz/NAME_fuzzer.cc, seeds in fuzz/corpus/NAME/, past findings in
# fuzz/regressions/NAME/, and the ged library its entry function needs.
set(GED_FUZZ_TARGETS npy text_format graphdef onnx_import gem run_request)
set(GED_FUZZ_DEPS_npy ge_base)
set(GED_FUZZ_DEPS_text_format ge_base)
set(GED_FUZZ_DEPS_graphdef ge_base)
set(GED_FUZZ_DEPS_onnx_import ge_frontend)
set(GED_FUZZ_DEPS_gem ge_model ge_session ge_device)
# Built-in engines a target loads at run time (plugins, not linked).
set(GED_FUZZ_ENGINES_gem ge_engine_control_flow ge_engine_cpu_dense ge_engine_cpu_fused ge_engine_cpu_vector
    ge_engine_ge_local ge_engine_host_cpu)
set(GED_FUZZ_DEPS_run_request ge_value_proto ge_session)

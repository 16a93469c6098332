# Test sources that define no host-side suite of scripts/sanitizers/host-tests.txt (written with it by
# scripts/sanitizers/list-host-tests.py): the sanitizer stage's build (-DSDGEN_HOST_TESTS_ONLY=ON) leaves
# them out. Paths are relative to the repository root.
set(SDGEN_DEVICE_ONLY_TEST_SOURCES
  tests/models/attention_layer_test.cpp
  tests/models/builtin_model_test.cpp
  tests/models/determinism_test.cpp
  tests/models/fault_injection_test.cpp
  tests/models/group_norm_path_test.cpp
  tests/models/lora_parity_test.cpp
  tests/models/lora_pipeline_test.cpp
  tests/models/lora_stream_test.cpp
  tests/models/network_parity_test.cpp
  tests/models/pipeline_parity_test.cpp
  tests/models/prompt_parity_test.cpp
  tests/models/prompt_pipeline_test.cpp
  tests/models/resnet_block_test.cpp
  tests/models/sampler_pipeline_parity_test.cpp
  tests/models/sampling_step_test.cpp
  tests/models/sdxl_parity_test.cpp
  tests/models/taesd_parity_test.cpp
  tests/models/vae_tiling_parity_test.cpp
  tests/models/vae_tiling_pipeline_test.cpp
  tests/models/weight_streaming_test.cpp
  tests/app/img2img_parity_test.cpp
  tests/app/refiner_pass_test.cpp
  tests/graph/expr_test.cpp
)

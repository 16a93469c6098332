#pragma once
// `sdgen serve` flags. Parsing touches neither the device nor the network, so every usage error is reported
// (exit code 2) before anything starts.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sdgen::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";  // loopback unless asked: the API has no per-user isolation
  int port = 7860;                 // webui's port; 0 picks a free one (printed on stdout)
  std::string modelPath;           // empty: the built-in model
  std::string modelsDir;
  std::string loraDir;  // where prompts' <lora:NAME:SCALE> tags find NAME.safetensors (docs/lora.md)
  std::vector<std::optional<uint32_t>> devices = {std::nullopt};  // one engine each; nullopt: sdgen's choice
  std::string apiKey;              // empty: no authentication (else also from SDGEN_API_KEY)
  int queue = 16;                  // jobs waiting (not counting those running)
  int64_t maxPixels = 1024 * 1024; // width * height of one image
  size_t maxBody = 8u << 20;       // request body bytes
  // Loaded models each engine keeps between jobs (app/model_cache.h): enough for two SD 1.5 models in fp16 at
  // 512x512 (about 2.6 GiB each: weights, arenas, scratch), so A -> B -> A switches without a reload.
  uint64_t modelCacheMb = 6144;
  bool help = false;
};

struct ServeLimits {
  static constexpr int kMaxQueue = 10000;
  static constexpr int kMaxDevices = 64;
  static constexpr int64_t kMaxPixels = int64_t(8192) * 8192;
  static constexpr size_t kMinBody = 1024, kMaxBody = size_t(1) << 30;
  static constexpr uint64_t kMaxModelCacheMb = uint64_t(1) << 24;  // 16 TiB: no device has more
};

// args: what follows "serve". Throws app::UsageError naming the flag. SDGEN_API_KEY is read when --api-key is
// not given (a key on the command line shows in `ps`).
ServeOptions parseServeOptions(const std::vector<std::string>& args);

std::string serveUsageText();

}  // namespace sdgen::serve

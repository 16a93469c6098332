#include "app/serve/serve_options.h"

#include <charconv>
#include <cstdlib>

#include "app/cli_options.h"

namespace sdgen::serve {

using app::UsageError;

namespace {

template <class Int>
Int parseInt(const std::string& flag, const std::string& value, Int lo, Int hi) {
  Int v{};
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < lo || v > hi)
    throw UsageError(flag + ": expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                     ", got '" + value + "'");
  return v;
}

std::vector<std::optional<uint32_t>> parseDevices(const std::string& value) {
  std::vector<std::optional<uint32_t>> devices;
  size_t start = 0;
  while (true) {
    const size_t comma = value.find(',', start);
    const std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw UsageError("--devices: expected device indices separated by commas (e.g. 0,1), got '" + value + "'");
    devices.push_back(parseInt<uint32_t>("--devices", item, 0, 1023));
    if (devices.size() > size_t(ServeLimits::kMaxDevices))
      throw UsageError("--devices: at most " + std::to_string(ServeLimits::kMaxDevices) + " engines");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return devices;
}

}  // namespace

ServeOptions parseServeOptions(const std::vector<std::string>& args) {
  ServeOptions o;
  bool keyGiven = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], value;
    bool inlineValue = false;
    if (flag.rfind("--", 0) == 0) {
      if (const size_t eq = flag.find('='); eq != std::string::npos) {
        value = flag.substr(eq + 1);
        flag = flag.substr(0, eq);
        inlineValue = true;
      }
    }
    if (flag == "-h" || flag == "--help") {
      o.help = true;
      return o;
    }
    auto next = [&]() -> std::string {
      if (inlineValue) return value;
      if (i + 1 >= args.size()) throw UsageError(flag + " needs a value");
      return args[++i];
    };
    if (flag == "--host") o.host = next();
    else if (flag == "--port") o.port = parseInt<int>(flag, next(), 0, 65535);
    else if (flag == "-m" || flag == "--model") o.modelPath = next();
    else if (flag == "--models-dir") o.modelsDir = next();
    else if (flag == "--lora-dir") o.loraDir = next();
    else if (flag == "--devices") o.devices = parseDevices(next());
    else if (flag == "--api-key") {
      o.apiKey = next();
      keyGiven = true;
      if (o.apiKey.empty()) throw UsageError("--api-key: the key must not be empty");
    } else if (flag == "--queue") o.queue = parseInt<int>(flag, next(), 1, ServeLimits::kMaxQueue);
    else if (flag == "--max-pixels") o.maxPixels = parseInt<int64_t>(flag, next(), 64, ServeLimits::kMaxPixels);
    else if (flag == "--max-body") o.maxBody = parseInt<size_t>(flag, next(), ServeLimits::kMinBody, ServeLimits::kMaxBody);
    else if (flag == "--model-cache-mb")
      o.modelCacheMb = parseInt<uint64_t>(flag, next(), 0, ServeLimits::kMaxModelCacheMb);
    else throw UsageError("unknown option '" + args[i] + "' for 'sdgen serve'");
  }
  if (o.host.empty()) throw UsageError("--host: expected an address, e.g. 127.0.0.1 or 0.0.0.0");
  if (!keyGiven) {
    if (const char* env = std::getenv("SDGEN_API_KEY"); env && *env) o.apiKey = env;
  }
  return o;
}

std::string serveUsageText() {
  return R"(Usage: sdgen serve [options]

An HTTP server speaking stable-diffusion-webui's API (/sdapi/v1/txt2img, img2img, progress, interrupt, options,
sd-models, samplers, png-info; /internal/ping for health checks). docs/serve.md has the details.

  --host ADDR          address to listen on (default 127.0.0.1: this machine only)
  --port N             port (default 7860; 0: any free port, printed on stdout)
  -m, --model PATH     the model loaded at start (default: the built-in model)
  --models-dir DIR     more models to offer (diffusers folders, .safetensors files)
  --lora-dir DIR       LoRAs for prompt tags <lora:NAME:SCALE> (NAME.safetensors; docs/lora.md)
  --devices LIST       one engine per entry, by Vulkan device index, e.g. 0,1; a device may repeat (0,0)
                       (default: one engine on sdgen's usual device)
  --api-key KEY        require "Authorization: Bearer KEY" (default: $SDGEN_API_KEY, else none)
  --queue N            jobs that may wait for an engine; more get HTTP 429 (default 16)
  --max-pixels N       largest width x height of one image (default 1048576 = 1024x1024)
  --max-body BYTES     largest request body (default 8388608)
  --model-cache-mb N   device memory for the models each engine keeps loaded, least recently used evicted
                       first (default 6144: two SD 1.5 models in fp16; 0: only the model in use)
  -h, --help           this text
)";
}

}  // namespace sdgen::serve

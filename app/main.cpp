// sdgen command line. Until the text-to-image pipeline lands, --demo runs the smallest real thing the
// engine can do (compile kernels, run them on the GPU, check against the CPU) and says so.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "app/demo.h"
#include "engine/context.h"
#include "engine/device.h"
#include "engine/error.h"

namespace {

constexpr const char* kUsage =
    "usage: sdgen [options]\n"
    "  --list-devices      list Vulkan devices and their capabilities\n"
    "  --device N          use Vulkan device N (default: SDGEN_DEVICE, else the best GPU, else lavapipe)\n"
    "  --demo              run the engine self-demo (kernel compile + GPU run checked against the CPU)\n"
    "  -v, --verbose       more output\n"
    "  --version           print the version\n"
    "  -h, --help          this help\n";

struct Args {
  bool listDevices = false, demo = false, verbose = false;
  std::optional<uint32_t> device;
};

struct UsageError {
  std::string message;
};

uint32_t parseIndex(const std::string& flag, const char* value) {
  if (!value) throw UsageError{flag + " needs a value"};
  char* end = nullptr;
  long v = std::strtol(value, &end, 10);
  if (*value == '\0' || *end != '\0' || v < 0) throw UsageError{flag + ": expected a non-negative integer, got '" +
                                                               std::string(value) + "'"};
  return static_cast<uint32_t>(v);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--list-devices") a.listDevices = true;
    else if (s == "--demo") a.demo = true;
    else if (s == "-v" || s == "--verbose") a.verbose = true;
    else if (s == "--device") a.device = parseIndex(s, i + 1 < argc ? argv[++i] : nullptr);
    else if (s == "--version") { std::printf("sdgen %s\n", SDGEN_VERSION); std::exit(0); }
    else if (s == "-h" || s == "--help") { std::fputs(kUsage, stdout); std::exit(0); }
    else throw UsageError{"unknown option '" + s + "'"};
  }
  if (!a.listDevices && !a.demo) throw UsageError{"nothing to do: give --demo or --list-devices"};
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  try {
    args = parse(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "sdgen: %s\n%s", e.message.c_str(), kUsage);
    return 2;
  }
  try {
    if (args.listDevices) {
      sdgen::InstanceOptions io;
      io.validation = sdgen::validationRequestedByEnvironment();
      sdgen::Instance instance(io);
      for (auto& d : sdgen::listDevices(instance)) std::fputs(d.describe().c_str(), stdout);
      return 0;
    }
    sdgen::ContextOptions options;
    options.deviceIndex = args.device;
    sdgen::Context ctx(options);
    return sdgen::runDemo(ctx, args.verbose);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sdgen: error: %s\n", e.what());
    return 1;
  }
}

// sdgen command line: parse (usage errors exit 2), then run one mode (runtime errors exit 1 with the message of
// the sdgen::Error, which names the file, tensor or device involved).
#include <cstdio>
#include <exception>

#include "app/cli_options.h"
#include "app/demo.h"
#include "app/generate.h"
#include "app/show_params.h"
#include "engine/context.h"
#include "engine/device.h"

namespace {

constexpr int kExitRuntimeError = 1;
constexpr int kExitUsageError = 2;

int listDevices() {
  sdgen::InstanceOptions io;
  io.validation = sdgen::validationRequestedByEnvironment();
  sdgen::Instance instance(io);
  for (auto& d : sdgen::listDevices(instance)) std::fputs(d.describe().c_str(), stdout);
  return 0;
}

int runMode(const sdgen::app::CliOptions& options) {
  using sdgen::app::Mode;
  switch (options.mode) {
    case Mode::Help: std::fputs(sdgen::app::usageText().c_str(), stdout); return 0;
    case Mode::Version: std::printf("sdgen %s\n", SDGEN_VERSION); return 0;
    case Mode::ListDevices: return listDevices();
    case Mode::ShowParams: return sdgen::app::runShowParams(options.showParamsPath, stdout, stderr);
    case Mode::Demo: {
      sdgen::ContextOptions contextOptions;
      contextOptions.deviceIndex = options.device;
      sdgen::Context ctx(contextOptions);
      return sdgen::runDemo(ctx, options.verbose);
    }
    case Mode::Generate: return sdgen::app::runGenerate(options, stdout, stderr);
  }
  return kExitRuntimeError;
}

}  // namespace

int main(int argc, char** argv) {
  sdgen::app::CliOptions options;
  try {
    options = sdgen::app::parseCommandLine(argc, argv);
  } catch (const sdgen::app::UsageError& e) {
    std::fprintf(stderr, "sdgen: %s\nTry 'sdgen --help' for the list of options.\n", e.what());
    return kExitUsageError;
  }
  try {
    return runMode(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sdgen: error: %s\n", e.what());
    return kExitRuntimeError;
  }
}

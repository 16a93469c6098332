// sdgen command line: parse (usage errors exit 2), then run one mode (runtime errors exit 1 with the message of
// the sdgen::Error, which names the file, tensor or device involved).
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "app/bench_conv2d.h"
#include "app/cli_options.h"
#include "app/demo.h"
#include "app/generate.h"
#include "app/generation_plan.h"
#include "app/profile_conv.h"
#include "app/serve/serve_main.h"
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
    case Mode::ProfileConv: return sdgen::app::runProfileConv(options, stdout, stderr);
    case Mode::BenchConv2d: return sdgen::app::runBenchConv2d(options, stdout, stderr);
    case Mode::Generate: {
      // The model folder's sdgen.json defaults fill the settings not given on the command line.
      const std::string model = sdgen::app::resolveModelPath(options.modelPath);
      auto resolved = sdgen::app::applyModelDefaults(options, sdgen::app::readModelDefaults(model));
      resolved.modelPath = model;
      return sdgen::app::runGenerate(resolved, stdout, stderr);
    }
  }
  return kExitRuntimeError;
}

}  // namespace

int main(int argc, char** argv) {
  // `sdgen serve ...` is a subcommand with flags of its own (app/serve/serve_options.h).
  if (argc > 1 && std::string(argv[1]) == "serve")
    return sdgen::serve::serveMain(std::vector<std::string>(argv + 2, argv + argc));
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

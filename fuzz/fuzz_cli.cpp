// libFuzzer target: the command lines of sdgen (app/cli_options.h) and of `sdgen serve` (serve_options.h). The
// input is the argument list separated by NUL bytes; a leading "serve" argument selects the server's parser.
// Every bad command line must be a UsageError (exit code 2) or sdgen::Error, never anything else.
#include <cstdint>
#include <string>
#include <vector>

#include "app/cli_options.h"
#include "app/generation_plan.h"
#include "app/serve/serve_options.h"
#include "engine/error.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sdgen;
  std::vector<std::string> args;
  for (std::string_view part : fuzz::splitInput(fuzz::asText(data, size), std::string_view("\0", 1)))
    args.emplace_back(part);
  if (args.size() > 256) return -1;
  try {
    if (!args.empty() && args[0] == "serve") {
      (void)serve::parseServeOptions({args.begin() + 1, args.end()});
    } else {
      app::CliOptions o = app::parseCommandLine(args);
      (void)app::applyModelDefaults(o, app::ModelDefaults{});
    }
  } catch (const app::UsageError&) {
  } catch (const Error&) {
  }
  return 0;
}

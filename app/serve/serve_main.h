#pragma once
// `sdgen serve`: starts the engines and the HTTP server, serves until SIGINT or SIGTERM, then shuts down in
// order: no new jobs, waiting jobs answered 503, running jobs cancelled, handlers drained, engines joined.
#include <string>
#include <vector>

namespace sdgen::serve {

// args: what follows "serve". Returns the process exit code (0, 1 runtime error, 2 usage error).
int serveMain(const std::vector<std::string>& args);

}  // namespace sdgen::serve

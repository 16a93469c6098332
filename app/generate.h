#pragma once
// The generation command: load the model once, generate --batch-count images (seeds seed, seed+1, ...), write
// each as a PNG with its parameters, print the seed and the paths on `out` and progress and timings on `err`.
#include <cstdio>

#include "app/cli_options.h"

namespace sdgen::app {

// Returns the exit code (0). Throws sdgen::Error (exit code 1 in main) naming the file, tensor or device at fault.
int runGenerate(const CliOptions& options, std::FILE* out, std::FILE* err);

}  // namespace sdgen::app

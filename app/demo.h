#pragma once
#include "engine/context.h"

namespace sdgen {
// Runs the engine self-demo; returns the process exit code.
int runDemo(Context& ctx, bool verbose);
}

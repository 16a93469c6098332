#pragma once
// The convolution autotune as the CLI drives and reports it (--no-autotune, --retune, -v, --profile-conv).
#include <cstdio>
#include <string>
#include <vector>

#include "app/cli_options.h"
#include "ops/conv2d_tune.h"

namespace sdgen::app {

ops::ConvTuneSettings autotuneSettings(const CliOptions& options);
// "conv autotune: 23 problems tuned in 2.41 s (0.90 s of it waiting for candidate kernels, 1840 launches), 0 from
// the cache FILE" (-v), or why it is off.
std::string formatConvTuneSummary(const ops::ConvTuner& tuner);
// "conv autotune: N candidate(s) dropped (could not be recorded or compiled):" and a line per kept note
// (ConvTuner::droppedCandidates; "  ..." where more were dropped than kept); empty when none was.
std::string formatDroppedCandidates(int dropped, const std::vector<std::string>& notes);
// The tuner's warnings (unreadable or corrupt cache file, unwritable cache directory), one "warning:" line each.
void printConvTuneWarnings(const ops::ConvTuner& tuner, std::FILE* err);

}  // namespace sdgen::app

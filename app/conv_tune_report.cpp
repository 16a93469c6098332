#include "app/conv_tune_report.h"

namespace sdgen::app {

ops::ConvTuneSettings autotuneSettings(const CliOptions& options) {
  ops::ConvTuneSettings s;
  if (options.noAutotune) s.mode = ops::ConvTuneSettings::Mode::Off;
  s.retune = options.retune;
  return s;
}

std::string formatConvTuneSummary(const ops::ConvTuner& tuner) {
  const ops::ConvTuneStats st = tuner.stats();
  if (!st.enabled)
    return "conv autotune: off (convolutions by the rule; on by default on GPUs with timestamps, see "
           "docs/dispatch-conv.md)\n";
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "conv autotune: %d problems tuned in %.2f s (%.2f s of it waiting for candidate kernels, %llu "
                "launches), %d from the cache %s%s\n",
                st.tuned, st.seconds, st.compileSeconds, static_cast<unsigned long long>(st.launches), st.fromCache,
                tuner.cachePath().c_str(),
                st.failed ? (", " + std::to_string(st.failed) + " by the rule (no candidate could be timed)").c_str()
                          : "");
  return buf + formatDroppedCandidates(st.dropped, tuner.droppedCandidates());
}

std::string formatDroppedCandidates(int dropped, const std::vector<std::string>& notes) {
  // Candidates that could not be recorded or compiled: a kernel of ours that fails on this device or driver.
  if (dropped <= 0) return {};
  std::string out =
      "conv autotune: " + std::to_string(dropped) + " candidate(s) dropped (could not be recorded or compiled):\n";
  for (const std::string& d : notes) out += "  " + d + "\n";
  if (size_t(dropped) > notes.size()) out += "  ...\n";
  return out;
}

void printConvTuneWarnings(const ops::ConvTuner& tuner, std::FILE* err) {
  for (const std::string& w : tuner.warnings()) std::fprintf(err, "warning: %s\n", w.c_str());
}

}  // namespace sdgen::app

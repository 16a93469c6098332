#pragma once
// Runs a program with arguments (no shell) and captures its combined stdout and stderr.
#include <string>
#include <vector>

namespace sdgen {

struct ProcessResult {
  int exitCode = -1;
  std::string output;
};

ProcessResult runProcess(const std::vector<std::string>& argv);

}  // namespace sdgen

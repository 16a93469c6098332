#pragma once
// Fault injection for the reliability tests (issue 24, docs/reliability.md). Always compiled in and inert unless
// planned: SDGEN_FAULT=KIND:N[,KIND:N...] in the environment (read once, at the first check), or setFaultPlan()
// from a test, makes the Nth operation of KIND fail the way the real failure does:
//   alloc        the Nth device memory block allocation: vkAllocateMemory returns VK_ERROR_OUT_OF_DEVICE_MEMORY
//   read         the Nth pread of weights (MappedFile::readAt): an I/O error (EIO)
//   pipeline     the Nth compute pipeline creation: vkCreateComputePipelines returns VK_ERROR_OUT_OF_HOST_MEMORY
//   submit-lost  the Nth queue submission: vkQueueSubmit returns VK_ERROR_DEVICE_LOST
// Each fault fires once. Unplanned, a check is one relaxed atomic load.
#include <cstdint>
#include <string>

namespace sdgen {

enum class FaultKind : uint8_t { Alloc, Read, Pipeline, SubmitLost };
inline constexpr int kFaultKindCount = 4;

// Counts one operation of `kind`; true when it is the planned one (the caller then fails it).
bool injectFault(FaultKind kind);

// Replaces the plan ("" clears it) and restarts every count at zero. Throws sdgen::Error naming a malformed spec.
void setFaultPlan(const std::string& spec);

// Operations of `kind` counted since the plan was last set (counted only while some plan is set).
uint64_t faultOperationCount(FaultKind kind);

}  // namespace sdgen

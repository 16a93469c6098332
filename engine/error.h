#pragma once
// Errors: every failure is an exception carrying a message that names what failed.
#include <vulkan/vulkan.h>

#include <stdexcept>
#include <string>

namespace sdgen {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown when a device allocation cannot be satisfied; the message names size and budget.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

const char* vkResultName(VkResult r);

[[noreturn]] void throwVkError(VkResult r, const char* what);

inline void vkCheck(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throwVkError(r, what);
}

}  // namespace sdgen

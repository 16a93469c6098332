#pragma once
// Builds a kernel's parameter block: 32-bit words read in the shader with paramU32/paramF32/paramAddress
// (shaders/sdgen.slang). Addresses take two words, low first.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace sdgen {

class ParamBlock {
 public:
  ParamBlock& u32(uint32_t v) {
    words_.push_back(v);
    return *this;
  }
  ParamBlock& i32(int32_t v) { return u32(static_cast<uint32_t>(v)); }
  ParamBlock& f32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return u32(bits);
  }
  ParamBlock& address(VkDeviceAddress a) {
    u32(static_cast<uint32_t>(a));
    return u32(static_cast<uint32_t>(a >> 32));
  }
  size_t size() const { return words_.size(); }
  void set(size_t index, uint32_t v) { words_.at(index) = v; }
  std::span<const uint32_t> words() const { return words_; }
  operator std::span<const uint32_t>() const { return words_; }

 private:
  std::vector<uint32_t> words_;
};

}  // namespace sdgen

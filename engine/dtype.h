#pragma once
// Storage element types. Kernels compute in fp32; tensors are stored in fp32 or fp16.
#include <cstdint>
#include <string>

namespace sdgen {

enum class DType : uint8_t { F32, F16 };

inline uint32_t dtypeSize(DType t) { return t == DType::F16 ? 2 : 4; }
inline const char* dtypeName(DType t) { return t == DType::F16 ? "f16" : "f32"; }
// The value of the SDGEN_DTYPE define that selects a kernel's storage type.
inline std::string dtypeDefine(DType t) { return t == DType::F16 ? "1" : "0"; }

// IEEE half conversions (round to nearest even), used by hosts preparing fp16 data and references.
uint16_t floatToHalf(float f);
float halfToFloat(uint16_t h);
// The value a float becomes when stored as `t`.
inline float roundToStorage(DType t, float v) { return t == DType::F16 ? halfToFloat(floatToHalf(v)) : v; }

}  // namespace sdgen

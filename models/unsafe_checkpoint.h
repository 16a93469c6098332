#pragma once
// sdgen loads weights from safetensors only. Legacy PyTorch checkpoints (.ckpt, .pt, .pth, .bin) are Python
// pickles: unpickling executes whatever code the file names, so opening an untrusted one is arbitrary code
// execution. They are refused with instructions to convert them.
#include <span>
#include <cstdint>
#include <string>

namespace sdgen::models {

// True for the file extensions of pickle checkpoints (case-insensitive).
bool hasPickleCheckpointExtension(const std::string& path);
// True when the bytes begin like a pickle stream or a PyTorch zip checkpoint.
bool looksLikePickleCheckpoint(std::span<const uint8_t> head);

// Throws an sdgen::Error explaining the risk and the conversion when `path` has a pickle checkpoint extension.
void refuseUnsafeCheckpoint(const std::string& path);
// The message of that error, also used when a file's content turns out to be a pickle.
std::string unsafeCheckpointMessage(const std::string& path);

}  // namespace sdgen::models

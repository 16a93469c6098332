#pragma once
// Base64 (RFC 4648, standard alphabet, with padding) for the images the webui API carries inside JSON.
// httplib and nlohmann-json have no public codec for it.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sdgen::serve {

std::string base64Encode(std::span<const uint8_t> bytes);

// Accepts padded or unpadded input and ignores ASCII whitespace (clients wrap lines); nullopt on any other
// character or a impossible length. Decoding stops at `maxBytes` of output (nullopt when the input is longer),
// so a hostile body cannot make it allocate more than that.
std::optional<std::vector<uint8_t>> base64Decode(std::string_view text, size_t maxBytes);

// webui's image fields: base64, or a data URL ("data:image/png;base64,...", what webuiapi sends). nullopt as
// base64Decode, and for a data URL without ",".
std::optional<std::vector<uint8_t>> decodeImageText(std::string_view text, size_t maxBytes);

}  // namespace sdgen::serve

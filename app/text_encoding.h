#pragma once
// UTF-8 (the command line, the terminal) <-> Latin-1 (PNG tEXt chunks).
#include <optional>
#include <string>
#include <string_view>

namespace sdgen::app {

// The Latin-1 bytes of `utf8`, or nullopt when it holds a code point above U+00FF or is not valid UTF-8.
std::optional<std::string> utf8ToLatin1(std::string_view utf8);
std::string latin1ToUtf8(std::string_view latin1);
bool isValidUtf8(std::string_view s);
// `s` with every byte that is not part of a valid UTF-8 sequence replaced by U+FFFD.
std::string sanitizeUtf8(std::string_view s);

}  // namespace sdgen::app

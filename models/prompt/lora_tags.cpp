#include "models/prompt/lora_tags.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

#include "engine/error.h"

namespace sdgen::prompt {

namespace {

// Python's \w for the ASCII prompts tags are written in (letters, digits, underscore; other bytes of UTF-8
// text count too, as Python's Unicode \w would for letters).
bool isWord(unsigned char c) { return std::isalnum(c) || c == '_' || c >= 0x80; }

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

std::string trim(std::string s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

float number(const std::string& v, const std::string& tag) {
  const std::string t = trim(v);
  float f = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), f);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !std::isfinite(f))
    throw Error("prompt tag '" + tag + "': '" + v + "' is not a number");
  return f;
}

LoraTag loraTag(const std::string& args, const std::string& text) {
  const std::vector<std::string> items = split(args, ':');
  LoraTag tag;
  tag.text = text;
  tag.name = trim(items[0]);
  if (tag.name.empty()) throw Error("prompt tag '" + text + "' names no LoRA");
  std::vector<std::string> positional;
  std::optional<float> te, unet;
  for (size_t i = 1; i < items.size(); ++i) {
    const size_t eq = items[i].find('=');
    if (eq == std::string::npos) {
      positional.push_back(items[i]);
      continue;
    }
    const std::string key = trim(items[i].substr(0, eq)), value = items[i].substr(eq + 1);
    if (key == "te")
      te = number(value, text);
    else if (key == "unet")
      unet = number(value, text);
    else
      throw Error("prompt tag '" + text + "': '" + key + "=' is not supported (te= and unet= are)");
  }
  if (positional.size() > 2) throw Error("prompt tag '" + text + "' has more than two scales");
  // webui: te multiplier = 1st number (default 1), unet multiplier = 2nd (default: the te multiplier)
  if (!positional.empty()) te = te.value_or(number(positional[0], text));
  if (positional.size() > 1) unet = unet.value_or(number(positional[1], text));
  tag.textScale = te.value_or(1.f);
  tag.unetScale = unet.value_or(tag.textScale);
  return tag;
}

}  // namespace

PromptLoras extractLoraTags(std::string_view prompt) {
  PromptLoras out;
  size_t i = 0;
  while (i < prompt.size()) {
    // <(\w+):([^>]+)>
    if (prompt[i] == '<') {
      size_t j = i + 1;
      while (j < prompt.size() && isWord(static_cast<unsigned char>(prompt[j]))) ++j;
      if (j > i + 1 && j < prompt.size() && prompt[j] == ':') {
        const size_t close = prompt.find('>', j + 1);
        if (close != std::string_view::npos && close > j + 1) {
          const std::string kind(prompt.substr(i + 1, j - i - 1)), args(prompt.substr(j + 1, close - j - 1));
          const std::string text(prompt.substr(i, close - i + 1));
          if (kind == "lora" || kind == "lyco")
            out.loras.push_back(loraTag(args, text));
          else
            out.warnings.push_back("prompt tag '" + text + "': extra networks of kind '" + kind +
                                   "' are not supported; the tag was removed");
          i = close + 1;
          continue;
        }
      }
    }
    out.prompt.push_back(prompt[i]);
    ++i;
  }
  return out;
}

}  // namespace sdgen::prompt

#include "app/generation_params.h"

#include <charconv>
#include <cstdio>
#include <sstream>

namespace sdgen::app {

namespace {

// Shortest decimal that reads back as the same float: 7.5 -> "7.5", 7 -> "7".
std::string formatFloat(float v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;  // UTF-8 bytes pass through (ensure_ascii=False)
        }
    }
  }
  return out + "\"";
}

}  // namespace

std::string quoteParamValue(const std::string& value) {
  if (value.find_first_of(",:\n") == std::string::npos) return value;
  return jsonString(value);
}

std::string formatGenerationParams(const GenerationParams& p) {
  std::string s = p.prompt;
  if (!p.negativePrompt.empty()) s += "\nNegative prompt: " + p.negativePrompt;
  s += "\nSteps: " + std::to_string(p.steps);
  s += ", Sampler: " + quoteParamValue(sampling::samplerDisplayName(p.sampler, p.karras));
  if (p.exponential) s += ", Schedule type: Exponential";
  if (p.sgmUniform) s += ", Schedule type: SGM Uniform";
  s += ", CFG scale: " + formatFloat(p.cfgScale);
  s += ", Seed: " + std::to_string(p.seed);
  s += ", Size: " + std::to_string(p.width) + "x" + std::to_string(p.height);
  if (!p.modelName.empty()) s += ", Model: " + quoteParamValue(p.modelName);
  if (p.denoisingStrength) s += ", Denoising strength: " + formatFloat(*p.denoisingStrength);
  if (p.clipSkip > 1) s += ", Clip skip: " + std::to_string(p.clipSkip);
  auto pair = [&](const char* key, const std::optional<std::pair<int, int>>& v) {
    if (v) s += std::string(", ") + key + ": " + std::to_string(v->first) + "x" + std::to_string(v->second);
  };
  pair("Original size", p.micro.originalSize);
  pair("Crop", p.micro.cropTopLeft);
  pair("Target size", p.micro.targetSize);
  pair("Negative original size", p.micro.negativeOriginalSize);
  pair("Negative crop", p.micro.negativeCropTopLeft);
  pair("Negative target size", p.micro.negativeTargetSize);
  if (!p.refinerName.empty()) s += ", Refiner: " + quoteParamValue(p.refinerName);
  if (p.refinerSwitchAt) {
    std::ostringstream at;
    at << *p.refinerSwitchAt;
    s += ", Refiner switch at: " + at.str();
  }
  if (p.aestheticScores)
    s += ", Aesthetic score: " + formatFloat(p.micro.aestheticScore) +
         ", Negative aesthetic score: " + formatFloat(p.micro.negativeAestheticScore);
  if (p.promptSyntax != prompt::PromptSyntax::Webui)
    s += std::string(", Prompt syntax: ") + prompt::promptSyntaxName(p.promptSyntax);
  if (!p.version.empty()) s += ", Version: " + quoteParamValue(p.version);
  // webui strips the whole text, so an empty prompt leaves no leading blank line.
  const char* kSpace = " \t\n\r\f\v";
  const size_t first = s.find_first_not_of(kSpace);
  return s.substr(first, s.find_last_not_of(kSpace) - first + 1);
}

}  // namespace sdgen::app

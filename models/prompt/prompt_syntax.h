#pragma once
// How a prompt is read (--prompt-syntax, the GUI's setting, GenerationRequest::promptSyntax).
#include <optional>
#include <string_view>

namespace sdgen::prompt {

enum class PromptSyntax {
  Webui,  // stable-diffusion-webui's emphasis syntax and BREAK; any length, in chunks of 75 tokens (the default)
  Plain,  // diffusers' behavior: the text as written, cut off after the encoder's 77 tokens (with a warning)
};

inline constexpr const char* kPromptSyntaxNames = "webui, plain";

inline const char* promptSyntaxName(PromptSyntax s) { return s == PromptSyntax::Plain ? "plain" : "webui"; }

inline std::optional<PromptSyntax> parsePromptSyntax(std::string_view name) {
  if (name == "webui") return PromptSyntax::Webui;
  if (name == "plain") return PromptSyntax::Plain;
  return std::nullopt;
}

}  // namespace sdgen::prompt

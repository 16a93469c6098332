#pragma once
// stable-diffusion-webui's attention/emphasis syntax (modules/prompt_parser.py, parse_prompt_attention), read
// the way webui reads it so that a prompt copied from webui conditions the model the same way:
//   (text)        weight x 1.1            ((text))   x 1.21         (text:1.3)   x 1.3
//   [text]        weight / 1.1            \( \) \[ \] \\           the literal character
//   BREAK         (upper case, a word of its own) ends the current 75-token chunk
// Unbalanced brackets behave as in webui: a ')' or ']' with nothing open is literal text, a bracket left open
// applies its multiplier up to the end of the prompt; a lone '\' before any other character vanishes; nested
// multipliers multiply (in the same order and double precision as webui, so runs of equal weight merge the same
// way, which decides how the text is split into fragments and therefore tokenized).
//
// Where webui silently accepts something absurd this parser refuses with an error naming the prompt and the
// character position (docs/prompts.md lists each rule): a malformed number ("(a:1.2.3)", which makes webui raise
// a Python ValueError), a weight that is not finite or beyond +-kMaxWeight (webui reads "(a:1000...0)" as 1e30),
// BREAK inside brackets (webui then encodes the word "BREAK" with a negative weight), nesting deeper than
// kMaxDepth, and prompts longer than kMaxBytes.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "engine/error.h"

namespace sdgen::prompt {

// One piece of text with its weight; `isBreak` pieces (from BREAK) carry no text.
struct PromptFragment {
  std::string text;  // UTF-8
  double weight = 1.0;
  bool isBreak = false;
  bool operator==(const PromptFragment&) const = default;
};

struct PromptLimits {
  static constexpr size_t kMaxBytes = 16384;  // of UTF-8; far beyond the 32 chunks a prompt may fill
  static constexpr int kMaxDepth = 32;        // brackets open at once, ( and [ together; 1.1^32 = 21
  static constexpr double kMaxWeight = 100;   // |weight| of a written (text:W) and of any fragment's product
};

// A prompt the syntax rules refuse; what() names the prompt (the `what` given to the parser), the 1-based
// character position (in Unicode code points) and an excerpt around it.
class PromptSyntaxError : public Error {
 public:
  PromptSyntaxError(const std::string& message, size_t position) : Error(message), position_(position) {}
  size_t position() const { return position_; }  // 1-based character; 0 when the whole prompt is at fault

 private:
  size_t position_;
};

// The fragments of `prompt` in order, runs of equal weight merged, at least one fragment (an empty prompt gives
// {"", 1.0}). `what` names the prompt in errors, e.g. "the prompt" or "-n/--negative-prompt".
std::vector<PromptFragment> parsePromptAttention(std::string_view prompt, std::string_view what = "the prompt");

// Only the size limit (what plain prompts are held to as well); throws PromptSyntaxError.
void checkPromptSize(std::string_view prompt, std::string_view what = "the prompt");

}  // namespace sdgen::prompt

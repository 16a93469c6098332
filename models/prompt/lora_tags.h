#pragma once
// stable-diffusion-webui's extra-network tags in a prompt: "<lora:NAME>", "<lora:NAME:SCALE>",
// "<lora:NAME:TE_SCALE:UNET_SCALE>" and the named forms te=, unet= (webui's extensions-builtin/Lora). Like
// webui (modules/extra_networks.py, re_extra_net = <(\w+):([^>]+)>), every such tag is cut out of the prompt
// before it is tokenized, so the text encoder never sees it; "lyco" is read as "lora" (the old LyCORIS
// extension's tag); tags of other kinds (hypernet, ...) are removed with a warning. The prompt as written,
// tags included, is what the PNG parameters keep.
#include <string>
#include <string_view>
#include <vector>

namespace sdgen::prompt {

struct LoraTag {
  std::string name;
  float textScale = 1.f, unetScale = 1.f;
  std::string text;  // the tag as written, for messages
};

struct PromptLoras {
  std::string prompt;  // without the tags
  std::vector<LoraTag> loras;
  std::vector<std::string> warnings;
};

// Throws sdgen::Error naming the tag for a scale that is not a number, an empty name or an unknown named
// argument.
PromptLoras extractLoraTags(std::string_view prompt);

}  // namespace sdgen::prompt

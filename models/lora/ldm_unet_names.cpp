#include "models/lora/ldm_unet_names.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

namespace sdgen::lora {

namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "down_blocks.3.resnets.1.conv1" -> {3, "resnets", 1, "conv1"}; false when the name is not of that form.
struct BlockPart {
  int block = 0;
  std::string kind;  // resnets, attentions, downsamplers, upsamplers
  int index = 0;
  std::string rest;  // after "kind.index."
};
bool splitBlock(const std::string& name, std::string_view prefix, BlockPart& out) {
  if (!startsWith(name, prefix)) return false;
  size_t p = prefix.size(), dot = name.find('.', p);
  if (dot == std::string::npos) return false;
  try {
    out.block = std::stoi(name.substr(p, dot - p));
    size_t kindEnd = name.find('.', dot + 1);
    if (kindEnd == std::string::npos) return false;
    out.kind = name.substr(dot + 1, kindEnd - dot - 1);
    size_t indexEnd = name.find('.', kindEnd + 1);
    if (indexEnd == std::string::npos) return false;
    out.index = std::stoi(name.substr(kindEnd + 1, indexEnd - kindEnd - 1));
    out.rest = name.substr(indexEnd + 1);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

// A ResnetBlock2D's sub-module in LDM's ResBlock.
std::optional<std::string> resnetPart(const std::string& rest) {
  static const std::map<std::string, std::string> parts{{"norm1", "in_layers.0"},  {"conv1", "in_layers.2"},
                                                        {"time_emb_proj", "emb_layers.1"}, {"norm2", "out_layers.0"},
                                                        {"conv2", "out_layers.3"}, {"conv_shortcut", "skip_connection"}};
  auto it = parts.find(rest);
  if (it == parts.end()) return std::nullopt;
  return it->second;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ldmUnetModules(const std::vector<std::string>& diffusersNames) {
  // The levels: resnets per down level, and which up levels have transformers.
  int layersPerBlock = 0;
  std::set<int> upWithAttention;
  std::vector<std::string> modules;
  for (const std::string& n : diffusersNames) {
    if (n.size() < 7 || n.compare(n.size() - 7, 7, ".weight") != 0) continue;
    modules.push_back(n.substr(0, n.size() - 7));
    BlockPart b;
    if (splitBlock(modules.back(), "down_blocks.", b) && b.block == 0 && b.kind == "resnets")
      layersPerBlock = std::max(layersPerBlock, b.index + 1);
    if (splitBlock(modules.back(), "up_blocks.", b) && b.kind == "attentions") upWithAttention.insert(b.block);
  }
  std::vector<std::pair<std::string, std::string>> out;
  if (layersPerBlock == 0) return out;
  const int perLevel = layersPerBlock + 1;  // input blocks per down level (its resnets and a downsampler)
  static const std::map<std::string, std::string> top{
      {"conv_in", "input_blocks.0.0"},          {"time_embedding.linear_1", "time_embed.0"},
      {"time_embedding.linear_2", "time_embed.2"}, {"add_embedding.linear_1", "label_emb.0.0"},
      {"add_embedding.linear_2", "label_emb.0.2"}, {"conv_norm_out", "out.0"},
      {"conv_out", "out.2"}};
  for (const std::string& m : modules) {
    std::optional<std::string> ldm;
    BlockPart b;
    if (auto it = top.find(m); it != top.end()) {
      ldm = it->second;
    } else if (splitBlock(m, "down_blocks.", b)) {
      const int first = 1 + b.block * perLevel;
      if (b.kind == "resnets") {
        if (auto r = resnetPart(b.rest)) ldm = "input_blocks." + std::to_string(first + b.index) + ".0." + *r;
      } else if (b.kind == "attentions") {
        ldm = "input_blocks." + std::to_string(first + b.index) + ".1." + b.rest;
      } else if (b.kind == "downsamplers" && b.index == 0 && b.rest == "conv") {
        ldm = "input_blocks." + std::to_string(first + layersPerBlock) + ".0.op";
      }
    } else if (splitBlock(m, "up_blocks.", b)) {
      const int first = b.block * perLevel;
      if (b.kind == "resnets") {
        if (auto r = resnetPart(b.rest)) ldm = "output_blocks." + std::to_string(first + b.index) + ".0." + *r;
      } else if (b.kind == "attentions") {
        ldm = "output_blocks." + std::to_string(first + b.index) + ".1." + b.rest;
      } else if (b.kind == "upsamplers" && b.index == 0 && b.rest == "conv") {
        ldm = "output_blocks." + std::to_string(first + layersPerBlock) +
              (upWithAttention.count(b.block) ? ".2.conv" : ".1.conv");
      }
    }
    if (!ldm && startsWith(m, "mid_block.")) {  // no block number: resnet, transformer, resnet
      for (auto [kind, at] : {std::pair<const char*, int>{"resnets.0.", 0}, {"attentions.0.", 1}, {"resnets.1.", 2}}) {
        const std::string prefix = std::string("mid_block.") + kind;
        if (!startsWith(m, prefix)) continue;
        const std::string rest = m.substr(prefix.size());
        if (at == 1) ldm = "middle_block.1." + rest;
        else if (auto r = resnetPart(rest)) ldm = "middle_block." + std::to_string(at) + "." + *r;
      }
    }
    if (ldm) out.emplace_back(*ldm, m + ".weight");
  }
  return out;
}

}  // namespace sdgen::lora

// vae/config.json -> VaeConfig, with diffusers' AutoencoderKL.__init__ defaults for absent fields.
#include "engine/error.h"
#include "models/config/config_files.h"
#include "models/config/config_json.h"

namespace sdgen::models {

namespace {

VaeConfig fromJson(const ConfigJson& j) {
  if (j.present("_class_name") && j.string("_class_name") != "AutoencoderKL")
    j.unsupported("_class_name", "the VAE must be an AutoencoderKL");
  const std::string act = j.string("act_fn", "silu");
  if (act != "silu" && act != "swish") j.unsupported("act_fn", "the VAE's activation is SiLU (\"silu\")");
  j.refuseIfSet("latents_mean", "per-channel latent statistics (SDXL-style VAEs with latents_mean/latents_std)");
  j.refuseIfSet("latents_std", "per-channel latent statistics (SDXL-style VAEs with latents_mean/latents_std)");

  VaeConfig c;
  c.source = j.file();
  c.inChannels = j.integer("in_channels", 3);
  c.outChannels = j.integer("out_channels", 3);
  c.latentChannels = j.integer("latent_channels", 4);
  c.blockOutChannels = j.intList("block_out_channels", std::vector<int>{64});
  const size_t n = c.blockOutChannels.size();
  std::vector<std::string> down = j.stringList("down_block_types", std::vector<std::string>{"DownEncoderBlock2D"});
  std::vector<std::string> up = j.stringList("up_block_types", std::vector<std::string>{"UpDecoderBlock2D"});
  for (const std::string& t : down)
    if (t != "DownEncoderBlock2D") j.unsupported("down_block_types", "block type \"" + t + "\"; only DownEncoderBlock2D");
  for (const std::string& t : up)
    if (t != "UpDecoderBlock2D") j.unsupported("up_block_types", "block type \"" + t + "\"; only UpDecoderBlock2D");
  if (down.size() != n)
    j.fail("down_block_types", "has " + std::to_string(down.size()) + " entries but block_out_channels has " +
                                   std::to_string(n));
  if (up.size() != n)
    j.fail("up_block_types", "has " + std::to_string(up.size()) + " entries but block_out_channels has " +
                                 std::to_string(n));
  c.layersPerBlock = j.integer("layers_per_block", 1);
  c.normNumGroups = j.integer("norm_num_groups", 32);
  if (j.present("sample_size") && j.raw("sample_size").is_array()) {
    std::vector<int> hw = j.intList("sample_size");
    if (hw.size() != 2 || hw[0] != hw[1]) j.unsupported("sample_size", "only square sample sizes");
    c.sampleSize = hw[0];
  } else {
    c.sampleSize = j.integer("sample_size", 32);
  }
  c.scalingFactor = static_cast<float>(j.number("scaling_factor", 0.18215));
  if (auto shift = j.optionalNumber("shift_factor")) c.shiftFactor = static_cast<float>(*shift);
  c.forceUpcast = !j.present("force_upcast") || j.boolean("force_upcast");
  c.useQuantConv = j.boolean("use_quant_conv", true);
  c.usePostQuantConv = j.boolean("use_post_quant_conv", true);
  c.midBlockAddAttention = j.boolean("mid_block_add_attention", true);
  validateVaeConfig(c);
  return c;
}

}  // namespace

VaeConfig loadVaeConfig(const std::string& path) { return fromJson(ConfigJson::load(path)); }
VaeConfig parseVaeConfig(const std::string& json, const std::string& file) {
  return fromJson(ConfigJson::parse(json, file));
}

void validateVaeConfig(const VaeConfig& c) {
  auto fail = [&](const std::string& what) { throw Error("VAE config '" + c.source + "': " + what); };
  if (c.blockOutChannels.empty()) fail("block_out_channels is empty");
  for (auto [name, v] : {std::pair<const char*, int>{"in_channels", c.inChannels},
                         {"out_channels", c.outChannels},
                         {"latent_channels", c.latentChannels},
                         {"layers_per_block", c.layersPerBlock},
                         {"norm_num_groups", c.normNumGroups},
                         {"sample_size", c.sampleSize}})
    if (v <= 0) fail(std::string(name) + " = " + std::to_string(v) + " must be positive");
  for (size_t i = 0; i < c.blockOutChannels.size(); ++i) {
    int ch = c.blockOutChannels[i];
    if (ch <= 0 || ch % c.normNumGroups != 0)
      fail("block " + std::to_string(i) + ": " + std::to_string(ch) + " channels are not a positive multiple of " +
           "norm_num_groups " + std::to_string(c.normNumGroups));
  }
  if (!(c.scalingFactor > 0)) fail("scaling_factor must be positive");
}

}  // namespace sdgen::models

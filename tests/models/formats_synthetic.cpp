#include "tests/models/formats_synthetic.h"

#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "engine/dtype.h"
#include "models/tokenizer/bpe.h"

namespace sdgen::test {

namespace fs = std::filesystem;
using nlohmann::json;

size_t elementCount(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

std::vector<float> patternValues(const std::string& name, size_t count) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the name seeds a linear congruential sequence
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    out[i] = static_cast<float>(static_cast<int>((h >> 33) % 2048) - 1024) / 1024.0f;
  }
  return out;
}

void SafetensorsWriter::add(const std::string& name, const std::vector<int64_t>& shape,
                            const std::vector<float>& values, const std::string& dtype) {
  std::string data;
  if (dtype == "F32") {
    data.assign(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  } else {
    std::vector<uint16_t> half(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      half[i] = dtype == "F16" ? floatToHalf(values[i])
                               : static_cast<uint16_t>(std::bit_cast<uint32_t>(values[i]) >> 16);
    data.assign(reinterpret_cast<const char*>(half.data()), half.size() * 2);
  }
  entries_.push_back({name, dtype, shape, std::move(data)});
}

void SafetensorsWriter::addRaw(const std::string& name, const std::string& dtype, const std::vector<int64_t>& shape,
                               const std::string& bytes) {
  entries_.push_back({name, dtype, shape, bytes});
}

std::string SafetensorsWriter::bytes() const {
  json header = json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::string data;
  for (const Entry& e : entries_) {
    header[e.name] = {{"dtype", e.dtype}, {"shape", e.shape}, {"data_offsets", {data.size(), data.size() + e.data.size()}}};
    data += e.data;
  }
  std::string h = header.dump();
  std::string out(8, '\0');
  uint64_t n = h.size();
  std::memcpy(out.data(), &n, 8);
  return out + h + data;
}

void SafetensorsWriter::write(const std::string& path) const {
  std::string b = bytes();
  std::ofstream(path, std::ios::binary).write(b.data(), static_cast<std::streamsize>(b.size()));
}

namespace {

using Shape = std::vector<int64_t>;

// Collects the parameters of one component; `ldmPrefix` is prepended to LDM keys.
struct Params {
  std::vector<SyntheticParam>& out;
  std::string ldmPrefix;
  void add(const std::string& name, Shape shape, const std::string& ldm, Shape ldmShape = {}) {
    out.push_back({name, shape, ldmPrefix + ldm, ldmShape.empty() ? shape : ldmShape, -1});
  }
  // weight + bias of a layer whose parameter names match apart from the module path.
  void layer(const std::string& name, const std::string& ldm, Shape weight, int64_t bias) {
    add(name + ".weight", weight, ldm + ".weight");
    add(name + ".bias", {bias}, ldm + ".bias");
  }
  void norm(const std::string& name, const std::string& ldm, int64_t c) { layer(name, ldm, {c}, c); }
};

// diffusers ResnetBlock2D <- LDM ResBlock (UNet) with a time embedding of width temb.
void unetResnet(Params& p, const std::string& n, const std::string& l, int64_t cin, int64_t cout, int64_t temb) {
  p.norm(n + "norm1", l + "in_layers.0", cin);
  p.layer(n + "conv1", l + "in_layers.2", {cout, cin, 3, 3}, cout);
  p.layer(n + "time_emb_proj", l + "emb_layers.1", {cout, temb}, cout);
  p.norm(n + "norm2", l + "out_layers.0", cout);
  p.layer(n + "conv2", l + "out_layers.3", {cout, cout, 3, 3}, cout);
  if (cin != cout) p.layer(n + "conv_shortcut", l + "skip_connection", {cout, cin, 1, 1}, cout);
}

// diffusers Transformer2DModel <- LDM SpatialTransformer (same names).
void transformer(Params& p, const std::string& n, const std::string& l, int64_t c, int64_t context, bool linear) {
  Shape proj = linear ? Shape{c, c} : Shape{c, c, 1, 1};
  p.norm(n + "norm", l + "norm", c);
  p.layer(n + "proj_in", l + "proj_in", proj, c);
  const std::string t = "transformer_blocks.0.";
  for (const char* attn : {"attn1.", "attn2."}) {
    const int64_t kv = std::string(attn) == "attn1." ? c : context;
    p.add(n + t + attn + "to_q.weight", {c, c}, l + t + attn + "to_q.weight");
    p.add(n + t + attn + "to_k.weight", {c, kv}, l + t + attn + "to_k.weight");
    p.add(n + t + attn + "to_v.weight", {c, kv}, l + t + attn + "to_v.weight");
    p.layer(n + t + attn + "to_out.0", l + t + attn + "to_out.0", {c, c}, c);
  }
  for (const char* norm : {"norm1", "norm2", "norm3"}) p.norm(n + t + norm, l + t + norm, c);
  p.layer(n + t + "ff.net.0.proj", l + t + "ff.net.0.proj", {8 * c, c}, 8 * c);
  p.layer(n + t + "ff.net.2", l + t + "ff.net.2", {c, 4 * c}, c);
  p.layer(n + "proj_out", l + "proj_out", proj, c);
}

void buildUNet(SyntheticModel& m) {
  Params p{m.unet, "model.diffusion_model."};
  const std::vector<int64_t> ch = {64, 64, 128};
  const std::vector<bool> attention = {true, true, false};
  const int64_t layers = 2, n = 3, c0 = ch[0], temb = 4 * c0, context = m.textWidth;
  p.layer("conv_in", "input_blocks.0.0", {c0, 4, 3, 3}, c0);
  p.layer("time_embedding.linear_1", "time_embed.0", {temb, c0}, temb);
  p.layer("time_embedding.linear_2", "time_embed.2", {temb, temb}, temb);
  int k = 1;
  for (int i = 0; i < n; ++i) {
    const std::string d = "down_blocks." + std::to_string(i) + ".";
    for (int j = 0; j < layers; ++j, ++k) {
      const std::string in = "input_blocks." + std::to_string(k) + ".";
      int64_t cin = j > 0 ? ch[i] : (i == 0 ? c0 : ch[i - 1]);
      unetResnet(p, d + "resnets." + std::to_string(j) + ".", in + "0.", cin, ch[i], temb);
      if (attention[i]) transformer(p, d + "attentions." + std::to_string(j) + ".", in + "1.", ch[i], context, m.sd2);
    }
    if (i < n - 1) p.layer(d + "downsamplers.0.conv", "input_blocks." + std::to_string(k++) + ".0.op", {ch[i], ch[i], 3, 3}, ch[i]);
  }
  unetResnet(p, "mid_block.resnets.0.", "middle_block.0.", ch[n - 1], ch[n - 1], temb);
  transformer(p, "mid_block.attentions.0.", "middle_block.1.", ch[n - 1], context, m.sd2);
  unetResnet(p, "mid_block.resnets.1.", "middle_block.2.", ch[n - 1], ch[n - 1], temb);
  // Up block i mirrors level n-1-i; resnet j takes the previous output and one skip connection.
  k = 0;
  for (int i = 0; i < n; ++i) {
    const int64_t out = ch[n - 1 - i], prev = ch[n - 1 - std::max(i - 1, 0)], skipIn = ch[std::max<int>(n - 2 - i, 0)];
    const bool attn = attention[n - 1 - i];
    const std::string u = "up_blocks." + std::to_string(i) + ".";
    for (int j = 0; j <= layers; ++j, ++k) {
      const std::string ob = "output_blocks." + std::to_string(k) + ".";
      const int64_t resIn = j == 0 ? prev : out, skip = j == layers ? skipIn : out;
      unetResnet(p, u + "resnets." + std::to_string(j) + ".", ob + "0.", resIn + skip, out, temb);
      if (attn) transformer(p, u + "attentions." + std::to_string(j) + ".", ob + "1.", out, context, m.sd2);
      if (i < n - 1 && j == layers) p.layer(u + "upsamplers.0.conv", ob + (attn ? "2" : "1") + ".conv", {out, out, 3, 3}, out);
    }
  }
  p.norm("conv_norm_out", "out.0", c0);
  p.layer("conv_out", "out.2", {4, c0, 3, 3}, 4);
}

void vaeResnet(Params& p, const std::string& n, const std::string& l, int64_t cin, int64_t cout) {
  p.norm(n + "norm1", l + "norm1", cin);
  p.layer(n + "conv1", l + "conv1", {cout, cin, 3, 3}, cout);
  p.norm(n + "norm2", l + "norm2", cout);
  p.layer(n + "conv2", l + "conv2", {cout, cout, 3, 3}, cout);
  if (cin != cout) p.layer(n + "conv_shortcut", l + "nin_shortcut", {cout, cin, 1, 1}, cout);
}

void vaeMid(Params& p, const std::string& side, int64_t c) {
  vaeResnet(p, side + "mid_block.resnets.0.", side + "mid.block_1.", c, c);
  vaeResnet(p, side + "mid_block.resnets.1.", side + "mid.block_2.", c, c);
  const std::string n = side + "mid_block.attentions.0.", l = side + "mid.attn_1.";
  p.norm(n + "group_norm", l + "norm", c);
  for (auto [d, o] : {std::pair<const char*, const char*>{"to_q", "q"}, {"to_k", "k"}, {"to_v", "v"}, {"to_out.0", "proj_out"}}) {
    p.add(n + d + ".weight", {c, c}, l + o + ".weight", {c, c, 1, 1});  // 1x1 conv in LDM
    p.add(n + d + ".bias", {c}, l + o + ".bias");
  }
}

void buildVae(SyntheticModel& m) {
  Params p{m.vae, "first_stage_model."};
  const std::vector<int64_t> ch = {32, 64};
  const int n = 2, layers = 1, latent = 4;
  p.layer("encoder.conv_in", "encoder.conv_in", {ch[0], 3, 3, 3}, ch[0]);
  for (int i = 0; i < n; ++i) {
    const std::string d = "encoder.down_blocks." + std::to_string(i) + ".", l = "encoder.down." + std::to_string(i) + ".";
    for (int j = 0; j < layers; ++j)
      vaeResnet(p, d + "resnets." + std::to_string(j) + ".", l + "block." + std::to_string(j) + ".",
                j > 0 ? ch[i] : (i == 0 ? ch[0] : ch[i - 1]), ch[i]);
    if (i < n - 1) p.layer(d + "downsamplers.0.conv", l + "downsample.conv", {ch[i], ch[i], 3, 3}, ch[i]);
  }
  vaeMid(p, "encoder.", ch[n - 1]);
  p.norm("encoder.conv_norm_out", "encoder.norm_out", ch[n - 1]);
  p.layer("encoder.conv_out", "encoder.conv_out", {2 * latent, ch[n - 1], 3, 3}, 2 * latent);
  p.layer("quant_conv", "quant_conv", {2 * latent, 2 * latent, 1, 1}, 2 * latent);
  p.layer("post_quant_conv", "post_quant_conv", {latent, latent, 1, 1}, latent);
  p.layer("decoder.conv_in", "decoder.conv_in", {ch[n - 1], latent, 3, 3}, ch[n - 1]);
  vaeMid(p, "decoder.", ch[n - 1]);
  for (int i = 0; i < n; ++i) {
    const int64_t out = ch[n - 1 - i], prev = ch[n - 1 - std::max(i - 1, 0)];
    const std::string d = "decoder.up_blocks." + std::to_string(i) + ".", l = "decoder.up." + std::to_string(n - 1 - i) + ".";
    for (int j = 0; j <= layers; ++j)
      vaeResnet(p, d + "resnets." + std::to_string(j) + ".", l + "block." + std::to_string(j) + ".", j == 0 ? prev : out, out);
    if (i < n - 1) p.layer(d + "upsamplers.0.conv", l + "upsample.conv", {out, out, 3, 3}, out);
  }
  p.norm("decoder.conv_norm_out", "decoder.norm_out", ch[0]);
  p.layer("decoder.conv_out", "decoder.conv_out", {3, ch[0], 3, 3}, 3);
}

void buildText(SyntheticModel& m) {
  const int64_t w = m.textWidth, inner = 2 * w, layers = 2, positions = 77;
  const std::string e = "text_model.embeddings.", L = "text_model.encoder.layers.";
  if (!m.sd2) {
    Params p{m.text, "cond_stage_model.transformer."};
    auto same = [&](const std::string& name, Shape s) { p.add(name, s, name); };
    same(e + "token_embedding.weight", {m.vocabSize, w});
    same(e + "position_embedding.weight", {positions, w});
    for (int i = 0; i < layers; ++i) {
      const std::string l = L + std::to_string(i) + ".";
      for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
        same(l + "self_attn." + proj + ".weight", {w, w});
        same(l + "self_attn." + proj + ".bias", {w});
      }
      for (const char* norm : {"layer_norm1", "layer_norm2"}) {
        same(l + norm + ".weight", {w});
        same(l + norm + ".bias", {w});
      }
      same(l + "mlp.fc1.weight", {inner, w});
      same(l + "mlp.fc1.bias", {inner});
      same(l + "mlp.fc2.weight", {w, inner});
      same(l + "mlp.fc2.bias", {w});
    }
    same("text_model.final_layer_norm.weight", {w});
    same("text_model.final_layer_norm.bias", {w});
    return;
  }
  // OpenCLIP: three resblocks, of which diffusers keeps the first two (SD 2.x's penultimate-layer output).
  Params p{m.text, "cond_stage_model.model."};
  p.add(e + "token_embedding.weight", {m.vocabSize, w}, "token_embedding.weight");
  p.add(e + "position_embedding.weight", {positions, w}, "positional_embedding");
  for (int i = 0; i < layers; ++i) {
    const std::string l = L + std::to_string(i) + ".", r = "transformer.resblocks." + std::to_string(i) + ".";
    const char* qkv[] = {"q_proj", "k_proj", "v_proj"};
    for (int part = 0; part < 3; ++part) {
      m.text.push_back({l + "self_attn." + qkv[part] + ".weight", {w, w}, p.ldmPrefix + r + "attn.in_proj_weight", {3 * w, w}, part});
      m.text.push_back({l + "self_attn." + qkv[part] + ".bias", {w}, p.ldmPrefix + r + "attn.in_proj_bias", {3 * w}, part});
    }
    p.layer(l + "self_attn.out_proj", r + "attn.out_proj", {w, w}, w);
    p.norm(l + "layer_norm1", r + "ln_1", w);
    p.norm(l + "layer_norm2", r + "ln_2", w);
    p.layer(l + "mlp.fc1", r + "mlp.c_fc", {inner, w}, inner);
    p.layer(l + "mlp.fc2", r + "mlp.c_proj", {w, inner}, w);
  }
  p.norm("text_model.final_layer_norm", "ln_final", w);
  const std::string last = "cond_stage_model.model.transformer.resblocks.2.";
  for (auto [key, shape] : std::vector<std::pair<std::string, Shape>>{{"attn.in_proj_weight", {3 * w, w}},
                                                                      {"attn.in_proj_bias", {3 * w}},
                                                                      {"attn.out_proj.weight", {w, w}},
                                                                      {"attn.out_proj.bias", {w}},
                                                                      {"ln_1.weight", {w}},
                                                                      {"ln_1.bias", {w}},
                                                                      {"ln_2.weight", {w}},
                                                                      {"ln_2.bias", {w}},
                                                                      {"mlp.c_fc.weight", {inner, w}},
                                                                      {"mlp.c_fc.bias", {inner}},
                                                                      {"mlp.c_proj.weight", {w, inner}},
                                                                      {"mlp.c_proj.bias", {w}}})
    m.ldmExtras.push_back({last + key, shape});
  m.ldmExtras.push_back({"cond_stage_model.model.text_projection", {w, w}});
  m.ldmExtras.push_back({"cond_stage_model.model.logit_scale", {}});
}

void writeJson(const fs::path& path, const json& j) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << j.dump(2);
}

void writeComponent(const std::vector<SyntheticParam>& params, const fs::path& file) {
  SafetensorsWriter w;
  for (const auto& [name, values] : expectedValues(params)) {
    const SyntheticParam* p = nullptr;
    for (const SyntheticParam& q : params)
      if (q.name == name) p = &q;
    w.add(name, p->shape, values);
  }
  fs::create_directories(file.parent_path());
  w.write(file.string());
}

}  // namespace

std::map<std::string, std::vector<float>> expectedValues(const std::vector<SyntheticParam>& params) {
  std::map<std::string, std::vector<float>> out;
  for (const SyntheticParam& p : params) out[p.name] = patternValues(p.name, elementCount(p.shape));
  return out;
}

SyntheticModel syntheticModel(bool sd2, int vocabSize) {
  SyntheticModel m;
  m.sd2 = sd2;
  m.vocabSize = vocabSize;
  buildText(m);
  buildUNet(m);
  buildVae(m);
  m.ldmExtras.push_back({"model_ema.decay", {}});
  m.ldmExtras.push_back({"alphas_cumprod", {1000}});
  return m;
}

void writeLdmCheckpoint(const SyntheticModel& m, const std::string& path, const std::string& dtype) {
  // LDM tensor -> its values; fused tensors are assembled from their q/k/v parts.
  std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>> tensors;
  std::vector<std::string> order;
  for (const auto* component : {&m.text, &m.unet, &m.vae})
    for (const SyntheticParam& p : *component) {
      std::vector<float> values = patternValues(p.name, elementCount(p.shape));
      auto [it, inserted] = tensors.try_emplace(p.ldmKey, p.ldmShape, std::vector<float>(elementCount(p.ldmShape)));
      if (inserted) order.push_back(p.ldmKey);
      const size_t offset = p.part < 0 ? 0 : static_cast<size_t>(p.part) * values.size();
      std::copy(values.begin(), values.end(), it->second.second.begin() + static_cast<ptrdiff_t>(offset));
    }
  SafetensorsWriter w;
  for (const std::string& key : order) w.add(key, tensors[key].first, tensors[key].second, dtype);
  for (const auto& [key, shape] : m.ldmExtras) w.add(key, shape, patternValues(key, elementCount(shape)), dtype);
  if (!m.sd2) {  // SD 1.x checkpoints carry CLIP's position ids (an int64 buffer)
    std::string ids;
    for (int64_t i = 0; i < 77; ++i) ids.append(reinterpret_cast<const char*>(&i), 8);
    w.addRaw("cond_stage_model.transformer.text_model.embeddings.position_ids", "I64", {1, 77}, ids);
  }
  w.write(path);
}

void writeTinyTokenizer(const std::string& dir, const std::string& padToken) {
  json vocab = json::object();
  const auto& bytes = models::BpeModel::byteSymbols();
  for (size_t i = 0; i < bytes.size(); ++i) {
    vocab[bytes[i]] = i;
    vocab[bytes[i] + "</w>"] = i + bytes.size();
  }
  vocab["<|startoftext|>"] = 512;
  vocab["<|endoftext|>"] = 513;
  vocab["th"] = 514;  // one merge: the reader requires some
  fs::create_directories(dir);
  std::ofstream(fs::path(dir) / "vocab.json") << vocab.dump();
  std::ofstream(fs::path(dir) / "merges.txt") << "#version: 0.2\nt h\n";
  if (!padToken.empty())
    std::ofstream(fs::path(dir) / "special_tokens_map.json") << json{{"pad_token", padToken}}.dump();
}

void writeDiffusersFolder(const SyntheticModel& m, const std::string& dirName) {
  const fs::path dir(dirName);
  writeJson(dir / "model_index.json",
            {{"_class_name", "StableDiffusionPipeline"},
             {"_diffusers_version", "0.27.0"},
             {"feature_extractor", {"transformers", "CLIPImageProcessor"}},
             {"safety_checker", {nullptr, nullptr}},
             {"requires_safety_checker", false},
             {"scheduler", {"diffusers", m.sd2 ? "DDIMScheduler" : "PNDMScheduler"}},
             {"text_encoder", {"transformers", "CLIPTextModel"}},
             {"tokenizer", {"transformers", "CLIPTokenizer"}},
             {"unet", {"diffusers", "UNet2DConditionModel"}},
             {"vae", {"diffusers", "AutoencoderKL"}}});
  writeJson(dir / "text_encoder" / "config.json",
            {{"architectures", {"CLIPTextModel"}},
             {"model_type", "clip_text_model"},
             {"hidden_size", m.textWidth},
             {"intermediate_size", 2 * m.textWidth},
             {"num_hidden_layers", 2},
             {"num_attention_heads", m.textWidth / 64},
             {"max_position_embeddings", 77},
             {"vocab_size", m.vocabSize},
             {"hidden_act", m.sd2 ? "gelu" : "quick_gelu"},
             {"layer_norm_eps", 1e-5},
             {"pad_token_id", 1},
             {"projection_dim", 32},
             {"torch_dtype", "float32"}});
  const int imageSize = m.sd2 ? 768 : 512;
  json heads = m.sd2 ? json{1, 1, 2} : json(8);
  writeJson(dir / "unet" / "config.json",
            {{"_class_name", "UNet2DConditionModel"},
             {"act_fn", "silu"},
             {"attention_head_dim", heads},
             {"block_out_channels", {64, 64, 128}},
             {"center_input_sample", false},
             {"cross_attention_dim", m.textWidth},
             {"down_block_types", {"CrossAttnDownBlock2D", "CrossAttnDownBlock2D", "DownBlock2D"}},
             {"downsample_padding", 1},
             {"dual_cross_attention", false},
             {"flip_sin_to_cos", true},
             {"freq_shift", 0},
             {"in_channels", 4},
             {"layers_per_block", 2},
             {"mid_block_scale_factor", 1},
             {"norm_eps", 1e-5},
             {"norm_num_groups", 32},
             {"num_class_embeds", nullptr},
             {"only_cross_attention", false},
             {"out_channels", 4},
             {"sample_size", imageSize / 2},
             {"up_block_types", {"UpBlock2D", "CrossAttnUpBlock2D", "CrossAttnUpBlock2D"}},
             {"upcast_attention", m.sd2},
             {"use_linear_projection", m.sd2}});
  writeJson(dir / "vae" / "config.json",
            {{"_class_name", "AutoencoderKL"},
             {"act_fn", "silu"},
             {"block_out_channels", {32, 64}},
             {"down_block_types", {"DownEncoderBlock2D", "DownEncoderBlock2D"}},
             {"in_channels", 3},
             {"latent_channels", 4},
             {"layers_per_block", 1},
             {"norm_num_groups", 32},
             {"out_channels", 3},
             {"sample_size", imageSize},
             {"up_block_types", {"UpDecoderBlock2D", "UpDecoderBlock2D"}}});
  json scheduler = {{"_class_name", m.sd2 ? "DDIMScheduler" : "PNDMScheduler"},
                    {"beta_end", 0.012},
                    {"beta_schedule", "scaled_linear"},
                    {"beta_start", 0.00085},
                    {"clip_sample", false},
                    {"num_train_timesteps", 1000},
                    {"set_alpha_to_one", false},
                    {"skip_prk_steps", true},
                    {"steps_offset", 1},
                    {"trained_betas", nullptr}};
  if (m.sd2) scheduler["prediction_type"] = "v_prediction";
  writeJson(dir / "scheduler" / "scheduler_config.json", scheduler);
  writeComponent(m.text, dir / "text_encoder" / "model.safetensors");
  writeComponent(m.unet, dir / "unet" / "diffusion_pytorch_model.safetensors");
  writeComponent(m.vae, dir / "vae" / "diffusion_pytorch_model.safetensors");
  writeTinyTokenizer((dir / "tokenizer").string(), m.sd2 ? "!" : "<|endoftext|>");
}

void expectSameConfig(const models::ClipTextConfig& e, const models::ClipTextConfig& a) {
  EXPECT_EQ(e.vocabSize, a.vocabSize);
  EXPECT_EQ(e.hiddenSize, a.hiddenSize);
  EXPECT_EQ(e.intermediateSize, a.intermediateSize);
  EXPECT_EQ(e.numHiddenLayers, a.numHiddenLayers);
  EXPECT_EQ(e.numAttentionHeads, a.numAttentionHeads);
  EXPECT_EQ(e.maxPositionEmbeddings, a.maxPositionEmbeddings);
  EXPECT_EQ(e.hiddenAct, a.hiddenAct);
  EXPECT_EQ(e.layerNormEps, a.layerNormEps);
  EXPECT_EQ(e.padTokenId, a.padTokenId);
}

void expectSameConfig(const models::UNetConfig& e, const models::UNetConfig& a) {
  EXPECT_EQ(e.inChannels, a.inChannels);
  EXPECT_EQ(e.outChannels, a.outChannels);
  EXPECT_EQ(e.sampleSize, a.sampleSize);
  EXPECT_EQ(e.blockOutChannels, a.blockOutChannels);
  EXPECT_EQ(e.downBlockTypes, a.downBlockTypes);
  EXPECT_EQ(e.upBlockTypes, a.upBlockTypes);
  EXPECT_EQ(e.midBlockType, a.midBlockType);
  EXPECT_EQ(e.layersPerBlock, a.layersPerBlock);
  EXPECT_EQ(e.attentionHeads, a.attentionHeads);
  EXPECT_EQ(e.transformerLayersPerBlock, a.transformerLayersPerBlock);
  EXPECT_EQ(e.crossAttentionDim, a.crossAttentionDim);
  EXPECT_EQ(e.useLinearProjection, a.useLinearProjection);
  EXPECT_EQ(e.upcastAttention, a.upcastAttention);
  EXPECT_EQ(e.normNumGroups, a.normNumGroups);
  EXPECT_EQ(e.normEps, a.normEps);
  EXPECT_EQ(e.flipSinToCos, a.flipSinToCos);
  EXPECT_EQ(e.freqShift, a.freqShift);
  EXPECT_EQ(e.downsamplePadding, a.downsamplePadding);
  EXPECT_EQ(e.convInKernel, a.convInKernel);
  EXPECT_EQ(e.convOutKernel, a.convOutKernel);
}

void expectSameConfig(const models::VaeConfig& e, const models::VaeConfig& a) {
  EXPECT_EQ(e.inChannels, a.inChannels);
  EXPECT_EQ(e.outChannels, a.outChannels);
  EXPECT_EQ(e.latentChannels, a.latentChannels);
  EXPECT_EQ(e.blockOutChannels, a.blockOutChannels);
  EXPECT_EQ(e.layersPerBlock, a.layersPerBlock);
  EXPECT_EQ(e.normNumGroups, a.normNumGroups);
  EXPECT_EQ(e.sampleSize, a.sampleSize);
  EXPECT_EQ(e.scalingFactor, a.scalingFactor);
  EXPECT_EQ(e.shiftFactor, a.shiftFactor);
  EXPECT_EQ(e.useQuantConv, a.useQuantConv);
  EXPECT_EQ(e.usePostQuantConv, a.usePostQuantConv);
  EXPECT_EQ(e.midBlockAddAttention, a.midBlockAddAttention);
}

void expectSameConfig(const models::SchedulerFile& e, const models::SchedulerFile& a) {
  EXPECT_EQ(e.fields, a.fields);
  EXPECT_EQ(e.className, a.className);
}

void expectSameWeights(const models::WeightSource& expected, const models::WeightSource& actual) {
  auto weightNames = [](const models::WeightSource& s) {
    std::vector<std::string> names;
    for (const std::string& n : s.names())
      if (!n.ends_with("position_ids")) names.push_back(n);
    return names;
  };
  const std::vector<std::string> names = weightNames(expected);
  EXPECT_EQ(names, weightNames(actual)) << expected.describe() << " vs " << actual.describe();
  size_t compared = 0;
  for (const std::string& name : names) {
    if (!actual.contains(name)) {
      ADD_FAILURE() << "'" << name << "' is missing from " << actual.describe();
      continue;
    }
    const std::vector<int64_t> shape = expected.shape(name);
    ASSERT_EQ(shape, actual.shape(name)) << name;
    const std::vector<float> e = expected.read(name, shape), a = actual.read(name, shape);
    ASSERT_EQ(e.size(), a.size()) << name;
    size_t mismatches = 0;
    for (size_t i = 0; i < e.size(); ++i) mismatches += e[i] != a[i];
    EXPECT_EQ(mismatches, 0u) << "'" << name << "' differs in " << mismatches << " of " << e.size() << " values";
    ++compared;
  }
  EXPECT_GT(compared, 0u);
}

}  // namespace sdgen::test

// sdgen_model_check: loads a model from one or more layouts (diffusers folder, single-file LDM checkpoint) and
// compares its text encoder, UNet and VAE decoder with reference outputs written by
// tests/reference/make_sd15_random.py (diffusers/transformers on the same weights), in fp32 and fp16; it also
// times the replayed UNet step and reports its launches and peak device memory. Exit status 1 when a component
// is outside its tolerance. SDXL references (tests/reference/make_sdxl_random.py: they hold text_encoder_2.*)
// check both text encoders' hidden_states[-2] and the pooled projection, the UNet with its text_time added
// conditioning, and the VAE decoder in fp32 where its config says force_upcast (as the pipeline runs it).
//
//   sdgen_model_check --refs DIR/sd15_random --model PATH [--model PATH ...] [--config DIR]
//                     [--precision fp32|fp16|both] [--repetitions N] [--json FILE] [--no-autotune] [--retune]
//
// The UNet's and the VAE's convolutions are planned as sdgen plans them: by the on-device autotune (ops::ConvTuner,
// on for GPUs with timestamps, its cache in SDGEN_CACHE_DIR) unless --no-autotune, which leaves them to the rule;
// --retune measures again instead of reading the cache.
// Sessions before 41 timed the step with the rule only (this tool had no tuner).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "app/conv_tune_report.h"
#include "engine/context.h"
#include "engine/error.h"
#include "models/formats/model_files.h"
#include "models/safetensors.h"
#include "tests/model_check/component_runs.h"
#include "tests/models/network_fixture.h"

namespace sdgen::check {
namespace {

struct Options {
  std::string refs;  // prefix: <refs>.fp32.safetensors, <refs>.fp16.safetensors, <refs>.json
  std::vector<std::string> models;
  std::string configPath;
  std::vector<DType> precisions{DType::F32, DType::F16};
  int repetitions = 30;
  std::string json;
  bool noAutotune = false, retune = false;
};

[[noreturn]] void usage(const std::string& message) {
  std::cerr << "sdgen_model_check: " << message
            << "\nusage: sdgen_model_check --refs PREFIX --model PATH [--model PATH ...] [--config DIR]"
               " [--precision fp32|fp16|both] [--repetitions N] [--json FILE] [--no-autotune] [--retune]\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--refs") o.refs = value();
    else if (a == "--model") o.models.push_back(value());
    else if (a == "--config") o.configPath = value();
    else if (a == "--json") o.json = value();
    else if (a == "--no-autotune") o.noAutotune = true;
    else if (a == "--retune") o.retune = true;
    else if (a == "--repetitions") {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 0 || n > 100000)
        usage("--repetitions: expected an integer from 0 to 100000, got '" + v + "'");
      o.repetitions = static_cast<int>(n);
    }
    else if (a == "--precision") {
      std::string p = value();
      if (p == "fp32") o.precisions = {DType::F32};
      else if (p == "fp16") o.precisions = {DType::F16};
      else if (p == "both") o.precisions = {DType::F32, DType::F16};
      else usage("--precision: expected fp32, fp16 or both, got '" + p + "'");
    } else usage("unknown option '" + a + "'");
  }
  if (o.refs.empty() || o.models.empty()) usage("--refs and --model are required");
  return o;
}

// The tolerances, relative to the reference's scale: fp32 1e-3, fp16 storage 1e-2.
double tolerance(DType d) { return d == DType::F32 ? 1e-3 : 1e-2; }
const char* name(DType d) { return d == DType::F32 ? "fp32" : "fp16"; }

int run(const Options& o) {
  // The fp32 reference (torch, TF32 off) is the yardstick for both precisions; the fp16 reference (the model cast
  // with .half()) is reported next to it, to show how far fp16 arithmetic itself moves the result.
  auto ref32 = models::SafetensorsFile::open(o.refs + ".fp32.safetensors");
  auto ref16 = models::SafetensorsFile::open(o.refs + ".fp16.safetensors");
  auto t = [](const models::SafetensorsFile& f, const char* n) { return test::fixtureTensor(f, n); };
  const bool sdxl = ref32.find("text_encoder_2.ids") != nullptr;
  test::FixtureTensor ids = t(ref32, "text_encoder.ids");
  test::FixtureTensor sample = t(ref32, "unet.sample"), context = t(ref32, "unet.context");
  test::FixtureTensor pred = t(ref32, "unet.noise_pred"), latents = t(ref32, "vae.latents");
  test::FixtureTensor decoded = t(ref32, "vae.decoded");
  const std::vector<float> pred16 = t(ref16, "unet.noise_pred").values, decoded16 = t(ref16, "vae.decoded").values;
  std::optional<AddedConditioning> added;
  if (sdxl) added = AddedConditioning{t(ref32, "unet.text_embeds").values, t(ref32, "unet.time_ids").values};
  nlohmann::json meta = nlohmann::json::parse(std::ifstream(o.refs + ".json"));
  const float timestep = meta.at("timestep").get<float>();

  Context ctx;
  std::cout << "device: " << ctx.info().name << "\n";
  ops::ConvTuneSettings tuneSettings;
  if (o.noAutotune) tuneSettings.mode = ops::ConvTuneSettings::Mode::Off;
  tuneSettings.retune = o.retune;
  ops::ConvTuner tuner(ctx, tuneSettings);  // outlives every component's weights, which point to it
  nlohmann::json report{{"device", ctx.info().name}, {"refs", o.refs}, {"results", nlohmann::json::array()}};
  bool ok = true;
  for (const std::string& path : o.models) {
    models::OpenOptions opts;
    if (path.find(".safetensors") != std::string::npos) opts.configPath = o.configPath;
    models::ModelFiles m = models::openModel(path, opts);
    std::cout << "model " << path << " (" << models::modelSourceKindName(m.kind) << ", " << m.architecture << ")\n";
    for (DType dt : o.precisions) {
      auto check = [&](const char* component, const std::vector<float>& got, const std::vector<float>& want,
                       const std::vector<float>& want16) {
        const double err = test::relativeError(got, want), err16 = test::relativeError(got, want16);
        const bool pass = std::isfinite(err) && err <= tolerance(dt);
        ok = ok && pass;
        std::printf("  %-5s %-13s rel err vs torch fp32 %.3e (limit %.0e) vs torch fp16 %.3e  %s\n", name(dt),
                    component, err, tolerance(dt), err16, pass ? "ok" : "FAIL");
        return nlohmann::json{{"model", path}, {"precision", name(dt)}, {"component", component},
                              {"rel_err_vs_fp32", err}, {"rel_err_vs_fp16", err16}, {"limit", tolerance(dt)},
                              {"pass", pass}};
      };
      if (sdxl) {
        const SdxlTextOutputs te = runSdxlTextEncoders(ctx, m, dt, ids.values, t(ref32, "text_encoder_2.ids").values,
                                                       ids.shape[0], ids.shape[1]);
        for (const auto& [component, got, key] :
             {std::tuple{"text_encoder", &te.penultimate, "text_encoder.penultimate"},
              std::tuple{"text_encoder_2", &te.penultimate2, "text_encoder_2.penultimate"},
              std::tuple{"text_encoder_2 last", &te.last2, "text_encoder_2.last_hidden_state"},
              std::tuple{"text_embeds", &te.textEmbeds2, "text_encoder_2.text_embeds"}})
          report["results"].push_back(check(component, *got, t(ref32, key).values, t(ref16, key).values));
      } else {
        auto te = runTextEncoder(ctx, m, dt, ids.values, ids.shape[0], ids.shape[1]);
        report["results"].push_back(check("text_encoder", te.values, t(ref32, "text_encoder.last_hidden_state").values,
                                          t(ref16, "text_encoder.last_hidden_state").values));
      }
      auto un = runUNet(ctx, m, dt, sample.values, sample.shape, context.values, context.shape, timestep,
                        o.repetitions, added ? &*added : nullptr, &tuner);
      nlohmann::json r = check("unet", un.values, pred.values, pred16);
      const StepCost& c = un.cost;
      std::printf("  %-5s unet step     batch %lld: %zu launches, median %.3f ms (p10 %.3f, p90 %.3f, %d runs), "
                  "GPU sum %.3f ms; weights %.1f MiB, peak device memory %.1f MiB; %zu barriers\n",
                  name(dt), static_cast<long long>(sample.shape[0]), c.launches, c.medianMs, c.p10Ms, c.p90Ms,
                  c.repetitions, c.gpuMs, c.weightBytes / 1048576.0, c.peakDeviceBytes / 1048576.0, c.barriers);
      if (c.repetitions > 0) {
        std::printf("  %-5s unet context  K/V projections, once per image before the steps: %zu launches, "
                    "median %.3f ms\n", name(dt), c.contextLaunches, c.contextMedianMs);
        if (c.spanMedianMs > 0)
          std::printf("  %-5s unet step GPU time (timestamps at its start and end): median %.3f ms (p10 %.3f, "
                      "p90 %.3f, %d runs)\n", name(dt), c.spanMedianMs, c.spanP10Ms, c.spanP90Ms, c.repetitions);
      }
      r["step"] = {{"launches", c.launches}, {"barriers", c.barriers}, {"median_ms", c.medianMs},
                   {"p10_ms", c.p10Ms}, {"p90_ms", c.p90Ms}, {"repetitions", c.repetitions}, {"gpu_sum_ms", c.gpuMs},
                   {"weight_bytes", c.weightBytes},
                   {"peak_device_bytes", c.peakDeviceBytes}, {"context_kv_launches", c.contextLaunches},
                   {"context_kv_median_ms", c.contextMedianMs}, {"gpu_span_median_ms", c.spanMedianMs},
                   {"gpu_span_p10_ms", c.spanP10Ms}, {"gpu_span_p90_ms", c.spanP90Ms}};
      report["results"].push_back(r);
      // A force_upcast VAE (SDXL's) decodes in fp32 in fp16 pipelines too (TextToImage does the same).
      const DType vaeDtype = sdxl && m.vaeConfig.forceUpcast ? DType::F32 : dt;
      auto vae = runVaeDecoder(ctx, m, vaeDtype, latents.values, latents.shape, &tuner);
      report["results"].push_back(check("vae_decoder", vae.values, decoded.values, decoded16));
      if (ref32.find("vae.image")) {  // references written before the encoder check have none
        test::FixtureTensor image = t(ref32, "vae.image");
        auto enc = runVaeEncoder(ctx, m, dt, image.values, image.shape, &tuner);
        report["results"].push_back(check("vae_encoder", enc.values, t(ref32, "vae.encoded_mean").values,
                                          t(ref16, "vae.encoded_mean").values));
      }
    }
  }
  std::fputs(app::formatConvTuneSummary(tuner).c_str(), stdout);  // as sdgen -v reports it
  app::printConvTuneWarnings(tuner, stderr);
  const ops::ConvTuneStats st = tuner.stats();
  report["conv_autotune"] = {{"enabled", st.enabled}, {"tuned", st.tuned}, {"from_cache", st.fromCache},
                             {"seconds", st.seconds}, {"launches", st.launches}};
  if (!o.json.empty()) std::ofstream(o.json) << report.dump(1) << "\n";
  std::cout << (ok ? "all components within tolerance\n" : "FAILED: a component is outside its tolerance\n");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace sdgen::check

int main(int argc, char** argv) {
  try {
    return sdgen::check::run(sdgen::check::parse(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "sdgen_model_check: " << e.what() << "\n";
    return 1;
  }
}

#include "app/serve/webui_json.h"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "app/png_writer.h"
#include "app/serve/base64.h"
#include "app/serve/img2img_request.h"
#include "app/serve/infotext.h"
#include "app/serve/json_body.h"

namespace sdgen::serve {

using nlohmann::json;

namespace {

// webui's job_timestamp: local time as YYYYmmddHHMMSS.
std::string jobTimestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &tm);
  return buf;
}

}  // namespace

json imagesResponse(const Job& job, const Job::State& state) {
  const ImageRequest& r = job.request;
  json images = json::array(), seeds = json::array(), infotexts = json::array();
  for (const auto& image : state.images) {
    if (r.sendImages) images.push_back(base64Encode(image.png));
    seeds.push_back(image.seed);
    infotexts.push_back(image.infotext);
  }
  const auto n = static_cast<size_t>(state.images.size());
  json info = {
      {"prompt", r.prompt},
      {"all_prompts", std::vector<std::string>(n, r.prompt)},
      {"negative_prompt", r.negativePrompt},
      {"all_negative_prompts", std::vector<std::string>(n, r.negativePrompt)},
      {"seed", job.firstSeed},
      {"all_seeds", seeds},
      {"subseed", -1},
      {"all_subseeds", std::vector<int>(n, -1)},
      {"subseed_strength", 0},
      {"width", r.width},
      {"height", r.height},
      {"sampler_name", sampling::samplerDisplayName(r.sampler, r.karras)},
      {"cfg_scale", decimalOf(r.cfgScale)},
      {"steps", r.steps},
      {"batch_size", r.batchSize},
      {"restore_faces", false},
      {"face_restoration_model", nullptr},
      {"sd_model_name", r.model.modelName},
      {"sd_model_hash", nullptr},
      {"sd_vae_name", nullptr},
      {"sd_vae_hash", nullptr},
      {"seed_resize_from_w", -1},
      {"seed_resize_from_h", -1},
      {"denoising_strength", r.img2img ? json(decimalOf(r.img2img->strength)) : json(nullptr)},
      {"extra_generation_params", json::object()},
      {"index_of_first_image", 0},
      {"infotexts", infotexts},
      {"styles", json::array()},
      {"job_timestamp", jobTimestamp()},
      {"clip_skip", r.clipSkip},
      {"is_using_inpainting_conditioning", false},
      {"version", std::string("sdgen ") + SDGEN_VERSION},
      {"sdgen_engine", state.engine},
      {"sdgen_job", job.id},
      {"sdgen_outcome", outcomeName(state.outcome)},
  };
  return {{"images", images}, {"parameters", requestParameters(r)}, {"info", dumpJson(info)}};
}

json progressResponse(std::vector<EngineStatus> engines, size_t queued, bool skipCurrentImage) {
  json engineList = json::array();
  const EngineStatus* oldest = nullptr;
  for (const auto& e : engines) {
    engineList.push_back({{"engine", e.index},
                          {"device", e.device},
                          {"job", e.job ? json(e.job->id) : json(nullptr)},
                          {"phase", e.progress.phase},
                          {"image", e.progress.image},
                          {"images", e.progress.images},
                          {"step", e.progress.step},
                          {"steps", e.progress.steps},
                          {"it_per_sec", e.progress.itPerSec}});
    if (e.job && (!oldest || e.job->created < oldest->job->created)) oldest = &e;
  }
  json sdgen = {{"queued", queued}, {"engines", engineList}};
  json state = {{"skipped", false},          {"interrupted", false}, {"stopping_generation", false},
                {"job", ""},                 {"job_count", 0},       {"job_timestamp", "0"},
                {"job_no", 0},               {"sampling_step", 0},   {"sampling_steps", 0}};
  if (!oldest) {
    return {{"progress", 0}, {"eta_relative", 0}, {"state", state}, {"current_image", nullptr},
            {"textinfo", nullptr}, {"sdgen", sdgen}};
  }
  const auto& p = oldest->progress;
  const int jobCount = std::max(oldest->job->request.images(), 1);
  const int jobNo = std::max(p.image - 1, 0);
  state["job"] = std::string(oldest->job->request.img2img ? "img2img-" : "txt2img-") + std::to_string(oldest->job->id);
  state["job_count"] = jobCount;
  state["job_no"] = jobNo;
  state["sampling_step"] = p.step;
  state["sampling_steps"] = p.steps;
  state["interrupted"] = oldest->job->cancelRequested();
  // webui's formula (api.py progressapi): 0.01 so that the ETA never divides by zero.
  double progress = 0.01 + double(jobNo) / jobCount;
  if (p.steps > 0) progress += 1.0 / jobCount * p.step / p.steps;
  const auto started = oldest->job->state().started;
  const double elapsed = std::chrono::duration<double>(Job::Clock::now() - started).count();
  const double eta = elapsed / progress - elapsed;
  json currentImage = nullptr;
  if (!skipCurrentImage && oldest->preview && !oldest->preview->rgb.empty()) {
    const auto& pv = *oldest->preview;
    currentImage = base64Encode(app::encodePng(pv.width, pv.height, pv.rgb, {}));
  }
  return {{"progress", std::min(progress, 1.0)}, {"eta_relative", eta}, {"state", state},
          {"current_image", currentImage}, {"textinfo", nullptr}, {"sdgen", sdgen}};
}

json sdModelsResponse(const std::vector<ModelEntry>& models) {
  json list = json::array();
  for (const auto& m : models)
    list.push_back({{"title", m.title}, {"model_name", m.modelName}, {"hash", nullptr}, {"sha256", nullptr},
                    {"filename", m.path}, {"config", nullptr}});
  return list;
}

json optionsResponse(const ModelEntry& current, int clipSkip) {
  return {{"sd_model_checkpoint", current.title},
          {"sd_checkpoint_hash", nullptr},
          {"CLIP_stop_at_last_layers", clipSkip},
          {"samples_format", "png"},
          {"sdgen_version", SDGEN_VERSION}};
}

json pngInfoResponse(const std::vector<app::PngText>& texts) {
  std::string info;
  json items = json::object();
  for (const auto& t : texts) {
    if (t.keyword == "parameters" && info.empty()) info = t.text;
    else if (!t.compressed) items[t.keyword] = t.text;
  }
  return {{"info", info}, {"items", items}, {"parameters", info.empty() ? json::object() : parseInfotext(info)}};
}

json errorBody(const std::string& error, const std::string& detail) {
  return {{"error", error}, {"detail", detail}, {"body", ""}, {"errors", detail}};
}

}  // namespace sdgen::serve

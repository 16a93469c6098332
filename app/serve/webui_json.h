#pragma once
// The JSON bodies of webui's responses (modules/api/models.py, api.py), built from sdgen's state: txt2img's
// images/parameters/info (txt2img and img2img), progress, sd-models, options, png-info, and webui's error body.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/png_chunks.h"
#include "app/serve/engine.h"
#include "app/serve/job.h"
#include "app/serve/model_registry.h"

namespace sdgen::serve {

// txt2img's and img2img's {"images": [base64 PNG...], "parameters": {...}, "info": "<JSON text>"}; info as webui's
// Processed.js(): seed, all_seeds, infotexts, ...; sdgen adds "sdgen_engine" (which engine served the job),
// "sdgen_job" and "sdgen_outcome".
nlohmann::json imagesResponse(const Job& job, const Job::State& state);

// GET /sdapi/v1/progress. Several engines: the oldest running job is reported (webui has one), every engine
// and the queue length are listed under "sdgen".
nlohmann::json progressResponse(std::vector<EngineStatus> engines, size_t queued, bool skipCurrentImage);

nlohmann::json sdModelsResponse(const std::vector<ModelEntry>& models);

// GET /sdapi/v1/options: the options sdgen has (sd_model_checkpoint, CLIP_stop_at_last_layers, ...).
nlohmann::json optionsResponse(const ModelEntry& current, int clipSkip);

// POST /sdapi/v1/png-info: {"info": parameters text, "items": other text chunks, "parameters": parsed}.
nlohmann::json pngInfoResponse(const std::vector<app::PngText>& texts);

// webui's error body for non-validation errors: {"error", "detail", "body", "errors"}.
nlohmann::json errorBody(const std::string& error, const std::string& detail);

}  // namespace sdgen::serve

// The parts of sdgen serve that need neither a socket nor a device: base64, bounded JSON parsing, txt2img
// validation (webui's fields, defaults and error shape), the infotext parser against the PNG writer's text,
// the bounded job queue, the engines' model cache, and the command line.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "app/cli_options.h"
#include "app/generation_params.h"
#include "app/model_cache.h"
#include "app/serve/base64.h"
#include "app/serve/infotext.h"
#include "app/serve/job_queue.h"
#include "app/serve/json_body.h"
#include "app/serve/serve_options.h"
#include "app/serve/txt2img_request.h"

namespace sdgen::serve {
namespace {

using nlohmann::json;

TEST(ServeBase64, RoundTripsEveryLength) {
  std::vector<uint8_t> bytes;
  for (int n = 0; n < 20; ++n) {
    const std::string text = base64Encode(bytes);
    EXPECT_EQ(text.size() % 4, 0u);
    auto back = base64Decode(text, 1000);
    ASSERT_TRUE(back) << n;
    EXPECT_EQ(*back, bytes);
    bytes.push_back(static_cast<uint8_t>(n * 37 + 11));
  }
  EXPECT_EQ(base64Encode(std::vector<uint8_t>{'M', 'a'}), "TWE=");
}

TEST(ServeBase64, RejectsBadInputAndBoundsOutput) {
  EXPECT_FALSE(base64Decode("TW!=", 100));
  EXPECT_FALSE(base64Decode("TWE=TWE=", 100));  // data after padding
  EXPECT_FALSE(base64Decode("T", 100));         // a lone character encodes no byte
  EXPECT_TRUE(base64Decode("TW\nE=", 100));    // line breaks are allowed
  EXPECT_FALSE(base64Decode("TWFu", 2));        // 3 bytes > limit
}

TEST(ServeJsonBody, BoundsDepthAndReportsWhere) {
  EXPECT_EQ(parseJsonBody(""), json::object());
  EXPECT_EQ(parseJsonBody(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']')).size(), 1u);
  try {
    parseJsonBody(std::string(100000, '['));
    FAIL() << "no error";
  } catch (const ValidationFailed& e) {
    EXPECT_NE(e.errors()[0].msg.find("nested deeper than 32"), std::string::npos);
  }
  try {
    parseJsonBody(R"({"a": )" + std::string(5000, 'x'));
    FAIL() << "no error";
  } catch (const ValidationFailed& e) {
    EXPECT_EQ(e.errors()[0].type, "json_invalid");
    EXPECT_LT(validationErrorBody(e.errors()).dump().size(), 600u);  // the long token is not echoed whole
  }
}

// Finding 3 of issue 24 (fuzz_http_request, docs/reliability.md): a number beyond double's range made nlohmann
// throw out_of_range, which escaped the body parser as an unexpected exception instead of a 422.
TEST(ServeJsonBody, NumberOverflowIsAValidationError) {
  try {
    parseJsonBody(R"({"prompt": "x", "width": 1e400})");
    FAIL() << "no error";
  } catch (const ValidationFailed& e) {
    EXPECT_EQ(e.errors()[0].type, "json_invalid");
    EXPECT_NE(e.errors()[0].msg.find("number overflow"), std::string::npos) << e.errors()[0].msg;
  }
}

class ServeTxt2Img : public ::testing::Test {
 protected:
  ModelRegistry models{"", SDGEN_SOURCE_DIR "/tests/data"};  // the built-in model (with sdgen.json defaults)
  RequestLimits limits;

  ImageRequest parse(const std::string& body) { return parseTxt2ImgRequest(json::parse(body), models, limits, 1); }
  std::vector<FieldError> errors(const std::string& body) {
    try {
      parse(body);
    } catch (const ValidationFailed& e) {
      return e.errors();
    }
    return {};
  }
};

TEST_F(ServeTxt2Img, MissingFieldsTakeTheModelDefaultsUnknownFieldsAreIgnored) {
  auto r = parse(R"({"prompt": "a cat", "eta": 1.0, "not_a_webui_field": {"x": 1}, "sampler_name": null})");
  EXPECT_EQ(r.prompt, "a cat");
  EXPECT_EQ(r.width, 64);  // models/builtin/sdgen-tiny/sdgen.json
  EXPECT_EQ(r.steps, 12);
  EXPECT_EQ(r.sampler, sampling::SamplerKind::EulerAncestral);
  EXPECT_FALSE(r.seed);
  EXPECT_EQ(r.model.title, "sdgen-tiny");
  EXPECT_EQ(r.images(), 1);
}

TEST_F(ServeTxt2Img, WebuiFields) {
  auto r = parse(R"({"seed": 18446744073709551615, "steps": 3.0, "width": 32, "height": 16, "batch_size": 2,
                     "n_iter": 3, "sampler_name": "DPM++ 2M Karras", "cfg_scale": 5.5,
                     "override_settings": {"sd_model_checkpoint": "tiny-sd1", "CLIP_stop_at_last_layers": 2}})");
  EXPECT_EQ(*r.seed, 18446744073709551615ull);
  EXPECT_EQ(r.steps, 3);
  EXPECT_EQ(r.images(), 6);
  EXPECT_EQ(r.sampler, sampling::SamplerKind::DpmPP2M);
  EXPECT_TRUE(r.karras);
  EXPECT_FLOAT_EQ(r.cfgScale, 5.5f);
  EXPECT_EQ(r.model.title, "tiny-sd1");
  EXPECT_EQ(r.width, 32);  // tiny-sd1 has no sdgen.json; given anyway
  EXPECT_EQ(r.clipSkip, 2);
  EXPECT_FALSE(parse(R"({"seed": -1})").seed);
  EXPECT_TRUE(parse(R"({"sampler_index": "k_euler", "scheduler": "karras"})").karras);
  // The samplers of issue 21 under webui's names and aliases, and its exponential / SGM Uniform schedules.
  const std::pair<const char*, sampling::SamplerKind> names[] = {
      {"DPM++ 2M SDE", sampling::SamplerKind::DpmPP2MSde}, {"k_dpmpp_2m_sde", sampling::SamplerKind::DpmPP2MSde},
      {"DPM2 a", sampling::SamplerKind::Dpm2Ancestral},     {"k_dpm_2", sampling::SamplerKind::Dpm2},
      {"LMS", sampling::SamplerKind::Lms},                  {"UniPC", sampling::SamplerKind::UniPC},
      {"LCM", sampling::SamplerKind::Lcm},                  {"Heun", sampling::SamplerKind::Heun},
      {"DPM++ 2S a", sampling::SamplerKind::DpmPP2SAncestral}, {"DPM++ SDE", sampling::SamplerKind::DpmPPSde}};
  for (const auto& [name, kind] : names)
    EXPECT_EQ(parse(json{{"sampler_name", name}}.dump()).sampler, kind) << name;
  EXPECT_TRUE(parse(R"({"sampler_name": "DPM++ SDE Karras"})").karras);
  EXPECT_TRUE(parse(R"({"sampler_name": "Heun", "scheduler": "exponential"})").exponential);
  EXPECT_TRUE(parse(R"({"sampler_name": "Euler", "scheduler": "SGM Uniform"})").sgmUniform);
}

// sdgen's SDXL micro-conditioning fields: [width, height] / [x, y] pairs, echoed in the parameters; bad pairs and
// a negative size without the other are reported per field.
TEST_F(ServeTxt2Img, SdxlMicroConditioningFields) {
  auto r = parse(R"({"original_size": [2048, 1536], "crop": [0, 128], "target_size": [1024, 1024],
                     "negative_original_size": [512, 512], "negative_target_size": [1024, 1024]})");
  EXPECT_EQ(r.micro.originalSize, (std::pair{2048, 1536}));
  EXPECT_EQ(r.micro.cropTopLeft, (std::pair{0, 128}));
  EXPECT_EQ(r.micro.targetSize, (std::pair{1024, 1024}));
  EXPECT_EQ(r.micro.negativeOriginalSize, (std::pair{512, 512}));
  EXPECT_FALSE(r.micro.negativeCropTopLeft);
  const json p = requestParameters(r);
  EXPECT_EQ(p.at("crop"), json::array({0, 128}));
  EXPECT_FALSE(p.contains("negative_crop"));
  EXPECT_EQ(parse("{}").micro, pipeline::SdxlMicroConditioning{});
  auto e = errors(R"({"original_size": [2048], "crop": [0, -1], "target_size": "1024,1024",
                      "negative_target_size": [8, 8.5]})");
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].loc, (std::vector<json>{"body", "original_size"}));
  EXPECT_EQ(e[0].msg, "original_size: expected [width, height], two integers from 1 to 8192");
  EXPECT_NE(e[1].msg.find("element 1 is -1"), std::string::npos) << e[1].msg;
  EXPECT_EQ(e[2].loc, (std::vector<json>{"body", "target_size"}));
  EXPECT_EQ(e[3].loc, (std::vector<json>{"body", "negative_target_size"}));
  EXPECT_NE(e[4].msg.find("used only when both negative_original_size and negative_target_size"), std::string::npos);
  EXPECT_EQ(errors(R"({"negative_crop": [0, 0]})").at(0).loc, (std::vector<json>{"body", "negative_crop"}));
}

// webui's SDXL refiner fields: a model of the list and the switch, echoed in the parameters; "", null and "None"
// mean none; unknown names and switches outside (0, 1) are reported per field.
TEST_F(ServeTxt2Img, SdxlRefinerFields) {
  auto r = parse(R"({"refiner_checkpoint": "tiny-sdxl-refiner", "refiner_switch_at": 0.7})");
  ASSERT_TRUE(r.refiner);
  EXPECT_EQ(r.refiner->title, "tiny-sdxl-refiner");
  EXPECT_NE(r.refiner->path.find("tests/data/tiny-sdxl-refiner"), std::string::npos) << r.refiner->path;
  EXPECT_DOUBLE_EQ(r.refinerSwitchAt, 0.7);
  const json p = requestParameters(r);
  EXPECT_EQ(p.at("refiner_checkpoint"), "tiny-sdxl-refiner");
  EXPECT_EQ(p.at("refiner_switch_at"), 0.7);
  EXPECT_DOUBLE_EQ(parse(R"({"refiner_checkpoint": "tiny-sdxl-refiner"})").refinerSwitchAt, 0.8);  // webui's default
  for (const char* none : {R"({"refiner_checkpoint": ""})", R"({"refiner_checkpoint": null})",
                           R"({"refiner_checkpoint": "None", "refiner_switch_at": 0.5})"}) {
    EXPECT_FALSE(parse(none).refiner) << none;
    EXPECT_TRUE(requestParameters(parse(none)).at("refiner_checkpoint").is_null()) << none;
  }
  auto e = errors(R"({"refiner_checkpoint": "nope", "refiner_switch_at": 1})");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].loc, (std::vector<json>{"body", "refiner_checkpoint"}));
  EXPECT_NE(e[0].msg.find("unknown model 'nope'; accepted: 'sdgen-tiny'"), std::string::npos) << e[0].msg;
  EXPECT_EQ(e[1].loc, (std::vector<json>{"body", "refiner_switch_at"}));
  EXPECT_EQ(e[1].msg, "refiner_switch_at: expected a number between 0 and 1, exclusive");
  EXPECT_EQ(errors(R"({"refiner_switch_at": 0})").size(), 1u);
  EXPECT_EQ(errors(R"({"refiner_switch_at": "0.5"})").at(0).loc, (std::vector<json>{"body", "refiner_switch_at"}));
}

TEST_F(ServeTxt2Img, EveryBadFieldIsReportedWithItsRange) {
  auto e = errors(R"({"steps": "20", "width": 30, "height": 100000, "sampler_name": "LMS Exponential", "tiling": true})");
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].loc, (std::vector<json>{"body", "steps"}));
  EXPECT_EQ(e[0].msg, "steps: expected an integer from 1 to 1000");
  EXPECT_EQ(e[1].msg, "width: 30 is not a multiple of 8");
  EXPECT_EQ(e[2].ctx, (json{{"ge", 8}, {"le", 8192}}));
  EXPECT_NE(e[3].msg.find("accepted: 'Euler a', 'Euler', 'DDIM'"), std::string::npos);
  EXPECT_EQ(e[4].msg, "tiling: tiling is not supported by sdgen");
  limits.maxPixels = 64 * 64;
  e = errors(R"({"width": 128, "height": 64})");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_NE(e[0].msg.find("8192 pixels is more than this server's limit of 4096"), std::string::npos);
  EXPECT_EQ(errors(R"({"override_settings": {"sd_model_checkpoint": "x"}})")[0].loc,
            (std::vector<json>{"body", "override_settings", "sd_model_checkpoint"}));
  EXPECT_EQ(errors("[1, 2]")[0].type, "model_attributes_type");
}

TEST(ServeInfotext, ReadsWhatThePngWriterWrites) {
  app::GenerationParams p;
  p.prompt = "a red circle,\nsecond line";
  p.negativePrompt = "blurry";
  p.steps = 20;
  p.sampler = sampling::SamplerKind::DpmPP2M;
  p.karras = true;
  p.cfgScale = 7.5f;
  p.seed = 42;
  p.width = 512;
  p.height = 768;
  p.modelName = "my, model";
  p.clipSkip = 2;
  p.version = "sdgen 0.1.0";
  json j = parseInfotext(app::formatGenerationParams(p));
  EXPECT_EQ(j["Prompt"], "a red circle,\nsecond line");
  EXPECT_EQ(j["Negative prompt"], "blurry");
  EXPECT_EQ(j["Steps"], "20");
  EXPECT_EQ(j["Sampler"], "DPM++ 2M Karras");
  EXPECT_EQ(j["CFG scale"], "7.5");
  EXPECT_EQ(j["Size-1"], "512");
  EXPECT_EQ(j["Size-2"], "768");
  EXPECT_EQ(j["Model"], "my, model");  // quoted in the text
  EXPECT_EQ(j["Clip skip"], "2");
  EXPECT_EQ(parseInfotext("just a prompt")["Prompt"], "just a prompt");
}

TEST(ServeJobQueue, BoundedRemovableAndShutDown) {
  JobQueue q(2);
  auto job = [](uint64_t id) { return std::make_shared<Job>(id, ImageRequest{}, id); };
  auto a = job(1), b = job(2);
  EXPECT_EQ(q.push(a), JobQueue::PushResult::Queued);
  EXPECT_EQ(q.push(b), JobQueue::PushResult::Queued);
  EXPECT_EQ(q.push(job(3)), JobQueue::PushResult::Full);
  EXPECT_TRUE(q.remove(a));
  EXPECT_FALSE(q.remove(a));
  EXPECT_EQ(q.pop(), b);
  auto d = job(4);
  std::thread waiter([&] { EXPECT_EQ(q.pop(), d); });  // blocks on the empty queue until the push
  EXPECT_EQ(q.push(d), JobQueue::PushResult::Queued);
  waiter.join();
  std::thread waiter2([&] { EXPECT_EQ(q.pop(), nullptr); });  // blocks until the shutdown
  q.shutdown();
  waiter2.join();
  EXPECT_EQ(q.push(job(5)), JobQueue::PushResult::ShuttingDown);
}

TEST(ServeJob, FirstCancelReasonAndOneFinish) {
  Job j(1, ImageRequest{}, 7);
  EXPECT_FALSE(j.waitFinished(std::chrono::milliseconds(1)));
  j.cancel(JobOutcome::Interrupted);
  j.cancel(JobOutcome::Cancelled);
  EXPECT_EQ(j.cancelReason(), JobOutcome::Interrupted);
  j.finish(JobOutcome::Interrupted);
  j.finish(JobOutcome::Failed, "late");
  EXPECT_TRUE(j.waitFinished(std::chrono::milliseconds(1)));
  EXPECT_EQ(j.state().outcome, JobOutcome::Interrupted);
  EXPECT_EQ(j.state().error, "");
}

TEST(ServeOptions, FlagsAndErrors) {
  auto o = parseServeOptions({"--port", "0", "--devices", "0,0,1", "--queue=8", "--api-key", "k", "--max-pixels", "4096"});
  EXPECT_EQ(o.port, 0);
  ASSERT_EQ(o.devices.size(), 3u);
  EXPECT_EQ(*o.devices[1], 0u);
  EXPECT_EQ(o.queue, 8);
  EXPECT_EQ(o.apiKey, "k");
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.loraDir, "");
  EXPECT_EQ(parseServeOptions({"--lora-dir", "/loras"}).loraDir, "/loras");
  EXPECT_NE(serveUsageText().find("--lora-dir DIR"), std::string::npos);
  EXPECT_THROW(parseServeOptions({"--devices", "0,,1"}), app::UsageError);
  EXPECT_THROW(parseServeOptions({"--queue", "0"}), app::UsageError);
  EXPECT_THROW(parseServeOptions({"--port"}), app::UsageError);
  EXPECT_THROW(parseServeOptions({"--bogus"}), app::UsageError);
  EXPECT_EQ(o.modelCacheMb, 6144u);
  EXPECT_EQ(parseServeOptions({"--model-cache-mb", "0"}).modelCacheMb, 0u);
  EXPECT_THROW(parseServeOptions({"--model-cache-mb", "-1"}), app::UsageError);
}

// The engine's model cache with stand-in models: least recently used out first, the model asked for never.
TEST(ServeModelCache, LeastRecentlyUsedOutFirstWithinTheBudget) {
  struct FakeModel {
    int id;
  };
  app::ModelCache<FakeModel> cache(100);
  int loads = 0;
  auto loader = [&](int id) { return [&loads, id] { ++loads; return std::make_unique<FakeModel>(FakeModel{id}); }; };
  auto a = cache.acquire("A", 40, loader(1));
  EXPECT_FALSE(a.hit);
  EXPECT_EQ(a.model->id, 1);
  cache.acquire("B", 40, loader(2));
  EXPECT_TRUE(cache.acquire("A", 40, loader(1)).hit);  // A -> B -> A: no second load of A
  EXPECT_EQ(loads, 2);
  EXPECT_EQ(cache.keys(), (std::vector<std::string>{"A", "B"}));
  // C does not fit beside both: B, the least recently used, goes.
  auto c = cache.acquire("C", 40, loader(3));
  EXPECT_EQ(c.evicted, std::vector<std::string>{"B"});
  EXPECT_EQ(cache.keys(), (std::vector<std::string>{"C", "A"}));
  // C measured larger than estimated after its job: A goes, C (in use) stays even alone over the budget.
  EXPECT_EQ(cache.resize("C", 150), std::vector<std::string>{"A"});
  EXPECT_EQ(cache.keys(), std::vector<std::string>{"C"});
  EXPECT_TRUE(cache.resize("C", 150).empty());
  EXPECT_EQ(cache.totalBytes(), 150u);
  // A load that throws leaves the cache without the evicted models and without the new one.
  EXPECT_THROW(cache.acquire("D", 10, [] () -> std::unique_ptr<FakeModel> { throw std::runtime_error("bad"); }),
               std::runtime_error);
  EXPECT_TRUE(cache.keys().empty());
  // Budget 0 (sdgen-gui): only the model in use.
  app::ModelCache<FakeModel> one(0);
  one.acquire("A", 1, loader(1));
  EXPECT_EQ(one.acquire("B", 1, loader(2)).evicted, std::vector<std::string>{"A"});
  EXPECT_EQ(one.keys(), std::vector<std::string>{"B"});
  // A job's SDXL refiner loads beside its base, which it spares (both over the budget until the job ends); then
  // the base's measured size evicts neither while the refiner is spared.
  auto refiner = one.acquire("R", 1, loader(3), {"B"});
  EXPECT_TRUE(refiner.evicted.empty());
  EXPECT_EQ(one.keys(), (std::vector<std::string>{"R", "B"}));
  EXPECT_TRUE(one.resize("B", 1, {"R"}).empty());
  EXPECT_EQ(one.keys(), (std::vector<std::string>{"R", "B"}));
  // The next job without a refiner: the others go.
  EXPECT_EQ(one.acquire("B", 1, loader(2)).evicted, std::vector<std::string>{});
  EXPECT_EQ(one.resize("B", 1), std::vector<std::string>{"R"});
  EXPECT_EQ(one.keys(), std::vector<std::string>{"B"});
}

}  // namespace
}  // namespace sdgen::serve

#include "app/serve/api_server.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "app/generation_plan.h"
#include "app/png_chunks.h"
#include "app/serve/base64.h"
#include "app/serve/client_connection.h"
#include "app/serve/img2img_request.h"
#include "app/serve/json_body.h"
#include "app/serve/webui_json.h"

namespace sdgen::serve {

using nlohmann::json;
using httplib::Request;
using httplib::Response;

namespace {

constexpr const char* kJson = "application/json";
constexpr std::chrono::milliseconds kClientPoll{100};  // how soon a client's disconnect cancels its job

void reply(Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dumpJson(body), kJson);
}

// Comparison time independent of where the strings differ, so the key cannot be guessed byte by byte.
bool sameSecret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

std::string sizeText(const ImageRequest& r) { return std::to_string(r.width) + "x" + std::to_string(r.height); }

}  // namespace

ApiServer::ApiServer(const ServeOptions& options, ModelRegistry& models, JobQueue& queue,
                     std::vector<std::unique_ptr<Engine>>& engines, RequestLog& log)
    : options_(options), models_(models), queue_(queue), engines_(engines), log_(log) {
  limits_.maxPixels = options.maxPixels;
  // Every queued or running job holds a handler thread while its client waits, and the quick endpoints
  // (progress, interrupt) must still get one then: size the pool for all of them.
  // Capped, because each is a thread: past the cap, connections wait in httplib's own list before they are
  // read (and so before they can get their 429).
  constexpr size_t kMaxThreads = 512;
  const size_t threads = std::min(static_cast<size_t>(options.queue) + engines.size(), kMaxThreads) + 16;
  server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_.set_payload_max_length(options.maxBody);
  server_.set_keep_alive_timeout(2);  // an idle keep-alive connection holds a thread
  routes();
}

int ApiServer::bind() {
  if (options_.port == 0) return server_.bind_to_any_port(options_.host);
  return server_.bind_to_port(options_.host, options_.port) ? options_.port : -1;
}

bool ApiServer::listen() { return server_.listen_after_bind(); }

void ApiServer::stop() { server_.stop(); }

uint64_t ApiServer::requestId(const Response& res) const {
  const std::string id = res.get_header_value("X-Request-Id");
  return id.empty() ? 0 : std::strtoull(id.c_str(), nullptr, 10);
}

httplib::Server::HandlerResponse ApiServer::authorize(const Request& req, Response& res) {
  res.set_header("X-Request-Id", std::to_string(log_.begin()));
  // The load balancer's health check needs no key (docs/serve.md).
  if (options_.apiKey.empty() || req.path == "/internal/ping") return httplib::Server::HandlerResponse::Unhandled;
  const std::string auth = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.size() > kBearer.size() && std::string_view(auth).substr(0, kBearer.size()) == kBearer &&
      sameSecret(std::string_view(auth).substr(kBearer.size()), options_.apiKey))
    return httplib::Server::HandlerResponse::Unhandled;
  res.set_header("WWW-Authenticate", "Bearer");
  reply(res, 401, {{"detail", auth.empty() ? "Not authenticated: send Authorization: Bearer <key>"
                                           : "Invalid API key in the Authorization header"}});
  return httplib::Server::HandlerResponse::Handled;
}

void ApiServer::routes() {
  server_.set_pre_routing_handler([this](const Request& req, Response& res) { return authorize(req, res); });
  server_.set_logger([this](const Request& req, const Response& res) {
    log_.finish(requestId(res), req.remote_addr + ":" + std::to_string(req.remote_port), req.method, req.path,
                res.status);
  });
  // Errors raised by httplib itself (no route, body too large) and by handlers without a body: JSON too.
  server_.set_error_handler(httplib::Server::HandlerWithResponse([this](const Request&, Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 404) reply(res, 404, {{"detail", "Not Found"}});
    else if (res.status == 413)
      reply(res, 413, errorBody("PayloadTooLarge", "the request body is larger than this server's limit of " +
                                                       std::to_string(options_.maxBody) + " bytes (--max-body)"));
    else reply(res, res.status, errorBody("HTTPError", "HTTP " + std::to_string(res.status)));
    return httplib::Server::HandlerResponse::Handled;
  }));
  server_.set_exception_handler([](const Request&, Response& res, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const ValidationFailed& e) {
      reply(res, 422, validationErrorBody(e.errors()));
    } catch (const std::bad_alloc&) {
      reply(res, 500, errorBody("OutOfMemory", "out of host memory"));
    } catch (const std::exception& e) {
      reply(res, 500, errorBody("InternalError", shorten(e.what(), 500)));
    } catch (...) {
      reply(res, 500, errorBody("InternalError", "unknown error"));
    }
  });

  server_.Get("/internal/ping", [](const Request&, Response& res) { reply(res, 200, json::object()); });
  server_.Post("/sdapi/v1/txt2img", [this](const Request& req, Response& res) { generate(req, res, Mode::Txt2Img); });
  server_.Post("/sdapi/v1/img2img", [this](const Request& req, Response& res) { generate(req, res, Mode::Img2Img); });
  server_.Get("/sdapi/v1/progress", [this](const Request& req, Response& res) { progress(req, res); });
  server_.Post("/sdapi/v1/interrupt", [this](const Request&, Response& res) {
    for (auto& e : engines_) e->interrupt();
    reply(res, 200, json::object());
  });
  server_.Get("/sdapi/v1/sd-models", [this](const Request&, Response& res) {
    reply(res, 200, sdModelsResponse(models_.list()));
  });
  server_.Post("/sdapi/v1/refresh-checkpoints", [this](const Request&, Response& res) {
    models_.refresh();
    reply(res, 200, nullptr);
  });
  server_.Get("/sdapi/v1/samplers", [](const Request&, Response& res) { reply(res, 200, webuiSamplerList()); });
  server_.Get("/sdapi/v1/schedulers", [](const Request&, Response& res) {
    json list = json::array();
    for (auto [name, label] : {std::pair{"automatic", "Automatic"}, {"uniform", "Uniform"}, {"karras", "Karras"}})
      list.push_back({{"name", name}, {"label", label}, {"aliases", nullptr}, {"default_rho", -1},
                      {"need_inner_model", false}});
    reply(res, 200, list);
  });
  // webuiapi's client asks for the scripts when it starts; sdgen has none.
  server_.Get("/sdapi/v1/scripts", [](const Request&, Response& res) {
    reply(res, 200, {{"txt2img", json::array()}, {"img2img", json::array()}});
  });
  server_.Get("/sdapi/v1/options", [this](const Request&, Response& res) {
    reply(res, 200, optionsResponse(models_.current(), clipSkip_));
  });
  server_.Post("/sdapi/v1/options", [this](const Request& req, Response& res) { setOptions(req, res); });
  server_.Post("/sdapi/v1/png-info", [this](const Request& req, Response& res) { pngInfo(req, res); });
}

void ApiServer::generate(const Request& req, Response& res, Mode mode) {
  const uint64_t rid = requestId(res);
  const json body = parseJsonBody(req.body);
  const ImageRequest r = mode == Mode::Img2Img ? parseImg2ImgRequest(body, models_, limits_, clipSkip_)
                                               : parseTxt2ImgRequest(body, models_, limits_, clipSkip_);
  const uint64_t seed = r.seed ? *r.seed : app::chooseSeed(std::nullopt);
  auto job = std::make_shared<Job>(nextJob_++, r, seed);
  log_.annotate(rid, {{"job", job->id}, {"mode", mode == Mode::Img2Img ? "img2img" : "txt2img"}, {"model", r.model.title}, {"size", sizeText(r)}, {"steps", r.steps},
                      {"images", r.images()}, {"seed", seed}});

  switch (queue_.push(job)) {
    case JobQueue::PushResult::Queued: break;
    case JobQueue::PushResult::Full:
      res.set_header("Retry-After", "1");
      log_.annotate(rid, {{"outcome", "queue_full"}});
      return reply(res, 429, errorBody("QueueFull", "the queue is full (" + std::to_string(queue_.capacity()) +
                                                        " jobs waiting for an engine); retry later"));
    case JobQueue::PushResult::ShuttingDown:
      return reply(res, 503, errorBody("ShuttingDown", "the server is shutting down"));
  }

  ClientConnection client(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
  while (!job->waitFinished(kClientPoll)) {
    if (client.closed()) {
      job->cancel(JobOutcome::Cancelled);
      if (queue_.remove(job)) job->finish(JobOutcome::Cancelled);  // no engine will see it
      log_.annotate(rid, {{"outcome", "client_closed"}});
      return reply(res, kStatusClientClosed, errorBody("ClientClosedRequest", "the client closed the connection"));
    }
  }
  const Job::State s = job->state();
  const auto ms = [](auto a, auto b) { return std::round(std::chrono::duration<double, std::milli>(b - a).count()); };
  log_.annotate(rid, {{"engine", s.engine}, {"outcome", outcomeName(s.outcome)}, {"done", s.images.size()},
                      {"wait_ms", s.engine >= 0 ? ms(job->created, s.started) : 0.0},
                      {"run_ms", s.engine >= 0 ? ms(s.started, s.finished) : 0.0}});
  if (s.modelCacheHit) log_.annotate(rid, {{"model_cache", *s.modelCacheHit ? "hit" : "miss"}});
  switch (s.outcome) {
    case JobOutcome::Done:
    case JobOutcome::Interrupted: return reply(res, 200, imagesResponse(*job, s));
    case JobOutcome::Failed:
      log_.annotate(rid, {{"error", shorten(s.error, 300)}});
      return reply(res, 500, errorBody("GenerationFailed", s.error));
    case JobOutcome::Cancelled:
    case JobOutcome::Pending: return reply(res, 503, errorBody("ShuttingDown", "the server is shutting down"));
  }
}

void ApiServer::progress(const Request& req, Response& res) {
  const std::string skip = req.get_param_value("skip_current_image");
  std::vector<EngineStatus> statuses;
  for (auto& e : engines_) statuses.push_back(e->status());
  reply(res, 200, progressResponse(std::move(statuses), queue_.size(), skip == "true" || skip == "1"));
}

void ApiServer::setOptions(const Request& req, Response& res) {
  const json body = parseJsonBody(req.body);
  if (!body.is_object())
    throw ValidationFailed({FieldError{{"body"}, "the body must be a JSON object of options", "dict_type",
                                       shortenedInput(body), nullptr}});
  // Check everything first, so a bad request changes nothing.
  std::vector<FieldError> errors;
  std::optional<ModelEntry> model;
  std::optional<int> clipSkip;
  if (auto it = body.find("sd_model_checkpoint"); it != body.end() && !it->is_null()) {
    if (it->is_string()) model = models_.find(it->get<std::string>());
    if (!model) {
      std::string accepted;
      for (const auto& m : models_.list()) accepted += (accepted.empty() ? "'" : ", '") + shorten(m.title, 60) + "'";
      errors.push_back(FieldError{{"body", "sd_model_checkpoint"},
                                  "sd_model_checkpoint: unknown model " + shortenedInput(*it).dump() +
                                      "; accepted: " + shorten(accepted, 600),
                                  "value_error", shortenedInput(*it), nullptr});
    }
  }
  if (auto it = body.find("CLIP_stop_at_last_layers"); it != body.end() && !it->is_null()) {
    using L = app::CliLimits;
    if (it->is_number_integer() && it->get<int64_t>() >= L::kMinClipSkip && it->get<int64_t>() <= L::kMaxClipSkip)
      clipSkip = it->get<int>();
    else
      errors.push_back(FieldError{{"body", "CLIP_stop_at_last_layers"},
                                  "CLIP_stop_at_last_layers: expected an integer from 1 to 24", "int_type",
                                  shortenedInput(*it), json{{"ge", 1}, {"le", 24}}});
  }
  if (!errors.empty()) throw ValidationFailed(std::move(errors));
  // Other options are accepted and ignored, as webui ignores options it does not know.
  if (model) {
    models_.setCurrent(model->title);
    log_.annotate(requestId(res), {{"model", model->title}});
  }
  if (clipSkip) clipSkip_ = *clipSkip;
  reply(res, 200, nullptr);
}

void ApiServer::pngInfo(const Request& req, Response& res) {
  const json body = parseJsonBody(req.body);
  auto fail = [](const std::string& msg, const json& input) {
    throw ValidationFailed({FieldError{{"body", "image"}, "image: " + msg, "value_error", shortenedInput(input), nullptr}});
  };
  if (!body.is_object() || !body.contains("image") || !body["image"].is_string())
    fail("expected a base64 PNG string", body.is_object() && body.contains("image") ? body["image"] : json(nullptr));
  auto bytes = decodeImageText(body["image"].get_ref<const std::string&>(), options_.maxBody);
  if (!bytes) fail("not valid base64 (or a data URL without ',')", body["image"]);
  std::vector<app::PngText> texts;
  try {
    texts = app::extractPngTexts(app::parsePngChunks(*bytes, "image"), "image");
  } catch (const std::exception& e) {
    fail(shorten(e.what(), 200), nullptr);
  }
  reply(res, 200, pngInfoResponse(texts));
}

}  // namespace sdgen::serve

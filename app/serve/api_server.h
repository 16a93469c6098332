#pragma once
// The HTTP side of `sdgen serve`: webui's routes on cpp-httplib, authentication, body limits, the JSON error
// bodies, and the per-request log line. Generation happens elsewhere (engines pulling from the JobQueue);
// a txt2img or img2img handler validates, queues, and waits for its job — watching its client, so a client that goes
// away cancels the job.
#include <httplib.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "app/serve/engine.h"
#include "app/serve/job_queue.h"
#include "app/serve/model_registry.h"
#include "app/serve/request_log.h"
#include "app/serve/serve_options.h"
#include "app/serve/txt2img_request.h"

namespace sdgen::serve {

// nginx's code for "client closed the request": logged for a job whose client went away (nobody receives it).
inline constexpr int kStatusClientClosed = 499;

class ApiServer {
 public:
  ApiServer(const ServeOptions& options, ModelRegistry& models, JobQueue& queue,
            std::vector<std::unique_ptr<Engine>>& engines, RequestLog& log);

  // Binds (port 0: any free port); returns the port, or -1 with the reason on stderr.
  int bind();
  // Serves until stop(); returns false when it could not.
  bool listen();
  // From another thread: stops accepting; listen() returns once the handlers in flight have answered.
  void stop();

 private:
  void routes();
  httplib::Server::HandlerResponse authorize(const httplib::Request& req, httplib::Response& res);
  enum class Mode { Txt2Img, Img2Img };
  // POST /sdapi/v1/txt2img and img2img: validate, queue, wait for the job while watching the client.
  void generate(const httplib::Request& req, httplib::Response& res, Mode mode);
  void progress(const httplib::Request& req, httplib::Response& res);
  void setOptions(const httplib::Request& req, httplib::Response& res);
  void pngInfo(const httplib::Request& req, httplib::Response& res);

  uint64_t requestId(const httplib::Response& res) const;

  const ServeOptions options_;
  RequestLimits limits_;
  ModelRegistry& models_;
  JobQueue& queue_;
  std::vector<std::unique_ptr<Engine>>& engines_;
  RequestLog& log_;
  std::atomic<int> clipSkip_{1};    // the CLIP_stop_at_last_layers option
  std::atomic<uint64_t> nextJob_{1};
  httplib::Server server_;
};

}  // namespace sdgen::serve

#include "app/serve/serve_main.h"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <thread>

#include "app/cli_options.h"
#include "app/serve/api_server.h"
#include "app/serve/engine.h"
#include "app/serve/job_queue.h"
#include "app/serve/model_registry.h"
#include "app/serve/request_log.h"
#include "app/serve/serve_options.h"

namespace sdgen::serve {

namespace {

constexpr int kExitRuntimeError = 1, kExitUsageError = 2;

std::string deviceText(const std::optional<uint32_t>& d) { return d ? std::to_string(*d) : std::string("default"); }

int run(const ServeOptions& o) {
  // SIGINT and SIGTERM are taken by one thread with sigwait (below), so no handler runs inside a random
  // thread: blocked here, before any thread starts, every thread inherits the mask.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client gone mid-response must not end the process

  RequestLog log(stderr);
  ModelRegistry models(o.modelPath, o.modelsDir);
  JobQueue queue(static_cast<size_t>(o.queue));
  // An engine's dispatcher waits in queue.pop(): the queue is shut down before the engines go, on every path
  // out of here (an engine that fails to open its device included).
  struct Engines {
    JobQueue& queue;
    std::vector<std::unique_ptr<Engine>> list;
    ~Engines() {
      for (auto& job : queue.shutdown()) job->finish(JobOutcome::Cancelled);
      list.clear();
    }
  } engines{queue, {}};
  const std::string model = models.current().path;
  for (size_t i = 0; i < o.devices.size(); ++i) {
    engines.list.push_back(std::make_unique<Engine>(static_cast<int>(i), o.devices[i], queue, model,
                                                    o.modelCacheMb << 20, log, o.loraDir));
    log.event({{"event", "engine"}, {"engine", i}, {"device", deviceText(o.devices[i])},
               {"name", engines.list.back()->status().device}});
  }

  ApiServer server(o, models, queue, engines.list, log);
  const int port = server.bind();
  if (port < 0) {
    std::fprintf(stderr, "sdgen serve: error: cannot listen on %s:%d\n", o.host.c_str(), o.port);
    return kExitRuntimeError;
  }
  std::printf("sdgen serve: listening on http://%s:%d (%zu engine%s, model %s)\n", o.host.c_str(), port,
              engines.list.size(), engines.list.size() == 1 ? "" : "s", models.current().title.c_str());
  std::fflush(stdout);

  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stopSignals, &sig);
    log.event({{"event", "stopping"}, {"signal", sig}});
    for (auto& job : queue.shutdown()) job->finish(JobOutcome::Cancelled);
    for (auto& e : engines.list) e->interrupt(JobOutcome::Cancelled);
    server.stop();
  });
  const bool ok = server.listen();
  if (!ok) pthread_kill(stopper.native_handle(), SIGTERM);  // listen failed on its own: end the stopper too
  stopper.join();
  log.event({{"event", "stopped"}});
  return ok ? 0 : kExitRuntimeError;
}

}  // namespace

int serveMain(const std::vector<std::string>& args) {
  ServeOptions options;
  try {
    options = parseServeOptions(args);
  } catch (const app::UsageError& e) {
    std::fprintf(stderr, "sdgen serve: %s\nTry 'sdgen serve --help' for the list of options.\n", e.what());
    return kExitUsageError;
  }
  if (options.help) {
    std::fputs(serveUsageText().c_str(), stdout);
    return 0;
  }
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sdgen serve: error: %s\n", e.what());
    return kExitRuntimeError;
  }
}

}  // namespace sdgen::serve

// `les serve`: an OpenAI-compatible HTTP server for one model.
//
//   les serve -m MODEL.gguf [--host 127.0.0.1] [--port 8080] [--api-key KEY]
//             [--chat-template NAME] [-n -1] [sampling, context, --budget-mb
//             and --lookup / --draft options as in `les run`]
//
// Routes and replies are in serve_routes.h; the request fields in
// serve_request.h; the queue and the context in serve_engine.h. The server
// listens first (printing "les serve: listening on http://HOST:PORT"; --port
// 0 picks a free port and prints it), then loads the model (/health answers
// 503 meanwhile, 200 after "les serve: ready"). The command line's sampling
// options are every request's defaults; a request's own fields win. -n
// (default -1: until the end of text or a full context) is the default
// max_tokens. One request generates at a time, the others wait in arrival
// order on httplib's worker threads. It binds to 127.0.0.1 unless --host
// says otherwise; --api-key KEY makes every /v1/ route require
// "Authorization: Bearer KEY".
// The first SIGINT (Ctrl-C) or SIGTERM stops the server: the generation
// running ends at its next token (its client gets an error object), queued
// requests too, no new connection is taken, and `les serve` exits 0 once the
// worker threads are done; a second signal exits at once (128 + signal).
// Exit codes: 0 after a signal, 1 runtime error (the address cannot be bound,
// the model cannot be loaded), 2 bad arguments.
#include <les/les.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "les/chat_prompt.h"
#include "les/commands.h"
#include "les/default_model.h"
#include "les/model_options.h"
#include "les/serve_engine.h"
#include "les/serve_routes.h"
#include "les/speculative_options.h"

namespace les::tool {
namespace {

constexpr const char* kTool = "serve";
constexpr size_t kMaxBodyBytes = 8u << 20;  // 8 MiB of JSON: far beyond any context's worth of text

struct ServeOptions {
  ModelOptions model;
  SamplingOptions sampling;
  SpeculativeOptions speculative;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string api_key;
  std::string chat_template;
};

// SIGINT and SIGTERM, blocked in every thread (construct it before any
// thread starts; they stay blocked) and taken by one watcher thread with
// sigtimedwait: the first stops the server through `on_stop` (outside a
// signal handler, so it may lock and wait), a second exits at once.
class SignalWatcher {
 public:
  SignalWatcher() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  }
  ~SignalWatcher() { finish(); }
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  void start(std::function<void()> on_stop) {
    thread_ = std::thread([this, on_stop = std::move(on_stop)] {
      const timespec tick{0, 100 * 1000 * 1000};
      while (!finished_.load()) {
        const int sig = sigtimedwait(&set_, nullptr, &tick);
        if (sig <= 0) continue;
        if (requested_.exchange(true)) {
          std::fprintf(stderr, "les serve: %s again: exiting now\n", strsignal(sig));
          _exit(128 + sig);
        }
        std::fprintf(stderr, "les serve: %s: stopping (interrupt again to exit at once)\n", strsignal(sig));
        on_stop();
      }
    });
  }
  // Ends the watcher (what on_stop uses may be destroyed after this).
  void finish() {
    finished_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  bool requested() const { return requested_.load(); }

 private:
  sigset_t set_;
  std::thread thread_;
  std::atomic<bool> finished_{false}, requested_{false};
};

// The model's id in /v1/models and replies: the file name without .gguf
// (without -m: the embedded default's, default-tiny-qwen3moe).
std::string model_id(const std::string& model) {
  std::string path = model;
  if (path.empty()) {
    auto def = default_model_path();
    path = def.ok() ? def.value() : "les";
  }
  std::string name = std::filesystem::path(path).filename().string();
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".gguf") == 0) name.resize(name.size() - 5);
  return name.empty() ? "les" : name;
}

int serve(ServeOptions o) {
  if (int rc = validate_model_options(kTool, o.model)) return rc;
  if (int rc = validate_sampling_options(kTool, o.sampling)) return rc;
  if (o.sampling.seed == "-1") o.sampling.sp.seed = LES_SEED_RANDOM;  // a random seed per request, not one for all
  if (int rc = validate_speculative_options(kTool, o.speculative)) return rc;
  if (o.port < 0 || o.port > 65535) {
    std::fprintf(stderr, "les serve: --port must be in 0..65535 (0 = any free port), got %d\n", o.port);
    return 2;
  }
  if (!o.chat_template.empty() && les_chat_template_resolve(nullptr, o.chat_template.c_str(), nullptr, nullptr) != LES_OK) {
    std::fprintf(stderr, "les serve: --chat-template: %s\n", les_last_error());
    return 2;
  }

  ServeState state;
  state.api_key = o.api_key;
  state.model_id = model_id(o.model.model);
  state.created = static_cast<int64_t>(std::time(nullptr));
  state.max_body_bytes = kMaxBodyBytes;
  httplib::Server server;  // its worker threads start in listen_after_bind()
  // SO_REUSEADDR (a restart binds at once) but not httplib's default
  // SO_REUSEPORT, with which a second server would share a port in use.
  server.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  install_routes(server, state);
  SignalWatcher signals;  // before any thread starts, so every thread has the signals blocked
  errno = 0;
  const int port = o.port == 0 ? server.bind_to_any_port(o.host) : (server.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0) {
    std::fprintf(stderr, "les serve: cannot listen on %s:%d%s%s\n", o.host.c_str(), o.port, errno ? ": " : "",
                 errno ? std::strerror(errno) : "");
    return 1;
  }
  const bool v6 = o.host.find(':') != std::string::npos;
  std::fprintf(stderr, "les serve: listening on http://%s%s%s:%d\n", v6 ? "[" : "", o.host.c_str(), v6 ? "]" : "",
               port);
  if (o.host != "127.0.0.1" && o.host != "localhost" && o.host != "::1" && o.api_key.empty())
    std::fprintf(stderr, "les serve: warning: --host %s without --api-key: anyone who reaches this address can use it\n",
                 o.host.c_str());
  std::atomic<bool> listen_ok{true}, listen_done{false};
  std::thread listener([&] {
    listen_ok.store(server.listen_after_bind());
    listen_done.store(true);
  });
  // stop() only acts on a running server: wait until it runs (or has ended).
  const auto stop_server = [&] {
    while (!server.is_running() && !listen_done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    server.stop();
  };
  signals.start([&] {
    if (Engine* e = state.engine.load()) e->shutdown();
    stop_server();
  });

  ModelHandle model;
  ContextHandle ctx;
  bool streaming = false;
  int rc = open_model(kTool, o.model, model, ctx, &streaming);
  ModelHandle draft;
  if (rc == 0) rc = open_draft_model(kTool, o.speculative, model.p, o.model.n_threads, draft);
  if (rc == 0) rc = resolve_chat_template(kTool, model.p, o.chat_template);
  if (rc != 0) {
    signals.finish();
    stop_server();
    listener.join();
    return rc;
  }
  print_speculative_banner(kTool, o.speculative, draft.p);
  Engine engine(model.p, ctx.p, {o.sampling, o.speculative, draft.p, o.chat_template});
  state.engine.store(&engine);
  if (signals.requested()) engine.shutdown();  // a signal while the model loaded
  std::fprintf(stderr, "les serve: ready: %s as \"%s\", n_ctx %d%s; one request at a time\n",
               model_desc(model.p).c_str(), state.model_id.c_str(), les_context_n_ctx(ctx.p),
               streaming ? ", experts streamed" : "");
  listener.join();
  signals.finish();  // before the engine and the context go
  if (!listen_ok.load() && !signals.requested()) {
    std::fprintf(stderr, "les serve: the server stopped accepting connections\n");
    return 1;
  }
  std::fprintf(stderr, "les serve: stopped\n");
  return 0;
}

}  // namespace

void register_serve(CLI::App& app, ToolState& state) {
  auto* cmd = app.add_subcommand("serve", "Serve a model over an OpenAI-compatible HTTP API (/v1/chat/completions, ...)");
  auto o = std::make_shared<ServeOptions>();
  o->sampling.n_predict = -1;
  add_model_options(cmd, o->model);
  add_sampling_options(cmd, o->sampling);
  add_speculative_options(cmd, o->speculative);
  cmd->add_option("--host", o->host, "Address to listen on (0.0.0.0: every interface)")->capture_default_str();
  cmd->add_option("--port", o->port, "TCP port (0 = any free port, printed)")->capture_default_str();
  cmd->add_option("--api-key", o->api_key, "Require 'Authorization: Bearer KEY' on every /v1/ route");
  cmd->add_option("--chat-template", o->chat_template,
                  "Chat template by name (chatml, llama3, mistral, gemma, ...; default: the model's own)");
  cmd->callback([&state, o] { state.exit_code = serve(*o); });
}

}  // namespace les::tool

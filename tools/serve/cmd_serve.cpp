// `les serve`: an OpenAI-compatible HTTP server for one model.
//
//   les serve -m MODEL.gguf [--host 127.0.0.1] [--port 8080] [--api-key KEY]
//             [--cors-origin ORIGIN[,ORIGIN...] | --cors-origin '*']
//             [--chat-template NAME] [--max-queue 16] [-n -1]
//             [--mmproj FILE [--max-images 4] [--max-image-mb 4]] [sampling,
//             context, --budget-mb and --lookup / --draft options as in
//             `les run`]
//
// Routes and replies are in routes.h and completion.h; the
// request fields in request.h; the context in engine.h and the
// queue in front of it in queue.h. The server binds its address first
// (so a port in use is an error at once), loads the model, and only then
// takes connections and prints "les serve: listening on http://HOST:PORT"
// (--port 0 picks a free port and prints it): from that line on /health
// answers 200. Connections made while the model loads wait until then. The
// command line's sampling options are every request's defaults; a
// request's own fields win. -n (default -1: until the end of text or a full
// context) is the default max_tokens; 0 evaluates the prompt and generates
// nothing, as max_tokens 0 does. One request generates at a time; up to
// --max-queue more wait in arrival order, and a request beyond those gets
// 503 with Retry-After. httplib's pool has a thread for each of those
// places and kSpareThreads more, so /health and /v1/models answer while the
// queue is full. Request bodies are limited to what the context could hold
// (body.h). It binds to 127.0.0.1 unless --host says otherwise (a
// host that is not a loopback address, without --api-key, gets a warning);
// --api-key KEY makes every /v1/ route require "Authorization: Bearer KEY".
// --cors-origin lets web pages of those origins call the API from a browser
// (cors.h; off by default; a bad origin is a usage error).
// The first SIGINT (Ctrl-C), SIGTERM or SIGHUP stops the server
// (signals.h): the generation running ends at its next token, queued
// requests get 503, no new connection is taken, and `les serve` exits 0 once
// the worker threads are done; a second signal exits at once (128 + signal).
// With --mmproj FILE (the model's vision encoder, les_vision.h) chat
// messages may hold image_url parts with data: URLs (request.h); each
// request takes at most --max-images images of at most --max-image-mb MiB
// (encoded) each, and the body limit grows by that many images' base64 text.
// Exit codes: 0 after a signal, 1 runtime error (the address cannot be bound,
// the model cannot be loaded), 2 bad arguments.
#include <les/les.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/chat_prompt.h"
#include "common/default_model.h"
#include "common/model_options.h"
#include "common/speculative_options.h"
#include "serve/body.h"
#include "serve/cmd_serve.h"
#include "serve/cors.h"
#include "serve/engine.h"
#include "serve/routes.h"
#include "serve/signals.h"

namespace les::tool {
namespace {

constexpr const char* kTool = "serve";
constexpr int kMaxQueueLimit = 256;
// HTTP threads beyond the queue's places (each queued or running request
// holds one): for /health, /v1/models, error replies and idle keep-alive
// connections while the queue is full.
constexpr size_t kSpareThreads = 16;

struct ServeOptions {
  ModelOptions model;
  SamplingOptions sampling;
  SpeculativeOptions speculative;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string api_key;
  std::string cors_origin;  // --cors-origin ("" = no CORS)
  std::string chat_template;
  int max_queue = 16;
  std::string mmproj;       // --mmproj ("" = no image input)
  int max_images = 4;       // --max-images
  double max_image_mb = 4;  // --max-image-mb
};

constexpr int kMaxImagesLimit = 64;
constexpr double kMaxImageMbLimit = 256;

struct VisionFree {
  void operator()(les_vision* v) const { les_vision_free(v); }
};

// Whether `host` resolves to an address other than a loopback one
// (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104). A host that does not resolve is
// not (binding it fails anyway).
bool reaches_beyond_loopback(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return false;
  bool beyond = false;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      beyond |= (ntohl(in->sin_addr.s_addr) >> 24) != 127;
    } else if (a->ai_family == AF_INET6) {
      const in6_addr& in6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr;
      beyond |= !IN6_IS_ADDR_LOOPBACK(&in6) && !(IN6_IS_ADDR_V4MAPPED(&in6) && in6.s6_addr[12] == 127);
    } else {
      beyond = true;
    }
  }
  freeaddrinfo(found);
  return beyond;
}

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
  if (o.max_queue < 0 || o.max_queue > kMaxQueueLimit) {
    std::fprintf(stderr, "les serve: --max-queue must be in 0..%d (requests waiting behind the running one), got %d\n",
                 kMaxQueueLimit, o.max_queue);
    return 2;
  }
  if (o.max_images < 1 || o.max_images > kMaxImagesLimit) {
    std::fprintf(stderr, "les serve: --max-images must be in 1..%d (images per request), got %d\n", kMaxImagesLimit,
                 o.max_images);
    return 2;
  }
  if (!(o.max_image_mb > 0 && o.max_image_mb <= kMaxImageMbLimit)) {
    std::fprintf(stderr, "les serve: --max-image-mb must be in (0, %g] (MiB per encoded image), got %g\n",
                 kMaxImageMbLimit, o.max_image_mb);
    return 2;
  }
  if (!o.chat_template.empty() && les_chat_template_resolve(nullptr, o.chat_template.c_str(), nullptr, nullptr) != LES_OK) {
    std::fprintf(stderr, "les serve: --chat-template: %s\n", les_last_error());
    return 2;
  }

  ServeState state;
  if (!o.cors_origin.empty()) {
    std::string why;
    if (!parse_cors_origins(o.cors_origin, &state.cors_origins, &why)) {
      std::fprintf(stderr, "les serve: --cors-origin: %s\n", why.c_str());
      return 2;
    }
  }
  state.api_key = o.api_key;
  state.model_id = model_id(o.model.model);
  state.created = static_cast<int64_t>(std::time(nullptr));
  httplib::Server server;  // its worker threads start in listen_after_bind()
  const size_t n_threads = static_cast<size_t>(o.max_queue) + 1 + kSpareThreads;
  server.new_task_queue = [n_threads] { return new httplib::ThreadPool(n_threads); };
  // SO_REUSEADDR (a restart binds at once) but not httplib's default
  // SO_REUSEPORT, with which a second server would share a port in use.
  int listen_sock = -1;
  server.set_socket_options([&listen_sock](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_sock = sock;
  });
  if (o.api_key.empty() && reaches_beyond_loopback(o.host))
    std::fprintf(stderr, "les serve: warning: --host %s without --api-key: anyone who reaches this address can use it\n",
                 o.host.c_str());
  SignalWatcher signals;  // before any thread starts, so every thread has the signals blocked
  errno = 0;
  const int port = o.port == 0 ? server.bind_to_any_port(o.host) : (server.bind_to_port(o.host, o.port) ? o.port : -1);
  if (port < 0) {
    std::fprintf(stderr, "les serve: cannot listen on %s:%d%s%s\n", o.host.c_str(), o.port, errno ? ": " : "",
                 errno ? std::strerror(errno) : "");
    return 1;
  }
  // httplib listens with a backlog of 5: connections made while the model
  // loads, or many at once, would overflow it (and their clients retry only
  // after a second). Listening again on the bound socket raises it.
  if (listen_sock >= 0) ::listen(listen_sock, SOMAXCONN);

  std::mutex start_mu;  // orders starting the listener against a signal
  bool started = false;
  std::atomic<bool> listen_ok{true}, listen_done{false};
  std::thread listener;
  signals.start([&] {
    if (ServeEngine* e = state.engine.load()) e->shutdown();
    std::lock_guard<std::mutex> lock(start_mu);
    if (!started) return;
    // stop() only acts on a running server: wait until it runs (or has ended).
    while (!server.is_running() && !listen_done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    server.stop();
  });

  ModelHandle model;
  ContextHandle ctx;
  bool streaming = false;
  int rc = open_model(kTool, o.model, model, ctx, &streaming);
  ModelHandle draft;
  if (rc == 0) rc = open_draft_model(kTool, o.speculative, model.p, o.model.n_threads, draft);
  if (rc == 0) rc = resolve_chat_template(kTool, model.p, o.chat_template);
  std::unique_ptr<les_vision, VisionFree> vision;
  if (rc == 0 && !o.mmproj.empty()) {
    les_vision_params vp = les_vision_default_params();
    vp.n_threads = o.model.n_threads > 0 ? o.model.n_threads : 0;
    les_vision* v = nullptr;
    if (les_vision_load(model.p, o.mmproj.c_str(), &vp, &v) != LES_OK) {
      std::fprintf(stderr, "les serve: --mmproj %s: %s\n", o.mmproj.c_str(), les_last_error());
      rc = 1;
    }
    vision.reset(v);
  }
  if (rc != 0) {
    signals.finish();
    return rc;
  }
  print_speculative_banner(kTool, o.speculative, draft.p);
  ServeEngine engine(model.p, ctx.p, {o.sampling, o.speculative, draft.p, o.chat_template, vision.get(), &state.metrics}, o.max_queue);
  const int32_t n_ctx = les_context_n_ctx(ctx.p);
  state.max_body_bytes = request_body_limit(n_ctx);
  state.json_limits = request_json_limits(n_ctx);
  if (vision) {
    state.image_limits.max_images = static_cast<size_t>(o.max_images);
    state.image_limits.max_image_bytes = static_cast<size_t>(o.max_image_mb * 1024 * 1024);
    // Each image as base64 text (4 characters per 3 bytes) on top of the text's limit.
    state.max_body_bytes += state.image_limits.max_images * ((state.image_limits.max_image_bytes + 2) / 3 * 4 + 256);
  }
  install_routes(server, state);
  state.engine.store(&engine);
  {
    std::lock_guard<std::mutex> lock(start_mu);
    if (!signals.requested()) {
      listener = std::thread([&] {
        listen_ok.store(server.listen_after_bind());
        listen_done.store(true);
      });
      started = true;
    }
  }
  if (started) {
    std::fprintf(stderr,
                 "les serve: ready: %s as \"%s\", n_ctx %d%s; one request at a time, %d more may wait; request "
                 "bodies up to %zu bytes\n",
                 model_desc(model.p).c_str(), state.model_id.c_str(), n_ctx, streaming ? ", experts streamed" : "",
                 o.max_queue, state.max_body_bytes);
    if (vision)
      std::fprintf(stderr, "les serve: images: %s, up to %zu per request of up to %zu bytes each\n", o.mmproj.c_str(),
                   state.image_limits.max_images, state.image_limits.max_image_bytes);
    const bool v6 = o.host.find(':') != std::string::npos;
    std::fprintf(stderr, "les serve: listening on http://%s%s%s:%d\n", v6 ? "[" : "", o.host.c_str(), v6 ? "]" : "",
                 port);
    listener.join();
  }
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
  cmd->add_option("--cors-origin", o->cors_origin,
                  "Allow browser pages of this origin to call the API (CORS): '*', or http[s]://host[:port], "
                  "several separated by commas (default: no CORS)");
  cmd->add_option("--chat-template", o->chat_template,
                  "Chat template by name (chatml, llama3, mistral, gemma, ...; default: the model's own)");
  cmd->add_option("--max-queue", o->max_queue,
                  "Requests that may wait behind the running one; more get 503 with Retry-After (0..256)")
      ->capture_default_str();
  CLI::Option* mmproj = cmd->add_option(
      "--mmproj", o->mmproj,
      "Vision encoder (mmproj GGUF) of the model: chat messages may then hold image_url parts (data: URLs)");
  // Without --mmproj the image limits would silently do nothing: a usage error instead.
  cmd->add_option("--max-images", o->max_images,
                  "With --mmproj: images per request (1.." + std::to_string(kMaxImagesLimit) + ")")
      ->capture_default_str()
      ->needs(mmproj);
  cmd->add_option("--max-image-mb", o->max_image_mb, "With --mmproj: MiB per image as sent (encoded PNG/JPEG/PPM)")
      ->capture_default_str()
      ->needs(mmproj);
  cmd->callback([&state, o] { state.exit_code = serve(*o); });
}

}  // namespace les::tool

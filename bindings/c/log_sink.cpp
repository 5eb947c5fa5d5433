#include "log_sink.h"

#include <mutex>
#include <string>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace les::capi {
namespace {

les_log_level to_les_level(spdlog::level::level_enum l) {
  switch (l) {
    case spdlog::level::trace:
    case spdlog::level::debug: return LES_LOG_DEBUG;
    case spdlog::level::info: return LES_LOG_INFO;
    case spdlog::level::warn: return LES_LOG_WARN;
    default: return LES_LOG_ERROR;
  }
}

spdlog::level::level_enum to_spdlog_level(les_log_level l) {
  switch (l) {
    case LES_LOG_DEBUG: return spdlog::level::debug;
    case LES_LOG_INFO: return spdlog::level::info;
    case LES_LOG_WARN: return spdlog::level::warn;
    case LES_LOG_ERROR: return spdlog::level::err;
  }
  return spdlog::level::warn;
}

class CallbackSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  CallbackSink(les_log_callback cb, void* user_data) : cb_(cb), user_data_(user_data) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    std::string line(buf.data(), buf.size());
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    cb_(to_les_level(msg.level), line.c_str(), user_data_);
  }
  void flush_() override {}

 private:
  les_log_callback cb_;
  void* user_data_;
};

}  // namespace

std::shared_ptr<spdlog::logger> make_logger(les_log_callback cb, void* user_data, les_log_level min_level) {
  spdlog::sink_ptr sink;
  if (cb != nullptr) {
    sink = std::make_shared<CallbackSink>(cb, user_data);
    sink->set_pattern("%v");
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    sink->set_pattern("les %l: %v");
  }
  // Not registered in spdlog's global registry: each model owns its logger.
  auto logger = std::make_shared<spdlog::logger>("les", std::move(sink));
  logger->set_level(to_spdlog_level(min_level));
  return logger;
}

}  // namespace les::capi

#include "common/log.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>

namespace plotq {
namespace {
std::atomic<bool> g_enabled{true};
std::mutex g_mu;
}  // namespace

void set_log_enabled(bool enabled) { g_enabled = enabled; }

void log_event(std::string_view event, nlohmann::json fields) {
  if (!g_enabled) return;
  using namespace std::chrono;
  double ts = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count() / 1000.0;
  nlohmann::json line = nlohmann::json::object();
  line["ts"] = ts;
  line["event"] = std::string(event);
  if (fields.is_object()) {
    for (auto& [k, v] : fields.items()) line[k] = v;
  }
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text.push_back('\n');
  std::lock_guard lock(g_mu);
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace plotq

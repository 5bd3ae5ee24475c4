#include "tools/sweep_server_backend.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "common/base64.hpp"
#include "common/sha256.hpp"
#include "runs/libraries.hpp"
#include "runs/outcome.hpp"
#include "runs/runtime.hpp"
#include "sandbox/config.hpp"
#include "sandbox/figure_renderer.hpp"
#include "sweep/files.hpp"
#include "sweep/outcome.hpp"
#include "tools/http_client.hpp"

namespace plotq::cli {
namespace {

std::size_t base64_decoded_size(const std::string& b64) {
  std::size_t n = b64.size();
  if (n == 0) return 0;
  std::size_t pad = 0;
  if (b64[n - 1] == '=') ++pad;
  if (n > 1 && b64[n - 2] == '=') ++pad;
  return n / 4 * 3 - pad;
}

template <class T>
std::optional<T> field(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return std::nullopt;
  try {
    return j[key].get<T>();
  } catch (...) {
    return std::nullopt;
  }
}

// One theme of POST /render's answer as a row (the same model as in process).
store::SweepResult row_from_answer(const std::string& theme, const nlohmann::json& out) {
  store::SweepResult row;
  row.theme = theme;
  row.exit_code = field<int>(out, "exit_code");
  row.wall_s = std::max(0.0, field<double>(out, "wall_s").value_or(0));
  row.cpu_s = std::max(0.0, field<double>(out, "cpu_s").value_or(0));
  row.max_rss_mb = field<double>(out, "max_rss_mb");
  row.width = field<int>(out, "width");
  row.height = field<int>(out, "height");
  // The answer's reason, read once: null is ok; a name outside the outcome table is unknown.
  const runs::Outcome said = runs::outcome_named(field<std::string>(out, "reason").value_or("ok"));
  std::string png = field<std::string>(out, "png_base64").value_or("");
  if (said == runs::Outcome::ok && !png.empty()) {
    row.outcome = store::SweepOutcome::render;
    row.reason = "ok";
    row.png_bytes = static_cast<std::int64_t>(base64_decoded_size(png));
    std::string canvas = field<std::string>(out, "canvas").value_or("");
    row.canvas = canvas == "exact" || canvas == "off" ? canvas : runs::canvas_of(row.width.value_or(0), row.height.value_or(0));
    return row;
  }
  std::optional<std::string> error_class;
  if (out.contains("error") && out["error"].is_object()) error_class = field<std::string>(out["error"], "class");
  runs::set_failure(row, said == runs::Outcome::ok ? runs::Outcome::no_output : said, error_class);
  if (said == runs::Outcome::canvas_size && row.width && row.height) {
    row.detail = runs::describe_size(*row.width, *row.height);
  } else if (auto m = field<double>(out, "measured"), l = field<double>(out, "limit"); m && l) {
    row.detail = std::to_string(static_cast<long long>(*m)) + "/" + std::to_string(static_cast<long long>(*l));
  }
  return row;
}

}  // namespace

ServerBackend::~ServerBackend() {
  stop_ = true;
  for (auto& [id, t] : threads_)
    if (t.joinable()) t.join();
}

runs::Outcome ServerBackend::support(const std::string& library) {
  return runs::find_library(library) ? runs::Outcome::ok : runs::Outcome::invalid_library;
}

void ServerBackend::find_nodes() {
  HttpResult r = http_call(url_, "GET", "/status", "", 10);
  nlohmann::json j = r.status == 200 ? nlohmann::json::parse(r.body, nullptr, false) : nlohmann::json();
  if (j.is_object() && j.contains("cluster") && j["cluster"].is_object() && j["cluster"].contains("nodes") &&
      j["cluster"]["nodes"].is_array()) {
    for (const auto& n : j["cluster"]["nodes"]) {
      auto address = field<std::string>(n, "address");
      if (field<std::string>(n, "state").value_or("") != "live" || !field<bool>(n, "lease_valid").value_or(false) ||
          !address || address->empty())
        continue;
      auto node = std::make_unique<Node>();
      node->url = "http://" + *address;
      node->slots = std::max(1, static_cast<int>(field<std::int64_t>(n, "slots").value_or(1)));
      nodes_.push_back(std::move(node));
    }
  }
  if (nodes_.empty()) {  // one plotqd (or a cluster whose view is not read yet): the URL given
    nodes_.push_back(std::make_unique<Node>());
    nodes_.back()->url = url_;
  }
}

ServerBackend::Node* ServerBackend::pick() {
  if (nodes_.empty()) find_nodes();
  Node* best = nullptr;
  auto rank = [](const Node* n) { return std::make_pair(n->down ? 1 : 0, n->in_flight - n->slots); };
  for (auto& n : nodes_)
    if (!best || rank(n.get()) < rank(best)) best = n.get();
  return best;
}

void ServerBackend::start(const runs::SweepTask& task, const std::vector<std::string>& themes, double timeout_s,
                          std::function<void(runs::FileOutcome)> done) {
  std::uint64_t id = next_id_++;
  std::string job_id = prefix_ + "-" + std::to_string(id);
  nlohmann::json body = {{"job_id", job_id},    {"source", task.source}, {"library", task.file.library},
                         {"themes", themes},    {"timeout_s", timeout_s}};
  if (!task.data_csv.empty() && runs::render_mode(task.file.library) != runs::RenderMode::snippet) body["data_csv"] = task.data_csv;
  Node* node = pick();
  ++node->in_flight;
  running_[id] = {job_id, node};
  auto work = std::make_shared<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>(
      io_.get_executor());
  threads_[id] = std::thread([this, id, node, body = body.dump(), themes, timeout_s, work, done = std::move(done)]() mutable {
    runs::FileOutcome out = call(node, body, themes, timeout_s);  // node: where it was answered
    boost::asio::post(io_, [this, id, node, work, out = std::move(out), done = std::move(done)]() mutable {
      work->reset();
      auto it = threads_.find(id);
      if (it != threads_.end()) {
        it->second.join();
        threads_.erase(it);
      }
      --node->in_flight;
      running_.erase(id);
      if (stop_) out.cancelled = true;
      done(std::move(out));
    });
  });
}

void ServerBackend::cancel_all() {
  stop_ = true;
  for (const auto& [id, sent] : running_) http_call(sent.second->url, "POST", "/render/" + sent.first + "/cancel", "", 5);
}

runs::FileOutcome ServerBackend::call(Node*& node, const std::string& body, const std::vector<std::string>& themes,
                                      double timeout_s) {
  runs::FileOutcome out;
  // A busy server (queue full, rate window) is waited for, not recorded.
  for (int attempt = 0; attempt < 120 && !stop_; ++attempt) {
    HttpResult r = http_call(node->url, "POST", "/render", body, timeout_s * static_cast<double>(themes.size()) + 120);
    if (!r.error.empty()) {
      // A cluster node that stopped answering: the file goes to another live one, with the same
      // job id (if the lost node had started it, the rescue ended it and the key says so).
      Node* other = nullptr;
      node->down = true;
      for (auto& n : nodes_)
        if (!n->down && (!other || n->in_flight < other->in_flight)) other = n.get();
      if (other) {  // the file's place in the count moves with it
        --node->in_flight;
        ++other->in_flight;
        node = other;
        continue;
      }
      out.error = "POST /render: " + r.error;
      return out;
    }
    nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
    std::string detail = j.is_object() ? field<std::string>(j, "detail").value_or("") : "";
    if (r.status == 200 && j.is_object() && j.contains("outputs")) {
      for (const auto& theme : themes) {
        if (!j["outputs"].contains(theme)) {
          store::SweepResult row;
          row.theme = theme;
          runs::set_failure(row, runs::Outcome::harness_error);
          out.themes.push_back(row);
        } else {
          out.themes.push_back(row_from_answer(theme, j["outputs"][theme]));
          if (out.themes.back().outcome == store::SweepOutcome::render)  // the report's thumbnail
            if (auto png = base64_decode(field<std::string>(j["outputs"][theme], "png_base64").value_or("")))
              out.pngs[theme] = std::move(*png);
          if (runs::outcome_row(runs::outcome_named(out.themes.back().reason)).host && out.error.empty())
            out.error = "the server's render path failed on its host: " + out.themes.back().reason;
        }
      }
      return out;
    }
    // Waiting helps: the queue or slot was full, memory was short, a store write was busy.
    bool busy = r.status == 429 || (r.status == 503 && (detail == "busy" || detail == "capacity" ||
                                                        detail == "low_memory" || detail == "store_unavailable" ||
                                                        detail == "stuck"));
    if (busy) {
      for (int i = 0; i < 10 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (r.status == 503 && (detail == "runtime_unavailable" || detail == "node_lost")) {
      // Not a host failure: this server cannot draw this library (the same as in process); or, in
      // a cluster, the node drawing it was lost mid-run: its job id never runs it again (a
      // retry answers the same), so that is the file's outcome, recorded once.
      for (const auto& theme : themes) {
        store::SweepResult row;
        row.theme = theme;
        runs::set_failure_named(row, detail);
        out.themes.push_back(row);
      }
      return out;
    }
    // Anything else (401/403, 409, 422, 499, 5xx) is not the file's outcome: stop, resume later.
    out.error = "POST /render answered " + std::to_string(r.status) + (detail.empty() ? "" : " " + detail);
    return out;
  }
  if (stop_) out.cancelled = true;
  else out.error = "POST /render: the server stayed busy";
  return out;
}

std::optional<std::string> sweep_runtime_id(const std::optional<std::string>& server, const std::string& glob) {
  std::optional<std::string> python, js, r_id;
  if (!server) {
    python = runs::runtime_id(runs::read_runtime(sandbox::config_from_env().python));
    js = runs::runtime_id(runs::read_js_runtime(sandbox::figure_config_from_env().js_modules));
    r_id = runs::runtime_id(runs::r_runtime());
  } else {
    HttpResult r = http_call(*server, "GET", "/status", "", 10);
    nlohmann::json j = r.status == 200 ? nlohmann::json::parse(r.body, nullptr, false) : nlohmann::json();
    auto id_of = [&](const char* key) -> std::optional<std::string> {
      if (!j.is_object() || !j.contains(key) || !j[key].is_object()) return std::nullopt;
      auto id = field<std::string>(j[key], "id");
      if (!id || id->size() != 12 || id->find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
      return id;
    };
    python = id_of("runtime");
    js = id_of("js_runtime");
    r_id = id_of("r_runtime");
  }
  runs::SweepLanguages l = runs::sweep_languages(glob);
  // One language: its runtime's id. More: sha256 of "<id>+<id>..." in the order python, js, r (a
  // Python+JavaScript sweep keeps the id it had before the R row).
  std::vector<const std::optional<std::string>*> parts;
  if (l.python) parts.push_back(&python);
  if (l.javascript) parts.push_back(&js);
  if (l.r) parts.push_back(&r_id);
  if (parts.size() == 1) return *parts[0];
  std::string joined;
  for (const auto* p : parts) {
    if (!*p) return std::nullopt;
    joined += (joined.empty() ? "" : "+") + **p;
  }
  return sha256_hex(joined).substr(0, 12);
}

}  // namespace plotq::cli

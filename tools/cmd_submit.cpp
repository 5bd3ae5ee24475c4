// plotq submit data FILE | plotq submit render FILE: one job through a running plotqd, the way the
// assistant service sends it (POST /run-data, POST /render), for operators who want to try a
// snippet or a plot file by hand. Writes the table (--out FILE) or the PNGs (--out DIR).
//
// Exit codes: 0 the job ran and succeeded (every theme); 1 it ran and failed, or the server refused
// it (the HTTP status and its code are printed); 2 bad arguments or an unreadable FILE; 3 no answer
// from the server (not running, wrong URL, timeout).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "common/base64.hpp"
#include "common/theme.hpp"
#include "common/env.hpp"
#include "common/settings.hpp"
#include "runs/render_job.hpp"
#include "sandbox/output.hpp"
#include "tools/commands.hpp"
#include "tools/http_client.hpp"

namespace plotq::cli {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Largest FILE read: the biggest source either route takes (a plot file, UTF-8, 4 bytes a character).
constexpr std::size_t kMaxFileBytes = 4 * runs::kMaxRenderSourceChars;
constexpr std::size_t kMaxCsvBytes = 4 * runs::kMaxDataCsvChars;

// A regular file (symlinks are not followed), read under a cap; nullopt with a message on stderr.
std::optional<std::string> read_input(const std::string& path, std::size_t cap) {
  sandbox::OutputRead r = sandbox::read_file(path, cap);
  if (r.status == sandbox::OutputRead::ok) return std::move(r.data);
  std::fprintf(stderr, "plotq submit: %s: not a readable regular file of at most %zu bytes\n", path.c_str(), cap);
  return std::nullopt;
}

// Written beside the target and renamed over it: a reader never sees half a file.
bool write_output(const fs::path& path, const std::string& bytes) {
  fs::path tmp = path;
  tmp += ".part";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.good()) {
      std::fprintf(stderr, "plotq submit: cannot write %s\n", tmp.c_str());
      return false;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::fprintf(stderr, "plotq submit: cannot write %s: %s\n", path.c_str(), ec.message().c_str());
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

std::string fresh_job_id() {
  std::random_device rd;
  char buf[32];
  std::snprintf(buf, sizeof buf, "cli-%08x%08x", rd(), rd());
  return buf;
}

// The library a plot file is written for, when --library is not given: the first one it imports.
std::string guess_library(const std::string& source) {
  for (const char* lib : {"plotly", "bokeh", "seaborn"})
    if (source.find(std::string("import ") + lib) != std::string::npos ||
        source.find(std::string("from ") + lib) != std::string::npos)
      return lib;
  return "matplotlib";
}

std::string text_of(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "none";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

struct Common {
  std::string server, job_id, out;
  double timeout = 0;
  bool as_json = false;
};

// Sends the request; prints and maps a missing or refused answer. On 200 returns the parsed body.
std::optional<json> call(const Common& c, const std::string& path, const json& req, double wait_s, int* rc) {
  HttpResult r = http_call(c.server, "POST", path, req.dump(), wait_s);
  if (!r.error.empty()) {
    std::fprintf(stderr, "plotq submit: no answer from %s (%s)\n", c.server.c_str(), r.error.c_str());
    *rc = 3;
    return std::nullopt;
  }
  json body = json::parse(r.body, nullptr, false);
  if (r.status != 200 || !body.is_object()) {
    std::printf("refused: HTTP %d %s\n", r.status, body.is_object() ? text_of(body, "detail").c_str() : "");
    *rc = 1;
    return std::nullopt;
  }
  return body;
}

int submit_data(const Common& c, const std::string& source) {
  json req = {{"job_id", c.job_id}, {"source", source}, {"timeout_s", c.timeout}};
  int rc = 0;
  auto body = call(c, "/run-data", req, c.timeout + 120, &rc);
  if (!body) return rc;
  bool ok = (*body).value("exit_code", json()) == 0 && (*body)["reason"].is_null() && (*body)["csv_text"].is_string();
  if (c.as_json) {
    std::printf("%s\n", body->dump(2).c_str());
  } else {
    std::printf("job %s: %s (reason %s, %s rows x %s columns, wall %.3f s, slot wait %.3f s)\n", c.job_id.c_str(),
                ok ? "ok" : "failed", text_of(*body, "reason").c_str(), text_of(*body, "rows").c_str(),
                text_of(*body, "columns").c_str(), body->value("wall_s", 0.0),
                body->contains("timings") ? (*body)["timings"].value("slot_wait_s", 0.0) : 0.0);
    std::string tail = text_of(*body, "stderr_tail");
    if (!ok && tail != "none" && !tail.empty()) std::printf("stderr tail:\n%s\n", tail.c_str());
  }
  if (ok && !c.out.empty()) {
    if (!write_output(c.out, (*body)["csv_text"].get<std::string>())) return 1;
    if (!c.as_json) std::printf("wrote %s\n", c.out.c_str());
  }
  return ok ? 0 : 1;
}

int submit_render(const Common& c, const std::string& file, const std::string& source, std::string library,
                  const std::vector<std::string>& themes, const std::string& data_csv) {
  if (library.empty()) library = guess_library(source);
  json req = {{"job_id", c.job_id}, {"source", source}, {"library", library}, {"themes", themes},
              {"timeout_s", c.timeout}};
  if (!data_csv.empty()) req["data_csv"] = data_csv;
  int rc = 0;
  auto body = call(c, "/render", req, c.timeout * static_cast<double>(themes.size()) + 120, &rc);
  if (!body) return rc;
  const json outputs = body->value("outputs", json::object());
  bool all_ok = !outputs.empty();
  std::string stem = fs::path(file).stem().string();
  json shown = *body;
  for (const auto& theme : themes) {
    const json out = outputs.value(theme, json::object());
    std::string png_b64 = out.value("png_base64", json()).is_string() ? out["png_base64"].get<std::string>() : "";
    auto png = base64_decode(png_b64);
    bool ok = out.value("exit_code", json()) == 0 && out.value("reason", json()).is_null() && png && !png->empty();
    all_ok = all_ok && ok;
    if (shown["outputs"].contains(theme) && shown["outputs"][theme].contains("png_base64")) {
      shown["outputs"][theme].erase("png_base64");  // bytes, not text: --out writes them
      shown["outputs"][theme]["png_bytes"] = png ? png->size() : 0;
    }
    if (!c.as_json) {
      std::printf("%s %s: %s (reason %s, %s x %s px, wall %.3f s)\n", c.job_id.c_str(), theme.c_str(),
                  ok ? "ok" : "failed", text_of(out, "reason").c_str(), text_of(out, "width").c_str(),
                  text_of(out, "height").c_str(), out.value("wall_s", 0.0));
      std::string tail = text_of(out, "stderr_tail");
      if (!ok && tail != "none" && !tail.empty()) std::printf("stderr tail:\n%s\n", tail.c_str());
    }
    if (ok && !c.out.empty()) {
      fs::path target = fs::path(c.out) / (stem + "-" + theme + ".png");
      if (!write_output(target, *png)) return 1;
      if (!c.as_json) std::printf("wrote %s\n", target.c_str());
    }
  }
  if (c.as_json) std::printf("%s\n", shown.dump(2).c_str());
  return all_ok ? 0 : 1;
}

int usage_error(const std::string& what) {
  std::fprintf(stderr, "plotq submit: %s\n", what.c_str());
  return 2;
}

}  // namespace

int cmd_submit(Args args) {
  take_db_path(args);  // accepted for symmetry, not used
  Common c;
  try {
    c.server = take_option(args, "--server");
    c.job_id = take_option(args, "--job-id");
    c.out = take_option(args, "--out");
    c.as_json = take_flag(args, "--json");
    std::string timeout_text = take_option(args, "--timeout");
    std::string library = take_option(args, "--library");
    std::string themes_text = take_option(args, "--themes");
    std::string data_path = take_option(args, "--data");
    if (args.size() != 2 || (args[0] != "data" && args[0] != "render"))
      return usage_error("usage: plotq submit data|render FILE [options] (plotq --help)");
    const bool render = args[0] == "render";
    if (!render && (!library.empty() || !themes_text.empty() || !data_path.empty()))
      return usage_error("--library, --themes and --data are for submit render");
    if (c.server.empty()) c.server = "http://" + env_string("PLOTQ_LISTEN", "127.0.0.1:8080");
    if (c.job_id.empty()) c.job_id = fresh_job_id();
    c.timeout = timeout_text.empty() ? (render ? 60 : 20) : std::stod(timeout_text);
    if (!(c.timeout > 0)) return usage_error("--timeout must be a positive number of seconds");
    auto source = read_input(args[1], kMaxFileBytes);
    if (!source) return 2;
    if (!render) return submit_data(c, *source);

    std::vector<std::string> themes = split_list(themes_text.empty() ? std::string(kDefaultTheme) : themes_text);
    std::string data_csv;
    if (!data_path.empty()) {
      auto csv = read_input(data_path, kMaxCsvBytes);
      if (!csv) return 2;
      data_csv = *csv;
    }
    if (!c.out.empty() && !fs::is_directory(c.out)) return usage_error("--out must be an existing directory for render");
    return submit_render(c, args[1], *source, library, themes, data_csv);
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  } catch (const std::out_of_range& e) {
    return usage_error(e.what());
  }
}

}  // namespace plotq::cli

// plotq sweep run|report|diff|list: replay a folder of plot files and compare outcomes. The CLI
// glue: the logic is in sweep/ (sweep/README.md), the rows in store/sweeps.hpp; run's session is
// tools/sweep_run.cpp, its --server backend tools/sweep_server_backend.cpp.
//   plotq sweep run DIR [--glob G] [--library L,...] [--themes light,dark] [--label NAME] [--timeout S]
//                       [--mode sandbox|bare] [--server URL] [--jobs N] [--resume LABEL]
//   plotq sweep report LABEL [--json | --html DIR]
//   plotq sweep diff A B [--json | --html DIR]   exit 1 when any file differs, 0 when none
//   plotq sweep list [--json]
// Exit codes: 0 ok (diff: no difference), 1 diff: differences / run: a store or backend error
// stopped it, 2 bad arguments or unknown label, 130 run interrupted by SIGINT (143 SIGTERM).
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/error.hpp"
#include "store/sweeps.hpp"
#include "store/time.hpp"
#include "sweep/progress.hpp"
#include "sweep/report.hpp"
#include "tools/commands.hpp"
#include "tools/store_read.hpp"
#include "tools/sweep_html.hpp"
#include "tools/sweep_run.hpp"
#include "tools/text_table.hpp"

namespace plotq::cli {
namespace {

using runs::fixed;

constexpr const char* kUsage =
    "usage: plotq sweep run DIR [--glob PATTERN | --language python|javascript|all] [--library L[,L...]]\n"
    "                           [--themes light,dark] [--label NAME]\n"
    "                           [--timeout S] [--mode sandbox|bare] [--server URL] [--jobs N]\n"
    "       plotq sweep run [DIR] --resume LABEL [--jobs N]\n"
    "       plotq sweep report LABEL [--json | --html DIR]\n"
    "       plotq sweep diff A B [--json | --html DIR]\n"
    "       plotq sweep list [--json]\n"
    "  defaults: --glob 'plots/*/implementations/python/*.py' (--language javascript:\n"
    "            'plots/*/implementations/javascript/*', all: 'plots/*/implementations/*/*'), --themes light,dark, --timeout 60,\n"
    "            --mode sandbox, --jobs 1, --label sweep-YYYYMMDD-HHMMSS (UTC)\n"
    "  --html DIR: a page to look at, DIR/index.html with the kept thumbnails in DIR/img (offline, no script)\n";

}  // namespace

int sweep_usage_error(const std::string& what) {
  std::fprintf(stderr, "plotq sweep: %s\n%s", what.c_str(), kUsage);
  return 2;
}

namespace {

int usage_error(const std::string& what) { return sweep_usage_error(what); }
// ---- report, diff, list -----------------------------------------------------------------------

std::string class_cell(const nlohmann::json& side) {
  if (side.is_null()) return "-";
  return side["outcome"].get<std::string>() + " " + side["reason_class"].get<std::string>();
}

int sweep_report_cmd(const std::string& db_path, Args args) {
  bool json = take_flag(args, "--json");
  std::string html = take_option(args, "--html");
  if (args.size() != 1) return usage_error("report needs one LABEL");
  if (json && !html.empty()) return usage_error("--json or --html, not both");
  auto db = open_for_listing(db_path, "sweep");
  std::optional<store::Sweep> s;
  if (db) s = store::sweeps::find(*db, args[0]);
  if (!s) {
    std::fprintf(stderr, "plotq sweep: no sweep labelled '%s'\n", args[0].c_str());
    return 2;
  }
  std::vector<store::SweepResult> rows = store::sweeps::results(*db, s->id);
  nlohmann::json r = runs::sweep_report(*s, rows);
  if (!html.empty()) return write_report_html(db_path, *s, rows, r, html);
  if (json) {
    std::printf("%s\n", r.dump(2).c_str());
    return 0;
  }
  std::printf("sweep %s: %s mode%s, %s; %s (glob %s, themes %s%s)\n", s->label.c_str(), s->mode.c_str(),
              s->server_url ? (" via " + *s->server_url).c_str() : "", s->state.c_str(), s->root.c_str(),
              s->glob.c_str(), s->themes.c_str(), s->libraries ? (", libraries " + *s->libraries).c_str() : "");
  std::printf("runtime %s\n", id_or_unknown(s->runtime_id).c_str());
  std::printf("files %d of %d recorded, %d render in every theme; rows %d: render %d (%d off the canvas), fail %d\n\n",
              r["files"]["done"].get<int>(), r["files"]["total"].get<int>(), r["files"]["all_render"].get<int>(),
              r["rows"].get<int>(), r["outcomes"]["render"].get<int>(), r["outcomes"]["canvas_off"].get<int>(),
              r["outcomes"]["fail"].get<int>());
  std::vector<std::vector<std::string>> t;
  for (const auto& l : r["by_library"]) {
    std::string sizes;
    for (const auto& z : l["off_sizes"])
      sizes += (sizes.empty() ? "" : ", ") + z["size"].get<std::string>() + " x" + std::to_string(z["rows"].get<int>());
    t.push_back({l["library"], std::to_string(l["files"].get<int>()), std::to_string(l["render"].get<int>()),
                 std::to_string(l["canvas_off"].get<int>()), std::to_string(l["fail"].get<int>()),
                 sizes.empty() ? "-" : sizes});
  }
  print_table(stdout, {"LIBRARY", "FILES", "RENDER", "OFF_CANVAS", "FAIL", "OFF_SIZES"}, t);
  std::printf("\n");
  t.clear();
  for (const auto& w : r["by_reason"])
    t.push_back({w["reason_class"], w["reason"], std::to_string(w["rows"].get<int>()),
                 std::to_string(w["files"].get<int>())});
  print_table(stdout, {"REASON_CLASS", "REASON", "ROWS", "FILES"}, t);
  std::printf("\nslowest:\n");
  t.clear();
  for (const auto& w : r["slowest"])
    t.push_back({w["path"], w["theme"], fixed(w["wall_s"].get<double>(), 2), fixed(w["cpu_s"].get<double>(), 2),
                 w["max_rss_mb"].is_null() ? "-" : fixed(w["max_rss_mb"].get<double>(), 1),
                 w["outcome"].get<std::string>() + " " + w["reason_class"].get<std::string>()});
  print_table(stdout, {"PATH", "THEME", "WALL_S", "CPU_S", "RSS_MB", "OUTCOME"}, t);
  const auto& tot = r["totals"];
  std::printf("\ntotals: sweep elapsed %ss; per row wall %ss (mean %ss), cpu %ss; peak rss %s MB\n",
              fixed(tot["elapsed_s"].get<double>(), 1).c_str(), fixed(tot["wall_s"].get<double>(), 1).c_str(),
              fixed(tot["mean_wall_s"].get<double>(), 2).c_str(), fixed(tot["cpu_s"].get<double>(), 1).c_str(),
              fixed(tot["max_rss_mb"].get<double>(), 1).c_str());
  return 0;
}

int sweep_diff_cmd(const std::string& db_path, Args args) {
  bool json = take_flag(args, "--json");
  std::string html = take_option(args, "--html");
  if (args.size() != 2) return usage_error("diff needs two labels");
  if (json && !html.empty()) return usage_error("--json or --html, not both");
  auto db = open_for_listing(db_path, "sweep");
  std::optional<store::Sweep> a, b;
  if (db) {
    a = store::sweeps::find(*db, args[0]);
    b = store::sweeps::find(*db, args[1]);
  }
  for (const auto& [label, s] : {std::pair{args[0], &a}, std::pair{args[1], &b}}) {
    if (!*s) {
      std::fprintf(stderr, "plotq sweep: no sweep labelled '%s'\n", label.c_str());
      return 2;
    }
  }
  nlohmann::json d = runs::sweep_diff(*a, store::sweeps::results(*db, a->id), *b, store::sweeps::results(*db, b->id));
  std::size_t n = d["count"].get<std::size_t>();
  if (!html.empty()) {
    if (write_diff_html(db_path, *a, *b, d, html) != 0) return 2;  // diff's 1 means "differences"
    return n == 0 ? 0 : 1;
  }
  if (json) {
    std::printf("%s\n", d.dump(2).c_str());
    return n == 0 ? 0 : 1;
  }
  std::vector<std::vector<std::string>> t;
  for (const auto& x : d["differences"]) {
    std::string ha = x["a"].is_null() ? "" : x["a"]["sha256"].get<std::string>().substr(0, 12);
    std::string hb = x["b"].is_null() ? "" : x["b"]["sha256"].get<std::string>().substr(0, 12);
    std::string hash = ha.empty() ? hb : hb.empty() ? ha : ha == hb ? ha : ha + " -> " + hb;
    t.push_back({x["path"], x["theme"], x["kind"], class_cell(x["a"]), class_cell(x["b"]), hash, x["cause"]});
  }
  if (!t.empty()) {
    print_table(stdout, {"PATH", "THEME", "KIND", args[0], args[1], "SHA256", "CAUSE"}, t);
    std::printf("\n");
  }
  // What changed between the two: the runtime (its id), or not (then a difference is the code's:
  // the file's bytes, the mode's rules or plotq itself; CAUSE says which per row).
  std::string ra = id_or_unknown(a->runtime_id), rb = id_or_unknown(b->runtime_id);
  if (d["runtime_changed"].get<bool>())
    std::printf("the runtime changed: %s ran on %s, %s on %s\n", args[0].c_str(), ra.c_str(), args[1].c_str(), rb.c_str());
  else
    std::printf("the runtime is the same (%s): differences come from the code (the file, the mode or plotq)\n", ra.c_str());
  auto note = [](const nlohmann::json& h) {
    std::string s = h["mode"].get<std::string>() + ", " + h["state"].get<std::string>();
    if (h["state"] != "done")
      s += ", " + std::to_string(h["files_done"].get<int>()) + " of " + std::to_string(h["files_total"].get<int>()) + " files";
    return s;
  };
  std::printf("%zu difference%s in %zu rows compared: %s (%s) vs %s (%s)\n", n, n == 1 ? "" : "s",
              d["compared"].get<std::size_t>(), args[0].c_str(), note(d["a"]).c_str(), args[1].c_str(),
              note(d["b"]).c_str());
  return n == 0 ? 0 : 1;
}

int sweep_list(const std::string& db_path, Args args) {
  bool json = take_flag(args, "--json");
  if (!args.empty()) return usage_error("list takes no arguments");
  std::vector<store::Sweep> sweeps;
  auto db = open_for_listing(db_path, "sweep");
  if (db) sweeps = store::sweeps::list(*db);
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::vector<std::string>> t;
  for (const auto& s : sweeps) {
    auto rows = store::sweeps::results(*db, s.id);
    nlohmann::json r = runs::sweep_report(s, rows, 0);
    out.push_back({{"label", s.label},
                   {"mode", s.mode},
                   {"server_url", s.server_url ? nlohmann::json(*s.server_url) : nlohmann::json()},
                   {"state", s.state},
                   {"files_done", r["files"]["done"]},
                   {"files_total", s.files_total},
                   {"render", r["outcomes"]["render"]},
                   {"fail", r["outcomes"]["fail"]},
                   {"elapsed_s", s.elapsed_s},
                   {"runtime_id", s.runtime_id ? nlohmann::json(*s.runtime_id) : nlohmann::json()},
                   {"created_at", store::iso_utc(s.created_at)}});
    t.push_back({s.label, s.mode + (s.server_url ? "+server" : ""), s.state,
                 std::to_string(r["files"]["done"].get<int>()) + "/" + std::to_string(s.files_total),
                 std::to_string(r["outcomes"]["render"].get<int>()), std::to_string(r["outcomes"]["fail"].get<int>()),
                 fixed(s.elapsed_s, 1), store::iso_utc(s.created_at)});
  }
  if (json) {
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  print_table(stdout, {"LABEL", "MODE", "STATE", "FILES", "RENDER", "FAIL", "ELAPSED_S", "CREATED"}, t);
  return 0;
}

}  // namespace

int cmd_sweep(Args args) {
  std::string sub;
  try {
    std::string db_path = take_db_path(args);
    if (take_flag(args, "--help")) {
      std::printf("%s", kUsage);
      return 0;
    }
    if (args.empty()) return usage_error("which subcommand?");
    sub = args[0];
    args.erase(args.begin());
    if (sub == "run") return sweep_run(db_path, args);
    if (sub == "report") return sweep_report_cmd(db_path, args);
    if (sub == "diff") return sweep_diff_cmd(db_path, args);
    if (sub == "list") return sweep_list(db_path, args);
    return usage_error("unknown subcommand '" + sub + "'");
  } catch (const std::invalid_argument& e) {  // take_option: --html without its DIR
    return usage_error(e.what());
  } catch (const store::StoreError& e) {
    std::fprintf(stderr, "plotq sweep: %s: %s\n", e.code().c_str(), e.what());
    return sub == "diff" ? 2 : 1;  // diff's 1 means "differences"
  }
}

}  // namespace plotq::cli

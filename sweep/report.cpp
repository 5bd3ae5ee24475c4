#include "sweep/report.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "store/time.hpp"

namespace plotq::runs {
namespace {

constexpr std::size_t kOffSizesShown = 3;

template <class T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json sweep_head(const store::Sweep& s, const std::vector<store::SweepResult>& rows) {
  std::set<std::string> files;
  for (const auto& r : rows) files.insert(r.path);
  return {{"label", s.label},
          {"mode", s.mode},
          {"server_url", opt(s.server_url)},
          {"state", s.state},
          {"files_done", files.size()},
          {"files_total", s.files_total},
          {"runtime_id", opt(s.runtime_id)},
          {"plotq_version", s.plotq_version}};
}

// Two sweeps ran on different runtimes; an unknown id on either side counts as a change (nothing
// says they were the same).
bool runtime_changed(const store::Sweep& a, const store::Sweep& b) {
  return !a.runtime_id || !b.runtime_id || *a.runtime_id != *b.runtime_id;
}

}  // namespace

std::string diff_cause(bool hash_changed, const store::Sweep& a, const store::Sweep& b) {
  if (hash_changed) return "file";
  if (runtime_changed(a, b)) return "runtime";
  if (a.mode != b.mode) return "mode";
  if (a.plotq_version != b.plotq_version) return "plotq";
  return "unexplained";
}

namespace {

nlohmann::json side(const store::SweepResult& r) {
  return {{"outcome", store::to_string(r.outcome)}, {"reason", r.reason}, {"reason_class", r.reason_class}, {"sha256", r.sha256}};
}

}  // namespace

nlohmann::json sweep_report(const store::Sweep& s, const std::vector<store::SweepResult>& rows, std::size_t slowest) {
  std::map<std::string, bool> file_all_render;  // path -> every theme rendered
  struct Lib {
    std::set<std::string> files;
    std::size_t render = 0, fail = 0, off = 0;
    std::map<std::string, std::size_t> off_sizes;  // "WxH" -> rows
  };
  std::map<std::string, Lib> libs;
  struct Reason {
    std::string reason;
    std::size_t rows = 0;
    std::set<std::string> files;
  };
  std::map<std::string, Reason> reasons;
  std::size_t render = 0, fail = 0, off = 0;
  double wall = 0, cpu = 0, rss = 0;
  for (const auto& r : rows) {
    bool ok = r.outcome == store::SweepOutcome::render;
    auto [it, fresh] = file_all_render.emplace(r.path, ok);
    if (!fresh) it->second = it->second && ok;
    Lib& l = libs[r.library];
    l.files.insert(r.path);
    (ok ? l.render : l.fail) += 1;
    (ok ? render : fail) += 1;
    if (ok && r.canvas == "off") {
      ++l.off;
      ++off;
      ++l.off_sizes[std::to_string(r.width.value_or(0)) + "x" + std::to_string(r.height.value_or(0))];
    }
    if (!ok) {
      Reason& why = reasons[r.reason_class];
      why.reason = r.reason;
      why.rows += 1;
      why.files.insert(r.path);
    }
    wall += r.wall_s;
    cpu += r.cpu_s;
    if (r.max_rss_mb) rss = std::max(rss, *r.max_rss_mb);
  }
  std::size_t all_render = 0;
  for (const auto& [p, ok] : file_all_render) all_render += ok ? 1 : 0;

  nlohmann::json by_library = nlohmann::json::array();
  for (const auto& [name, l] : libs) {
    // The drift: renders off the canvas and their most common sizes.
    std::vector<std::pair<std::string, std::size_t>> sizes(l.off_sizes.begin(), l.off_sizes.end());
    std::stable_sort(sizes.begin(), sizes.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    nlohmann::json top = nlohmann::json::array();
    for (std::size_t i = 0; i < sizes.size() && i < kOffSizesShown; ++i)
      top.push_back({{"size", sizes[i].first}, {"rows", sizes[i].second}});
    by_library.push_back({{"library", name},
                          {"files", l.files.size()},
                          {"render", l.render},
                          {"fail", l.fail},
                          {"canvas_exact", l.render - l.off},
                          {"canvas_off", l.off},
                          {"off_sizes", top}});
  }

  std::vector<std::pair<std::string, Reason>> sorted(reasons.begin(), reasons.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.second.rows > y.second.rows; });
  nlohmann::json by_reason = nlohmann::json::array();
  for (const auto& [cls, why] : sorted)
    by_reason.push_back({{"reason_class", cls}, {"reason", why.reason}, {"rows", why.rows}, {"files", why.files.size()}});

  std::vector<const store::SweepResult*> order;
  for (const auto& r : rows) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](auto* x, auto* y) { return x->wall_s > y->wall_s; });
  nlohmann::json slow = nlohmann::json::array();
  for (std::size_t i = 0; i < order.size() && i < slowest; ++i) {
    const auto& r = *order[i];
    slow.push_back({{"path", r.path},
                    {"theme", r.theme},
                    {"library", r.library},
                    {"outcome", store::to_string(r.outcome)},
                    {"reason_class", r.reason_class},
                    {"wall_s", r.wall_s},
                    {"cpu_s", r.cpu_s},
                    {"max_rss_mb", opt(r.max_rss_mb)}});
  }

  return {{"label", s.label},
          {"mode", s.mode},
          {"server_url", opt(s.server_url)},
          {"state", s.state},
          {"root", s.root},
          {"glob", s.glob},
          {"libraries", opt(s.libraries)},
          {"themes", s.themes},
          {"timeout_s", s.timeout_s},
          {"jobs", s.jobs},
          {"plotq_version", s.plotq_version},
          {"created_at", store::iso_utc(s.created_at)},
          {"finished_at", s.finished_at ? nlohmann::json(store::iso_utc(*s.finished_at)) : nlohmann::json()},
          {"files", {{"total", s.files_total}, {"done", file_all_render.size()}, {"all_render", all_render}}},
          {"rows", rows.size()},
          {"outcomes", {{"render", render}, {"fail", fail}, {"canvas_off", off}}},
          {"runtime_id", opt(s.runtime_id)},
          {"by_library", by_library},
          {"by_reason", by_reason},
          {"slowest", slow},
          {"totals",
           {{"elapsed_s", s.elapsed_s},
            {"wall_s", wall},
            {"cpu_s", cpu},
            {"mean_wall_s", rows.empty() ? 0.0 : wall / static_cast<double>(rows.size())},
            {"max_rss_mb", rss}}}};
}

nlohmann::json sweep_diff(const store::Sweep& a, const std::vector<store::SweepResult>& rows_a, const store::Sweep& b,
                          const std::vector<store::SweepResult>& rows_b) {
  using Key = std::pair<std::string, std::string>;
  std::map<Key, const store::SweepResult*> ma, mb;
  for (const auto& r : rows_a) ma[{r.path, r.theme}] = &r;
  for (const auto& r : rows_b) mb[{r.path, r.theme}] = &r;
  std::set<Key> keys;
  for (const auto& [k, r] : ma) keys.insert(k);
  for (const auto& [k, r] : mb) keys.insert(k);

  nlohmann::json diffs = nlohmann::json::array();
  std::size_t compared = 0;
  for (const Key& k : keys) {
    auto ia = ma.find(k);
    auto ib = mb.find(k);
    const store::SweepResult* ra = ia == ma.end() ? nullptr : ia->second;
    const store::SweepResult* rb = ib == mb.end() ? nullptr : ib->second;
    std::string kind;
    if (ra && rb) {
      ++compared;
      if (ra->outcome == rb->outcome && ra->reason_class == rb->reason_class) continue;
      kind = "changed";
    } else {
      kind = ra ? "only_a" : "only_b";
    }
    bool hash_changed = ra && rb && ra->sha256 != rb->sha256;
    diffs.push_back({{"path", k.first},
                     {"theme", k.second},
                     {"kind", kind},
                     {"hash_changed", hash_changed},
                     {"cause", ra && rb ? diff_cause(hash_changed, a, b) : "file_set"},
                     {"a", ra ? side(*ra) : nlohmann::json()},
                     {"b", rb ? side(*rb) : nlohmann::json()}});
  }
  return {{"a", sweep_head(a, rows_a)},
          {"b", sweep_head(b, rows_b)},
          {"runtime_changed", runtime_changed(a, b)},
          {"compared", compared},
          {"count", diffs.size()},
          {"differences", diffs}};
}

}  // namespace plotq::runs

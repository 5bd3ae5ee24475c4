#include "sweep/report_html.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "common/base64.hpp"
#include "common/sha256.hpp"
#include "sweep/images.hpp"
#include "sweep/progress.hpp"

namespace plotq::runs {
namespace {

// The page's only style; its hash goes into the CSP, so editing it needs nothing else.
constexpr const char* kCss = R"(body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d1d1f;background:#fafafa}
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.15em;margin:1.5em 0 .5em}
p.meta{margin:.1em 0;color:#444}code{font-family:ui-monospace,monospace;font-size:.92em}
table{border-collapse:collapse;background:#fff}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th:first-child,td:first-child{text-align:left}tr.total td{font-weight:600}td.zero{color:#aaa}
th.fail{color:#a11}th.render{color:#161}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:12px}
.file,.diff{background:#fff;border:1px solid #ccc;border-radius:6px;padding:8px}
.file h3,.diff h3{font-size:.95em;margin:0 0 .2em;overflow-wrap:anywhere}
.file p.lib,.diff p.why{margin:0 0 .4em;color:#555;font-size:.9em}
.themes,.pair{display:flex;gap:8px;flex-wrap:wrap}
figure{margin:0;flex:1 1 150px;min-width:150px}
figure img{display:block;width:100%;height:auto;border:1px solid #ddd;background:#eee}
.noimg{display:flex;align-items:center;justify-content:center;min-height:90px;background:#f3e8e8;color:#a11;
border:1px dashed #d99;font-size:.9em;text-align:center;padding:4px;overflow-wrap:anywhere}
figcaption{font-size:.85em;color:#333;margin-top:.2em;overflow-wrap:anywhere}
.fail figcaption b.o{color:#a11}.render figcaption b.o{color:#161}
.diff{margin-bottom:12px}.pair figure{max-width:320px}
)";

std::string num(double v, int digits) { return fixed(v, digits); }

std::string str(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "";
  if (j[key].is_string()) return j[key].get<std::string>();
  return j[key].dump();
}

std::string head(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"" + report_csp() + "\">\n"
         "<meta name=\"referrer\" content=\"no-referrer\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<title>" + html_escape(title) + "</title>\n<style>" + kCss + "</style>\n</head>\n<body>\n";
}

// One theme of one file: its thumbnail, or a box saying why there is none.
std::string figure(const std::string& src, bool has_image, const std::string& alt, const std::string& box_text,
                   const std::string& cls, const std::string& theme, const std::string& caption) {
  std::string out = "<figure class=\"" + cls + "\" data-theme=\"" + html_escape(theme) + "\">";
  if (has_image)
    out += "<img src=\"" + html_escape(src) + "\" alt=\"" + html_escape(alt) + "\" loading=\"lazy\" decoding=\"async\">";
  else
    out += "<div class=\"noimg\">" + html_escape(box_text) + "</div>";
  return out + "<figcaption>" + caption + "</figcaption></figure>";
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence (no overlong form, no surrogate, <= U+10FFFF) is copied; any
    // other byte becomes U+FFFD.
    std::size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    if (c >= 0xF5) n = 0;
    bool ok = n > 0 && i + n <= s.size();
    for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (ok && n >= 3) {
      auto c1 = static_cast<unsigned char>(s[i + 1]);
      if (c == 0xE0 && c1 < 0xA0) ok = false;   // overlong
      if (c == 0xED && c1 >= 0xA0) ok = false;  // surrogate
      if (c == 0xF0 && c1 < 0x90) ok = false;   // overlong
      if (c == 0xF4 && c1 >= 0x90) ok = false;  // past U+10FFFF
    }
    if (ok) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::string outcome_class(const store::SweepResult& row) {
  return row.outcome == store::SweepOutcome::render ? "render" : row.reason_class;
}

std::string report_csp() {
  Sha256 h;
  h.update(kCss);
  auto d = h.digest();
  std::string hash = base64_encode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
  return "default-src 'none'; img-src 'self'; style-src 'sha256-" + hash +
         "'; base-uri 'none'; form-action 'none'";
}

std::string report_html(const nlohmann::json& r, const std::vector<store::SweepResult>& rows,
                        const std::set<std::string>& images) {
  std::string label = str(r, "label");
  std::string out = head("plotq sweep " + label);
  out += "<h1>Sweep <code>" + html_escape(label) + "</code></h1>\n";
  out += "<p class=\"meta\">" + html_escape(str(r, "mode")) + " mode" +
         (str(r, "server_url").empty() ? "" : " via " + html_escape(str(r, "server_url"))) + ", " +
         html_escape(str(r, "state")) + "; <code>" + html_escape(str(r, "root")) + "</code> (glob <code>" +
         html_escape(str(r, "glob")) + "</code>, themes " + html_escape(str(r, "themes")) + ")</p>\n";
  out += "<p class=\"meta\">runtime " + html_escape(str(r, "runtime_id").empty() ? "unknown" : str(r, "runtime_id")) +
         ", plotq " + html_escape(str(r, "plotq_version")) + ", started " + html_escape(str(r, "created_at")) +
         (str(r, "finished_at").empty() ? "" : ", finished " + html_escape(str(r, "finished_at"))) + "</p>\n";
  const auto& files = r.value("files", nlohmann::json::object());
  const auto& oc = r.value("outcomes", nlohmann::json::object());
  out += "<p class=\"meta\" id=\"summary\">files " + str(files, "done") + " of " + str(files, "total") +
         " recorded, " + str(files, "all_render") + " render in every theme; rows " + str(r, "rows") + ": render " +
         str(oc, "render") + " (" + str(oc, "canvas_off") + " off the canvas), fail " + str(oc, "fail") + "</p>\n";

  // Counts per library and outcome class: render first, then the fail classes, most rows first.
  std::map<std::string, std::map<std::string, std::size_t>> counts;  // library -> class -> rows
  std::map<std::string, std::set<std::string>> lib_files;
  std::map<std::string, std::size_t> class_total;
  for (const auto& row : rows) {
    std::string cls = outcome_class(row);
    ++counts[row.library][cls];
    lib_files[row.library].insert(row.path);
    ++class_total[cls];
  }
  std::vector<std::string> classes;
  for (const auto& [cls, n] : class_total)
    if (cls != "render") classes.push_back(cls);
  std::stable_sort(classes.begin(), classes.end(),
                   [&](const auto& x, const auto& y) { return class_total[x] > class_total[y]; });
  classes.insert(classes.begin(), "render");
  out += "<h2>Outcomes by library</h2>\n<table id=\"counts\">\n<thead><tr><th>library</th><th>files</th>";
  for (const auto& cls : classes)
    out += "<th class=\"" + std::string(cls == "render" ? "render" : "fail") + "\">" + html_escape(cls) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  auto cell = [&](const std::string& lib_attr, const std::string& cls, std::size_t n) {
    return "<td data-library=\"" + html_escape(lib_attr) + "\" data-class=\"" + html_escape(cls) + "\"" +
           (n == 0 ? " class=\"zero\"" : "") + ">" + std::to_string(n) + "</td>";
  };
  std::size_t all_files = 0;
  for (const auto& [lib, by_class] : counts) {
    out += "<tr><td>" + html_escape(lib) + "</td><td data-library=\"" + html_escape(lib) +
           "\" data-class=\"files\">" + std::to_string(lib_files[lib].size()) + "</td>";
    all_files += lib_files[lib].size();
    for (const auto& cls : classes) {
      auto it = by_class.find(cls);
      out += cell(lib, cls, it == by_class.end() ? 0 : it->second);
    }
    out += "</tr>\n";
  }
  // The total row's cells carry data-total instead (no library is called that).
  out += "<tr class=\"total\"><td>all</td><td data-total=\"files\">" + std::to_string(all_files) + "</td>";
  for (const auto& cls : classes)
    out += "<td data-total=\"" + html_escape(cls) + "\">" + std::to_string(class_total[cls]) + "</td>";
  out += "</tr>\n</tbody>\n</table>\n";

  // A card per file: its themes side by side.
  const std::string theme_order = str(r, "themes");  // "light,dark": find() gives the order
  out += "<h2>Files</h2>\n<div class=\"grid\" id=\"files\">\n";
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i;
    while (j < rows.size() && rows[j].path == rows[i].path) ++j;
    const auto& first = rows[i];
    out += "<article class=\"file\" data-path=\"" + html_escape(first.path) + "\"><h3>" + html_escape(first.path) +
           "</h3><p class=\"lib\">" + html_escape(first.library) + " &middot; sha256 <code>" +
           html_escape(first.sha256.substr(0, 12)) + "</code></p><div class=\"themes\">";
    // The themes in the order the sweep asked for them (rows come ordered by name).
    std::vector<const store::SweepResult*> themes;
    for (std::size_t k = i; k < j; ++k) themes.push_back(&rows[k]);
    std::stable_sort(themes.begin(), themes.end(), [&](auto* x, auto* y) {
      return theme_order.find(x->theme) < theme_order.find(y->theme);
    });
    for (const store::SweepResult* t : themes) {
      const auto& row = *t;
      std::string name = sweep_image_name(row.path, row.theme);
      bool render = row.outcome == store::SweepOutcome::render;
      std::string caption = "<b>" + html_escape(row.theme) + "</b> <b class=\"o\">" +
                            html_escape(render ? "render" : "fail " + row.reason_class) + "</b>";
      if (render && row.width && row.height)
        caption += " " + std::to_string(*row.width) + "x" + std::to_string(*row.height) + " " +
                   html_escape(row.canvas.value_or(""));
      if (!render && row.reason_class != row.reason) caption += " (" + html_escape(row.reason) + ")";
      if (row.detail) caption += " <code>" + html_escape(*row.detail) + "</code>";
      caption += "<br>" + num(row.wall_s, 2) + " s wall, " + num(row.cpu_s, 2) + " s CPU";
      if (row.max_rss_mb) caption += ", " + num(*row.max_rss_mb, 0) + " MB";
      out += figure("img/" + name, render && images.count(name) > 0, row.path + " (" + row.theme + ")",
                    render ? "no image kept" : row.reason_class, render ? "render" : "fail", row.theme, caption);
    }
    out += "</div></article>\n";
    i = j;
  }
  out += "</div>\n</body>\n</html>\n";
  return out;
}

std::string diff_html(const nlohmann::json& d, const std::set<std::string>& images_a,
                      const std::set<std::string>& images_b) {
  const auto& a = d.value("a", nlohmann::json::object());
  const auto& b = d.value("b", nlohmann::json::object());
  std::string la = str(a, "label"), lb = str(b, "label");
  std::string out = head("plotq sweep diff " + la + " " + lb);
  out += "<h1>Sweep diff <code>" + html_escape(la) + "</code> &rarr; <code>" + html_escape(lb) + "</code></h1>\n";
  for (const auto* side : {&a, &b}) {
    out += "<p class=\"meta\"><code>" + html_escape(str(*side, "label")) + "</code>: " +
           html_escape(str(*side, "mode")) + " mode, " + html_escape(str(*side, "state")) + ", " +
           str(*side, "files_done") + " of " + str(*side, "files_total") + " files, runtime " +
           html_escape(str(*side, "runtime_id").empty() ? "unknown" : str(*side, "runtime_id")) + ", plotq " +
           html_escape(str(*side, "plotq_version")) + "</p>\n";
  }
  bool runtime_changed = d.value("runtime_changed", false);
  out += "<p class=\"meta\">" +
         std::string(runtime_changed ? "The runtime changed."
                                     : "The runtime is the same: differences come from the code (the file, the mode "
                                       "or plotq).") +
         "</p>\n";
  out += "<p class=\"meta\" id=\"summary\"><span id=\"count\">" + str(d, "count") + "</span> differences in " +
         str(d, "compared") + " rows compared</p>\n";
  for (const auto& x : d.value("differences", nlohmann::json::array())) {
    std::string path = str(x, "path"), theme = str(x, "theme");
    std::string name = sweep_image_name(path, theme);
    out += "<section class=\"diff\" data-path=\"" + html_escape(path) + "\" data-theme=\"" + html_escape(theme) +
           "\" data-kind=\"" + html_escape(str(x, "kind")) + "\" data-cause=\"" + html_escape(str(x, "cause")) +
           "\"><h3>" + html_escape(path) + " &middot; " + html_escape(theme) + "</h3><p class=\"why\">" +
           html_escape(str(x, "kind")) + ", cause " + html_escape(str(x, "cause")) +
           (x.value("hash_changed", false) ? " (the file's bytes changed)" : "") + "</p><div class=\"pair\">";
    for (const auto& [key, label, images] : {std::tuple{"a", la, &images_a}, std::tuple{"b", lb, &images_b}}) {
      const auto& s = x.contains(key) ? x[key] : nlohmann::json();
      std::string cls = std::string("side ") + key;
      if (s.is_null()) {
        out += figure("", false, "", "not in this sweep", cls, theme,
                      "<b>" + html_escape(label) + "</b>: no row");
        continue;
      }
      bool render = str(s, "outcome") == "render";
      std::string caption = "<b>" + html_escape(label) + "</b>: <b class=\"o\">" +
                            html_escape(render ? "render" : "fail " + str(s, "reason_class")) + "</b>";
      if (!render && str(s, "reason") != str(s, "reason_class")) caption += " (" + html_escape(str(s, "reason")) + ")";
      caption += " <code>" + html_escape(str(s, "sha256").substr(0, 12)) + "</code>";
      out += figure(std::string("img/") + key + "/" + name, render && images->count(name) > 0,
                    path + " (" + theme + ", " + label + ")", render ? "no image kept" : str(s, "reason_class"),
                    cls + (render ? " render" : " fail"), theme, caption);
    }
    out += "</div></section>\n";
  }
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace plotq::runs

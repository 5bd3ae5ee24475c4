#include "tools/sweep_html.hpp"

#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "common/files.hpp"
#include "sandbox/output.hpp"
#include "store/sweep_images.hpp"
#include "sweep/images.hpp"
#include "sweep/report_html.hpp"

namespace plotq::cli {
namespace {

// Writes path whole (common/files.hpp); throws with the reason.
void write_whole(const std::string& path, const std::string& bytes) {
  if (std::string why = write_file_replacing(path, bytes); !why.empty()) throw std::runtime_error(why);
}

// Copies the thumbnail of every (path, theme) asked for from the sweep's image dir to `to`;
// returns the names copied. The source files are read like a job's output (never a link, a
// regular file, under the cap) and must be PNGs: whatever else lies there is left out.
std::set<std::string> copy_images(const std::string& from, const std::string& to,
                                  const std::set<std::string>& names) {
  std::set<std::string> copied;
  if (names.empty()) return copied;
  std::filesystem::create_directories(to);
  for (const auto& name : names) {
    sandbox::OutputRead r = sandbox::read_file(from + "/" + name, runs::kThumbMaxBytes);
    if (r.status != sandbox::OutputRead::ok || r.data.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) continue;
    write_whole(to + "/" + name, r.data);
    copied.insert(name);
  }
  return copied;
}

std::set<std::string> render_names(const std::vector<store::SweepResult>& rows) {
  std::set<std::string> names;
  for (const auto& r : rows)
    if (r.outcome == store::SweepOutcome::render) names.insert(runs::sweep_image_name(r.path, r.theme));
  return names;
}

std::set<std::string> diff_names(const nlohmann::json& diff, const char* side) {
  std::set<std::string> names;
  for (const auto& x : diff["differences"])
    if (x[side].is_object() && x[side]["outcome"] == "render")
      names.insert(runs::sweep_image_name(x["path"].get<std::string>(), x["theme"].get<std::string>()));
  return names;
}

int failed(const std::string& dir, const std::exception& e) {
  std::fprintf(stderr, "plotq sweep: cannot write the page in %s: %s\n", dir.c_str(), e.what());
  return 1;
}

}  // namespace

int write_report_html(const std::string& db_path, const store::Sweep& sweep,
                      const std::vector<store::SweepResult>& rows, const nlohmann::json& report,
                      const std::string& dir) {
  try {
    std::filesystem::create_directories(dir);
    std::set<std::string> wanted = render_names(rows);
    std::set<std::string> images = copy_images(store::sweep_images_dir(db_path, sweep.id), dir + "/img", wanted);
    write_whole(dir + "/index.html", runs::report_html(report, rows, images));
    std::printf("wrote %s/index.html: %zu rows, %zu of %zu renders with a thumbnail\n", dir.c_str(), rows.size(),
                images.size(), wanted.size());
    return 0;
  } catch (const std::exception& e) {
    return failed(dir, e);
  }
}

int write_diff_html(const std::string& db_path, const store::Sweep& a, const store::Sweep& b,
                    const nlohmann::json& diff, const std::string& dir) {
  try {
    std::filesystem::create_directories(dir);
    std::set<std::string> ia = copy_images(store::sweep_images_dir(db_path, a.id), dir + "/img/a", diff_names(diff, "a"));
    std::set<std::string> ib = copy_images(store::sweep_images_dir(db_path, b.id), dir + "/img/b", diff_names(diff, "b"));
    write_whole(dir + "/index.html", runs::diff_html(diff, ia, ib));
    std::printf("wrote %s/index.html: %zu differences, %zu thumbnails\n", dir.c_str(),
                diff["count"].get<std::size_t>(), ia.size() + ib.size());
    return 0;
  } catch (const std::exception& e) {
    return failed(dir, e);
  }
}

}  // namespace plotq::cli

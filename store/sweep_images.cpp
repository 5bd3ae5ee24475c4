#include "store/sweep_images.hpp"

#include <filesystem>
#include <set>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>

#include "common/sha256.hpp"
#include "store/error.hpp"
#include "store/target.hpp"

namespace plotq::store {

namespace fs = std::filesystem;

std::string sweep_images_root(const std::string& db_path) {
  if (engine_of(db_path) == Engine::sqlite) return db_path + ".sweep-images";
  // A PostgreSQL store has no file to sit beside: the thumbnails go under ./var, one directory per
  // database (named by its target's digest; the password is not part of it).
  return "./var/sweep-images/pg-" + sha256_hex(redacted(db_path)).substr(0, 16);
}

std::string sweep_images_dir(const std::string& db_path, std::int64_t sweep_id) {
  return sweep_images_root(db_path) + "/" + std::to_string(sweep_id);
}

namespace {

// remove_all on a link removes the link itself (symlink_status), never what it points at.
void remove_entry(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
}

// "17" -> 17; anything else (a temp file, a name we never make) -> -1.
std::int64_t sweep_id_of(const std::string& name) {
  if (name.empty() || name.size() > 18 || name[0] == '0') return -1;
  std::int64_t v = 0;
  for (char ch : name) {
    if (ch < '0' || ch > '9') return -1;
    v = v * 10 + (ch - '0');
  }
  return v;
}

}  // namespace

void remove_sweep_images(const std::string& db_path, std::int64_t sweep_id) {
  remove_entry(sweep_images_dir(db_path, sweep_id));
}

std::size_t remove_orphan_sweep_images(Db& db) {
  const fs::path root = sweep_images_root(db.path());
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(root, ec))) return 0;
  std::vector<std::pair<fs::path, std::int64_t>> entries;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    entries.emplace_back(it->path(), sweep_id_of(it->path().filename().string()));
  if (entries.empty()) return 0;
  std::set<std::int64_t> live;
  guarded("read the sweeps' ids", [&] {
    Stmt q(db, "SELECT id FROM sweeps");
    while (q.executeStep()) live.insert(q.getColumn(0).getInt64());
  });
  std::size_t gone = 0;
  for (const auto& [path, id] : entries) {
    if (id >= 0 && live.count(id)) continue;
    remove_entry(path);
    if (!fs::exists(fs::symlink_status(path, ec))) ++gone;
  }
  return gone;
}

}  // namespace plotq::store

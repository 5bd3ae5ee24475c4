// Makes a real plotq store on disk and damages copies of it, byte by byte, for the storage-fault
// tests. Header-only.
#pragma once
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/sha256.hpp"
#include "store/db.hpp"
#include "store/integrity.hpp"
#include "store/migrate.hpp"
#include "store/sessions.hpp"
#include "store/users.hpp"

namespace plotq::test::damage {

// A migrated store with enough rows to span a few dozen pages, closed (its -wal checkpointed and
// removed). Returns path.
inline std::string make_store(const std::string& path) {
  auto db = store::Db::open(path);
  store::migrate(*db);
  for (int i = 0; i < 400; ++i) {
    std::string u = "user-" + std::to_string(i) + "-" + std::string(40, 'u');
    store::users::ensure(*db, u, 1'790'000'000 + i);
    store::sessions::create(*db, "session-" + std::to_string(i), u, 1'790'000'000 + i);
  }
  return path;
}

inline std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void copy_file(const std::string& from, const std::string& to) {
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
}

// sha256 of the file and of its -wal (absent = empty: a read-only open of a WAL store may create
// an empty -wal and -shm, as SQLite does): what a check must not change.
inline std::string fingerprint(const std::string& db) {
  auto wal = db + "-wal";
  return plotq::sha256_hex(file_bytes(db)) + "/" +
         plotq::sha256_hex(std::filesystem::exists(wal) ? file_bytes(wal) : std::string());
}

// Writes bytes over the file at offset (the file keeps its size unless bytes run past its end).
inline void overwrite(const std::string& path, std::uint64_t offset, const std::string& bytes) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  if (!f) throw std::runtime_error("cannot open " + path);
  f.seekp(std::streamoff(offset));
  f.write(bytes.data(), std::streamsize(bytes.size()));
}

// A tmpfs of `size` mounted at dir/name for the test's life (the small file system a storage
// fault needs); path is empty when this host cannot mount one (not root, no tmpfs).
struct SmallFs {
  std::string path;
  SmallFs(const std::string& dir, const std::string& name, const std::string& size) {
    std::string p = dir + "/" + name;
    std::filesystem::create_directories(p);
    std::string opts = "size=" + size + ",mode=0711";
    if (::geteuid() == 0 && ::mount("tmpfs", p.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) == 0) path = p;
  }
  ~SmallFs() {
    if (!path.empty()) ::umount2(path.c_str(), MNT_DETACH);
  }
  SmallFs(const SmallFs&) = delete;
  SmallFs& operator=(const SmallFs&) = delete;
  bool empty() const { return path.empty(); }
};

inline std::vector<std::string> codes(const store::IntegrityReport& r) {
  std::vector<std::string> out;
  for (const auto& p : r.problems) out.push_back(p.code);
  return out;
}

}  // namespace plotq::test::damage

// datasets and dataset_versions: each chat session's dataset, in numbered versions 1, 2, 3 ...
// A data run (source code, with the Python that made it) or a paste (source paste) adds the next
// version; the user then confirms it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/db.hpp"
#include "store/time.hpp"
#include "store/types.hpp"

namespace plotq::store {

struct DatasetVersionInfo {  // metadata, without the CSV and code bodies
  std::string session_id;
  std::int64_t version = 0;
  DatasetSource source = DatasetSource::paste;
  std::optional<std::int64_t> parent_version;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t bytes = 0;  // UTF-8 size of the CSV
  bool confirmed = false;
  std::optional<UnixSeconds> confirmed_at;
  std::optional<std::string> turn_id;
  std::optional<std::string> job_id;
  UnixSeconds created_at = 0;
};

struct DatasetVersion : DatasetVersionInfo {
  std::string csv;
  std::optional<std::string> code;  // the Python that made it (source code); none for pastes
};

struct NewDatasetVersion {
  std::string session_id;
  DatasetSource source = DatasetSource::paste;
  std::string csv;
  std::optional<std::string> code;  // required for source code, absent for paste ("constraint")
  std::optional<std::int64_t> parent_version;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::optional<std::string> turn_id;
  std::optional<std::string> job_id;
};

namespace datasets {
// Stores the next version (max + 1; 1 for the first) in one BEGIN IMMEDIATE transaction, creating
// the session's dataset row when new. Unknown session or bad row: "constraint".
DatasetVersionInfo add_next_version(Db& db, const NewDatasetVersion& v, UnixSeconds now);
std::vector<DatasetVersionInfo> list(Db& db, const std::string& session_id);  // oldest first
// version 0 = the latest.
std::optional<DatasetVersion> get(Db& db, const std::string& session_id, std::int64_t version);
// Marks a version confirmed: true when it exists (confirming twice keeps the first time).
bool confirm(Db& db, const std::string& session_id, std::int64_t version, UnixSeconds now);
std::int64_t latest_version(Db& db, const std::string& session_id);  // 0 when none
}  // namespace datasets

}  // namespace plotq::store

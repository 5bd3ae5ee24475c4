// A table becoming the session's next dataset version: the one step a paste (POST .../datasets)
// and a data turn (the table its code made) share. The text is read by the table parser under its
// caps, stored as the canonical CSV with its shape, in one transaction (store/datasets.hpp).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "store/datasets.hpp"
#include "table/parse.hpp"

namespace plotq::runs {

struct DatasetOrigin {
  std::string session_id;
  store::DatasetSource source = store::DatasetSource::paste;
  std::optional<std::string> code;     // the code that made it (source code)
  std::optional<std::string> turn_id;  // the turn and job that ran it (source code)
  std::optional<std::string> job_id;
  // A plot needs something to draw: a code-made table without a number or date column is refused
  // with code "no_number_column" and nothing is stored.
  bool need_number_column = false;
};

struct AddedVersion {
  table::Table table;  // as parsed (column types for the answer)
  store::DatasetVersionInfo info;
};

// The parser's error (nothing stored), or the version stored. Store failures throw store::StoreError.
std::variant<table::ParseError, AddedVersion> add_table_version(store::Db& db, std::string_view text,
                                                                const DatasetOrigin& origin,
                                                                const table::Caps& caps = {});

}  // namespace plotq::runs

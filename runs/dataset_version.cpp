#include "runs/dataset_version.hpp"

#include "store/time.hpp"
#include "table/csv.hpp"

namespace plotq::runs {

std::variant<table::ParseError, AddedVersion> add_table_version(store::Db& db, std::string_view text,
                                                                const DatasetOrigin& origin, const table::Caps& caps) {
  // A data run's out.csv is pandas' (sep ','): a one-column table of "a;b" cells is one column.
  const auto how = origin.source == store::DatasetSource::code ? table::Delimiter::comma : table::Delimiter::sniff;
  table::ParseResult parsed = table::parse_table(text, caps, how);
  if (auto* err = std::get_if<table::ParseError>(&parsed)) return std::move(*err);
  AddedVersion out{std::move(std::get<table::Table>(parsed)), {}};
  if (origin.need_number_column && !out.table.has_number_or_date_column())
    return table::ParseError{"no_number_column", 422, "no number or date column"};
  store::NewDatasetVersion v;
  v.session_id = origin.session_id;
  v.source = origin.source;
  v.csv = table::write_csv(out.table);
  v.code = origin.code;
  v.rows = static_cast<std::int64_t>(out.table.row_count());
  v.cols = static_cast<std::int64_t>(out.table.column_count());
  v.turn_id = origin.turn_id;
  v.job_id = origin.job_id;
  out.info = store::datasets::add_next_version(db, v, store::now_unix());
  return out;
}

}  // namespace plotq::runs

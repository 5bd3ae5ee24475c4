// A parsed table: the canonical form every dataset version is stored in.
#pragma once
#include <string>
#include <vector>

namespace plotq::table {

enum class ColumnType { integer, number, boolean, date, text, empty };
const char* to_string(ColumnType);

struct Column {
  std::string name;
  ColumnType type = ColumnType::text;
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;  // canonical cell text: dot decimals, ISO dates

  std::size_t row_count() const { return rows.size(); }
  std::size_t column_count() const { return columns.size(); }
  bool has_number_or_date_column() const;
};

// The table caps, declared once: the parser's, and the harness's data mode's too (runs/data_job.cpp
// passes them into every data job as PLOTQ_DATA_MAX_*; sandbox/harness/table.py refuses to run
// without them).
struct Caps {
  std::size_t max_bytes = 204'800;
  std::size_t max_columns = 50;
  std::size_t max_rows = 20'000;
  std::size_t max_cell_chars = 200;
};

}  // namespace plotq::table

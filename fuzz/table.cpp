// The paste classifier and the table parser on raw paste text (what POST .../datasets hands them
// after the JSON layer, and what a data run's out.csv is read back with). A parsed table must be
// within the caps it was parsed under, and its canonical CSV must parse again to the same table,
// read with commas (as plotq reads it) and sniffed (as a paste of it is).
#include "fuzz/fuzz.hpp"
#include "table/classify.hpp"
#include "table/csv.hpp"
#include "table/parse.hpp"

using namespace plotq::table;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = plotq::fuzz::as_text(data, size);
  Caps caps;
  caps.max_rows = 200;  // small caps reach the cap checks with the fuzzer's short inputs
  caps.max_columns = 12;
  caps.max_cell_chars = 40;
  Classification c = classify_paste(text);
  PLOTQ_FUZZ_CHECK(c.code_lines <= c.lines);
  (void)looks_like_formula(text);
  (void)sniff_delimiter(text);
  for (char d : kDelimiters) (void)read_records(text, d, 50);
  auto parsed = parse_table(text, caps);
  if (const auto* t = std::get_if<Table>(&parsed)) {
    PLOTQ_FUZZ_CHECK(t->column_count() >= 1 && t->column_count() <= caps.max_columns);
    PLOTQ_FUZZ_CHECK(t->row_count() <= caps.max_rows);
    for (const auto& row : t->rows) PLOTQ_FUZZ_CHECK(row.size() == t->column_count());
    // Read back as plotq reads it (commas) and as a paste of it is read (sniffed): the same table.
    std::string csv = write_csv(*t);
    for (Delimiter how : {Delimiter::comma, Delimiter::sniff}) {
      auto again = parse_table(csv, caps, how);
      const auto* t2 = std::get_if<Table>(&again);
      PLOTQ_FUZZ_CHECK(t2 != nullptr);
      PLOTQ_FUZZ_CHECK(t2->column_count() == t->column_count() && t2->row_count() == t->row_count());
      PLOTQ_FUZZ_CHECK(t2->rows == t->rows);
    }
  } else {
    PLOTQ_FUZZ_CHECK(!std::get<ParseError>(parsed).code.empty());
  }
  return 0;
}

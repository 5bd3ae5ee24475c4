#include <catch2/catch.hpp>

#include "table/csv.hpp"
#include "common/text.hpp"
#include "table/parse.hpp"

using namespace plotq::table;
using plotq::json_depth;

static Table ok(std::string_view text) {
  auto r = parse_table(text);
  if (auto* e = std::get_if<ParseError>(&r)) FAIL("parse error " << e->code);
  return std::get<Table>(r);
}
static std::string err(std::string_view text, const Caps& caps = {}) {
  auto r = parse_table(text, caps);
  REQUIRE(std::holds_alternative<ParseError>(r));
  return std::get<ParseError>(r).code;
}

TEST_CASE("comma CSV with header, types inferred, canonical output") {
  Table t = ok("name,value,day\nA,1,2026-01-02\nB,2.5,03.01.2026\n");
  REQUIRE(t.column_count() == 3);
  REQUIRE(t.row_count() == 2);
  CHECK(t.columns[0].type == ColumnType::text);
  CHECK(t.columns[1].type == ColumnType::number);
  CHECK(t.columns[2].type == ColumnType::date);
  CHECK(write_csv(t) == "name,value,day\nA,1,2026-01-02\nB,2.5,2026-01-03\n");
  CHECK(t.has_number_or_date_column());
}

TEST_CASE("semicolon CSV with decimal commas becomes dot decimals") {
  Table t = ok("x;y\n1;2,5\n2;3,75\n");
  CHECK(t.columns[1].type == ColumnType::number);
  CHECK(write_csv(t) == "x,y\n1,2.5\n2,3.75\n");
}

TEST_CASE("tab and pipe delimiters are sniffed") {
  CHECK(ok("a\tb\n1\t2\n").column_count() == 2);
  CHECK(ok("a|b|c\n1|2|3\n").column_count() == 3);
  CHECK(sniff_delimiter("a,b;c\n1,2;3\n4,5;6\n") == ',');
}

TEST_CASE("a quoted field in any column is one field - and a table's canonical CSV parses again") {
  // fuzz/corpus/table/crash-quoted-later-column: only the first column's quotes were honoured.
  Table t = ok("x,label,y\n1,\"a, b\",\"c\"\"d\"\n2,\"two\nlines\",3\n");
  REQUIRE(t.column_count() == 3);
  REQUIRE(t.row_count() == 2);
  CHECK(t.rows[0][1] == "a, b");
  CHECK(t.rows[0][2] == "c\"d");
  CHECK(t.rows[1][1] == "two\nlines");
  Table again = ok(write_csv(t));
  CHECK(again.rows == t.rows);
  CHECK(ok("a;b\n1;\"x;y\"\n").rows[0][1] == "x;y");
}

TEST_CASE("a cell holding another delimiter keeps the canonical CSV's shape - and quoted delimiters are not counted") {
  // fuzz/corpus/table/crash-pipe-in-cell: read with ';', its cells hold '|' six and three times;
  // the canonical CSV left them unquoted and re-parsed with '|' into 7 columns.
  Table t = ok("| a | 4b |-;-|-|---|\n| 1 |.2b |-;,%\n");
  REQUIRE(t.column_count() == 2);
  CHECK(t.rows[0][1] == ",%");
  std::string csv = write_csv(t);
  CHECK(csv == "\"| a | 4b |-\",\"-|-|---|\"\n\"| 1 |.2b |-\",\",%\"\n");
  Table again = ok(csv);
  CHECK(again.column_count() == 2);
  CHECK(again.rows == t.rows);
  // Quoted text is not counted: the commas are the delimiter on every line, the quoted '|' not.
  CHECK(sniff_delimiter("a,b\n\"x|y|z\",1\n\"p|q\",2\n") == ',');
  CHECK(sniff_delimiter("a;b\n\"x;\n;y\";1\n") == ';');  // a quoted newline does not end the record
  CHECK(sniff_delimiter("a|b\n1|2\n") == '|');  // unquoted, a pipe table still reads as one
  // A quote inside an unquoted field is the mark of the wrong delimiter: x,"a|b|c" is two fields.
  CHECK(sniff_delimiter("k,v\nx,\"a|b|c\"\ny,\"d|e|f\"\n") == ',');
}

TEST_CASE("text plotq wrote itself is read with commas - a cell's ';' is not a delimiter") {
  // A data run's out.csv (pandas, sep ','): one column whose cells hold ';' on every line.
  const std::string out_csv = "note\na;b\nc;d\n";
  CHECK(ok(out_csv).column_count() == 2);  // as a paste: sniffed, and ';' is consistent
  auto comma = parse_table(out_csv, {}, Delimiter::comma);
  REQUIRE(std::holds_alternative<Table>(comma));
  CHECK(std::get<Table>(comma).column_count() == 1);
  CHECK(std::get<Table>(comma).rows[0][0] == "a;b");
  // Nor is it JSON: a first column named "[x]" is a name, and the canonical CSV quotes it.
  auto named = parse_table("[x],y\n1,2\n", {}, Delimiter::comma);
  REQUIRE(std::holds_alternative<Table>(named));
  CHECK(std::get<Table>(named).columns[0].name == "[x]");
  CHECK(write_csv(std::get<Table>(named)).rfind("\"[x]\",y\n", 0) == 0);
  CHECK(ok(write_csv(std::get<Table>(named))).columns[0].name == "[x]");  // pasted back
  // A U+FEFF that is a cell, not the text's first bytes, stays one (fuzz/corpus/table/crash-bom-cell).
  Table bom = ok("\r\r\xEF\xBB\xBF\r$\r");
  REQUIRE(bom.columns[0].name == "\xEF\xBB\xBF");
  CHECK(ok(write_csv(bom)).columns[0].name == "\xEF\xBB\xBF");
  // JSON's names and cells lose their outer spaces as CSV's do (fuzz/corpus/table/crash-json-spaces).
  Table js = ok("{\" a \": [\", b, \"], \"a\": [\"x\"]}");
  CHECK(js.columns[0].name == "a");
  CHECK(js.columns[1].name == "a_2");
  CHECK(js.rows[0][0] == ", b,");
  CHECK(ok(write_csv(js)).rows == js.rows);
  // A decimal-comma column's integers lose their '+' too (fuzz/corpus/table/crash-comma-plus).
  Table dc = ok(";\n1,5;2\n+0\n");
  CHECK(dc.rows[1][0] == "0");
  CHECK(ok(write_csv(dc)).rows == dc.rows);
  // A one-column table with an empty cell keeps its row: the record is written "", not blank.
  Table t = ok("[{\"a\": \"x\"}, {\"a\": \"\"}]");
  REQUIRE(t.row_count() == 2);
  CHECK(write_csv(t) == "a\nx\n\"\"\n");
  auto again = parse_table(write_csv(t), {}, Delimiter::comma);
  REQUIRE(std::holds_alternative<Table>(again));
  CHECK(std::get<Table>(again).rows == t.rows);
}

TEST_CASE("quoted fields keep delimiters, quotes and newlines") {
  Table t = ok("label,v\n\"a, b\",1\n\"say \"\"hi\"\"\",2\n\"two\nlines\",3\n");
  REQUIRE(t.row_count() == 3);
  CHECK(t.rows[0][0] == "a, b");
  CHECK(t.rows[1][0] == "say \"hi\"");
  CHECK(t.rows[2][0] == "two\nlines");
  CHECK(write_csv(t) == "label,v\n\"a, b\",1\n\"say \"\"hi\"\"\",2\n\"two\nlines\",3\n");
}

TEST_CASE("BOM stripped, CRLF accepted, blank lines skipped") {
  Table t = ok("\xEF\xBB\xBFx,y\r\n1,2\r\n\r\n3,4\r\n");
  CHECK(t.columns[0].name == "x");
  CHECK(t.row_count() == 2);
}

TEST_CASE("booleans, integers and datetimes") {
  Table t = ok("ok,n,at\nyes,+3,2026-03-04T05:06\nFalse,-4,2026-03-05 07:08:09\n");
  CHECK(t.columns[0].type == ColumnType::boolean);
  CHECK(t.columns[1].type == ColumnType::integer);
  CHECK(t.columns[2].type == ColumnType::date);
  CHECK(t.rows[0] == std::vector<std::string>{"true", "3", "2026-03-04 05:06:00"});
}

TEST_CASE("an impossible date is text, not a date") {
  CHECK(ok("d\n2026-02-30\n").columns[0].type == ColumnType::text);
  CHECK(ok("d\n2024-02-29\n").columns[0].type == ColumnType::date);
}

TEST_CASE("empty and duplicate header names are made unique") {
  Table t = ok("a,,a\n1,2,3\n");
  CHECK(t.columns[0].name == "a");
  CHECK(t.columns[1].name == "column_2");
  CHECK(t.columns[2].name == "a_2");
}

TEST_CASE("JSON records and column maps") {
  Table r = ok(R"([{"x":1,"y":"a"},{"x":2,"y":null}])");
  CHECK(r.column_count() == 2);
  CHECK(r.rows[1][1] == "");
  CHECK(r.columns[0].type == ColumnType::integer);
  Table c = ok(R"({"t":[1,2,3],"v":[0.5,1.5,2.5]})");
  CHECK(c.row_count() == 3);
  CHECK(c.columns[1].type == ColumnType::number);
}

TEST_CASE("the error vocabulary") {
  CHECK(err("") == "empty");
  CHECK(err("   \n \n") == "empty");
  CHECK(err("a,b\n1,\x01\n") == "control_chars");
  CHECK(err("a,b\n\xff\xfe,1\n") == "encoding");
  CHECK(err("a,b\n1,2,3\n") == "unparseable");
  CHECK(err("a,b\n\"open,1\n") == "unparseable");
  CHECK(err(R"([[[1]]])") == "unparseable");
  CHECK(err(R"({"a":[1,2],"b":[1]})") == "unparseable");
  CHECK(err(R"([{"a":{"b":1}}])") == "unparseable");
  Caps small;
  small.max_rows = 3;
  CHECK(err("x\n1\n2\n3\n4\n", small) == "too_many_rows");
  small = {};
  small.max_columns = 2;
  CHECK(err("a,b,c\n1,2,3\n", small) == "too_many_columns");
  CHECK(err("a\n" + std::string(201, 'x') + "\n") == "cell_too_long");
  auto r = parse_table(std::string(204'801, 'a'));
  REQUIRE(std::holds_alternative<ParseError>(r));
  CHECK(std::get<ParseError>(r).code == "too_long");
  CHECK(std::get<ParseError>(r).http_status == 413);
}

TEST_CASE("a JSON bomb is refused by the depth scan, not parsed") {
  // Valid JSON nested 100,000 deep: the parser would accept it, so only the scan can give the
  // detail below.
  std::string bomb = "[" + std::string(100'000, '[') + std::string(100'000, ']') + "]";
  auto r = parse_table(bomb);
  REQUIRE(std::holds_alternative<ParseError>(r));
  CHECK(std::get<ParseError>(r).code == "unparseable");
  CHECK(std::get<ParseError>(r).detail == "nested deeper than a table");
  // Inside a string, brackets are text: a records table whose cell is "[[[[" parses.
  CHECK(ok(R"([{"a": "[[[[{{{{"}])").rows[0][0] == "[[[[{{{{");
  CHECK(json_depth(R"([{"a": "[[[["}])") == 2);
}

TEST_CASE("the caps are inclusive: exactly at the cap passes") {
  Caps caps;
  caps.max_rows = 3;
  caps.max_columns = 2;
  auto r = parse_table("a,b\n1,2\n3,4\n5,6\n", caps);
  CHECK(std::holds_alternative<Table>(r));
  CHECK(ok("a\n" + std::string(200, 'x') + "\n").row_count() == 1);
}

#include <catch2/catch.hpp>

#include "store/time.hpp"

using namespace plotq::store;

TEST_CASE("time: UTC text round trips") {
  CHECK(iso_utc(0) == "1970-01-01T00:00:00Z");
  CHECK(iso_utc(1791970205) == "2026-10-14T09:30:05Z");
  CHECK(utc_day(1791970205) == "2026-10-14");
  CHECK(utc_minute(1791970205) == "2026-10-14T09:30");
  CHECK(parse_utc("2026-10-14T09:30:05Z") == 1791970205);
  CHECK(parse_utc("2026-10-14 09:30:05") == 1791970205);
  CHECK(parse_utc("2026-10-14T09:30") == 1791970200);
  CHECK(parse_utc("2026-10-14") == 1791936000);
  CHECK(parse_utc("2024-02-29") == 1709164800);  // leap day
  for (UnixSeconds t : {UnixSeconds(0), UnixSeconds(951782399), UnixSeconds(1791970205), UnixSeconds(4102444799)})
    CHECK(parse_utc(iso_utc(t)) == t);
}

TEST_CASE("time: malformed text is refused") {
  for (const char* bad : {"", "2026-10-1", "2026-13-01", "2023-02-29", "2026-10-14T24:00:00Z", "2026-10-14T09:60",
                          "2026/10/14", "2026-10-14X09:30:05", "tomorrow", "2026-10-14T09:30:05+01:00"}) {
    INFO(bad);
    CHECK_FALSE(parse_utc(bad).has_value());
  }
  CHECK(is_utc_day("2026-10-14"));
  CHECK_FALSE(is_utc_day("2026-10-14T00:00"));
}

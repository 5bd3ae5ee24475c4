#include <catch2/catch.hpp>

#include "queue/rate_window.hpp"

using plotq::queue::RateWindow;

TEST_CASE("a start leaves the window exactly window_s later", "[rate]") {
  RateWindow w(1, 60);
  CHECK(w.allows(0));
  CHECK_FALSE(w.opens_at(0));
  w.book(10);
  CHECK(w.count(10) == 1);
  CHECK_FALSE(w.allows(69.999));
  REQUIRE(w.opens_at(11));
  CHECK(*w.opens_at(11) == 70);
  CHECK(w.allows(70));  // now - t >= window
  CHECK(w.count(70) == 0);
}

TEST_CASE("with a limit of 3 the window opens when the oldest in-window start leaves", "[rate]") {
  RateWindow w(3, 1.0);
  w.book(0.0);
  w.book(0.2);
  CHECK(w.allows(0.3));
  w.book(0.5);
  CHECK_FALSE(w.allows(0.6));
  CHECK(*w.opens_at(0.6) == 1.0);
  CHECK(w.count(1.0) == 2);
  CHECK(w.allows(1.0));
  w.book(1.0);
  CHECK_FALSE(w.allows(1.1));
  CHECK(*w.opens_at(1.1) == Approx(1.2));
  w.prune(5);
  CHECK(w.count(5) == 0);
}

TEST_CASE("opens_at and allows agree at the opening instant for awkward fractions", "[rate]") {
  for (double t : {0.1, 0.3, 0.7, 1.1, 12345.678}) {
    RateWindow w(1, 0.2);
    w.book(t);
    const double at = *w.opens_at(t);
    CHECK(w.allows(at));
    CHECK_FALSE(w.allows(std::nextafter(at, 0.0)));
  }
}

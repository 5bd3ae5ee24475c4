#include <catch2/catch.hpp>

#include "queue/turn_deadline.hpp"

using plotq::queue::TurnDeadline;

TEST_CASE("the deadline does not run while queued and is armed in full on grant", "[deadline]") {
  TurnDeadline d(180);
  CHECK(d.paused());
  CHECK(d.remaining(0) == 180);
  CHECK_FALSE(d.expired(1e9));  // a paused deadline never expires

  d.arm(10);  // the turn starts
  CHECK(d.armed());
  CHECK(d.remaining(40) == 150);

  d.pause(40);  // queued for the slot
  CHECK(d.paused());
  CHECK(d.remaining(40) == 150);
  CHECK(d.remaining(900) == 150);  // 860 s queued: not one second counted
  CHECK_FALSE(d.expired(900));

  d.arm(900);  // slot granted: the full budget again
  CHECK(d.remaining(900) == 180);
  CHECK(d.expires_at() == 1080);
  CHECK_FALSE(d.expired(1079.999));
  CHECK(d.expired(1080));
  CHECK(d.remaining(2000) == 0);
}

TEST_CASE("pause on a paused deadline changes nothing", "[deadline]") {
  TurnDeadline d(5);
  d.pause(3);
  CHECK(d.remaining(100) == 5);
  d.arm(100);
  d.pause(104);
  d.pause(200);
  CHECK(d.remaining(300) == Approx(1));
}

#include <catch2/catch.hpp>

#include "server/auth.hpp"

using namespace plotq::server;

namespace {
const std::string kAlice = "alice-token-0123456789";
const std::string kBob = "bob-token-abcdefghijkl==";  // '=' inside a token (base64 padding)
const std::string kSvc = "svc-token-ZYXWVUTSRQPONM";

AuthConfig tokens_config() {
  AuthConfig c;
  c.tokens = kAlice + "=alice, " + kBob + "=bob:user," + kSvc + "=chat-svc:assistant";
  return c;
}

Request request(std::string auth = "", bool loopback = true, std::string user_header = "") {
  Request r;
  r.peer.address = loopback ? "127.0.0.1" : "10.1.2.3";
  r.peer.loopback = loopback;
  if (!auth.empty()) r.headers.push_back({"Authorization", auth});
  if (!user_header.empty()) r.headers.push_back({"X-Plotq-User", user_header});
  return r;
}
}  // namespace

TEST_CASE("auth: token list parsing", "[auth]") {
  CHECK(CallerCheck::validate_tokens("").empty());
  CHECK(CallerCheck::validate_tokens(tokens_config().tokens).empty());
  CHECK_FALSE(CallerCheck::validate_tokens("tooshort=alice").empty());
  CHECK_FALSE(CallerCheck::validate_tokens(kAlice).empty());                      // no user
  CHECK_FALSE(CallerCheck::validate_tokens(kAlice + "=").empty());                // empty user
  CHECK_FALSE(CallerCheck::validate_tokens(kAlice + "=al ice").empty());          // bad user
  CHECK_FALSE(CallerCheck::validate_tokens(kAlice + "=alice:admin").empty());     // unknown role
  CHECK_FALSE(CallerCheck::validate_tokens(kAlice + "=a," + kAlice + "=b").empty());  // repeated token
  CHECK_FALSE(CallerCheck::validate_tokens(kAlice + "=a,,").empty());             // empty entry
  CHECK_FALSE(CallerCheck::validate_tokens("bad token with spaces=x").empty());
  AuthConfig bad;
  bad.tokens = "x=y";
  CHECK_THROWS_AS(CallerCheck(bad), std::invalid_argument);
}

TEST_CASE("auth: tokens name the caller", "[auth]") {
  CallerCheck check(tokens_config());
  CHECK(check.token_count() == 3);
  CHECK_FALSE(check.development());

  auto v = check.verify(request("Bearer " + kAlice));
  REQUIRE(v.caller);
  CHECK(v.caller->user == "alice");
  CHECK(v.caller->role == Role::user);
  CHECK_FALSE(v.caller->development);

  v = check.verify(request("bearer   " + kBob, false));  // scheme is case-insensitive; any peer
  REQUIRE(v.caller);
  CHECK(v.caller->user == "bob");

  v = check.verify(request("Bearer " + kSvc), Need::assistant);
  REQUIRE(v.caller);
  CHECK(v.caller->user == "chat-svc");
  CHECK(v.caller->role == Role::assistant);
  // The assistant may also call user routes.
  CHECK(check.verify(request("Bearer " + kSvc), Need::user).caller);
}

TEST_CASE("auth: missing / malformed or unknown tokens are 401 - a weak role is 403", "[auth]") {
  CallerCheck check(tokens_config());
  CHECK(check.verify(request()).error == "unauthenticated");
  CHECK(check.verify(request("Basic " + kAlice)).error == "unauthenticated");
  CHECK(check.verify(request("Bearer")).error == "unauthenticated");
  CHECK(check.verify(request("Bearer" + kAlice)).error == "unauthenticated");
  CHECK(check.verify(request("Bearer " + kAlice + "x")).error == "unauthenticated");
  CHECK(check.verify(request("Bearer " + kAlice.substr(0, kAlice.size() - 1))).error == "unauthenticated");
  CHECK(check.verify(request("Bearer " + kSvc + "=chat-svc")).error == "unauthenticated");
  auto v = check.verify(request("Bearer " + kAlice), Need::assistant);
  CHECK_FALSE(v.caller);
  CHECK(v.error == "forbidden");
  // Tokens configured: X-Plotq-User from loopback does not let anyone in, even in development.
  AuthConfig dev = tokens_config();
  dev.environment = "development";
  CallerCheck dev_with_tokens(dev);
  CHECK_FALSE(dev_with_tokens.development());
  CHECK(dev_with_tokens.verify(request("", true, "mallory")).error == "unauthenticated");
}

TEST_CASE("auth: production without tokens lets nobody in", "[auth]") {
  CallerCheck check(AuthConfig{});
  CHECK_FALSE(check.development());
  CHECK(check.verify(request()).error == "unauthenticated");
  CHECK(check.verify(request("", true, "ann")).error == "unauthenticated");
  CHECK(check.verify(request("Bearer " + kAlice)).error == "unauthenticated");
}

TEST_CASE("auth: development mode is for loopback peers only", "[auth]") {
  AuthConfig c;
  c.environment = "development";
  CallerCheck check(c);
  CHECK(check.development());

  auto v = check.verify(request());
  REQUIRE(v.caller);
  CHECK(v.caller->user == "dev");
  CHECK(v.caller->development);

  v = check.verify(request("", true, "ann.lee@example"), Need::assistant);
  REQUIRE(v.caller);
  CHECK(v.caller->user == "ann.lee@example");
  CHECK(v.caller->role == Role::assistant);

  CHECK(check.verify(request("", false)).error == "forbidden");
  CHECK(check.verify(request("", false, "ann")).error == "forbidden");
  CHECK(check.verify(request("", true, "bad user")).error == "bad_request");
  CHECK(check.verify(request("", true, std::string(65, 'a'))).error == "bad_request");
  // A token sent in development mode with no tokens configured is unknown.
  CHECK(check.verify(request("Bearer " + kAlice)).error == "unauthenticated");
}

TEST_CASE("auth: user names", "[auth]") {
  CHECK(valid_user_name("a"));
  CHECK(valid_user_name("Ann_Lee-2@x.org"));
  CHECK_FALSE(valid_user_name(""));
  CHECK_FALSE(valid_user_name(std::string(65, 'a')));
  CHECK_FALSE(valid_user_name("a b"));
  CHECK_FALSE(valid_user_name("a/b"));
  CHECK_FALSE(valid_user_name("a:b"));
}

#include "server/session_access.hpp"

#include "server/errors.hpp"
#include "store/exec.hpp"

namespace plotq::server {

bool may_use(const Caller& caller, const std::string& owner) {
  bool trusted = caller.role == Role::assistant && !caller.development;
  return owner == caller.user || trusted;
}

bool may_use(const Caller& caller, const std::optional<store::Session>& s) { return s && may_use(caller, s->user_id); }

void with_owned_session(App& app, const Caller& caller, std::string_view id, std::shared_ptr<Responder> res,
                        std::function<void(const store::Session&)> then) {
  if (id.empty() || id.size() > 128) return res->send_error("session_not_found");
  app.store.run(
      "read session", [id = std::string(id)](store::Db& db) { return store::sessions::get(db, id); },
      [caller, res, then = std::move(then)](store::Stored<std::optional<store::Session>> got) {
        if (!got.ok()) return res->send_error(store_failure_code(got.code));
        if (!may_use(caller, *got.value)) return res->send_error("session_not_found");
        then(**got.value);
      });
}

void with_turn_in_session(App& app, const Caller& caller, std::string_view session_id, std::string_view turn_id,
                          std::shared_ptr<Responder> res,
                          std::function<void(const store::Session&, const store::Turn&)> then) {
  if (session_id.empty() || session_id.size() > 128) return res->send_error("session_not_found");
  if (turn_id.empty() || turn_id.size() > 128) return res->send_error("not_found");
  using Both = std::pair<std::optional<store::Session>, std::optional<store::Turn>>;
  app.store.run(
      "read session and turn",
      [sid = std::string(session_id), tid = std::string(turn_id)](store::Db& db) {
        auto s = store::sessions::get(db, sid);
        return Both{s, s ? store::turns::get(db, tid) : std::nullopt};
      },
      [caller, res, then = std::move(then)](store::Stored<Both> got) {
        if (!got.ok()) return res->send_error(store_failure_code(got.code));
        auto& [s, t] = *got.value;
        if (!may_use(caller, s)) return res->send_error("session_not_found");
        if (!t || t->session_id != s->id) return res->send_error("not_found");
        then(*s, *t);
      });
}

}  // namespace plotq::server

// Chat routes (docs/api.md "Chat"): sessions, messages (a turn as an SSE stream), resuming a turn's
// stream, cancelling a turn, and the turn's plot images.
#include <cmath>

#include "common/log.hpp"
#include "common/theme.hpp"
#include "server/app.hpp"
#include "server/session_access.hpp"
#include "server/turn_service.hpp"
#include "server/cluster_node.hpp"
#include "server/turn_stream.hpp"
#include "server/errors.hpp"
#include "store/exec.hpp"
#include "store/error.hpp"
#include "store/ids.hpp"
#include "store/turn_plots.hpp"
#include "store/turns.hpp"

namespace plotq::server {
namespace {

}  // namespace

void register_turn_routes(App& app) {
  auto svc = std::make_shared<TurnService>(app);
  app.on_shutdown([svc] { svc->shutdown(); });
  if (app.config.cluster.on) {
    svc->cluster = std::make_unique<ClusterNode>(app, *svc);
    app.cluster = svc->cluster.get();
  }
  // The drain: every open stream ends with a resumable close (an id-less closing event; the client
  // resumes with Last-Event-ID elsewhere or after the restart) while the turns run on for the grace.
  app.on_drain([svc, &app] {
    auto s = static_cast<long long>(std::ceil(app.config.shutdown_grace.count() / 1000.0));
    auto frame = closing_frame("shutdown", std::max(1LL, s));
    for (auto& t : svc->turns.all()) t->close_streams(frame);
  });
  app.count_work([svc] { return svc->own_turns(); });

  app.router.post("/v1/sessions", [&app, svc](Request req, std::shared_ptr<Responder> res) {
    auto caller = check_caller(app.callers, req, *res);
    if (!caller) return;
    std::string id = store::new_id();
    app.store.run(
        "create session", [id, user = caller->user](store::Db& db) { store::sessions::create(db, id, user, store::now_unix()); },
        [res, id, svc, user = caller->user](store::Stored<void> made) {
          if (!made.ok()) return res->send_error(store_failure_code(made.code));
          svc->owners.remember(id, user);
          res->send_json(201, {{"id", id}});
        });
  });

  RouteOptions message_opts;
  // text (2,000 chars) + plot code (131,072 chars), at most 4 bytes each, JSON-escaped.
  message_opts.body_limit = 2 * 1024 * 1024;
  app.router.post("/v1/sessions/{id}/messages", [&app, svc](Request req, std::shared_ptr<Responder> res) {
    auto caller = check_caller(app.callers, req, *res);
    if (!caller || refuse_while_draining(app, *res)) return;
    ParsedMessage parsed = parse_message(req.body, svc->cfg);
    if (!parsed.message) return res->send_error(parsed.error);
    // Scope verdicts come from the assistant service only.
    if (parsed.message->scope != store::ScopeVerdict::none && !app.callers.verify(req, Need::assistant).caller)
      return res->send_error("forbidden");
    auto msg = std::make_shared<MessageRequest>(std::move(*parsed.message));
    auto go = [svc, res, msg](const std::string& user, const std::string& session) {
      if (svc->turns.active_for(user)) return res->send_error("run_active");
      svc->start(user, session, std::move(*msg), res);
    };
    // A session the node knows: its owner decides at once (the admission reads its state).
    if (auto owner = svc->owners.find(req.param("id"))) {
      if (!may_use(*caller, *owner)) return res->send_error("session_not_found");
      return go(*owner, std::string(req.param("id")));
    }
    with_owned_session(app, *caller, req.param("id"), res, [svc, go](const store::Session& session) {
      svc->owners.remember(session.id, session.user_id);
      go(session.user_id, session.id);
    });
  }, message_opts);

  app.router.get("/v1/sessions/{id}/turns/{turn}/events", [&app, svc](Request req, std::shared_ptr<Responder> res) {
    auto caller = check_caller(app.callers, req, *res);
    if (!caller || refuse_while_draining(app, *res)) return;  // resume on another instance, or after the restart
    auto after = resume_after(req);
    if (!after) return res->send_error("bad_request");
    with_turn_in_session(app, *caller, req.param("id"), req.param("turn"), res,
                         [svc, res, after = *after](const store::Session&, const store::Turn& turn) {
                           StreamOptions opts;
                           opts.retry_ms = svc->cfg.retry_ms;
                           if (!res->start_stream(std::move(opts))) return;
                           follow_turn(*svc, turn.id, after, res);
                         });
  });

  app.router.post("/v1/sessions/{id}/turns/{turn}/cancel", [&app, svc](Request req, std::shared_ptr<Responder> res) {
    auto caller = check_caller(app.callers, req, *res);
    if (!caller) return;
    with_turn_in_session(app, *caller, req.param("id"), req.param("turn"), res,
                         [svc, res](const store::Session&, const store::Turn& turn) {
                           auto live = svc->turns.find(turn.id);
                           // A turn this node does not run: whoever runs it (or nobody yet) is told
                           // through the cluster's queue.
                           if (svc->cluster && (!live || live->follower) && turn.status != store::TurnStatus::done)
                             return svc->cluster->cancel(turn.id, [res](std::string state) {
                               if (state.rfind("error:", 0) == 0) return res->send_error(state.substr(6));
                               res->send_json(200, {{"state", state}});
                             });
                           res->send_json(200, {{"state", svc->cancel(turn.id)}});
                         });
  });

  // Images are fetched by <img> tags, which send no Authorization or X-Plotq-User header, so this
  // route has no caller check: the URL is the capability (a 64-bit random session id and a 64-bit
  // random turn id, and the turn must belong to the session).
  app.router.get("/v1/sessions/{id}/turns/{turn}/plots/{file}", [&app](Request req, std::shared_ptr<Responder> res) {
    std::string_view file = req.param("file");
    // <theme>.png
    std::string theme = file.size() > 4 && file.substr(file.size() - 4) == ".png" ? std::string(file.substr(0, file.size() - 4)) : "";
    if (!known_theme(theme)) return res->send_error("not_found");
    app.store.run(
        "read turn plot",
        [session = std::string(req.param("id")), turn = std::string(req.param("turn")), theme](store::Db& db) {
          return store::turn_plots::get(db, session, turn, theme);
        },
        [res](store::Stored<std::optional<std::string>> png) {
          if (!png.ok()) return res->send_error(store_failure_code(png.code));
          if (!*png.value) return res->send_error("not_found");
          res->send_body(200, "image/png", std::move(**png.value),
                         {{"Cache-Control", "private, max-age=3600"}, {"X-Content-Type-Options", "nosniff"}});
        });
  });
}

}  // namespace plotq::server

// A session's dataset versions (docs/api.md): list, one version, confirm, and the paste route.
// A paste is classified before any parser reads it (code -> 422 code, formula -> 422 formula),
// then parsed under the parser's caps (its codes: 413 too_long, 422 otherwise) and stored as the
// session's next version (source paste). A closed session can still paste data.
#include "runs/dataset_version.hpp"
#include "server/app.hpp"
#include "server/dataset_json.hpp"
#include "server/session_access.hpp"
#include "server/route_bodies.hpp"
#include "server/errors.hpp"
#include "store/exec.hpp"
#include "store/datasets.hpp"
#include "table/parse.hpp"

namespace plotq::server {
namespace {

std::optional<std::int64_t> version_of(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  std::int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < 1) return std::nullopt;
  return v;
}

nlohmann::json opt(const std::optional<std::int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

// The caller's own session and the version named in the path, then `then` on the loop. On any
// failure the answer is sent (the caller check's, 404 session_not_found, 404 not_found).
void with_version_in_path(App& app, const Request& req, const std::shared_ptr<Responder>& res,
                          std::function<void(const store::Session&, std::int64_t)> then) {
  auto caller = check_caller(app.callers, req, *res);
  if (!caller) return;
  auto version = version_of(req.param("version"));
  with_owned_session(app, *caller, req.param("id"), res, [res, version, then = std::move(then)](const store::Session& s) {
    if (!version) return res->send_error("not_found");
    then(s, *version);
  });
}

// GET .../datasets/{version}: the version with its columns, or 404 not_found.
void send_version(Responder& res, const std::optional<store::DatasetVersion>& v) {
  if (!v) return res.send_error("not_found");
  // Column types are not stored: the canonical CSV is read again (it always parses).
  nlohmann::json columns = nlohmann::json::array();
  table::ParseResult parsed = table::parse_table(v->csv, {}, table::Delimiter::comma);
  if (const auto* t = std::get_if<table::Table>(&parsed)) columns = columns_json(*t);
  res.send_json(200, {{"version", v->version},
                       {"rows", v->rows},
                       {"cols", v->cols},
                       {"columns", columns},
                       {"csv", v->csv},
                       {"code", v->code ? nlohmann::json(*v->code) : nlohmann::json(nullptr)},
                       {"source", std::string(store::to_string(v->source))},
                       {"confirmed", v->confirmed},
                       {"parent", opt(v->parent_version)}});
}

}  // namespace

void register_dataset_routes(App& app) {
  app.router.get("/v1/sessions/{id}/datasets", [&app](Request req, std::shared_ptr<Responder> res) {
    auto caller = check_caller(app.callers, req, *res);
    if (!caller) return;
    with_owned_session(app, *caller, req.param("id"), res, [&app, res](const store::Session& session) {
      app.store.run(
          "list dataset versions", [id = session.id](store::Db& db) { return store::datasets::list(db, id); },
          [res](store::Stored<std::vector<store::DatasetVersionInfo>> got) {
            if (!got.ok()) return res->send_error(store_failure_code(got.code));
            nlohmann::json versions = nlohmann::json::array();
            for (const auto& v : *got.value)
              versions.push_back({{"version", v.version},
                                  {"rows", v.rows},
                                  {"cols", v.cols},
                                  {"source", std::string(store::to_string(v.source))},
                                  {"confirmed", v.confirmed},
                                  {"created_at", store::iso_utc(v.created_at)},
                                  {"has_code", v.source == store::DatasetSource::code}});
            res->send_json(200, {{"versions", versions}});
          });
    });
  });

  app.router.get("/v1/sessions/{id}/datasets/{version}", [&app](Request req, std::shared_ptr<Responder> res) {
    with_version_in_path(app, req, res, [&app, res](const store::Session& session, std::int64_t version) {
      app.store.run(
          "read dataset version",
          [id = session.id, version](store::Db& db) { return store::datasets::get(db, id, version); },
          [res](store::Stored<std::optional<store::DatasetVersion>> got) {
            if (!got.ok()) return res->send_error(store_failure_code(got.code));
            send_version(*res, *got.value);
          });
    });
  });

  app.router.post("/v1/sessions/{id}/datasets/{version}/confirm", [&app](Request req, std::shared_ptr<Responder> res) {
    with_version_in_path(app, req, res, [&app, res](const store::Session& session, std::int64_t version) {
      app.store.run(
          "confirm dataset version",
          [id = session.id, version](store::Db& db) {
            return store::datasets::confirm(db, id, version, store::now_unix());
          },
          [res, version](store::Stored<bool> found) {
            if (!found.ok()) return res->send_error(store_failure_code(found.code));
            if (!*found.value) return res->send_error("not_found");
            res->send_json(200, {{"version", version}, {"confirmed", true}});
          });
    });
  });

  RouteOptions paste_opts;
  paste_opts.body_limit = kPasteBodyLimit;
  app.router.post("/v1/sessions/{id}/datasets", [&app](Request req, std::shared_ptr<Responder> res) {
    auto caller = check_caller(app.callers, req, *res);
    if (!caller) return;
    table::Caps caps;
    auto paste = std::make_shared<ParsedPaste>(parse_paste_body(req.body, caps));
    if (paste->error == "invalid_job") return res->send_error(paste->error);  // the model before the session
    with_owned_session(app, *caller, req.param("id"), res, [&app, res, paste, caps](const store::Session& session) {
      if (!paste->text) return res->send_error(paste->error);
      using Added = std::variant<table::ParseError, runs::AddedVersion>;
      app.store.run(
          "add pasted dataset version",
          [paste, id = session.id, caps](store::Db& db) -> Added {
            return runs::add_table_version(db, *paste->text, {id, store::DatasetSource::paste, {}, {}, {}, false}, caps);
          },
          [res](store::Stored<Added> added) {
            if (!added.ok()) return res->send_error(store_failure_code(added.code));
            if (const auto* err = std::get_if<table::ParseError>(&*added.value)) return res->send_error(err->code);
            const table::Table& t = std::get<runs::AddedVersion>(*added.value).table;
            const store::DatasetVersionInfo& info = std::get<runs::AddedVersion>(*added.value).info;
            res->send_json(201,
                           {{"version", info.version}, {"rows", info.rows}, {"cols", info.cols}, {"columns", columns_json(t)}});
          });
    });
  });
}

}  // namespace plotq::server

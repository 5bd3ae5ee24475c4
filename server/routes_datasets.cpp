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

// The caller's own session and the version named in the path. On any failure the answer is sent
// (the caller check's, 404 session_not_found, 404 not_found) and nullopt returned.
struct VersionInPath {
  store::Session session;
  std::int64_t version;
};
std::optional<VersionInPath> version_in_path(App& app, const Request& req, Responder& res) {
  auto caller = check_caller(app.callers, req, res);
  if (!caller) return std::nullopt;
  auto session = owned_session(app, *caller, req.param("id"), res);
  if (!session) return std::nullopt;
  auto version = version_of(req.param("version"));
  if (!version) {
    res.send_error("not_found");
    return std::nullopt;
  }
  return VersionInPath{std::move(*session), *version};
}

}  // namespace

void register_dataset_routes(App& app) {
  app.router.get("/v1/sessions/{id}/datasets", [&app](Request req, std::shared_ptr<Responder> res) {
    auto caller = check_caller(app.callers, req, *res);
    if (!caller) return;
    auto session = owned_session(app, *caller, req.param("id"), *res);
    if (!session) return;
    nlohmann::json versions = nlohmann::json::array();
    try {
      for (const auto& v : store::datasets::list(app.db, session->id))
        versions.push_back({{"version", v.version},
                            {"rows", v.rows},
                            {"cols", v.cols},
                            {"source", std::string(store::to_string(v.source))},
                            {"confirmed", v.confirmed},
                            {"created_at", store::iso_utc(v.created_at)},
                            {"has_code", v.source == store::DatasetSource::code}});
    } catch (const std::exception& e) {
      return res->send_error(store_failure_code(e));
    }
    res->send_json(200, {{"versions", versions}});
  });

  app.router.get("/v1/sessions/{id}/datasets/{version}", [&app](Request req, std::shared_ptr<Responder> res) {
    auto at = version_in_path(app, req, *res);
    if (!at) return;
    std::optional<store::DatasetVersion> v;
    try {
      v = store::datasets::get(app.db, at->session.id, at->version);
    } catch (const std::exception& e) {
      return res->send_error(store_failure_code(e));
    }
    if (!v) return res->send_error("not_found");
    // Column types are not stored: the canonical CSV is read again (it always parses).
    nlohmann::json columns = nlohmann::json::array();
    table::ParseResult parsed = table::parse_table(v->csv, {}, table::Delimiter::comma);
    if (const auto* t = std::get_if<table::Table>(&parsed)) columns = columns_json(*t);
    res->send_json(200, {{"version", v->version},
                         {"rows", v->rows},
                         {"cols", v->cols},
                         {"columns", columns},
                         {"csv", v->csv},
                         {"code", v->code ? nlohmann::json(*v->code) : nlohmann::json(nullptr)},
                         {"source", std::string(store::to_string(v->source))},
                         {"confirmed", v->confirmed},
                         {"parent", opt(v->parent_version)}});
  });

  app.router.post("/v1/sessions/{id}/datasets/{version}/confirm", [&app](Request req, std::shared_ptr<Responder> res) {
    auto at = version_in_path(app, req, *res);
    if (!at) return;
    bool found = false;
    try {
      found = store::datasets::confirm(app.db, at->session.id, at->version, store::now_unix());
    } catch (const std::exception& e) {
      return res->send_error(store_failure_code(e));
    }
    if (!found) return res->send_error("not_found");
    res->send_json(200, {{"version", at->version}, {"confirmed", true}});
  });

  RouteOptions paste_opts;
  paste_opts.body_limit = kPasteBodyLimit;
  app.router.post("/v1/sessions/{id}/datasets", [&app](Request req, std::shared_ptr<Responder> res) {
    auto caller = check_caller(app.callers, req, *res);
    if (!caller) return;
    table::Caps caps;
    ParsedPaste paste = parse_paste_body(req.body, caps);
    if (paste.error == "invalid_job") return res->send_error(paste.error);  // the model before the session
    auto session = owned_session(app, *caller, req.param("id"), *res);
    if (!session) return;
    if (!paste.text) return res->send_error(paste.error);
    const std::string& text = *paste.text;
    std::variant<table::ParseError, runs::AddedVersion> added;
    try {
      added = runs::add_table_version(app.db, text, {session->id, store::DatasetSource::paste, {}, {}, {}, false}, caps);
    } catch (const std::exception& e) {
      return res->send_error(store_failure_code(e));
    }
    if (const auto* err = std::get_if<table::ParseError>(&added)) return res->send_error(err->code);
    const table::Table& t = std::get<runs::AddedVersion>(added).table;
    const store::DatasetVersionInfo& info = std::get<runs::AddedVersion>(added).info;
    res->send_json(201, {{"version", info.version}, {"rows", info.rows}, {"cols", info.cols}, {"columns", columns_json(t)}});
  });
}

}  // namespace plotq::server

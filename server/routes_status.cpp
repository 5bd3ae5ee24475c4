// GET /v1/status: the render slot and its queue, for the page's "render slot" line. No user names:
// only counts and the holder's age. GET /v1/sentences: what the page says for each code. GET
// /v1/libraries: the libraries it offers.
#include <cmath>

#include "queue/render_queue.hpp"
#include "server/app.hpp"
#include "server/cluster_node.hpp"
#include "sandbox/launcher.hpp"
#include "server/readiness.hpp"
#include "server/sentences.hpp"
#include "runs/libraries.hpp"
#include "runs/render_interpret.hpp"

namespace plotq::server {
namespace {

nlohmann::json status_json(const queue::QueueStatus& q) {
  auto round3 = [](double v) { return std::round(v * 1000.0) / 1000.0; };
  return {{"waiting", q.waiting},
          {"in_flight", q.in_flight},
          {"holder_age_s", q.holder_age_s ? nlohmann::json(round3(*q.holder_age_s)) : nlohmann::json(nullptr)},
          {"capacity", q.capacity},
          {"slots", q.slots}};
}

}  // namespace

void register_status_routes(App& app) {
  app.router.get("/v1/status", [&app](Request req, std::shared_ptr<Responder> res) {
    if (!check_caller(app.callers, req, *res)) return;
    nlohmann::json body = status_json(app.queue.status());
    // A cluster node: its id and slots, the live nodes and the cluster's queue (as of the last
    // rescue round, PLOTQ_CLUSTER_RESCUE_S).
    if (app.cluster) body["cluster"] = app.cluster->status_json();
    // Which sandbox modes are warm (GET /readyz says the same; it also starts them).
    body["modes"] = mode_states(app);
    body["spares"] = app.launcher.spares_waiting();
    res->send_json(200, std::move(body));
  });
  // The sentence a person reads for each code (server/sentences.cpp): the page's only copy.
  app.router.get("/v1/sentences", [&app](Request req, std::shared_ptr<Responder> res) {
    if (!check_caller(app.callers, req, *res)) return;
    res->send_json(200, sentences_json());
  });
  // The plotting libraries (runs/libraries.hpp) and whether this node draws each now: the page's
  // library list (it keeps none of its own).
  app.router.get("/v1/libraries", [&app](Request req, std::shared_ptr<Responder> res) {
    if (!check_caller(app.callers, req, *res)) return;
    nlohmann::json list = nlohmann::json::array();
    for (const runs::Library& l : runs::kLibraries)
      list.push_back({{"name", l.name}, {"language", l.language}, {"mode", runs::to_string(l.mode)},
                      {"available", runs::render_support(std::string(l.name), app.runtime_for(std::string(l.name)),
                                                         app.figures) == runs::Outcome::ok}});
    res->send_json(200, {{"libraries", list}});
  });
}

}  // namespace plotq::server

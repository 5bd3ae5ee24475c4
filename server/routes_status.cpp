// GET /v1/status: the render slot and its queue, for the page's "render slot" line. No user names:
// only counts and the holder's age. GET /v1/sentences: what the page says for each code.
#include <cmath>

#include "queue/render_queue.hpp"
#include "server/app.hpp"
#include "server/cluster_node.hpp"
#include "server/sentences.hpp"

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
    res->send_json(200, std::move(body));
  });
  // The sentence a person reads for each code (server/sentences.cpp): the page's only copy.
  app.router.get("/v1/sentences", [&app](Request req, std::shared_ptr<Responder> res) {
    if (!check_caller(app.callers, req, *res)) return;
    res->send_json(200, sentences_json());
  });
}

}  // namespace plotq::server

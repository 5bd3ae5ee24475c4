// Everything plotqd reads from PLOTQ_* variables, as one struct of the modules' own Config structs.
// register_settings() maps each field to its variable; adding a setting is one line there.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "queue/config.hpp"
#include "runs/render_job.hpp"
#include "server/cluster_config.hpp"
#include "sandbox/config.hpp"
#include "sandbox/figure_renderer.hpp"
#include "server/auth.hpp"
#include "common/settings.hpp"
#include "server/limits.hpp"
#include "server/server.hpp"
#include "store/db.hpp"
#include "store/retention.hpp"

namespace plotq::server {

using plotq::Setting;
using plotq::Settings;

struct PlotqdConfig {
  HttpConfig http;
  AuthConfig auth;
  std::string db_path = "./var/plotq.db";
  store::Options db;
  store::RetentionPolicy retention;  // how long each table family is kept (store/retention.cpp)
  std::chrono::milliseconds shutdown_grace{10'000};
  std::string home = PLOTQ_SOURCE_DIR;  // harness, web page: read through common/env project_home()
  queue::Config queue;
  TurnConfig turns;              // chat turns: per-user limits, wire caps, run timeouts (server/limits.hpp)
  sandbox::Config sandbox;       // sandbox/README.md (same PLOTQ_* names as sandbox::config_from_env())
  sandbox::FigureConfig figure;  // sandbox/figure/README.md (same names as sandbox::figure_config_from_env())
  runs::RenderConfig render;     // runs/settings.cpp (every Renderer plotqd makes uses it)
  ClusterConfig cluster;         // many nodes on one PostgreSQL (docs/scale-out.md)
};

// Registers every setting of c in s (defaults = the fields' current values).
void register_settings(Settings& s, PlotqdConfig& c);

// Checks that need more than one field, after load(); one message per problem.
std::vector<std::string> check_config(const PlotqdConfig& c);

}  // namespace plotq::server

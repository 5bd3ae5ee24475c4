// The sweep's backends (sweep/runner.hpp: SweepBackend):
//   bare     plain Python per file and theme on a worker thread each (sweep/bare.hpp); plotly
//            JSON drawn by the FigureRenderer on the io_context
//   sandbox  runs::Renderer in process: the exact path POST /render takes (runs/render_job.hpp)
// (--server URL lives in tools/cmd_sweep.cpp: it needs the CLI's HTTP client.)
#pragma once
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "runs/runtime.hpp"
#include "sweep/bare.hpp"
#include "sweep/runner.hpp"

namespace plotq::sandbox {
class FigureRenderer;
}
namespace plotq::store {
class Db;
}

namespace plotq::runs {

class Renderer;

// What a sweep can draw on this machine, the same rule in every mode: runs::render_support (the
// library table against the runtime's manifest; figure-mode libraries need a figure renderer;
// a name not in the table "invalid_library").
Outcome sweep_support(const std::string& library, const Runtime& runtime, const sandbox::FigureRenderer* figures);

// figures may be null (plotly and bokeh then answer runtime_unavailable). runtime: what
// config.python holds (read_runtime), the same manifest the sandbox's Renderer checks.
std::unique_ptr<SweepBackend> make_bare_backend(boost::asio::io_context& io, BareConfig config,
                                                ClassVocabulary classes, sandbox::FigureRenderer* figures,
                                                Runtime runtime);

// ledger: when not null, one ledger row (kind sweep, user "sweep") per theme drawn. job ids are
// job_prefix + "-" + a counter.
std::unique_ptr<SweepBackend> make_sandbox_backend(Renderer& renderer, store::Db* ledger, std::string job_prefix);

}  // namespace plotq::runs

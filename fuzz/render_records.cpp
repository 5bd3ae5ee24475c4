// A render's records as the host reads them after the plot step: result.json and the output file
// (plot-light.png in plot mode, plot-light.json in figure mode) are bytes the child could have
// written. The input is "mode\n=====\nresult.json\n=====\noutput"; a mode line "figure" picks figure
// mode, "exit N" anywhere in it sets the exit code. The PNG header reader also runs on the output alone.
#include "fuzz/fuzz.hpp"
#include "runs/render_interpret.hpp"

using namespace plotq;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto parts = fuzz::split_parts(fuzz::as_text(data, size), 3);
  const runs::RenderMode mode = parts[0].find("figure") != std::string::npos ? runs::RenderMode::figure : runs::RenderMode::plot;
  sandbox::JobResult job;
  job.reason = sandbox::Reason::ok;
  job.exit_code = 0;
  if (auto at = parts[0].find("exit "); at != std::string::npos) {
    int code = std::atoi(parts[0].c_str() + at + 5);
    job.exit_code = code;
    job.reason = code == 0 ? sandbox::Reason::ok : sandbox::Reason::nonzero_exit;
  }
  const std::string out = runs::render_output_name(mode, "light");
  if (!parts[1].empty()) job.outputs["result.json"] = parts[1];
  if (!parts[2].empty()) job.outputs[out] = parts[2];

  if (auto size_wh = runs::png_size(parts[2])) {
    PLOTQ_FUZZ_CHECK(size_wh->first > 0 && size_wh->second > 0);
    (void)runs::canvas_of(size_wh->first, size_wh->second);
  }
  runs::ThemeRun r = runs::interpret_render_job(std::move(job), mode, "light");
  PLOTQ_FUZZ_CHECK(static_cast<std::size_t>(r.outcome) < runs::kOutcomeCount && !r.message.empty());
  if (r.outcome == runs::Outcome::ok && mode == runs::RenderMode::plot) PLOTQ_FUZZ_CHECK(r.png && r.width > 0 && r.height > 0);
  if (r.outcome != runs::Outcome::ok) PLOTQ_FUZZ_CHECK(!r.png && r.job.outputs.empty());
  if (r.error_class) PLOTQ_FUZZ_CHECK(r.error_class->size() <= 80);
  return 0;
}

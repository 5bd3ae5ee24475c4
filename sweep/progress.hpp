// What `plotq sweep run` prints while and after it runs (stderr for progress, stdout for the
// summary), apart from the driver so that the driver stays silent.
#pragma once
#include <string>
#include <vector>

#include "store/sweeps.hpp"
#include "sweep/runner.hpp"

namespace plotq::runs {

// A bar redrawn in place on a terminal; one plain line per file otherwise (stderr either way).
class Progress {
 public:
  explicit Progress(bool tty) : tty_(tty) {}
  void file(const SweepCounts& c, const std::vector<store::SweepResult>& rows);
  void draw(const SweepCounts& c, const std::string& last);
  void end();

 private:
  bool tty_;
};

// The lines printed when a session ends: what was recorded, and how to go on when it is not done.
std::string run_summary(const store::Sweep& sweep, const SweepCounts& c, bool complete, double elapsed_s);

// "%.*f"
std::string fixed(double v, int digits);

}  // namespace plotq::runs

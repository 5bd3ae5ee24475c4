// A chat turn's deadline. It runs while the turn works, does not run while the turn is queued for
// the render slot, and is armed in full (the whole budget again) when the slot is granted, so time
// spent waiting behind other users never eats into the turn's own budget. Pure: callers pass `now`.
#pragma once

namespace plotq::queue {

class TurnDeadline {
 public:
  // Starts paused with the full budget; arm() starts it running.
  explicit TurnDeadline(double budget_s) : budget_s_(budget_s), remaining_s_(budget_s) {}

  // Runs from `now` with the full budget (turn start, and again when the slot is granted).
  void arm(double now) {
    armed_ = true;
    expires_at_ = now + budget_s_;
  }
  // Stops the clock while queued; remaining() keeps what was left.
  void pause(double now) {
    if (!armed_) return;
    remaining_s_ = remaining(now);
    armed_ = false;
  }

  bool armed() const { return armed_; }
  bool paused() const { return !armed_; }
  double budget() const { return budget_s_; }
  // Seconds left: frozen while paused, counting down (never below 0) while armed.
  double remaining(double now) const {
    if (!armed_) return remaining_s_;
    return expires_at_ > now ? expires_at_ - now : 0.0;
  }
  // Only an armed deadline can expire; a paused one never does.
  bool expired(double now) const { return armed_ && now >= expires_at_; }
  // Meaningful only while armed.
  double expires_at() const { return expires_at_; }

 private:
  double budget_s_;
  double remaining_s_;
  double expires_at_ = 0;
  bool armed_ = false;
};

}  // namespace plotq::queue

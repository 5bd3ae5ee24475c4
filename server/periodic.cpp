#include "server/periodic.hpp"

#include <boost/asio/steady_timer.hpp>
#include <memory>

#include "server/app.hpp"

namespace plotq::server {
namespace {

struct Periodic {
  boost::asio::steady_timer timer;
  std::function<std::chrono::milliseconds()> step;
};

void arm(const std::shared_ptr<Periodic>& p, std::chrono::milliseconds delay) {
  p->timer.expires_after(delay);
  // Weak: the shutdown hook owns the state, so a stopped timer never runs the step again.
  p->timer.async_wait([w = std::weak_ptr<Periodic>(p)](const boost::system::error_code& ec) {
    auto p = w.lock();
    if (ec || !p) return;
    arm(p, p->step());
  });
}

}  // namespace

void run_periodically(App& app, std::chrono::milliseconds first, std::function<std::chrono::milliseconds()> step) {
  auto p = std::make_shared<Periodic>(Periodic{boost::asio::steady_timer(app.ioc), std::move(step)});
  arm(p, first);
  app.on_shutdown([p]() mutable {
    p->timer.cancel();
    p.reset();
  });
}

}  // namespace plotq::server

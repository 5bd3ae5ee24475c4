// The status page (web/): GET / serves index.html, GET /static/app.js and /static/style.css the
// page's script and style. The three files are read once at start from <PLOTQ_HOME>/web by fixed
// names (never a path taken from a request) and served with the page's Content-Security-Policy.
#include "common/log.hpp"
#include "sandbox/output.hpp"
#include "server/app.hpp"

namespace plotq::server {
namespace {

constexpr std::size_t kMaxAsset = 1024 * 1024;

const char* const kCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

// A regular file read under a cap; nullopt when missing, not regular, a symlink or too large.
std::optional<std::string> read_asset(const std::string& path) {
  sandbox::OutputRead r = sandbox::read_file(path, kMaxAsset);
  if (r.status != sandbox::OutputRead::ok) return std::nullopt;
  return std::move(r.data);
}

struct Asset {
  const char* route;
  const char* file;
  const char* type;
};
constexpr Asset kAssets[] = {
    {"/", "index.html", "text/html; charset=utf-8"},
    {"/static/app.js", "app.js", "text/javascript; charset=utf-8"},
    {"/static/style.css", "style.css", "text/css; charset=utf-8"},
};

}  // namespace

void register_web_routes(App& app) {
  std::string dir = app.config.home + "/web/";
  for (const Asset& a : kAssets) {
    auto body = read_asset(dir + a.file);
    if (!body) log_event("web_asset_missing", {{"file", a.file}});
    auto shared = std::make_shared<const std::optional<std::string>>(std::move(body));
    std::string type = a.type;
    app.router.get(a.route, [shared, type](Request, std::shared_ptr<Responder> res) {
      if (!*shared) return res->send_error("not_found");
      res->send_body(200, type, **shared,
                     {{"Content-Security-Policy", kCsp},
                      {"X-Content-Type-Options", "nosniff"},
                      {"Referrer-Policy", "no-referrer"},
                      {"X-Frame-Options", "DENY"}});
    });
  }
}

}  // namespace plotq::server

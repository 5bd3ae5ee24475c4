// A small blocking HTTP/1.1 client for the CLI (plotq smoke, plotq sweep --server): one request per
// connection (Connection: close), plain http:// only, a deadline on the whole exchange.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace plotq::cli {

struct HttpResult {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string error;  // set when no answer came (connect refused, timeout, bad URL)
};

// url: "http://host:port" (a trailing path is ignored; `path` is used). Bearer token optional
// (default: PLOTQ_TOKEN from the environment).
HttpResult http_call(const std::string& url, const std::string& method, const std::string& path,
                     const std::string& body, double timeout_s,
                     std::optional<std::string> token = std::nullopt);

}  // namespace plotq::cli

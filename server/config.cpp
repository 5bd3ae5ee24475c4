#include "server/config.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace plotq::server {
namespace {

std::string number_text(long double x) {
  char buf[64];
  if (x == std::floor(x) && std::fabs(x) < 1e19L) std::snprintf(buf, sizeof buf, "%.0Lf", x);
  else std::snprintf(buf, sizeof buf, "%Lg", x);
  return buf;
}

std::string range_text(long double min, long double max) { return "[" + number_text(min) + ", " + number_text(max) + "]"; }

std::string json_text(const nlohmann::json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

}  // namespace

Setting::Setting(std::string name, std::string type, std::string help, Parse parse, Show show)
    : name_(std::move(name)), type_(std::move(type)), help_(std::move(help)), parse_(std::move(parse)),
      show_(std::move(show)) {
  default_ = show_();
}

Setting& Setting::range(long double min, long double max) {
  has_range_ = true;
  show_range_ = true;
  min_ = min;
  max_ = max;
  return *this;
}

Setting& Setting::choices(std::vector<std::string> allowed) {
  choices_ = std::move(allowed);
  type_ = "choice";
  return *this;
}

Setting& Setting::check(std::function<std::string(std::string_view)> validate) {
  check_ = std::move(validate);
  return *this;
}

Setting& Setting::secret() {
  secret_ = true;
  return *this;
}

nlohmann::json Setting::value() const {
  if (!secret_) return show_();
  nlohmann::json v = show_();
  bool empty = v.is_null() || (v.is_string() && v.get<std::string>().empty());
  return empty ? "" : "***";
}

std::string Setting::constraint_text() const {
  if (!choices_.empty()) {
    std::string s;
    for (const auto& c : choices_) s += (s.empty() ? "" : "|") + c;
    return s;
  }
  if (!show_range_) return {};
  return range_text(min_, max_);
}

std::string Setting::validate_text(std::string_view text) const {
  if (!choices_.empty()) {
    bool ok = false;
    for (const auto& c : choices_) ok = ok || c == text;
    if (!ok) return "must be one of " + constraint_text();
  }
  if (check_) return check_(text);
  return {};
}

std::string parse_integer(std::string_view text, bool is_signed, long double min, long double max, long double* out) {
  std::string want = "must be an integer in " + range_text(min, max);
  if (text.empty()) return want;
  const char* b = text.data();
  const char* e = text.data() + text.size();
  if (is_signed) {
    long long v = 0;
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || p != e) return want;
    *out = static_cast<long double>(v);
  } else {
    if (*b == '-') return want;
    unsigned long long v = 0;
    auto [p, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || p != e) return want;
    *out = static_cast<long double>(v);
  }
  if (*out < min || *out > max) return want;
  return {};
}

std::string parse_number(std::string_view text, long double min, long double max, double* out) {
  std::string want = "must be a number in " + range_text(min, max);
  if (text.empty() || text.size() > 64) return want;
  std::string s(text);  // strtod needs a terminator
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v) || v < min || v > max) return want;
  // No hex floats, no leading spaces: plain decimal only.
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) return want;
  *out = v;
  return {};
}

std::string parse_bool(std::string_view t, bool* out) {
  if (t == "1" || t == "true" || t == "yes" || t == "on") *out = true;
  else if (t == "0" || t == "false" || t == "no" || t == "off") *out = false;
  else return "must be a boolean (1/0, true/false, yes/no, on/off)";
  return {};
}

Setting& Settings::insert(Setting s) {
  const std::string& n = s.name();
  bool ok = n.size() > 6 && n.rfind("PLOTQ_", 0) == 0;
  for (char c : n) ok = ok && ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
  if (!ok) throw std::logic_error("setting name must be PLOTQ_[A-Z0-9_]+: " + n);
  if (find(n)) throw std::logic_error("setting registered twice: " + n);
  settings_.push_back(std::move(s));
  return settings_.back();
}

Setting& Settings::add_custom(std::string name, std::string type, std::string help,
                              std::function<std::string(std::string_view)> set, std::function<nlohmann::json()> show) {
  return insert(Setting(std::move(name), std::move(type), std::move(help),
                        [set = std::move(set)](const Setting& st, std::string_view t) {
                          std::string err = st.validate_text(t);
                          return err.empty() ? set(t) : err;
                        },
                        std::move(show)));
}

const Setting* Settings::find(std::string_view name) const {
  for (const Setting& s : settings_)
    if (s.name() == name) return &s;
  return nullptr;
}

std::vector<std::string> Settings::load(const Lookup& lookup) {
  std::vector<std::string> errors;
  for (Setting& s : settings_) {
    const char* v = lookup(s.name().c_str());
    if (!v || !*v) continue;
    std::string_view text(v);
    std::string err = s.parse_(s, text);
    if (!err.empty()) {
      std::string msg = s.name() + ": " + err;
      if (!s.is_secret()) {
        std::string shown(text.substr(0, 80));
        for (char& c : shown)
          if (static_cast<unsigned char>(c) < 0x20) c = '?';
        msg += " (got '" + shown + (text.size() > 80 ? "...'" : "'") + ")";
      }
      errors.push_back(std::move(msg));
      continue;
    }
    s.was_set_ = true;
  }
  return errors;
}

std::vector<std::string> Settings::load_from_environment() {
  return load([](const char* name) { return static_cast<const char*>(std::getenv(name)); });
}

std::vector<std::string> Settings::unknown_names(const char* const* env) const {
  std::vector<std::string> out;
  for (; env && *env; ++env) {
    std::string_view kv(*env);
    if (kv.rfind("PLOTQ_", 0) != 0) continue;
    std::string name(kv.substr(0, kv.find('=')));
    if (!find(name)) out.push_back(name);
  }
  return out;
}

nlohmann::json Settings::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const Setting& s : settings_) j[s.name()] = s.value();
  return j;
}

std::string Settings::help_text() const {
  std::ostringstream os;
  for (const Setting& s : settings_) {
    os << "  " << s.name() << "  (" << s.type();
    std::string c = s.constraint_text();
    if (!c.empty()) os << " " << c;
    std::string d = json_text(s.default_value());
    os << ", default " << (d.empty() ? "empty" : (s.is_secret() ? "***" : d)) << ")\n";
    os << "      " << s.help() << "\n";
  }
  return os.str();
}

}  // namespace plotq::server

#include "common/settings.hpp"

#include "common/env.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace plotq {
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

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    if (comma > start) out.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

void load_or_throw(Settings& s) {
  std::vector<std::string> errors = s.load_from_environment();
  if (errors.empty()) return;
  std::string all;
  for (const auto& e : errors) all += (all.empty() ? "" : "; ") + e;
  throw ConfigError("bad settings: " + all);
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

void Settings::section(std::string title, std::string declared_in) {
  sections_.push_back(Section{std::move(title), std::move(declared_in), settings_.size()});
}

std::string Settings::markdown(const std::vector<std::pair<std::string, std::string>>& aliases) const {
  std::ostringstream os;
  os << "# Settings\n\n"
        "Every `PLOTQ_*` variable plotqd reads, generated from the registry (common/settings.hpp) by\n"
        "tests/server/config_test.cpp, which fails when this file is stale. Each section names the file\n"
        "that declares its settings. An empty variable counts as unset; a bad value stops plotqd (and the\n"
        "CLI) with a message naming it.\n";
  for (std::size_t i = 0; i < sections_.size(); ++i) {
    const Section& sec = sections_[i];
    std::size_t end = i + 1 < sections_.size() ? sections_[i + 1].first : settings_.size();
    if (sec.first >= end) continue;
    os << "\n## " << sec.title << "\n\nDeclared in `" << sec.declared_in << "`.\n\n"
       << "| setting | type | default | bound | why |\n|---|---|---|---|---|\n";
    for (std::size_t k = sec.first; k < end; ++k) {
      const Setting& st = settings_[k];
      std::string d = json_text(st.default_value());
      if (st.is_secret()) d = "";
      for (const auto& [prefix, alias] : aliases)
        if (!prefix.empty() && d.rfind(prefix, 0) == 0) d = alias + d.substr(prefix.size());
      std::string help = st.help();
      for (char& c : help)
        if (c == '|') c = '/';
      std::string bound = st.constraint_text();
      for (char& c : bound)
        if (c == '|') c = ',';
      os << "| `" << st.name() << "` | " << st.type() << " | " << (d.empty() ? "" : "`" + d + "`") << " | " << bound
         << " | " << help << " |\n";
    }
  }
  return os.str();
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

}  // namespace plotq

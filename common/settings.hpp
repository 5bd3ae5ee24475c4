// The registry of every PLOTQ_* setting (nsjail's config.proto, SQLite's sqliteLimit.h: each limit
// declared once with its bound and its reason). Each module keeps its own plain Config struct whose
// member initialisers are the defaults, and registers its fields next to it with one line each:
//
//   s.add("PLOTQ_RLIMIT_NOFILE", &c.rlimit_nofile, "open files per job process").range(16, 1 << 20);
//
// (sandbox/config_settings.cpp, queue/config.cpp, store/db.cpp, runs/..., server/settings.cpp). plotqd
// registers every module's settings in one Settings and loads them once; a module's own
// *_from_env() is the same registration loaded alone (the CLI). `plotqd --help` prints the registry,
// and tests hold each README's settings table to it.
// The default is the field's value when add() is called (so it lives in one place, the struct).
// Supported field types: integers, double, bool, std::string, std::vector<std::string> (comma
// separated, empty items dropped), std::chrono durations (given in seconds, decimals allowed).
// Anything else: add_custom(). An empty variable counts as unset.
#pragma once
#include <chrono>
#include <deque>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace plotq {

class Setting {
 public:
  using Parse = std::function<std::string(const Setting&, std::string_view)>;  // "" or an error
  using Show = std::function<nlohmann::json()>;

  Setting(std::string name, std::string type, std::string help, Parse parse, Show show);

  // Refinements, chained right after Settings::add(). range() applies to numbers and durations
  // (in seconds); choices() and check() to the text as given.
  Setting& range(long double min, long double max);
  Setting& choices(std::vector<std::string> allowed);
  Setting& check(std::function<std::string(std::string_view)> validate);  // "" or an error message
  Setting& secret();  // value never printed; shown as "***" when set, "" when not

  const std::string& name() const { return name_; }
  const std::string& type() const { return type_; }
  const std::string& help() const { return help_; }
  const nlohmann::json& default_value() const { return default_; }
  bool is_secret() const { return secret_; }
  bool was_set() const { return was_set_; }
  nlohmann::json value() const;        // current value (masked when secret)
  std::string constraint_text() const;  // "[1, 100]", "production|development", ""

  // Used by the Parse functions.
  bool has_range() const { return has_range_; }
  long double min() const { return min_; }
  long double max() const { return max_; }
  const std::vector<std::string>& allowed() const { return choices_; }
  std::string validate_text(std::string_view text) const;  // choices + check; "" when fine

 private:
  friend class Settings;
  std::string name_, type_, help_;
  Parse parse_;
  Show show_;
  nlohmann::json default_;
  bool has_range_ = false;
  bool show_range_ = false;  // set by range(), not by a type's own bounds
  long double min_ = 0, max_ = 0;
  std::vector<std::string> choices_;
  std::function<std::string(std::string_view)> check_;
  bool secret_ = false;
  bool was_set_ = false;
};

// Strict parsers used by Settings::add (exposed for tests and add_custom): "" or an error message.
std::string parse_integer(std::string_view text, bool is_signed, long double min, long double max, long double* out);
std::string parse_number(std::string_view text, long double min, long double max, double* out);
std::string parse_bool(std::string_view text, bool* out);
// "a,b,,c" -> {"a", "b", "c"}: the one comma-list rule of every list setting.
std::vector<std::string> split_list(std::string_view text);

class Settings;
// Loads a module's registration alone from the environment (what a module's *_from_env() does for
// the CLI); throws plotq::ConfigError naming every bad value, so nothing falls back silently.
void load_or_throw(Settings& s);


class Settings {
 public:
  // Throws std::logic_error when the name is not PLOTQ_[A-Z0-9_]+ or is registered twice.
  template <class T>
  Setting& add(std::string name, T* field, std::string help);

  // For fields the template does not cover. set() parses the text into the field ("" or an error);
  // show() gives the current value as JSON (also called once now, for the default).
  Setting& add_custom(std::string name, std::string type, std::string help,
                      std::function<std::string(std::string_view)> set, std::function<nlohmann::json()> show);

  // Reads every registered setting through lookup (nullptr or "" = unset). Returns one message per
  // bad value ("PLOTQ_X: must be an integer in [1, 10] (got 'abc')"); secrets are never echoed.
  using Lookup = std::function<const char*(const char*)>;
  std::vector<std::string> load(const Lookup& lookup);
  std::vector<std::string> load_from_environment();

  // PLOTQ_* names present in env ("NAME=value" strings, like environ) that nobody registered.
  std::vector<std::string> unknown_names(const char* const* env) const;

  // Settings added from now on belong to this section: a title and the file that declares them
  // (docs/settings.md groups by it, so each setting's declaration is one step away).
  void section(std::string title, std::string declared_in);

  nlohmann::json to_json() const;  // {"PLOTQ_X": value, ...}, secrets masked
  // docs/settings.md: per section, a table of name, type, default, bound and why. `aliases`
  // replace build-specific prefixes in defaults ({"/src/plotq", "<home>"}), so the file is the same
  // for every checkout.
  std::string markdown(const std::vector<std::pair<std::string, std::string>>& aliases = {}) const;
  std::string help_text() const;   // one block per setting: name, type, default, range, help
  const std::deque<Setting>& all() const { return settings_; }
  const Setting* find(std::string_view name) const;

 private:
  Setting& insert(Setting s);
  std::deque<Setting> settings_;  // deque: references returned by add() stay valid
  struct Section {
    std::string title, declared_in;
    std::size_t first;  // index of its first setting
  };
  std::vector<Section> sections_;
};

// A module's config loaded alone from the environment: its registration, then load_or_throw.
// `load_from_env<RenderConfig>(register_settings)` is every *_from_env() body.
template <class C>
C load_from_env(void (*register_fields)(Settings&, C&)) {
  C c;
  Settings s;
  register_fields(s, c);
  load_or_throw(s);
  return c;
}

// ---- template implementation ------------------------------------------------------------------

namespace detail {
template <class T>
struct is_duration : std::false_type {};
template <class R, class P>
struct is_duration<std::chrono::duration<R, P>> : std::true_type {};
}  // namespace detail

template <class T>
Setting& Settings::add(std::string name, T* field, std::string help) {
  if constexpr (std::is_same_v<T, bool>) {
    return insert(Setting(std::move(name), "bool", std::move(help),
                          [field](const Setting&, std::string_view t) { return parse_bool(t, field); },
                          [field] { return nlohmann::json(*field); }));
  } else if constexpr (std::is_integral_v<T>) {
    Setting& s = insert(Setting(
        std::move(name), "integer", std::move(help),
        [field](const Setting& st, std::string_view t) {
          long double v = 0;
          std::string err = parse_integer(t, std::is_signed_v<T>, st.min(), st.max(), &v);
          if (err.empty()) *field = static_cast<T>(v);
          return err;
        },
        [field] { return nlohmann::json(*field); }));
    // The type's own bounds apply until range() narrows them (and are not printed in --help).
    s.has_range_ = true;
    s.min_ = static_cast<long double>(std::numeric_limits<T>::min());
    s.max_ = static_cast<long double>(std::numeric_limits<T>::max());
    return s;
  } else if constexpr (std::is_floating_point_v<T>) {
    return insert(Setting(
        std::move(name), "number", std::move(help),
        [field](const Setting& st, std::string_view t) {
          double v = 0;
          std::string err = parse_number(t, st.has_range() ? st.min() : -1e300L, st.has_range() ? st.max() : 1e300L, &v);
          if (err.empty()) *field = static_cast<T>(v);
          return err;
        },
        [field] { return nlohmann::json(static_cast<double>(*field)); }));
  } else if constexpr (detail::is_duration<T>::value) {
    return insert(Setting(
        std::move(name), "seconds", std::move(help),
        [field](const Setting& st, std::string_view t) {
          double v = 0;
          std::string err = parse_number(t, st.has_range() ? st.min() : 0.0L, st.has_range() ? st.max() : 1e9L, &v);
          if (err.empty()) *field = std::chrono::duration_cast<T>(std::chrono::duration<double>(v));
          return err;
        },
        [field] { return nlohmann::json(std::chrono::duration<double>(*field).count()); }));
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    return insert(Setting(
        std::move(name), "list", std::move(help),
        [field](const Setting& st, std::string_view t) {
          std::string err = st.validate_text(t);
          if (err.empty()) *field = split_list(t);
          return err;
        },
        [field] { return nlohmann::json(*field); }));
  } else if constexpr (std::is_same_v<T, std::string>) {
    return insert(Setting(
        std::move(name), "string", std::move(help),
        [field](const Setting& st, std::string_view t) {
          std::string err = st.validate_text(t);
          if (err.empty()) *field = std::string(t);
          return err;
        },
        [field] { return nlohmann::json(*field); }));
  } else {
    static_assert(sizeof(T) == 0, "unsupported setting type: use add_custom");
  }
}

}  // namespace plotq

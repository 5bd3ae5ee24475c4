#include "store/time.hpp"

#include <chrono>
#include <cstdio>

namespace plotq::store {
namespace {

struct Civil {
  int y, mo, d, h, mi, s;
};

Civil civil(UnixSeconds t) {
  using namespace std::chrono;
  sys_seconds tp{seconds{t}};
  sys_days day = floor<days>(tp);
  year_month_day ymd{day};
  hh_mm_ss hms{tp - day};
  return {int(ymd.year()), int(unsigned(ymd.month())), int(unsigned(ymd.day())),
          int(hms.hours().count()), int(hms.minutes().count()), int(hms.seconds().count())};
}

bool digits(std::string_view s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

}  // namespace

UnixSeconds now_unix() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

std::string iso_utc(UnixSeconds t) {
  Civil c = civil(t);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", c.y, c.mo, c.d, c.h, c.mi, c.s);
  return buf;
}

std::string utc_day(UnixSeconds t) { return iso_utc(t).substr(0, 10); }
std::string utc_minute(UnixSeconds t) { return iso_utc(t).substr(0, 16); }

std::optional<UnixSeconds> parse_utc(std::string_view s) {
  using namespace std::chrono;
  if (!s.empty() && s.back() == 'Z') s.remove_suffix(1);
  int y, mo, d, h = 0, mi = 0, sec = 0;
  if (s.size() != 10 && s.size() != 16 && s.size() != 19) return std::nullopt;
  if (!digits(s, 0, 4, y) || s[4] != '-' || !digits(s, 5, 2, mo) || s[7] != '-' ||
      !digits(s, 8, 2, d))
    return std::nullopt;
  if (s.size() >= 16) {
    if ((s[10] != 'T' && s[10] != ' ') || !digits(s, 11, 2, h) || s[13] != ':' ||
        !digits(s, 14, 2, mi))
      return std::nullopt;
  }
  if (s.size() == 19 && (s[16] != ':' || !digits(s, 17, 2, sec))) return std::nullopt;
  year_month_day ymd{year{y}, month{unsigned(mo)}, day{unsigned(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 59) return std::nullopt;
  return sys_days{ymd}.time_since_epoch().count() * 86400LL + h * 3600 + mi * 60 + sec;
}

bool is_utc_day(std::string_view s) { return s.size() == 10 && parse_utc(s).has_value(); }

}  // namespace plotq::store

#include "store/turn_plots.hpp"

#include <SQLiteCpp/Statement.h>

#include "store/error.hpp"

namespace plotq::store::turn_plots {

void put(store::Db& db, const std::string& turn_id, const std::string& theme, const std::string& png, int width,
         int height, store::UnixSeconds now) {
  store::guarded("store turn plot", [&] {
    SQLite::Statement q(db.sql(),
                        "INSERT INTO turn_plots(turn_id, theme, width, height, bytes, png, created_at) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?) "
                        "ON CONFLICT(turn_id, theme) DO UPDATE SET width = excluded.width, "
                        "height = excluded.height, bytes = excluded.bytes, png = excluded.png, "
                        "created_at = excluded.created_at");
    q.bind(1, turn_id);
    q.bind(2, theme);
    q.bind(3, width);
    q.bind(4, height);
    q.bind(5, static_cast<std::int64_t>(png.size()));
    q.bind(6, png.data(), static_cast<int>(png.size()));
    q.bind(7, store::iso_utc(now));
    q.exec();
  });
}

std::optional<std::string> get(store::Db& db, const std::string& session_id, const std::string& turn_id,
                               const std::string& theme) {
  return store::guarded("read turn plot", [&]() -> std::optional<std::string> {
    SQLite::Statement q(db.sql(),
                        "SELECT p.png FROM turn_plots p JOIN turns t ON t.id = p.turn_id "
                        "WHERE p.turn_id = ? AND p.theme = ? AND t.session_id = ?");
    q.bind(1, turn_id);
    q.bind(2, theme);
    q.bind(3, session_id);
    if (!q.executeStep()) return std::nullopt;
    const SQLite::Column c = q.getColumn(0);
    return std::string(static_cast<const char*>(c.getBlob()), static_cast<std::size_t>(c.getBytes()));
  });
}

}  // namespace plotq::store::turn_plots

#include "store/turn_plots.hpp"

#include "store/sql.hpp"

#include "store/error.hpp"

namespace plotq::store::turn_plots {

void put(store::Db& db, const std::string& turn_id, const std::string& theme, const std::string& png, int width,
         int height, store::UnixSeconds now) {
  store::guarded("store turn plot", [&] {
    Stmt q(db,
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
    q.bind_blob(6, png);
    q.bind(7, store::iso_utc(now));
    q.exec();
  });
}

std::optional<std::string> get(store::Db& db, const std::string& session_id, const std::string& turn_id,
                               const std::string& theme) {
  return store::guarded("read turn plot", [&]() -> std::optional<std::string> {
    Stmt q(db,
        "SELECT p.png FROM turn_plots p JOIN turns t ON t.id = p.turn_id "
        "WHERE p.turn_id = ? AND p.theme = ? AND t.session_id = ?");
    q.bind(1, turn_id);
    q.bind(2, theme);
    q.bind(3, session_id);
    if (!q.executeStep()) return std::nullopt;
    return q.getColumn(0).getBlob();
  });
}

}  // namespace plotq::store::turn_plots

// The PNGs of a turn's plot action, in the turn_plots table (migrations/0003_turn_plots.sql): put
// when a theme rendered, get for the plot event's URL (only within the turn's own session).
#pragma once
#include <optional>
#include <string>

#include "store/db.hpp"
#include "store/time.hpp"

namespace plotq::store::turn_plots {

// Stores (or replaces) the turn's image for a theme. Throws store::StoreError.
void put(store::Db& db, const std::string& turn_id, const std::string& theme, const std::string& png, int width,
         int height, store::UnixSeconds now);
// The image, only when the turn belongs to the session.
std::optional<std::string> get(store::Db& db, const std::string& session_id, const std::string& turn_id,
                               const std::string& theme);

}  // namespace plotq::store::turn_plots
